// FlexZNS's zone formats and their parity (seed 001 §II Table I, §III-B,
// §IV-C): the storage each format spends on parity, computed by the layout
// plan the device is formatted with (src/flash/flex_layout.cc), on the
// `flexzns` preset's flash (seed 001 Table II: 64 dies, 2 GiB superblocks,
// 256 GiB) and, for §III-B's example, the same dies with 512 superblocks
// (1 TiB).
//
// Table I, the example and the parity cost are layout computations: no I/O
// is simulated, and the numbers are exact functions of the geometry. The
// open-block budget (§III-D, Fig. 8's shape on the raw device) runs writers
// on the device in virtual time.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "experiments/experiment.h"
#include "flash/flex_layout.h"
#include "stack/stack.h"
#include "workload/runner.h"

namespace zonelab {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kGiB = kMiB * 1024.0;

namespace paper {
// Table I: utilization (zone capacity / zone size) with parity in the zone.
struct TableIRow {
  const char* stripe;
  uint64_t zone_mib;
  double capacity_mib;
  double utilization_pct;
};
constexpr TableIRow kTableI[] = {{"63+1p", 2048, 2016, 98.44},
                                 {"31+1p", 1024, 992, 96.88},
                                 {"15+1p", 512, 480, 93.75},
                                 {"7+1p", 256, 224, 87.50},
                                 {"3+1p", 128, 96, 75.0}};
// §III-B: a 1 TB SSD, 64 x 512 MB + 480 x 2 GB zones, 32 MB parity chunks.
constexpr double kExampleDataGb = 992;
constexpr double kExampleParityGb = 32;
constexpr double kExampleParityPct = 3.13;
// §I, §IV-C: parity storage cost, % of SSD capacity.
constexpr double kBaseZnsParityPct = 1.56;
constexpr double kSmallOnlyParityPct = 6.25;
constexpr double kOneSixteenthParityPct = 3.52;
// §IV-E, Fig. 8 (RocksDB): 512 MB zones with 1,024 open blocks 1.89x faster
// than 2 GB zones with 2,560.
constexpr double kSmallOver2GbSpeedup = 1.89;
}  // namespace paper

Result<FlexGeometry> geometry_of(const std::vector<std::string>& overrides) {
  auto config = preset_with("flexzns", overrides);
  if (!config) return Error{config.error()};
  return flex_geometry(config->flash);
}

nlohmann::ordered_json geometry_json(const FlexGeometry& g,
                                     const std::vector<std::string>& overrides) {
  return {{"preset", "flexzns"},
          {"overrides", overrides},
          {"dies", g.dies},
          {"chunk_bytes", g.chunk_bytes},
          {"superblocks", g.superblocks},
          {"superblock_bytes", g.superblock_bytes()},
          {"flash_bytes", g.flash_bytes()}};
}

// The most zones of `zone_bytes` that fit beside `fixed` sets (and their
// parity) on the flash, and the layout they make.
Result<FlexLayout> fill_with(const FlexGeometry& g, std::vector<ZoneSetSpec> fixed,
                             uint64_t zone_bytes, ParityPlacement placement) {
  for (auto count = static_cast<uint32_t>(g.flash_bytes() / zone_bytes); count > 0; --count) {
    std::vector<ZoneSetSpec> sets = fixed;
    sets.push_back({zone_bytes, count});
    auto layout = plan_flex_layout(g, sets, placement);
    if (layout) return layout;
  }
  return Error{fmt::format("no zone of {} fits", zone_bytes)};
}

Result<ExperimentResult> run_table_i(const RunOptions& options) {
  options.report("table_i: layouts of the five stripe widths");
  auto g = geometry_of({});
  if (!g) return Error{g.error()};
  ExperimentResult result;
  result.table = Table({"placement", "stripe", "zone_size_mib", "zone_capacity_mib",
                        "utilization_percent", "parity_share_of_flash_percent"});
  for (ParityPlacement placement : {ParityPlacement::kInZone, ParityPlacement::kSeparate}) {
    for (const paper::TableIRow& row : paper::kTableI) {
      const uint64_t zone = row.zone_mib << 20;
      auto layout = fill_with(*g, {}, zone, placement);
      if (!layout) return Error{layout.error()};
      const ZoneSetLayout& set = layout->sets[0];
      const double utilization =
          100.0 * static_cast<double>(set.capacity_bytes) / static_cast<double>(zone);
      const std::string stripe = fmt::format("{}+1p", set.dies_per_fbg - 1);
      result.table.add_row({std::string(parity_placement_name(placement)), stripe, row.zone_mib,
                            static_cast<double>(set.capacity_bytes) / kMiB, utilization,
                            100.0 * layout->parity_share()});
      if (placement == ParityPlacement::kInZone) {
        result.comparisons.push_back(
            closed_form(fmt::format("{} MiB zone - one {} MiB parity chunk (geometry)",
                                    row.zone_mib, g->chunk_bytes >> 20),
                        {fmt::format("{} zone capacity, {} MiB zones", stripe, row.zone_mib), "MiB",
                         row.capacity_mib, static_cast<double>(set.capacity_bytes) / kMiB, ""}));
        result.comparisons.push_back(closed_form(
            fmt::format("({0} - 1) / {0}: one die of the {0}-die stripe holds parity",
                        set.dies_per_fbg),
            {fmt::format("{} utilization", stripe), "%", row.utilization_pct, utilization, ""}));
      }
    }
  }
  result.parameters = {{"geometry", geometry_json(*g, {})},
                       {"formats", "every zone of one size, as many as fit with their parity"}};
  result.plot = {.x = "zone_size_mib",
                 .y = "utilization_percent",
                 .series = "placement",
                 .xlabel = "zone size (MiB)",
                 .ylabel = "zone capacity / zone size (%)",
                 .series_label = "parity",
                 .title = "Storage utilization by zone size (seed 001 Table I)",
                 .logx = true};
  return result;
}

Result<ExperimentResult> run_format_example(const RunOptions& options) {
  options.report("format_example: 64 x 512 MiB + 480 x 2 GiB on 1 TiB");
  const std::vector<std::string> overrides = {"flash.blocks_per_plane=512"};
  auto g = geometry_of(overrides);
  if (!g) return Error{g.error()};
  const std::vector<ZoneSetSpec> sets = {{512ULL << 20, 64}, {2ULL << 30, 480}};
  auto layout = plan_flex_layout(*g, sets, ParityPlacement::kSeparate);
  if (!layout) return Error{layout.error()};
  ExperimentResult result;
  result.table = Table({"area", "gib", "superblocks", "share_of_flash_percent"});
  const double flash = static_cast<double>(g->flash_bytes());
  const double data = static_cast<double>(layout->zone_bytes());
  const double parity = static_cast<double>(layout->parity_bytes());
  const uint64_t free_superblocks =
      g->superblocks - layout->data_superblocks - layout->parity_superblocks;
  result.table.add_row(
      {std::string("data"), data / kGiB, uint64_t{layout->data_superblocks}, 100.0 * data / flash});
  result.table.add_row({std::string("parity"), parity / kGiB, uint64_t{layout->parity_superblocks},
                        100.0 * parity / flash});
  const double unused = flash - data - parity;
  result.table.add_row(
      {std::string("unused"), unused / kGiB, free_superblocks, 100.0 * unused / flash});
  result.comparisons = {
      closed_form("64 x 512 MiB + 480 x 2 GiB, the format itself",
                  {"data area", "GiB", paper::kExampleDataGb, data / kGiB,
                   "the paper's GB and TB are binary here: 512 MB x 64 + 2 GB x 480 = 992 GB"}),
      closed_form("64 x 1 + 480 x 2 parity chunks of 32 MiB = 1,024 chunks",
                  {"parity area", "GiB", paper::kExampleParityGb, parity / kGiB, ""}),
      closed_form("32 GiB of parity / 1 TiB of flash",
                  {"parity share of the flash", "%", paper::kExampleParityPct,
                   100.0 * parity / flash, ""})};
  nlohmann::ordered_json formats = nlohmann::ordered_json::array();
  for (const ZoneSetSpec& s : sets)
    formats.push_back({{"zone_bytes", s.zone_bytes}, {"count", s.count}});
  result.parameters = {
      {"geometry", geometry_json(*g, overrides)}, {"format", formats}, {"parity", "separate"}};
  result.plot = {.x = "superblocks",
                 .y = "gib",
                 .series = "area",
                 .xlabel = "superblocks",
                 .ylabel = "GiB",
                 .series_label = "area",
                 .title = "The format of seed 001 §III-B on 1 TiB"};
  return result;
}

Result<ExperimentResult> run_parity_cost(const RunOptions& options) {
  options.report("parity_cost: 2 GiB, 512 MiB and mixed formats");
  auto g = geometry_of({});
  if (!g) return Error{g.error()};
  ExperimentResult result;
  result.table = Table({"design", "format", "small_zone_share_percent", "zones_512mib",
                        "zones_2gib", "capacity_gib", "parity_gib", "parity_share_of_flash_percent",
                        "parity_per_zone_bytes_percent"});
  const uint64_t small = 512ULL << 20;
  const uint64_t large = 2ULL << 30;
  auto add = [&](const std::string& name, double small_share, const FlexLayout& layout) {
    uint64_t n_small = 0;
    uint64_t n_large = 0;
    for (const ZoneSetLayout& s : layout.sets)
      (s.zone_bytes == small ? n_small : n_large) += s.count;
    const double capacity = static_cast<double>(layout.capacity_bytes());
    const double parity = static_cast<double>(layout.parity_bytes());
    const double per_zone_bytes = 100.0 * parity / static_cast<double>(layout.zone_bytes());
    result.table.add_row(
        {std::string(layout.placement == ParityPlacement::kSeparate ? "FlexZNS" : "BaseZNS"), name,
         small_share, n_small, n_large, capacity / kGiB, parity / kGiB,
         100.0 * layout.parity_share(), per_zone_bytes});
    return per_zone_bytes;
  };
  auto base = fill_with(*g, {}, large, ParityPlacement::kInZone);
  if (!base) return Error{base.error()};
  const double base_pct = add("BaseZNS (2 GiB, parity in the zone)", 0, *base);
  double sixteenth_pct = 0;
  double small_only_pct = 0;
  // A share of the flash as 512 MiB zones, the rest 2 GiB zones, parity apart.
  // (0: 2 GiB zones only; 1: 512 MiB zones only; x: 1/x of the flash.)
  for (uint32_t denominator : {0U, 16U, 8U, 4U, 2U, 1U}) {
    std::vector<ZoneSetSpec> fixed;
    uint64_t fill = large;
    std::string name = "FlexZNS, 2 GiB only";
    double share = 0;
    if (denominator == 1) {
      fill = small;
      name = "FlexZNS, 512 MiB only";
      share = 100;
    } else if (denominator != 0) {
      fixed.push_back({small, static_cast<uint32_t>(g->flash_bytes() / denominator / small)});
      name = fmt::format("FlexZNS-1/{}", denominator);
      share = 100.0 / denominator;
    }
    auto layout = fill_with(*g, fixed, fill, ParityPlacement::kSeparate);
    if (!layout) return Error{layout.error()};
    const double pct = add(name, share, *layout);
    if (denominator == 16) sixteenth_pct = pct;
    if (denominator == 1) small_only_pct = pct;
  }
  // The paper's 3.52 % reconciled: the small zones of 1/16 and BaseZNS's
  // count of 2 GiB zones, each chunk of parity over the whole flash.
  const uint64_t small_zones = g->flash_bytes() / 16 / small;
  const uint64_t base_large_zones = base->sets[0].count;
  const double kept_count_pct =
      100.0 * static_cast<double>((small_zones + 2 * base_large_zones) * g->chunk_bytes) /
      static_cast<double>(g->flash_bytes());
  result.comparisons = {
      closed_form("one 32 MiB parity chunk per 2 GiB zone",
                  {"BaseZNS parity per zone bytes", "%", paper::kBaseZnsParityPct, base_pct,
                   "the paper's \"% of SSD capacity\" read as parity / the zones' total size"}),
      closed_form("one 32 MiB parity chunk per 512 MiB zone",
                  {"FlexZNS 512 MiB only, parity per zone bytes", "%", paper::kSmallOnlyParityPct,
                   small_only_pct, ""}),
      closed_form(
          "32 x 512 MiB (1 chunk each) + the 2 GiB zones that fit (2 chunks each)",
          {"FlexZNS-1/16 parity per zone bytes", "%", paper::kOneSixteenthParityPct, sixteenth_pct,
           "1/16 of the flash as 512 MiB zones, the rest 2 GiB zones with two parity "
           "chunks each; the paper's 3.52 % is what 1/8 gives here"}),
      closed_form("(32 + 2 x 128) chunks x 32 MiB / 256 GiB; a reading chosen to match the paper",
                  {"FlexZNS-1/16 parity over the flash, BaseZNS's 2 GiB zone count kept", "%",
                   paper::kOneSixteenthParityPct, kept_count_pct,
                   "1/16 of the flash as 512 MiB zones plus as many 2 GiB zones as BaseZNS has "
                   "(one a superblock), two chunks each, over the flash: the paper's figure, "
                   "though those zones do not fit beside the small ones"})};
  result.parameters = {{"geometry", geometry_json(*g, {})},
                       {"formats",
                        "BaseZNS: 2 GiB zones with in-zone parity; FlexZNS-1/x: 1/x of the flash "
                        "as 512 MiB zones, then as many 2 GiB zones as fit with the parity"}};
  result.plot = {.x = "small_zone_share_percent",
                 .y = "parity_per_zone_bytes_percent",
                 .series = "design",
                 .xlabel = "flash formatted as 512 MiB zones (%)",
                 .ylabel = "parity (% of the zones' size)",
                 .series_label = "design",
                 .title = "Parity cost of zone formats (seed 001 §IV-C)"};
  return result;
}

// Zones of one size on the flexzns flash, each spanning all its channels
// and as many dies of each as its size needs (one chunk a die).
std::vector<std::string> uniform_zones(const FlashConfig& flash, uint64_t zone_mib,
                                       uint64_t budget) {
  const uint64_t dies = (zone_mib << 20) / flex_geometry(flash).chunk_bytes;
  return {fmt::format("zns.zone_size={}MiB", zone_mib),
          fmt::format("zns.zone_capacity={}MiB", zone_mib),
          fmt::format("zns.channels_per_zone={}", flash.channels),
          fmt::format("zns.dies_per_zone={}", dies / flash.channels),
          "zns.zone_count=0",
          "zns.max_open=0",
          "zns.max_active=0",
          fmt::format("zns.max_open_blocks={}", budget),
          "store.backing=none"};
}

Result<ExperimentResult> run_open_block_budget(const RunOptions& options) {
  const std::vector<uint64_t> budgets =
      options.quick
          ? std::vector<uint64_t>{256, 1024, 2560}
          : std::vector<uint64_t>{256, 512, 1024, 1536, 2048, 2560, 3072, 4096, 8192, 16384, 32768};
  const uint64_t runtime_ns = options.quick ? 20'000'000 : 200'000'000;
  ExperimentResult result;
  result.table = Table({"zone_size_mib", "open_block_budget", "open_blocks_per_zone", "open_zones",
                        "write_mib_s", "write_iops"});
  double small_at_1024 = 0;
  double large_at_2560 = 0;
  auto base = preset_with("flexzns", {});
  if (!base) return Error{base.error()};
  for (uint64_t zone_mib : {512, 1024, 2048}) {
    for (uint64_t budget : budgets) {
      options.report(
          fmt::format("open_block_budget: {} MiB zones, {} open blocks", zone_mib, budget));
      auto config = preset_with("flexzns", uniform_zones(base->flash, zone_mib, budget));
      if (!config) return Error{config.error()};
      auto stack = Stack::make(*config);
      if (!stack) return Error{stack.error()};
      const DeviceInfo& info = (*stack)->info();
      // An active zone holds one block in each plane it spans.
      const uint64_t blocks_per_zone =
          config->zns.channels_per_zone * config->zns.dies_per_zone * config->flash.planes_per_die;
      // One writer per zone the device lets be open: 4 KiB at queue depth 1
      // (sequential writes to a zone go one at a time).
      JobSpec job;
      job.name = "writers";
      job.kind = JobKind::kWrite;
      job.block_size_bytes = 4096;
      job.iodepth = 1;
      job.numjobs = info.max_open;
      job.runtime_ns = runtime_ns;
      job.time_based = true;
      job.count_within_runtime = true;
      RunResult run = run_jobs((*stack)->device(), (*stack)->sim(), {job}, config->seed);
      const JobResult& r = run.jobs[0];
      if (r.errors != 0) {
        return Error{fmt::format("{} MiB zones, budget {}: {}", zone_mib, budget, r.first_error)};
      }
      const double seconds = static_cast<double>(runtime_ns) / 1e9;
      const double mib_s = static_cast<double>(r.bytes) / kMiB / seconds;
      result.table.add_row({zone_mib, budget, blocks_per_zone, uint64_t{info.max_open}, mib_s,
                            static_cast<double>(r.ops) / seconds});
      if (zone_mib == 512 && budget == 1024) small_at_1024 = mib_s;
      if (zone_mib == 2048 && budget == 2560) large_at_2560 = mib_s;
    }
  }
  result.comparisons.push_back(closed_form(
      "16:10 zones: ratio of open zones under the block budget, not RocksDB throughput",
      {"512 MiB zones at 1,024 open blocks / 2 GiB zones at 2,560", "x",
       paper::kSmallOver2GbSpeedup, large_at_2560 == 0 ? 0.0 : small_at_1024 / large_at_2560,
       "the paper's ratio is RocksDB's throughput; here raw 4 KiB writes at queue depth 1"}));
  result.parameters = {
      {"preset", "flexzns"},
      {"zones", "one size a run, each spanning 8 channels x (size / 256 MiB) dies"},
      {"writers", "one per open zone, 4 KiB sequential writes at queue depth 1"},
      {"runtime_ns", runtime_ns},
      {"budgets", budgets}};
  result.plot = {.x = "open_block_budget",
                 .y = "write_mib_s",
                 .series = "zone_size_mib",
                 .xlabel = "open flash blocks the controller keeps",
                 .ylabel = "write throughput (MiB/s)",
                 .series_label = "zone size (MiB)",
                 .title = "Open zones and write throughput by zone size (seed 001 Fig. 8)"};
  return result;
}

// The data a block holds in the die-failure runs: a function of its LBA.
void block_pattern(uint64_t lba, uint8_t* out, uint64_t bytes) {
  uint64_t x = lba * 0x9e3779b97f4a7c15ULL + 0x5bd1e995ULL;
  for (uint64_t i = 0; i + 8 <= bytes; i += 8) {
    x ^= x >> 31;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 29;
    std::memcpy(out + i, &x, 8);
  }
}

struct ReadBack {
  uint64_t reads = 0;
  uint64_t verified_blocks = 0;
  uint64_t mismatched_blocks = 0;
  uint64_t unreadable_blocks = 0;
  std::vector<uint64_t> latencies_ns;
};

double percentile_us(std::vector<uint64_t> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  auto index = static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return static_cast<double>(v[std::min(index, v.size() - 1)]) / 1000.0;
}

Result<ExperimentResult> run_die_failure(const RunOptions& options) {
  // The flexzns dies and planes with fewer, smaller blocks (chunks of 1 MiB,
  // superblocks of 64 MiB), so the data fits in memory: zones of 16 dies and
  // of every die, the stripes as wide as the paper's.
  const std::vector<std::string> geometry = {
      "flash.blocks_per_plane=16",
      options.quick ? "flash.pages_per_block=16" : "flash.pages_per_block=64",
      "store.backing=memory"};
  const std::string format = options.quick ? "4MiB:16,16MiB:8" : "16MiB:16,64MiB:8";
  const uint32_t chunk_blocks = 32;  // 128 KiB writes and reads
  ExperimentResult result;
  result.table = Table({"parity", "phase", "phase_index", "reads", "verified_blocks",
                        "mismatched_blocks", "unreadable_blocks", "read_latency_median_us",
                        "read_latency_p99_us", "rebuilt_pages", "rebuild_flash_reads"});
  uint64_t lost_with_parity = 0;
  uint64_t mismatched_total = 0;
  double healthy_p99 = 0;
  double degraded_p99 = 0;
  for (const char* parity : {"none", "in-zone", "separate"}) {
    std::vector<std::string> overrides = geometry;
    overrides.push_back(fmt::format("zns.format={}", format));
    overrides.push_back(fmt::format("zns.parity.placement={}", parity));
    auto config = preset_with("flexzns", overrides);
    if (!config) return Error{config.error()};
    auto stack = Stack::make(*config);
    if (!stack) return Error{stack.error()};
    Stack& s = **stack;
    const DeviceInfo& info = s.info();
    const uint64_t lba_bytes = info.lba_size_bytes;
    // A sequential fill, zone after zone, of 90 % of every zone's capacity
    // (so every zone ends in a partly written stripe); a die fails half way.
    std::vector<std::pair<uint64_t, uint64_t>> extents;  // written [start, end) per zone
    for (uint32_t z = 0; z < info.zone_count; ++z) {
      uint64_t start = info.zone_start_lba(z);
      extents.emplace_back(start, start + info.zone_capacity_of(z) * 9 / 10);
    }
    auto fill = [&](size_t from, size_t to) -> Outcome {
      std::vector<uint8_t> data(chunk_blocks * lba_bytes);
      for (size_t z = from; z < to; ++z) {
        for (uint64_t lba = extents[z].first; lba < extents[z].second; lba += chunk_blocks) {
          Command c;
          c.opcode = Opcode::kWrite;
          c.slba = lba;
          c.nlb = static_cast<uint32_t>(std::min<uint64_t>(chunk_blocks, extents[z].second - lba));
          for (uint32_t i = 0; i < c.nlb; ++i) {
            block_pattern(lba + i, data.data() + i * lba_bytes, lba_bytes);
          }
          c.data = data.data();
          s.io().submit_wait(c);
          if (c.status != Status::kSuccess) {
            return Error{fmt::format("write at LBA {}: {}", lba, status_name(c.status))};
          }
        }
      }
      return {};
    };
    auto counters = [&s](const char* key) {
      uint64_t value = 0;
      s.inspect([&](const ModeledDevice& d) {
        nlohmann::ordered_json j;
        d.describe_state(j);
        value = j["flexzns"][key].get<uint64_t>();
      });
      return value;
    };
    const size_t half = extents.size() / 2;
    // Read back everything written so far; the zones come in LBA order.
    auto add_phase = [&](const char* phase, uint64_t index, size_t zones) {
      uint64_t rebuilt = counters("rebuilt_pages");
      uint64_t rebuild_reads = counters("rebuild_reads");
      // One pass over every zone's written blocks (reads stay in a zone).
      ReadBack all;
      for (size_t z = 0; z < zones; ++z) {
        const uint64_t zone_start = extents[z].first;
        const uint64_t lba_count = extents[z].second - zone_start;
        std::vector<uint8_t> data(chunk_blocks * lba_bytes);
        std::vector<uint8_t> want(lba_bytes);
        for (uint64_t off = 0; off < lba_count; off += chunk_blocks) {
          Command c;
          c.opcode = Opcode::kRead;
          c.slba = zone_start + off;
          c.nlb = static_cast<uint32_t>(std::min<uint64_t>(chunk_blocks, lba_count - off));
          c.data = data.data();
          s.io().submit_wait(c);
          ++all.reads;
          if (c.status != Status::kSuccess) {
            all.unreadable_blocks += c.nlb;
            continue;
          }
          all.latencies_ns.push_back(c.latency_ns());  // of the reads that returned data
          for (uint32_t i = 0; i < c.nlb; ++i) {
            block_pattern(c.slba + i, want.data(), lba_bytes);
            if (std::memcmp(want.data(), data.data() + i * lba_bytes, lba_bytes) == 0) {
              ++all.verified_blocks;
            } else {
              ++all.mismatched_blocks;
            }
          }
        }
      }
      result.table.add_row(
          {std::string(parity), std::string(phase), index, all.reads, all.verified_blocks,
           all.mismatched_blocks, all.unreadable_blocks, percentile_us(all.latencies_ns, 0.5),
           percentile_us(all.latencies_ns, 0.99), counters("rebuilt_pages") - rebuilt,
           counters("rebuild_reads") - rebuild_reads});
      mismatched_total += all.mismatched_blocks;
      return all;
    };
    options.report(fmt::format("die_failure: {} parity, filling", parity));
    Outcome filled = fill(0, half);
    if (!filled) return Error{filled.error()};
    ReadBack healthy = add_phase("healthy, half filled", 0, half);
    // Channel 3, die 1 fails; the fill goes on over the failed die.
    Outcome failed = s.inject_die(3, 1);
    if (!failed) return Error{failed.error()};
    filled = fill(half, extents.size());
    if (!filled) return Error{filled.error()};
    options.report(fmt::format("die_failure: {} parity, reading back", parity));
    ReadBack degraded = add_phase("one die failed", 1, extents.size());
    // A second die of the same stripes (every zone of the wide set spans
    // all dies).
    failed = s.inject_die(5, 6);
    if (!failed) return Error{failed.error()};
    add_phase("two dies failed", 2, extents.size());
    if (std::string(parity) != "none") lost_with_parity += degraded.unreadable_blocks;
    if (std::string(parity) == "separate") {
      healthy_p99 = percentile_us(healthy.latencies_ns, 0.99);
      degraded_p99 = percentile_us(degraded.latencies_ns, 0.99);
    }
  }
  result.comparisons.push_back(
      closed_form("one XOR parity page a stripe rebuilds any one lost die (by design)",
                  {"blocks unreadable after one die failure, with parity", "blocks", std::nullopt,
                   static_cast<double>(lost_with_parity),
                   "in-zone and separate parity: every block must come back"}));
  result.comparisons.push_back(
      closed_form("a page that cannot be rebuilt fails its read (by design)",
                  {"blocks read back wrong, all phases", "blocks", std::nullopt,
                   static_cast<double>(mismatched_total),
                   "a lost block is reported (UNRECOVERED_READ_ERROR), never wrong"}));
  result.comparisons.push_back(
      emerged({"128 KiB read P99, one die failed / healthy (separate parity)", "x", std::nullopt,
               healthy_p99 == 0 ? 0.0 : degraded_p99 / healthy_p99,
               "the rebuild reads every other page of the stripe and its parity"}));
  result.parameters = {
      {"preset", "flexzns"},
      {"overrides", geometry},
      {"format", format},
      {"fill", "each zone to 90 % of its capacity, 128 KiB writes at queue depth 1"},
      {"failures", "die 3:1 after half the zones, die 5:6 before the last read"},
      {"reads", "128 KiB at queue depth 1 over every written block"}};
  result.plot = {.x = "phase_index",
                 .y = "read_latency_p99_us",
                 .series = "parity",
                 .xlabel = "dies failed",
                 .ylabel = "128 KiB read latency P99, reads answered (us)",
                 .series_label = "parity",
                 .title = "Reads through die failures (seed 001 §III-C parity)"};
  return result;
}

constexpr Experiment kExperiments[] = {
    {"table_i", "Storage utilization by zone size", "seed 001 §II, Table I",
     "Each of Table I's zone sizes on the flexzns flash, as many zones as fit: with the parity "
     "inside the zone (a stripe of n dies keeps n - 1 for data) and apart (FlexZNS: capacity = "
     "size); zone capacity, utilization and the share of the flash holding parity.",
     run_table_i},
    {"format_example", "The zone format of §III-B", "seed 001 §III-B",
     "64 zones of 512 MiB and 480 of 2 GiB on 1 TiB of flash (the flexzns dies with 512 "
     "superblocks), parity apart: the data area, the parity area Algorithm 1 lays out, and "
     "what is left.",
     run_format_example},
    {"parity_cost", "Parity cost of 2 GiB, 512 MiB and mixed formats", "seed 001 §I, §IV-C",
     "BaseZNS (2 GiB zones, parity inside) and FlexZNS formats on the flexzns flash: 2 GiB "
     "only, 1/16, 1/8, 1/4 and 1/2 of the flash as 512 MiB zones with the rest 2 GiB, and "
     "512 MiB only; the parity's share of the flash and its size per byte of zones.",
     run_parity_cost},
    {"open_block_budget", "Write throughput against the open-block budget",
     "seed 001 §IV-E, Fig. 8",
     "Zones of 512 MiB, 1 GiB and 2 GiB on the flexzns flash (each spanning 8 channels and "
     "size / 256 MiB dies of each), the controller keeping 256 to 32,768 open flash blocks: an "
     "active zone holds one block in each plane it spans, so the device allows budget / "
     "blocks-per-zone open zones; one writer per open zone writes 4 KiB at queue depth 1 for "
     "200 ms of device time. Aggregate write throughput.",
     run_open_block_budget},
    {"die_failure", "A die failure during a sequential fill", "seed 001 §III-C",
     "The flexzns dies (64, 4 planes) with 16 blocks of 64 pages, formatted 16 x 16 MiB + "
     "8 x 64 MiB (16-die and superblock-wide zones), with no parity, parity in the zone and "
     "parity apart: a sequential fill to 90 % of every zone, die 3:1 failing half way, then every "
     "written block read back and checked; then a second die fails. Blocks verified, wrong, "
     "unreadable; read latency; the rebuild's page reads.",
     run_die_failure},
};

}  // namespace

ExperimentSet flexzns_experiments() {
  return {"flexzns", "FlexZNS: size-flexible zones and their parity (layout)", "seed 001",
          kExperiments};
}

}  // namespace zonelab
