// RocksDB on a ZNS SSD with the zoned file system against RocksDB on
// block-interface SSDs of the same flash (seed 000 §5.2, Fig. 6-8), and the
// placement figures of the zoned file system (finish threshold 0 % and
// 10 %).
//
// Every setup runs real RocksDB (kv_runner) on the same file system: on the
// ZNS device, and on the block device's zoned view, whose zone reset is a
// trim of the range (seed 000 §5.1). The paper's block SSDs ran XFS and
// f2fs, which do not tell the drive what they freed in its terms; a fourth
// setup, block 28 % OP with `block.zone_reset = keep`, is that host: the
// drive learns that data is stale only when its LBAs are written again.
//
// Scaling (docs/experiments.md): the device is the `zn540` preset's dies as
// the emulator front end sets them out (64 planes of 16 KiB pages) with 64 KiB
// blocks, 128 of them a plane (512 MiB of flash; 16 MiB zones;
// --quick: 64, 256 MiB); the placement runs have 80 (320 MiB).
// The dataset is 20-byte keys and 800-byte values that compress to about
// half (as the paper's), fewer of them; 4 reader threads where the paper
// had 32; the rate-limited writer writes 4 MiB/s. The device runs in real
// time (time scale 1) on this host, so these runs, unlike the other
// experiments, read the wall clock and vary a little from run to run.
#include <fmt/format.h>

#include <cmath>
#include <string>
#include <vector>

#include "experiments/experiment.h"
#include "experiments/front_end.h"
#include "experiments/kv_image.h"
#include "experiments/seed000_rocksdb.h"
#include "fs/zoned_fs.h"
#include "kv/runtime.h"

namespace zonelab {
namespace {

namespace kv = rocksdb_plugin;
using Json = nlohmann::ordered_json;

namespace paper = seed000;

struct Setup {
  const char* name;
  std::vector<std::string> overrides;
};

const std::vector<Setup>& setups() {
  static const std::vector<Setup> kSetups = {
      {"ZNS", {"interface=zns"}},
      {"block 7% OP", {"interface=block", "block.overprovisioning=7%"}},
      {"block 28% OP", {"interface=block", "block.overprovisioning=28%"}},
      {"block 28% OP, no discard",
       {"interface=block", "block.overprovisioning=28%", "block.zone_reset=keep"}},
  };
  return kSetups;
}

// The device and the workload's sizes for a run (quick: for CI).
struct Scale {
  uint32_t blocks_per_plane;  // of 64 KiB: 64 make 256 MiB of flash, 128 512 MiB
  // The placement runs' device: small enough that RocksDB's data, at its
  // peak during compactions, fills it and garbage collection runs.
  uint32_t placement_blocks_per_plane;
  uint64_t keys;
  double read_seconds;
};
Scale scale_of(const RunOptions& options) {
  return options.quick ? Scale{64, 64, 40'000, 1.0} : Scale{128, 80, 300'000, 15.0};
}

// Both interfaces on the emulator-style front end (front_end.h), as the
// conventional device has no write buffer, suspend or firmware.
std::vector<std::string> scaled_device(uint32_t blocks_per_plane) {
  std::vector<std::string> o = {"store.backing=file",
                                "flash.pages_per_block=4",
                                fmt::format("flash.blocks_per_plane={}", blocks_per_plane),
                                "zns.zone_capacity=16MiB",
                                "zns.zone_size=16MiB",
                                "zns.zone_count=0"};
  o.insert(o.end(), emulator_front_end().begin(), emulator_front_end().end());
  return o;
}

// A device image of a setup, with a file system made at the finish threshold.
Result<KvImage> make_image(const Setup& setup, uint32_t blocks_per_plane,
                           uint32_t finish_threshold_pct) {
  std::vector<std::string> overrides = scaled_device(blocks_per_plane);
  overrides.insert(overrides.end(), setup.overrides.begin(), setup.overrides.end());
  auto config = preset_with("zn540", overrides);
  if (!config) return Error{config.error()};
  fs::MkfsOptions mkfs;
  mkfs.uuid_seed = 1;
  mkfs.finish_threshold_pct = finish_threshold_pct;
  return KvImage::make(*config, mkfs, setup.name);
}

// One phase of RocksDB on an image.
struct PhaseSpec {
  const char* workload;
  bool fresh = false;
  double seconds = 0;  // 0: `ops` operations (default: the key count)
  uint32_t threads = 1;
  uint64_t write_rate_bytes_per_s = 0;
};

Result<kv::KvResult> run_phase(const KvImage& image, const Scale& scale, const PhaseSpec& p) {
  kv::KvOptions o;
  o.uri = image.uri();
  o.workload = kv::find_workload(p.workload);
  ZL_ASSERT(o.workload != nullptr);
  o.num = scale.keys;
  o.key_bytes = 20;
  o.value_bytes = 800;
  o.seed = 7;
  o.fresh = p.fresh;
  o.duration_s = p.seconds;
  o.threads = p.threads;
  o.write_rate_bytes_per_s = p.write_rate_bytes_per_s;
  o.target_file_size_bytes = 14 << 20;  // ~90 % of a 16 MiB zone (ZenFS's advice)
  o.write_buffer_bytes = 4 << 20;
  o.block_cache_bytes = 2 << 20;
  o.report_interval_s = 1;
  kv::KvResult r = kv::run_kv_loaded(o);
  if (!r.ok()) return Error{fmt::format("{}: {}", p.workload, r.error)};
  return r;
}

const kv::KvOpStats& op(const kv::KvResult& r, kv::OpType type) {
  return r.phases.back().by_type[static_cast<size_t>(type)];
}
double ops_per_s(const kv::KvResult& r, kv::OpType type) {
  double s = r.phases.back().seconds;
  return s <= 0 ? 0.0 : static_cast<double>(op(r, type).ops) / s;
}
double device_wa(const kv::KvResult& r) {
  const Json& wa = r.session["device"]["write_amplification"];
  return wa.is_number() ? wa.get<double>() : 1.0;
}
uint64_t erases(const kv::KvResult& r) { return r.session["device"]["erases"].get<uint64_t>(); }
uint64_t host_write_bytes(const kv::KvResult& r) {
  return r.session["device"]["host_write_bytes"].get<uint64_t>();
}

// Everything the three figures need, for one setup.
struct SetupRun {
  std::string name;
  kv::KvResult fill, overwrite, randomread, limited, unlimited;
};

constexpr uint64_t kRateLimitBytesPerS = 4 << 20;

Result<std::vector<SetupRun>> run_all(const RunOptions& options) {
  const Scale scale = scale_of(options);
  std::vector<SetupRun> runs;
  for (const Setup& setup : setups()) {
    auto image = make_image(setup, scale.blocks_per_plane, 0);
    if (!image) return Error{image.error()};
    SetupRun run;
    run.name = setup.name;
    struct Step {
      kv::KvResult* out;
      PhaseSpec spec;
    };
    const Step steps[] = {
        {&run.fill, {"fillrandom", true}},
        {&run.overwrite, {"overwrite"}},
        {&run.randomread, {"readrandom", false, scale.read_seconds, 4}},
        {&run.limited, {"readwhilewriting", false, scale.read_seconds, 4, kRateLimitBytesPerS}},
        {&run.unlimited, {"readwhilewriting", false, scale.read_seconds, 4}},
    };
    for (const Step& step : steps) {
      options.report(fmt::format("rocksdb-zns-vs-block: {}: {}", setup.name, step.spec.workload));
      auto r = run_phase(*image, scale, step.spec);
      if (!r) return Error{fmt::format("{}: {}", setup.name, r.error())};
      *step.out = std::move(r).value();
    }
    runs.push_back(std::move(run));
  }
  return runs;
}

// The three figures share one set of runs.
const Result<std::vector<SetupRun>>& shared_runs(const RunOptions& options) {
  static std::optional<bool> quick;
  static Result<std::vector<SetupRun>> runs = Error{"not run"};
  if (!quick || *quick != options.quick) {
    runs = run_all(options);
    quick = options.quick;
  }
  return runs;
}

Json parameters(const RunOptions& options) {
  const Scale scale = scale_of(options);
  Json p;
  p["base_preset"] = "zn540";
  p["scaled_device"] = scaled_device(scale.blocks_per_plane);
  p["placement_device"] = scaled_device(scale.placement_blocks_per_plane);
  Json list = Json::array();
  for (const Setup& s : setups()) list.push_back({{"name", s.name}, {"overrides", s.overrides}});
  p["setups"] = list;
  p["keys"] = scale.keys;
  p["key_bytes"] = 20;
  p["value_bytes"] = 800;
  p["read_phase_seconds"] = scale.read_seconds;
  p["reader_threads"] = 4;
  p["rate_limited_writer_bytes_per_s"] = kRateLimitBytesPerS;
  p["target_file_size_bytes"] = 14 << 20;
  p["write_buffer_bytes"] = 4 << 20;
  p["time_scale"] = 1;
  p["timing"] = "modeled";
  return p;
}

const SetupRun* find(const std::vector<SetupRun>& runs, std::string_view name) {
  for (const SetupRun& r : runs) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

double ratio(double a, double b) { return b == 0 ? 0 : a / b; }

Result<ExperimentResult> run_write_throughput(const RunOptions& options) {
  const auto& runs = shared_runs(options);
  if (!runs) return Error{runs.error()};
  ExperimentResult result;
  result.table =
      Table({"setup", "benchmark", "benchmark_index", "ops_per_s", "device_write_amplification",
             "fs_write_amplification", "erases", "erases_per_gib_written"});
  for (const SetupRun& r : *runs) {
    int index = 1;
    for (const auto* phase : {&r.fill, &r.overwrite}) {
      double gib = static_cast<double>(host_write_bytes(*phase)) / (1ULL << 30);
      result.table.add_row(
          {r.name, std::string(index == 1 ? "fillrandom" : "overwrite"), int64_t{index},
           ops_per_s(*phase, kv::OpType::kWrite), device_wa(*phase),
           phase->session["fs"]["space"]["write_amplification"].get<double>(), erases(*phase),
           gib == 0 ? 0.0 : static_cast<double>(erases(*phase)) / gib});
      ++index;
    }
  }
  result.parameters = parameters(options);
  result.plot = {"benchmark_index",
                 "ops_per_s",
                 "setup",
                 "benchmark (1 fillrandom, 2 overwrite)",
                 "ops/s",
                 "setup",
                 "RocksDB write throughput (seed 000 Fig. 6)"};
  const SetupRun* zns = find(*runs, "ZNS");
  const SetupRun* nodiscard = find(*runs, "block 28% OP, no discard");
  const SetupRun* b28 = find(*runs, "block 28% OP");
  result.comparisons.push_back(emerged({"overwrite ops/s, ZNS / block 28% OP without discard", "x",
                                        paper::kOverwriteZnsOverXfs,
                                        ratio(ops_per_s(zns->overwrite, kv::OpType::kWrite),
                                              ops_per_s(nodiscard->overwrite, kv::OpType::kWrite)),
                                        "the paper's block SSD ran XFS"}));
  result.comparisons.push_back(
      emerged({"overwrite ops/s, ZNS / block 28% OP with trims", "x", std::nullopt,
               ratio(ops_per_s(zns->overwrite, kv::OpType::kWrite),
                     ops_per_s(b28->overwrite, kv::OpType::kWrite)),
               "the same file system trims every zone it resets: the drive's GC seldom copies"}));
  result.comparisons.push_back(
      emerged({"device write amplification (overwrite), block 28% OP without "
               "discard",
               "x", paper::kXfsDeviceWa, device_wa(nodiscard->overwrite), "XFS in the paper"}));
  result.comparisons.push_back(
      emerged({"device write amplification (overwrite), block 28% OP with trims", "x", std::nullopt,
               device_wa(b28->overwrite), ""}));
  result.comparisons.push_back(
      closed_form("ZNS has no device GC: every flash program is a host write",
                  {"device write amplification (overwrite), ZNS", "x", paper::kZnsDeviceWa,
                   device_wa(zns->overwrite), ""}));
  return result;
}

Result<ExperimentResult> run_read_throughput(const RunOptions& options) {
  const auto& runs = shared_runs(options);
  if (!runs) return Error{runs.error()};
  ExperimentResult result;
  result.table =
      Table({"setup", "benchmark", "benchmark_index", "read_ops_per_s", "write_ops_per_s"});
  for (const SetupRun& r : *runs) {
    int index = 1;
    for (const auto* phase : {&r.randomread, &r.limited, &r.unlimited}) {
      const char* name = index == 1   ? "randomread"
                         : index == 2 ? "readwhilewriting, writes limited"
                                      : "readwhilewriting";
      result.table.add_row({r.name, std::string(name), int64_t{index},
                            ops_per_s(*phase, kv::OpType::kRead),
                            ops_per_s(*phase, kv::OpType::kWrite)});
      ++index;
    }
  }
  result.parameters = parameters(options);
  result.plot = {"benchmark_index",
                 "read_ops_per_s",
                 "setup",
                 "benchmark (1 randomread, 2 readwhilewriting limited, 3 unlimited)",
                 "read ops/s",
                 "setup",
                 "RocksDB read throughput (seed 000 Fig. 7)"};
  const SetupRun* zns = find(*runs, "ZNS");
  const SetupRun* nodiscard = find(*runs, "block 28% OP, no discard");
  result.comparisons.push_back(
      emerged({"readwhilewriting write ops/s, ZNS / block 28% OP without discard", "x",
               paper::kUnlimitedWritesZnsOverXfs,
               ratio(ops_per_s(zns->unlimited, kv::OpType::kWrite),
                     ops_per_s(nodiscard->unlimited, kv::OpType::kWrite)),
               "XFS in the paper"}));
  result.comparisons.push_back(
      closed_form("the writer's rate limit, 4 MiB/s of (20 + 800)-byte writes (workload setting)",
                  {"rate-limited writer, write bytes/s reached on ZNS", "MiB/s", 20,
                   ops_per_s(zns->limited, kv::OpType::kWrite) * (20 + 800) / 1048576.0,
                   "the paper limits to 20 MiB/s, here 4 MiB/s"}));
  return result;
}

// Where the block setups' read tails come from (measured: docs/experiments.md,
// "rocksdb-zns-vs-block").
constexpr char kWhyReadTails[] =
    "the block tails are the drive's GC: compaction writes during every read phase open new "
    "blocks, and GC erases a victim with nothing live (3.5 ms, no page copied, so WA stays 1.0); "
    "a Get is ~23 serial device reads, so a rare erase stall reaches P99.9. With 100 us erases "
    "the block P99.9 falls to ZNS's";

Result<ExperimentResult> run_read_latency(const RunOptions& options) {
  const auto& runs = shared_runs(options);
  if (!runs) return Error{runs.error()};
  ExperimentResult result;
  result.table = Table({"series", "percentile", "latency_us", "order"});
  constexpr double kPercentiles[] = {50, 99, 99.9, 99.99};
  for (const SetupRun& r : *runs) {
    int index = 0;
    for (const auto* phase : {&r.randomread, &r.limited, &r.unlimited}) {
      const char* name = index == 0 ? "randomread" : index == 1 ? "rww limited" : "rww";
      const Histogram& h = op(*phase, kv::OpType::kRead).latency_ns;
      int order = 0;
      for (double p : kPercentiles) {
        result.table.add_row({fmt::format("{}, {}", r.name, name), p,
                              static_cast<double>(h.percentile(p)) / 1000.0, int64_t{order++}});
      }
      ++index;
    }
  }
  result.parameters = parameters(options);
  result.plot = {"order",
                 "latency_us",
                 "series",
                 "percentile (0 p50, 1 p99, 2 p99.9, 3 p99.99)",
                 "read latency (us)",
                 "setup, benchmark",
                 "RocksDB read latency (seed 000 Fig. 8)",
                 false,
                 true};
  const SetupRun* zns = find(*runs, "ZNS");
  const SetupRun* nodiscard = find(*runs, "block 28% OP, no discard");
  auto pct = [](const kv::KvResult& r, double p) {
    return static_cast<double>(op(r, kv::OpType::kRead).latency_ns.percentile(p));
  };
  result.comparisons.push_back(emerged(
      {"randomread P99, ZNS / block 28% OP without discard", "x", paper::kRandomReadP99ZnsOverXfs,
       ratio(pct(zns->randomread, 99), pct(nodiscard->randomread, 99)), "XFS in the paper"}));
  result.comparisons.push_back(emerged(
      {"rate-limited readwhilewriting P99.9, ZNS / block 28% OP without discard", "x",
       paper::kRateLimitedP999ZnsOverXfs,
       ratio(pct(zns->limited, 99.9), pct(nodiscard->limited, 99.9)), std::string(kWhyReadTails)}));
  result.comparisons.push_back(
      emerged({"readwhilewriting P99.99, ZNS / block 28% OP without discard", "x",
               paper::kUnlimitedP9999ZnsOverXfs,
               ratio(pct(zns->unlimited, 99.99), pct(nodiscard->unlimited, 99.99)), ""}));
  return result;
}

// The zoned file system's placement: a fill and two overwrites on ZNS with
// finish thresholds 0 % and 10 %, on a device that RocksDB's data fills at
// its peak (80 blocks a plane, 320 MiB of flash), so garbage collection
// runs and placement by lifetime shows in the zones it resets without a copy.
Result<ExperimentResult> run_placement(const RunOptions& options) {
  const Scale scale = scale_of(options);
  ExperimentResult result;
  result.table =
      Table({"setup", "finish_threshold_pct", "fs_write_amplification", "erases_per_gib_written",
             "zones_reset", "reset_without_copy_share", "gc_copied_bytes", "lost_bytes"});
  for (uint32_t threshold : {0u, 10u}) {
    auto image = make_image(setups()[0], scale.placement_blocks_per_plane, threshold);
    if (!image) return Error{image.error()};
    uint64_t erased = 0;
    uint64_t written = 0;
    kv::KvResult last;
    for (const PhaseSpec& spec :
         {PhaseSpec{"fillrandom", true}, PhaseSpec{"overwrite"}, PhaseSpec{"overwrite"}}) {
      options.report(fmt::format("placement: finish threshold {}%: {}", threshold, spec.workload));
      auto r = run_phase(*image, scale, spec);
      if (!r) return Error{r.error()};
      erased += erases(*r);
      written += host_write_bytes(*r);
      last = std::move(r).value();
    }
    const Json& f = last.session["fs"];  // the file system's counters are cumulative
    double gib = static_cast<double>(written) / (1ULL << 30);
    result.table.add_row(
        {std::string("ZNS"), uint64_t{threshold}, f["space"]["write_amplification"].get<double>(),
         gib == 0 ? 0.0 : static_cast<double>(erased) / gib, f["zones"]["reset"].get<uint64_t>(),
         f["zones"]["reset_without_copy_share"].get<double>(),
         f["gc"]["copied_bytes"].get<uint64_t>(), f["space"]["lost_bytes"].get<uint64_t>()});
  }
  result.parameters = parameters(options);
  result.plot = {"finish_threshold_pct",
                 "fs_write_amplification",
                 "setup",
                 "finish threshold (%)",
                 "file-system write amplification",
                 "device",
                 "Zoned file system placement: fill + 2 overwrites"};
  return result;
}

constexpr Experiment kExperiments[] = {
    {"write_throughput", "RocksDB fillrandom and overwrite throughput, ZNS vs block",
     "seed 000 §5.2, Fig. 6",
     "db_bench's fillrandom then overwrite (zonelab kv, real RocksDB) on the zoned file system: on "
     "the ZNS device, and on block-interface devices of the same flash at 7 % and 28 % OP (zone "
     "resets of the zoned view are trims) and at 28 % OP without discard (the drive learns data is "
     "stale only when it is written again, as under XFS). Also the device's write amplification "
     "and erases per GiB written.",
     run_write_throughput},
    {"read_throughput", "RocksDB read throughput: randomread, readwhilewriting limited and not",
     "seed 000 §5.2, Fig. 7",
     "After the writes: 4 threads of random reads; the same beside a writer limited to 4 MiB/s; "
     "and beside a writer without a limit.",
     run_read_throughput},
    {"read_latency", "RocksDB read latency percentiles", "seed 000 §5.2, Fig. 8",
     "The read latencies (wall clock, device timing modeled) of the three read benchmarks: "
     "P50, P99, P99.9 and P99.99 for each setup.",
     run_read_latency},
    {"placement", "Zoned file system placement: finish threshold 0 % and 10 %", "seed 000 §4.2",
     "fillrandom and two overwrites on ZNS (320 MiB of flash, which RocksDB's data fills at its "
     "peak) with the file system made at finish thresholds 0 % and 10 %: the file system's "
     "write amplification, device erases per GiB written, zones reset "
     "with no live data copied (what placement by lifetime achieves), bytes garbage collection "
     "copied and capacity lost to early finishes.",
     run_placement},
};

}  // namespace

ExperimentSet rocksdb_zns_vs_block_experiments() {
  return {"rocksdb-zns-vs-block",
          "RocksDB on ZNS with the zoned file system against block-interface SSDs", "seed 000 §5.2",
          kExperiments, /*deterministic=*/false};
}

}  // namespace zonelab
