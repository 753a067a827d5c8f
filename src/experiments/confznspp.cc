// The ConfZNS++ evaluation of seed 003 §5.2 on the `confznspp` preset (4
// channels x 1 die x 1 plane, 16 KiB pages, 768-page blocks, 1056 MiB zone
// capacity, tPROG 700 us, tBERS 3.5 ms): zone management latency against
// zone occupancy (Fig. 9). Numbers the paper reports are the constants in
// namespace `paper`; every measured number comes from running the model.
#include <fmt/format.h>

#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/units.h"
#include "experiments/experiment.h"
#include "experiments/occupancy.h"

namespace zonelab {
namespace {

namespace paper {
// Fig. 9a and §5.2: finish latency.
constexpr double kFinishOnePage16KiB_s = 48.6;            // one page written, 16 KiB granularity
constexpr double kFinishNearlyFull16KiB_us = 32.1;        // "close to full occupancy"
constexpr double kFinishOnePageSmallestOver256KiB = 4.1;  // one page written
// Fig. 9b and §5.2: synchronous reset latency.
constexpr double kResetFull_ms = 77.0;         // any occupancy: 88 blocks x 3.5 ms / 4 units
constexpr double kResetPartialHalf_ms = 38.5;  // 50 % occupancy
}  // namespace paper

constexpr std::string_view kPreset = "confznspp";

using Json = nlohmann::ordered_json;

Result<Config> confznspp_config(const std::vector<std::string>& overrides) {
  auto preset = preset_config(kPreset);
  if (!preset) return Error{preset.error()};
  Config config = *preset;
  for (const std::string& assignment : overrides) {
    auto applied = apply_override(config, assignment);
    if (!applied) return Error{applied.error()};
  }
  return config;
}

// Occupancies as flash pages written: one page, then fractions of the
// capacity; the last point is the zone one page short of full (finish) or
// full (reset). Quick runs keep the first, the middle and the last.
std::vector<uint64_t> occupancy_points(uint64_t capacity_pages, bool quick, bool last_full) {
  static constexpr double kPercents[] = {10, 25, 50, 75, 90, 99};
  std::vector<uint64_t> pages{1};
  for (double percent : kPercents) {
    if (quick && percent != 50) continue;
    if (last_full && percent == 99) continue;
    pages.push_back(
        static_cast<uint64_t>(std::floor(static_cast<double>(capacity_pages) * percent / 100)));
  }
  pages.push_back(last_full ? capacity_pages : capacity_pages - 1);
  return pages;
}

double percent_of(uint64_t pages, uint64_t capacity_pages) {
  return static_cast<double>(pages) * 100.0 / static_cast<double>(capacity_pages);
}

Json base_parameters(const Config& config, const std::vector<std::string>& overrides,
                     uint64_t capacity_pages, const std::vector<uint64_t>& pages) {
  Json p;
  p["preset"] = kPreset;
  p["overrides"] = overrides;
  p["zone_capacity_pages"] = capacity_pages;
  p["page_size_bytes"] = config.flash.page_size_bytes;
  p["occupancy_pages"] = pages;
  p["config"] = Json::parse(config_to_json(config));
  return p;
}

// A sweep of one configuration key against occupancy; the measured points
// keyed by (value index, pages written).
using Sweep = std::map<std::pair<size_t, uint64_t>, OccupancyPoint>;

Result<Sweep> sweep(const RunOptions& options, std::string_view experiment, ZoneAction action,
                    const std::vector<std::string>& base_overrides, const std::string& key,
                    const std::vector<std::string>& values, const std::vector<uint64_t>& pages) {
  Sweep points;
  for (size_t v = 0; v < values.size(); ++v) {
    std::vector<std::string> overrides = base_overrides;
    overrides.push_back(key + "=" + values[v]);
    auto config = confznspp_config(overrides);
    if (!config) return Error{config.error()};
    for (uint64_t written : pages) {
      auto point = measure_at_occupancy(*config, action, written);
      if (!point) return Error{point.error()};
      options.report(fmt::format("{}: {}={}, {} of {} pages written ({:.6g}%): {}", experiment, key,
                                 values[v], written, point->zone_capacity_pages,
                                 percent_of(written, point->zone_capacity_pages),
                                 format_duration(point->latency_ns)));
      points[{v, written}] = *point;
    }
  }
  return points;
}

Result<ExperimentResult> run_finish_occupancy(const RunOptions& options) {
  const std::vector<std::string> base = {"store.backing=none", "zns.finish.pause=0ns",
                                         "zns.finish.dynamic=false"};
  auto config = confznspp_config(base);
  if (!config) return Error{config.error()};
  const uint64_t capacity_pages = zone_capacity_pages(*config);
  const std::vector<uint64_t> pages = occupancy_points(capacity_pages, options.quick, false);
  const std::vector<std::string> granularities = {"16KiB", "32KiB", "64KiB", "256KiB"};
  auto points = sweep(options, "finish_occupancy", ZoneAction::kFinish, base,
                      "zns.finish.granularity", granularities, pages);
  if (!points) return Error{points.error()};

  ExperimentResult result;
  result.table = Table({"granularity", "granularity_bytes", "occupancy_pages", "occupancy_percent",
                        "latency_ns", "latency_s", "finish_program_pages"});
  for (const auto& [key, point] : *points) {
    const std::string& granularity = granularities[key.first];
    result.table.add_row({granularity, *parse_size_bytes(granularity), point.pages_written,
                          percent_of(point.pages_written, capacity_pages), point.latency_ns,
                          static_cast<double>(point.latency_ns) / 1e9, point.finish_program_pages});
  }
  result.parameters = base_parameters(*config, base, capacity_pages, pages);
  result.parameters["varied"] = {{"key", "zns.finish.granularity"}, {"values", granularities}};
  result.plot = {.x = "occupancy_percent",
                 .y = "latency_s",
                 .series = "granularity",
                 .xlabel = "zone occupancy (% of capacity)",
                 .ylabel = "finish latency (s)",
                 .series_label = "finish granularity",
                 .title = "ConfZNS++ finish latency vs occupancy (seed 003 Fig. 9a)",
                 .logy = true};

  const size_t smallest = 0;
  const size_t largest = granularities.size() - 1;
  const OccupancyPoint& one_page = points->at({smallest, 1});
  const OccupancyPoint& one_left = points->at({smallest, capacity_pages - 1});
  const OccupancyPoint& one_page_256 = points->at({largest, 1});
  result.comparisons = {
      {"finish, one page written, 16 KiB granularity", "s", paper::kFinishOnePage16KiB_s,
       static_cast<double>(one_page.latency_ns) / 1e9, ""},
      {"finish close to full, 16 KiB granularity", "us", paper::kFinishNearlyFull16KiB_us,
       static_cast<double>(one_left.latency_ns) / 1e3,
       "paper: \"close to full occupancy\"; model: one page short of capacity, so one page "
       "program (700 us) remains"},
      {"finish, one page written: 16 KiB over 256 KiB granularity", "x",
       paper::kFinishOnePageSmallestOver256KiB,
       static_cast<double>(one_page.latency_ns) / static_cast<double>(one_page_256.latency_ns),
       "the paper's text names 8 KiB as the smaller granularity; its sweep starts at 16 KiB"},
  };
  return result;
}

Result<ExperimentResult> run_reset_occupancy(const RunOptions& options) {
  const std::vector<std::string> base = {"store.backing=none", "zns.reset.mode=sync"};
  auto config = confznspp_config(base);
  if (!config) return Error{config.error()};
  const uint64_t capacity_pages = zone_capacity_pages(*config);
  const std::vector<uint64_t> pages = occupancy_points(capacity_pages, options.quick, true);
  const std::vector<std::string> erases = {"full", "partial"};
  auto points =
      sweep(options, "reset_occupancy", ZoneAction::kReset, base, "zns.reset.erase", erases, pages);
  if (!points) return Error{points.error()};

  ExperimentResult result;
  result.table = Table({"erase", "occupancy_pages", "occupancy_percent", "latency_ns", "latency_ms",
                        "erased_blocks"});
  for (const auto& [key, point] : *points) {
    result.table.add_row({erases[key.first], point.pages_written,
                          percent_of(point.pages_written, capacity_pages), point.latency_ns,
                          static_cast<double>(point.latency_ns) / 1e6, point.reset_erases});
  }
  result.parameters = base_parameters(*config, base, capacity_pages, pages);
  result.parameters["varied"] = {{"key", "zns.reset.erase"}, {"values", erases}};
  result.plot = {.x = "occupancy_percent",
                 .y = "latency_ms",
                 .series = "erase",
                 .xlabel = "zone occupancy (% of capacity)",
                 .ylabel = "reset latency (ms)",
                 .series_label = "erase",
                 .title = "ConfZNS++ synchronous reset latency vs occupancy (seed 003 Fig. 9b)"};

  auto ms = [&](size_t erase, uint64_t written) {
    return static_cast<double>(points->at({erase, written}).latency_ns) / 1e6;
  };
  const uint64_t half = pages[pages.size() / 2];
  result.comparisons = {
      {"full erase, one page written", "ms", paper::kResetFull_ms, ms(0, 1), ""},
      {"full erase, 50% written", "ms", paper::kResetFull_ms, ms(0, half), ""},
      {"full erase, zone full", "ms", paper::kResetFull_ms, ms(0, capacity_pages), ""},
      {"partial erase, 50% written", "ms", paper::kResetPartialHalf_ms, ms(1, half), ""},
  };
  return result;
}

constexpr Experiment kExperiments[] = {
    {"finish_occupancy", "Finish latency vs zone occupancy", "seed 003 §5.2, Fig. 9a",
     "Zone 0 of a fresh confznspp device is written to an occupancy (one 16 KiB page, then 10% "
     "to 99% of its 1056 MiB capacity, then one page short of full) and finished; the device "
     "fills the rest of the zone with writes of zns.finish.granularity (16, 32, 64 and 256 KiB), "
     "one at a time, and the finish completes after the last. Latency is the finish command's, "
     "from submission to completion.",
     run_finish_occupancy},
    {"reset_occupancy", "Synchronous reset latency vs zone occupancy", "seed 003 §5.2, Fig. 9b",
     "Zone 0 of a fresh confznspp device is written to an occupancy (one page, 10% to 90%, full) "
     "and reset with zns.reset.mode=sync, so the reset waits for its erases. zns.reset.erase=full "
     "erases all 22 blocks of the zone on each of its 4 units; partial only the blocks holding "
     "data.",
     run_reset_occupancy},
};

}  // namespace

ExperimentSet confznspp_experiments() {
  return {"confznspp", "ConfZNS++ I/O management latency", "seed 003 §5.2", kExperiments};
}

}  // namespace zonelab
