// First-write latency under a block mapping; see first_write.h.
#include "experiments/first_write.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>

#include "stack/stack.h"

namespace zonelab {
namespace {

struct Rig {
  std::unique_ptr<Stack> stack;

  // Runs one command alone, the device to idle; its latency.
  Result<uint64_t> run(Opcode opcode, uint64_t slba, uint64_t nlb,
                       ZoneAction action = ZoneAction::kNone) {
    Command c;
    c.opcode = opcode;
    c.action = action;
    c.slba = slba;
    c.nlb = static_cast<uint32_t>(nlb);
    stack->io().submit_wait(c);
    stack->drive();
    if (c.status != Status::kSuccess) {
      std::string_view what =
          opcode == Opcode::kZoneManagementSend ? zone_action_name(action) : opcode_name(opcode);
      return Error{fmt::format("first write: {} at LBA {}: {}", what, slba, status_name(c.status))};
    }
    return c.latency_ns();
  }

  uint64_t erases() const {
    uint64_t total = 0;
    stack->inspect([&total](const ModeledDevice& device) {
      const auto& counts = device.flash().counters().erases;
      total = std::accumulate(counts.begin(), counts.end(), uint64_t{0});
    });
    return total;
  }

  // The block map as the device describes it (info's "block_map").
  nlohmann::ordered_json block_map() const {
    nlohmann::ordered_json state;
    stack->inspect([&state](const ModeledDevice& device) { device.describe_state(state); });
    return state["block_map"];
  }

  nlohmann::ordered_json zone_detail(uint32_t zone) const {
    nlohmann::ordered_json detail;
    stack->inspect([&](const ModeledDevice& device) { device.describe_zone(zone, detail); });
    return detail;
  }
};

}  // namespace

uint64_t nearest_rank_percentile(std::vector<uint64_t> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  auto rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(values.size())));
  return values[std::clamp<size_t>(rank, 1, values.size()) - 1];
}

Result<FirstWriteRun> measure_first_writes(const Config& config, const FirstWriteSpec& spec) {
  if (config.interface != "zns") return Error{"first write: a ZNS device is measured"};
  auto made = Stack::make(config);
  if (!made) return Error{made.error()};
  Rig rig{std::move(made).value()};
  const DeviceInfo& info = rig.stack->info();
  const uint64_t page_lbas = config.flash.page_size_bytes / info.lba_size_bytes;
  const uint64_t capacity_lbas = info.zone_capacity_lbas;
  const uint64_t zone_lbas = info.zone_size_lbas;
  if (capacity_lbas % page_lbas != 0) {
    return Error{"first write: the zone capacity is not a whole number of flash pages"};
  }
  const uint64_t pages = capacity_lbas / page_lbas;
  if (spec.sample_pages == 0 || pages < 2ULL * spec.sample_pages) {
    return Error{fmt::format("first write: a zone of {} pages has no room for two samples of {}",
                             pages, spec.sample_pages)};
  }
  const uint64_t bulk_lbas = std::max(page_lbas, info.zasl_lbas / page_lbas * page_lbas);

  FirstWriteRun run;
  run.zones = info.zone_count;
  run.physical_zones = rig.block_map()["physical_zones"].get<uint32_t>();
  run.page_bytes = page_lbas * info.lba_size_bytes;
  run.bulk_write_bytes = bulk_lbas * info.lba_size_bytes;
  const bool sequential = spec.workload == FillWorkload::kSequentialFill;
  const uint32_t fills =
      spec.fills != 0 ? spec.fills : 2 * (sequential ? run.zones : run.physical_zones);
  std::vector<uint64_t> reset_ns(run.zones, 0);

  for (uint32_t i = 0; i < fills; ++i) {
    const uint32_t zone = sequential ? i % run.zones : 0;
    // Every fill after a zone's first starts from a reset: all zones at
    // once between the passes of a sequential fill, the one zone otherwise.
    if (i > 0 && (!sequential || zone == 0)) {
      for (uint32_t z = 0; z < (sequential ? run.zones : 1); ++z) {
        auto reset = rig.run(Opcode::kZoneManagementSend, z * zone_lbas, 0, ZoneAction::kReset);
        if (!reset) return Error{reset.error()};
        reset_ns[z] = *reset;
      }
    }
    ZoneFill fill;
    fill.fill = i + 1;
    fill.zone = zone;
    fill.reset_ns = reset_ns[zone];
    reset_ns[zone] = 0;
    fill.clean_free_physical_zones = rig.block_map()["clean_free_physical_zones"].get<uint32_t>();

    const uint64_t start = zone * zone_lbas;
    const uint64_t erases_before = rig.erases();
    std::vector<uint64_t> others;
    auto write_pages = [&](uint64_t first_page, uint64_t count) -> Outcome {
      for (uint64_t p = first_page; p < first_page + count; ++p) {
        auto latency = rig.run(Opcode::kWrite, start + p * page_lbas, page_lbas);
        if (!latency) return Error{latency.error()};
        if (p == 0) {
          fill.first_write_ns = *latency;
          fill.first_write_erases = rig.erases() - erases_before;
          const auto physical = rig.zone_detail(zone)["physical_zone"];
          fill.physical_zone = physical.is_null() ? UINT32_MAX : physical.get<uint32_t>();
        } else {
          others.push_back(*latency);
        }
      }
      return {};
    };
    auto head = write_pages(0, spec.sample_pages);
    if (!head) return Error{head.error()};
    const uint64_t bulk_end = (pages - spec.sample_pages) * page_lbas;
    for (uint64_t lba = spec.sample_pages * page_lbas; lba < bulk_end; lba += bulk_lbas) {
      auto bulk = rig.run(Opcode::kWrite, start + lba, std::min(bulk_lbas, bulk_end - lba));
      if (!bulk) return Error{bulk.error()};
    }
    auto tail = write_pages(pages - spec.sample_pages, spec.sample_pages);
    if (!tail) return Error{tail.error()};

    fill.other_writes = others.size();
    fill.other_p95_ns = nearest_rank_percentile(others, 95);
    run.other_write_ns.insert(run.other_write_ns.end(), others.begin(), others.end());
    rig.stack->inspect([&fill](const ModeledDevice& device) {
      const std::vector<uint32_t>& wear = device.flash().erase_counts();
      auto [least, most] = std::minmax_element(wear.begin(), wear.end());
      fill.erase_min = *least;
      fill.erase_max = *most;
    });
    run.fills.push_back(fill);
  }
  run.erases = rig.erases();
  run.virtual_time_ns = rig.stack->sim().now_ns();
  return run;
}

}  // namespace zonelab
