// First-write latency under a block mapping; see first_write.h.
#include "experiments/first_write.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>

#include "sim/simulator.h"
#include "zns/zns_device.h"

namespace zonelab {
namespace {

class Sink final : public CompletionSink {
 public:
  void on_complete(Command&) override {}
};

struct Rig {
  Simulator sim;
  Sink sink;
  std::unique_ptr<ZnsDevice> device;

  // Runs one command alone, the device to idle; its latency.
  Result<uint64_t> run(Opcode opcode, uint64_t slba, uint64_t nlb,
                       ZoneAction action = ZoneAction::kNone) {
    Command c;
    c.opcode = opcode;
    c.action = action;
    c.slba = slba;
    c.nlb = static_cast<uint32_t>(nlb);
    c.sink = &sink;
    device->submit(c);
    sim.run();
    if (c.status != Status::kSuccess) {
      std::string_view what =
          opcode == Opcode::kZoneManagementSend ? zone_action_name(action) : opcode_name(opcode);
      return Error{fmt::format("first write: {} at LBA {}: {}", what, slba, status_name(c.status))};
    }
    return c.latency_ns();
  }

  uint64_t erases() const {
    const auto& counts = device->flash().counters().erases;
    return std::accumulate(counts.begin(), counts.end(), uint64_t{0});
  }
};

// Lazy mapping: the free physical zones that hold no old data.
uint32_t clean_free_slots(const BlockMap& map) {
  if (!map.lazy()) return 0;
  std::vector<bool> mapped(map.slot_count(), false);
  for (uint32_t slot : map.slots_of_zones()) {
    if (slot != BlockMap::kUnmapped) mapped[slot] = true;
  }
  uint32_t clean = 0;
  for (uint32_t s = 0; s < map.slot_count(); ++s) {
    if (!mapped[s] && map.slot(s).stale_pages == 0) ++clean;
  }
  return clean;
}

}  // namespace

uint64_t nearest_rank_percentile(std::vector<uint64_t> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  auto rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(values.size())));
  return values[std::clamp<size_t>(rank, 1, values.size()) - 1];
}

Result<FirstWriteRun> measure_first_writes(const Config& config, const FirstWriteSpec& spec) {
  Rig rig;
  auto made = make_zns_device(config, rig.sim);
  if (!made) return Error{made.error()};
  rig.device = std::move(made).value();
  const ZoneLayout& layout = rig.device->layout();
  const uint64_t page_lbas = layout.lbas_per_page();
  const uint64_t capacity_lbas = layout.zone_capacity_lbas();
  const uint64_t zone_lbas = rig.device->info().zone_size_lbas;
  if (capacity_lbas % page_lbas != 0) {
    return Error{"first write: the zone capacity is not a whole number of flash pages"};
  }
  const uint64_t pages = capacity_lbas / page_lbas;
  if (spec.sample_pages == 0 || pages < 2ULL * spec.sample_pages) {
    return Error{fmt::format("first write: a zone of {} pages has no room for two samples of {}",
                             pages, spec.sample_pages)};
  }
  const uint64_t bulk_lbas = std::max(page_lbas, layout.zasl_lbas() / page_lbas * page_lbas);

  FirstWriteRun run;
  run.zones = layout.zone_count();
  run.physical_zones = rig.device->block_map().slot_count();
  run.page_bytes = page_lbas * layout.lba_size_bytes();
  run.bulk_write_bytes = bulk_lbas * layout.lba_size_bytes();
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
    const BlockMap& map = rig.device->block_map();
    fill.clean_free_physical_zones = clean_free_slots(map);

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
          fill.physical_zone = map.slot_of(zone);
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
    const std::vector<uint32_t>& wear = rig.device->flash().erase_counts();
    auto [least, most] = std::minmax_element(wear.begin(), wear.end());
    fill.erase_min = *least;
    fill.erase_max = *most;
    run.fills.push_back(fill);
  }
  run.erases = rig.erases();
  run.virtual_time_ns = rig.sim.now_ns();
  return run;
}

}  // namespace zonelab
