// FlexZNS under real RocksDB (seed 001 §II, §IV-C, §IV-D, §IV-E): overwrite
// throughput against the zone size (Fig. 2's RocksDB bars); YCSB A, B and F
// on BaseZNS, FlexZNS with small zones only and the mixed formats
// FlexZNS-1/x, with each format's garbage-collection write amplification
// and parity cost (Fig. 6); which levels a mixed format's small zones take,
// and the other levels spilling into them (§IV-C); write throughput
// against the open-block budget (Fig. 8); and two tenants on one drive,
// shared or each on its own dies (§IV-D with RocksDB in place of F2FS).
//
// Scaling (docs/experiments.md). The device is the `flexzns` preset (seed 001
// Table II: 8 channels x 8 dies, 4 planes, 4 KiB pages, tR 50 us, tPROG
// 500 us) with 16-page blocks instead of 2,048 and 32 superblocks instead of
// 128: a die's chunk of a superblock is 256 KiB (the paper's 32 MiB), so
// every zone size shrinks by 128 and spans the dies it spans on the paper's
// drive -- a "2 GiB" zone is 16 MiB over all 64 dies, a "512 MiB" zone
// 4 MiB over 16 -- and the flash is 512 MiB. Names in the tables are the
// paper's sizes. RocksDB shrinks with the zones: 1 MiB tables and memtables
// (the paper's 64 MiB beside 2 GiB zones would be 512 KiB; 1 MiB keeps the
// tables fewer) and an 8 MiB level 1. YCSB's records are YCSB's (1,000-byte
// values, zipfian requests); the dataset is about 60 % of the flash as
// RocksDB stores it (compressed), as the paper's 150 GB of 256 GB
// (scale_of() gives the counts; --quick far fewer, no collection).
// The device runs kTimeScale times slower than the wall clock, so that the
// device rather than this host's CPU limits RocksDB, as the paper's drive
// did; every rate is reported in device time (wall / kTimeScale).
//
// RocksDB runs in real time on this host: these numbers come from the wall
// clock (scaled), vary from run to run and with the machine's load.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "experiments/experiment.h"
#include "experiments/kv_image.h"
#include "flash/flex_layout.h"
#include "fs/zoned_fs.h"
#include "kv/runtime.h"
#include "stack/stack_report.h"
#include "zonelab/assert.h"

namespace zonelab {
namespace {

namespace kv = rocksdb_plugin;
using Json = nlohmann::ordered_json;

namespace paper {
// §II, Fig. 2: RocksDB overwrite, 512 MB zones against 2 GB: "up to 1.97x".
constexpr double kFig2Gain = 1.97;
// §IV-C, Fig. 6: FlexZNS (512 MB zones only) over BaseZNS on YCSB A, B, F,
// and its cut of garbage collection's write amplification (percent).
constexpr double kFig6Gain[] = {2.63, 1.12, 1.64};
constexpr double kFig6WaCut[] = {61.9, 43.3, 50.0};
// FlexZNS-1/16 (1/16 of the space in 512 MB zones).
constexpr double kFig6Gain16[] = {2.28, 1.05, 1.49};
constexpr double kFig6WaCut16[] = {46.3, 17.7, 21.7};
// Parity's share of the SSD: BaseZNS 1.56 %, FlexZNS-1/16 3.52 %, FlexZNS
// 6.25 % (percent).
constexpr double kParityBase = 1.56, kParity16 = 3.52, kParityFlex = 6.25;
// §IV-E, Fig. 8: 512 MB zones at 1,024 open blocks against 2 GB at 2,560.
constexpr double kFig8Gain = 1.89;
// §IV-D, Fig. 7 (F2FS): FlexZNS's tenants on separate dies, 17.1-52.9 % more
// bandwidth than BaseZNS shared.
constexpr double kTenantGainLow = 17.1, kTenantGainHigh = 52.9;
}  // namespace paper

// Wall time per unit of device time (see the top): a scaling parameter,
// chosen so that RocksDB's writes (flushes and compactions) keep the
// device's dies busy.
constexpr double kTimeScale = 4;
constexpr uint32_t kScale = 128;  // the paper's sizes / the model's
constexpr uint32_t kKeyBytes = 24;
constexpr uint32_t kValueBytes = 1000;  // YCSB's 10 fields of 100 bytes
constexpr uint64_t kTableBytes = 1 << 20;
constexpr uint64_t kLevelBaseBytes = 8 << 20;
// A compaction reads its inputs a table at a time, not block by block (as
// rocksdb-zenfsplus's, for the same reason: the kernel's readahead that
// ZenFS reads through is not there).
constexpr uint64_t kCompactionReadaheadBytes = kTableBytes;
constexpr uint32_t kThreads = 4;  // YCSB's client threads
// RocksDB's background jobs: four (three compaction threads and a flush)
// as a host of many cores runs them, where db_bench's default two leave
// one compaction thread that binds every format alike (docs).
constexpr uint32_t kBackgroundJobs = 4;
constexpr double kBytesPerMb = 1e6;

struct Scale {
  uint64_t records;         // YCSB records: about 60 % of the flash, as stored
  uint64_t ops;             // per YCSB workload
  uint64_t overwrite_keys;  // Fig. 2: keys loaded, then overwritten once
  uint64_t fill_keys;       // Fig. 8: keys written
  double tenant_seconds;    // §IV-D: each tenant's run (wall)
  uint64_t tenant_records;  // the reader's records
};
Scale scale_of(const RunOptions& o) {
  if (o.quick) return {24'000, 8'000, 20'000, 20'000, 2.0, 10'000};
  // Fig. 2's keys: the paper's dataset for every workload, about 60 % of the
  // physical capacity (§IV-A): 720,000 keys of db_bench's half-compressible
  // values fill 57 % of the flash as RocksDB stores them (300 MB of files).
  return {450'000, 150'000, 720'000, 150'000, 12.0, 100'000};
}

// --- the device

// The flexzns preset scaled (see the top), with a format.
Result<Config> device(const std::string& format, const std::string& parity,
                      std::vector<std::string> more = {}) {
  std::vector<std::string> o = {"store.backing=file", "flash.pages_per_block=16",
                                "flash.blocks_per_plane=32", "zns.format=" + format,
                                "zns.parity.placement=" + parity};
  o.insert(o.end(), more.begin(), more.end());
  return preset_with("flexzns", o);
}

FlexGeometry geometry() {
  auto c = preset_with("flexzns", {"flash.pages_per_block=16", "flash.blocks_per_plane=32"});
  ZL_ASSERT(c.ok());
  return flex_geometry(c->flash);
}

// The most zones of `zone_bytes` that fit beside `before` (count 0: none).
uint32_t most_that_fit(const std::vector<ZoneSetSpec>& before, uint64_t zone_bytes,
                       ParityPlacement parity) {
  const FlexGeometry g = geometry();
  uint32_t lo = 0;
  uint32_t hi = static_cast<uint32_t>(g.flash_bytes() / zone_bytes);
  while (lo < hi) {
    const uint32_t mid = (lo + hi + 1) / 2;
    std::vector<ZoneSetSpec> sets = before;
    sets.push_back({zone_bytes, mid});
    if (plan_flex_layout(g, sets, parity)) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

uint64_t model_bytes(uint64_t paper_mib) { return (paper_mib << 20) / kScale; }
std::string size_text(uint64_t bytes) { return fmt::format("{}KiB", bytes >> 10); }

// A format of the Fig. 6 family: BaseZNS (2 GB zones, parity in the zone),
// FlexZNS (512 MB zones only), FlexZNS-1/x (1/x of the superblocks in
// 512 MB zones, the rest 2 GB zones; FlexZNS's parity area).
struct Format {
  std::string name;
  std::string zones;   // zns.format
  std::string parity;  // zns.parity.placement
  double parity_pct = 0;
  uint32_t small_share = 0;  // x of 1/x (0: all one size)
};

Format format_of(const std::string& name, uint32_t x) {
  const FlexGeometry g = geometry();
  const uint64_t large = model_bytes(2048);
  const uint64_t small = model_bytes(512);
  Format f;
  f.name = name;
  std::vector<ZoneSetSpec> sets;
  ParityPlacement parity = ParityPlacement::kSeparate;
  if (name == "BaseZNS") {
    parity = ParityPlacement::kInZone;
    sets.push_back({large, most_that_fit({}, large, parity)});
  } else if (x == 0) {
    sets.push_back({small, most_that_fit({}, small, parity)});
  } else {
    const uint32_t per_superblock = static_cast<uint32_t>(g.superblock_bytes() / small);
    sets.push_back({small, g.superblocks / x * per_superblock});
    sets.push_back({large, most_that_fit(sets, large, parity)});
    f.small_share = x;
  }
  f.parity = parity_placement_name(parity);
  auto plan = plan_flex_layout(g, sets, parity);
  ZL_ASSERT(plan.ok());
  f.parity_pct = 100.0 * plan->parity_share();
  for (const ZoneSetSpec& s : sets) {
    f.zones += fmt::format("{}{}:{}", f.zones.empty() ? "" : ",", size_text(s.zone_bytes), s.count);
  }
  return f;
}

std::vector<Format> fig6_formats(bool quick) {
  std::vector<Format> out{format_of("BaseZNS", 0), format_of("FlexZNS", 0)};
  for (uint32_t x : quick ? std::vector<uint32_t>{16} : std::vector<uint32_t>{16, 8, 4, 2}) {
    out.push_back(format_of(fmt::format("FlexZNS-1/{}", x), x));
  }
  return out;
}

// --- running RocksDB

struct Phase {
  const char* workload;
  uint64_t num = 0;
  uint64_t ops = 0;  // 0: num
  double seconds = 0;
  uint32_t threads = kThreads;
  const char* db = "/db";
  std::string tenant = {};
};

kv::KvOptions kv_options(const KvImage& image, const Phase& p) {
  kv::KvOptions o;
  o.uri = image.uri(kTimeScale);
  if (!p.tenant.empty()) o.uri += "&tenant=" + p.tenant;
  o.workload = kv::find_workload(p.workload);
  ZL_ASSERT(o.workload != nullptr);
  o.num = p.num;
  if (p.ops != 0) o.ops = p.ops;
  o.key_bytes = kKeyBytes;
  o.value_bytes = kValueBytes;
  o.seed = 11;
  o.threads = p.threads;
  o.max_background_jobs = kBackgroundJobs;
  o.duration_s = p.seconds;
  o.db_dir = p.db;
  o.target_file_size_bytes = kTableBytes;
  o.write_buffer_bytes = kTableBytes;
  o.max_bytes_for_level_base = kLevelBaseBytes;
  o.compaction_readahead_bytes = kCompactionReadaheadBytes;
  o.block_cache_bytes = 4 << 20;
  o.report_interval_s = 1.0;
  return o;
}

Result<kv::KvResult> run(const KvImage& image, const Phase& p) {
  kv::KvResult r = kv::run_kv_loaded(kv_options(image, p));
  if (!r.ok()) return Error{fmt::format("{}: {}", p.workload, r.error)};
  return r;
}

double device_seconds(const kv::KvPhase& p) { return p.seconds / kTimeScale; }
double ops_per_s(const kv::KvPhase& p) {
  const double s = device_seconds(p);
  return s <= 0 ? 0.0 : static_cast<double>(p.ops()) / s;
}
double mb_per_s(const kv::KvPhase& p) {
  const double s = device_seconds(p);
  return s <= 0 ? 0.0 : static_cast<double>(p.bytes()) / s / kBytesPerMb;
}
double ratio(double a, double b) { return b == 0 ? 0 : a / b; }

// The dies' mean busy time in a run's session (the device's `die_busy`
// shares over the session's virtual time), over the run phase's own device
// time: how near the phase came to the flash's bound. The session also opens
// the DB and closes it (a flush), so the share can pass 1 slightly.
double die_busy_share(const kv::KvResult& r) {
  const Json& s = r.session;
  if (!s.contains("device") || r.phases.empty()) return 0;
  const double session_s = s.value("virtual_time_ns", 0.0) / 1e9;
  const double run_s = device_seconds(r.phases.back());
  return run_s <= 0 ? 0 : mean_busy(s["device"].value("die_busy", Json())) * session_s / run_s;
}

// The Gets of a run's last phase (YCSB's reads; F's read-modify-writes
// are counted apart).
const kv::KvOpStats& reads(const kv::KvResult& r) {
  return r.phases.back().by_type[static_cast<size_t>(kv::OpType::kRead)];
}
// A latency in microseconds of device time. RocksDB's latencies are wall
// time (wall_per_device kTimeScale), the device's reads device time (1).
double p99_us(const Histogram& h, double wall_per_device) {
  return static_cast<double>(h.percentile(99)) / 1000.0 / wall_per_device;
}
double mean_us(const Histogram& h, double wall_per_device) {
  return h.mean() / 1000.0 / wall_per_device;
}
// The time RocksDB held its writers back (its stall_micros), in device
// seconds.
double stall_seconds(const kv::KvResult& r) {
  if (!r.rocksdb.is_object()) return 0;
  return r.rocksdb.value("stall_micros", 0.0) / 1e6 / kTimeScale;
}

// A run that RocksDB stopped with an error of its own (NoSpace: the
// collection or the open-zone tokens could not keep up) is a point of a
// figure, kept with what it did; any other failure ends the member.
bool stopped_by_rocksdb(const kv::KvResult& r) {
  return r.failure == kv::KvFailure::kDbError && !r.phases.empty();
}
// Such a run's `outcome`.
std::string stopped_outcome(const kv::KvResult& r) {
  const bool full = r.error.find("No space") != std::string::npos;
  return fmt::format("stopped after {} puts: {}", r.phases.back().ops(),
                     full ? std::string("NoSpace") : one_line(r.error, 80));
}

// The file system's bytes written by cause, from a run's session.
struct Written {
  uint64_t data = 0;
  uint64_t gc = 0;
};
Written written(const Json& session) {
  Written w;
  if (!session.contains("fs") || !session["fs"].contains("written_bytes")) return w;
  const Json& b = session["fs"]["written_bytes"];
  w.data = b.value("data", uint64_t{0});
  w.gc = b.value("gc", uint64_t{0});
  return w;
}
// Garbage collection's write amplification over a stretch: (data + copies)
// / data, the bytes the file system wrote into zones per byte its files
// were given.
double gc_wa(const Written& before, const Written& after) {
  const uint64_t data = after.data - before.data;
  const uint64_t gc = after.gc - before.gc;
  return data == 0 ? 1.0 : static_cast<double>(data + gc) / static_cast<double>(data);
}

// The share of garbage collection's extra writes a format saves against
// the base, in percent: of (WA - 1), as the paper's WA counts what
// collection adds.
double wa_cut_pct(double base_wa, double wa) {
  return base_wa <= 1.0 ? 0.0 : 100.0 * (1.0 - (wa - 1.0) / (base_wa - 1.0));
}

Result<KvImage> image_of(const Config& config, const fs::MkfsOptions& mkfs,
                         std::string_view label) {
  return KvImage::make(config, mkfs, label);
}

fs::MkfsOptions mkfs_options() {
  fs::MkfsOptions m;
  m.uuid_seed = 1;
  return m;
}

Json common_parameters(const RunOptions& options) {
  const Scale s = scale_of(options);
  return {{"device",
           "flexzns preset, 16-page blocks, 32 superblocks: 64 dies, 256 KiB chunks, "
           "512 MiB of flash; zone sizes / 128"},
          {"time_scale", kTimeScale},
          {"key_bytes", kKeyBytes},
          {"value_bytes", kValueBytes},
          {"target_file_size", kTableBytes},
          {"write_buffer_size", kTableBytes},
          {"max_bytes_for_level_base", kLevelBaseBytes},
          {"compaction_readahead_size", kCompactionReadaheadBytes},
          {"threads", kThreads},
          {"max_background_jobs", kBackgroundJobs},
          {"ycsb_records", s.records},
          {"ycsb_ops_per_workload", s.ops},
          {"overwrite_keys", s.overwrite_keys},
          {"fill_keys", s.fill_keys},
          {"quick", options.quick}};
}

// --- Fig. 2: overwrite against the zone size

Result<ExperimentResult> run_fig2(const RunOptions& options) {
  const Scale scale = scale_of(options);
  const std::vector<uint64_t> sizes = options.quick
                                          ? std::vector<uint64_t>{512, 2048}
                                          : std::vector<uint64_t>{128, 256, 512, 1024, 2048};
  ExperimentResult result;
  result.table = Table({"zone_size_mib", "model_zone_kib", "zones", "ops_per_s", "mb_per_s",
                        "gc_write_amplification", "gc_copied_mib", "die_busy_share", "outcome"});
  std::map<uint64_t, double> ops;
  for (uint64_t paper_mib : sizes) {
    const uint64_t bytes = model_bytes(paper_mib);
    const uint32_t count = most_that_fit({}, bytes, ParityPlacement::kSeparate);
    options.report(fmt::format("flexzns-rocksdb: fig2: {} MiB zones", paper_mib));
    auto config = device(fmt::format("{}:{}", size_text(bytes), count), "separate");
    if (!config) return Error{config.error()};
    auto image = image_of(*config, mkfs_options(), fmt::format("{} MiB zones", paper_mib));
    if (!image) return Error{image.error()};
    std::string outcome = "ok";
    auto stopped = [&](const kv::KvResult& r, const char* what) -> std::optional<Error> {
      if (r.ok()) return std::nullopt;
      if (!stopped_by_rocksdb(r)) {
        return Error{fmt::format("{} MiB zones: {}: {}", paper_mib, what, r.error)};
      }
      outcome = fmt::format("{} {}", what, stopped_outcome(r));
      return std::nullopt;
    };
    kv::KvResult load = kv::run_kv_loaded(kv_options(*image, {"fillrandom", scale.overwrite_keys}));
    if (auto e = stopped(load, "fillrandom")) return *e;
    if (outcome != "ok") {
      result.table.add_row({paper_mib, bytes >> 10, uint64_t{count}, 0.0, 0.0, 0.0, 0.0,
                            die_busy_share(load), outcome});
      continue;
    }
    kv::KvResult over = kv::run_kv_loaded(kv_options(*image, {"overwrite", scale.overwrite_keys}));
    if (auto e = stopped(over, "overwrite")) return *e;
    const Written before = written(load.session);
    const Written after = written(over.session);
    const kv::KvPhase& p = over.phases.back();
    if (outcome == "ok") ops[paper_mib] = ops_per_s(p);
    result.table.add_row(
        {paper_mib, bytes >> 10, uint64_t{count}, ops_per_s(p), mb_per_s(p), gc_wa(before, after),
         static_cast<double>(after.gc - before.gc) / (1 << 20), die_busy_share(over), outcome});
  }
  result.parameters = common_parameters(options);
  result.parameters["parity"] = "separate (FlexZNS's parity area)";
  result.parameters["workload"] =
      "fillrandom of overwrite_keys keys on a fresh DB, then overwrite of as many";
  result.plot = {"zone_size_mib",
                 "ops_per_s",
                 "",
                 "zone size (MiB, the paper's)",
                 "overwrite ops/s (device time)",
                 "",
                 "RocksDB overwrite against the zone size (seed 001 Fig. 2)"};
  result.plot.logx = true;
  result.comparisons.push_back(
      emerged({"overwrite ops/s, 512 MiB zones / 2 GiB zones", "x", paper::kFig2Gain,
               ratio(ops[512], ops[2048]), "one run a point"}));
  return result;
}

// --- Fig. 6: YCSB A, B, F on BaseZNS, FlexZNS and FlexZNS-1/x

// One zone set's part of a run: the bytes the file system wrote into it
// (data, collection's copies) and the live data it held at the end.
struct SetWritten {
  Written written;
  uint64_t live_bytes = 0;
  uint64_t capacity_bytes = 0;
};
std::vector<SetWritten> set_written(const Json& session) {
  std::vector<SetWritten> out;
  if (!session.contains("fs") || !session["fs"].contains("space")) return out;
  const Json& space = session["fs"]["space"];
  if (!space.contains("sets")) return out;
  for (const Json& set : space["sets"]) {
    SetWritten w;
    w.written.data = set.value("data_written_bytes", uint64_t{0});
    w.written.gc = set.value("gc_written_bytes", uint64_t{0});
    w.live_bytes = set.value("used_bytes", uint64_t{0});
    w.capacity_bytes = set.value("data_zones", uint64_t{0}) * set.value("zone_bytes", uint64_t{0});
    out.push_back(w);
  }
  return out;
}
uint64_t set_fallbacks(const Json& session) {
  if (!session.contains("fs") || !session["fs"].contains("zones")) return 0;
  return session["fs"]["zones"].value("set_fallbacks", uint64_t{0});
}

// One YCSB workload's run on one format.
struct YcsbMeasure {
  double ops = 0;
  double wa = 0;    // garbage collection's write amplification
  double busy = 0;  // die_busy_share()
  // What the clients waited on: their Gets' mean latency, the P99 of the
  // device reads under them, and RocksDB's write stalls.
  double read_mean_us = 0;
  double device_read_p99_us = 0;
  double stall_s = 0;
  // On a format of zone sets, each set's collection write amplification
  // over the workload and how full it ended (live data over its capacity,
  // percent), and the zones taken outside a writer's sets; empty, 0 on one
  // zone size.
  std::vector<double> set_wa;
  std::vector<double> set_live_pct;
  uint64_t set_fallbacks = 0;
};

// A workload's measures from the sessions before it (the load's or the
// workload's before) and its own.
YcsbMeasure measure(const Json& before, const kv::KvResult& ran) {
  YcsbMeasure m;
  m.ops = ops_per_s(ran.phases.back());
  m.wa = gc_wa(written(before), written(ran.session));
  m.busy = die_busy_share(ran);
  m.read_mean_us = mean_us(reads(ran).latency_ns, kTimeScale);
  m.device_read_p99_us = p99_us(reads(ran).device_read_latency_ns, 1.0);
  m.stall_s = stall_seconds(ran);
  const std::vector<SetWritten> from = set_written(before);
  const std::vector<SetWritten> to = set_written(ran.session);
  for (size_t i = 0; i < from.size() && i < to.size(); ++i) {
    m.set_wa.push_back(gc_wa(from[i].written, to[i].written));
    m.set_live_pct.push_back(to[i].capacity_bytes == 0
                                 ? 0.0
                                 : 100.0 * static_cast<double>(to[i].live_bytes) /
                                       static_cast<double>(to[i].capacity_bytes));
  }
  m.set_fallbacks = set_fallbacks(ran.session) - set_fallbacks(before);
  return m;
}

constexpr const char* kYcsbWorkloads[] = {"ycsb-a", "ycsb-b", "ycsb-f"};

struct YcsbRun {
  Format format;
  std::map<std::string, YcsbMeasure> by_workload;
};

// On a fresh file system (`mkfs`) of `f`: YCSB's load (its insert phase),
// then A, B and F in turn on the loaded DB.
Result<YcsbRun> run_ycsb_on(const RunOptions& options, const Format& f, const fs::MkfsOptions& mkfs,
                            const std::string& label) {
  const Scale scale = scale_of(options);
  auto config = device(f.zones, f.parity);
  if (!config) return Error{config.error()};
  auto image = image_of(*config, mkfs, label);
  if (!image) return Error{image.error()};
  YcsbRun r;
  r.format = f;
  auto load = run(*image, {"ycsb-c", scale.records, 1});
  if (!load) return Error{fmt::format("{}: load: {}", label, load.error())};
  Json before = load->session;
  for (const char* w : kYcsbWorkloads) {
    auto ran = run(*image, {w, scale.records, scale.ops});
    if (!ran) return Error{fmt::format("{}: {}", label, ran.error())};
    r.by_workload[w] = measure(before, *ran);
    before = ran->session;
  }
  return r;
}

Result<std::vector<YcsbRun>> run_ycsb(const RunOptions& options) {
  std::vector<YcsbRun> out;
  for (const Format& f : fig6_formats(options.quick)) {
    options.report(fmt::format("flexzns-rocksdb: fig6: {} ({})", f.name, f.zones));
    auto r = run_ycsb_on(options, f, mkfs_options(), f.name);
    if (!r) return Error{r.error()};
    out.push_back(std::move(*r));
  }
  return out;
}

Result<ExperimentResult> run_fig6(const RunOptions& options) {
  auto runs = run_ycsb(options);
  if (!runs) return Error{runs.error()};
  ExperimentResult result;
  result.table =
      Table({"format", "workload", "ops_per_s", "gc_write_amplification", "parity_pct_of_flash",
             "zones", "die_busy_share", "read_mean_us", "device_read_p99_us", "stall_s"});
  const YcsbRun* base = nullptr;
  for (const YcsbRun& r : *runs) {
    if (r.format.name == "BaseZNS") base = &r;
    for (const auto& [w, m] : r.by_workload) {
      result.table.add_row({r.format.name, w, m.ops, m.wa, r.format.parity_pct, r.format.zones,
                            m.busy, m.read_mean_us, m.device_read_p99_us, m.stall_s});
    }
  }
  ZL_ASSERT(base != nullptr);
  for (const YcsbRun& r : *runs) {
    if (&r == base) continue;
    const bool flex = r.format.name == "FlexZNS";
    const bool sixteenth = r.format.small_share == 16;
    for (size_t i = 0; i < std::size(kYcsbWorkloads); ++i) {
      const char* w = kYcsbWorkloads[i];
      std::optional<double> gain;
      std::optional<double> wa_cut;
      if (flex) {
        gain = paper::kFig6Gain[i];
        wa_cut = paper::kFig6WaCut[i];
      } else if (sixteenth) {
        gain = paper::kFig6Gain16[i];
        wa_cut = paper::kFig6WaCut16[i];
      }
      result.comparisons.push_back(
          emerged({fmt::format("{} ops/s, {} / BaseZNS", w, r.format.name), "x", gain,
                   ratio(r.by_workload.at(w).ops, base->by_workload.at(w).ops), "one run each"}));
      result.comparisons.push_back(emerged(
          {fmt::format("{} GC write amplification cut, {} against BaseZNS", w, r.format.name), "%",
           wa_cut, wa_cut_pct(base->by_workload.at(w).wa, r.by_workload.at(w).wa),
           "of the extra writes, (WA - 1); WA = (file data + collection copies) / file data"}));
    }
  }
  for (const YcsbRun& r : *runs) {
    std::optional<double> paper_pct;
    if (r.format.name == "BaseZNS") paper_pct = paper::kParityBase;
    if (r.format.name == "FlexZNS") paper_pct = paper::kParityFlex;
    if (r.format.small_share == 16) paper_pct = paper::kParity16;
    result.comparisons.push_back(
        closed_form("the layout plan's parity chunks over the flash (flash/flex_layout.h)",
                    {fmt::format("parity share of the flash, {}", r.format.name), "%", paper_pct,
                     r.format.parity_pct, "the paper's share is of the SSD's capacity"}));
  }
  result.parameters = common_parameters(options);
  Json formats = Json::array();
  for (const YcsbRun& r : *runs) {
    formats.push_back({{"format", r.format.name},
                       {"zns.format", r.format.zones},
                       {"parity", r.format.parity},
                       {"hot_levels", r.format.small_share != 0 ? "wal,L0,L1 in the small zones"
                                                                : "none (one zone size)"}});
  }
  result.parameters["formats"] = formats;
  result.parameters["order"] = "load (YCSB inserts), then A, B and F in turn on the same DB";
  result.plot = {"format",
                 "ops_per_s",
                 "workload",
                 "",
                 "ops/s (device time)",
                 "workload",
                 "YCSB on BaseZNS, FlexZNS and FlexZNS-1/x (seed 001 Fig. 6)"};
  result.plot.kind = "bar";
  return result;
}

// --- Which levels the small zones take (§IV-C)

// A placement of RocksDB's levels on a mixed format: the levels the small
// zones take, and whether the other levels fill them too while they are
// the emptier (mkfs --spill-cold).
struct LevelPlacement {
  std::string hot_levels;
  bool spill_cold = false;
  std::string text() const { return spill_cold ? hot_levels + " + spill" : hot_levels; }
};

Result<ExperimentResult> run_hot_levels(const RunOptions& options) {
  const std::vector<uint32_t> shares =
      options.quick ? std::vector<uint32_t>{16} : std::vector<uint32_t>{16, 4, 2};
  const std::vector<LevelPlacement> placements =
      options.quick ? std::vector<LevelPlacement>{{"wal,L0,L1", false}, {"wal,L0,L1", true}}
                    : std::vector<LevelPlacement>{
                          {"wal,L0,L1", false}, {"wal,L0,L1,L2", false}, {"wal,L0,L1", true}};
  struct Point {
    Format format;
    std::string placement;  // "-" on a format of one zone size
    fs::MkfsOptions mkfs;
  };
  std::vector<Point> points;
  points.push_back({format_of("BaseZNS", 0), "-", mkfs_options()});
  if (!options.quick) points.push_back({format_of("FlexZNS", 0), "-", mkfs_options()});
  for (uint32_t x : shares) {
    for (const LevelPlacement& l : placements) {
      fs::MkfsOptions m = mkfs_options();
      m.hot_levels = l.hot_levels;
      m.spill_cold = l.spill_cold;
      points.push_back({format_of(fmt::format("FlexZNS-1/{}", x), x), l.text(), m});
    }
  }
  ExperimentResult result;
  result.table =
      Table({"point", "format", "placement", "workload", "ops_per_s", "gain_over_base",
             "gc_write_amplification", "small_set_wa", "large_set_wa", "small_set_live_pct",
             "large_set_live_pct", "set_fallbacks", "die_busy_share"});
  // On a mixed format set 0 is the small zones (format_of puts them
  // first), set 1 the large; one zone size has no sets.
  auto of_set = [](const std::vector<double>& v, size_t set) {
    return set < v.size() ? v[set] : 0.0;
  };
  std::optional<YcsbRun> base;
  for (const Point& p : points) {
    options.report(fmt::format("flexzns-rocksdb: hot_levels: {} ({})", p.format.name, p.placement));
    auto r =
        run_ycsb_on(options, p.format, p.mkfs, fmt::format("{}, {}", p.format.name, p.placement));
    if (!r) return Error{r.error()};
    if (p.format.name == "BaseZNS") base = *r;
    ZL_ASSERT(base.has_value());  // the first point
    for (size_t i = 0; i < std::size(kYcsbWorkloads); ++i) {
      const char* w = kYcsbWorkloads[i];
      const YcsbMeasure& m = r->by_workload.at(w);
      const YcsbMeasure& b = base->by_workload.at(w);
      result.table.add_row({fmt::format("{}, {}", p.format.name, w), p.format.name, p.placement, w,
                            m.ops, ratio(m.ops, b.ops), m.wa, of_set(m.set_wa, 0),
                            of_set(m.set_wa, 1), of_set(m.set_live_pct, 0),
                            of_set(m.set_live_pct, 1), m.set_fallbacks, m.busy});
      if (p.format.small_share == 0) continue;
      const bool sixteenth = p.format.small_share == 16;
      result.comparisons.push_back(
          emerged({fmt::format("{} ops/s, {} with {} / BaseZNS", w, p.format.name, p.placement),
                   "x", sixteenth ? std::optional<double>(paper::kFig6Gain16[i]) : std::nullopt,
                   ratio(m.ops, b.ops), "one run each; the paper does not say which levels"}));
      result.comparisons.push_back(
          emerged({fmt::format("{} GC write amplification cut, {} with {} against BaseZNS", w,
                               p.format.name, p.placement),
                   "%", sixteenth ? std::optional<double>(paper::kFig6WaCut16[i]) : std::nullopt,
                   wa_cut_pct(b.wa, m.wa), "of the extra writes, (WA - 1)"}));
    }
  }
  result.parameters = common_parameters(options);
  Json placements_json = Json::array();
  for (const LevelPlacement& l : placements) {
    placements_json.push_back(
        {{"placement", l.text()}, {"hot_levels", l.hot_levels}, {"spill_cold", l.spill_cold}});
  }
  result.parameters["placements"] = placements_json;
  result.parameters["order"] =
      "load (YCSB inserts), then A, B and F in turn on the same DB; WA over each";
  result.plot = {"point",
                 "gc_write_amplification",
                 "placement",
                 "",
                 "GC write amplification",
                 "levels in the small zones",
                 "Which levels the small zones take (seed 001 §IV-C)"};
  result.plot.kind = "heatmap";
  return result;
}

// --- Fig. 8: write throughput against the open-block budget

Result<ExperimentResult> run_fig8(const RunOptions& options) {
  const Scale scale = scale_of(options);
  const std::vector<uint64_t> sizes = {512, 1024, 2048};
  const std::vector<uint64_t> budgets = options.quick
                                            ? std::vector<uint64_t>{1024, 2560}
                                            : std::vector<uint64_t>{768, 1024, 1536, 2560, 4096};
  ExperimentResult result;
  result.table = Table({"zone_size_mib", "open_block_budget", "open_zones", "ops_per_s", "mb_per_s",
                        "die_busy_share", "outcome"});
  std::map<std::pair<uint64_t, uint64_t>, double> mb;
  for (uint64_t paper_mib : options.quick ? std::vector<uint64_t>{512, 2048} : sizes) {
    const uint64_t bytes = model_bytes(paper_mib);
    const uint32_t count = most_that_fit({}, bytes, ParityPlacement::kSeparate);
    for (uint64_t budget : budgets) {
      options.report(
          fmt::format("flexzns-rocksdb: fig8: {} MiB zones, {} open blocks", paper_mib, budget));
      auto config = device(fmt::format("{}:{}", size_text(bytes), count), "separate",
                           {fmt::format("zns.max_open_blocks={}", budget)});
      if (!config) return Error{config.error()};
      auto image = image_of(*config, mkfs_options(),
                            fmt::format("{} MiB zones, {} open blocks", paper_mib, budget));
      // The zones the budget lets open: a zone keeps a block of each plane
      // of its dies open (seed 001 §III-D).
      const uint64_t blocks_per_zone =
          bytes / geometry().chunk_bytes * config->flash.planes_per_die;
      const uint64_t open = std::min<uint64_t>(budget / blocks_per_zone, count);
      if (!image) {
        // Too few open zones for the file system (it needs 3): no point.
        result.table.add_row(
            {paper_mib, budget, open, 0.0, 0.0, 0.0, std::string("no file system")});
        continue;
      }
      kv::KvResult fill = kv::run_kv_loaded(kv_options(*image, {"fillrandom", scale.fill_keys}));
      if (!fill.ok()) {
        // A budget of few large zones: the file system finishes zones to
        // free open-zone tokens, loses their unwritten rest and can run out
        // of space before the fill ends (a finding, kept as a point).
        if (!stopped_by_rocksdb(fill)) {
          return Error{fmt::format("{} MiB, {} blocks: {}", paper_mib, budget, fill.error)};
        }
        const kv::KvPhase& p = fill.phases.back();
        result.table.add_row({paper_mib, budget, open, ops_per_s(p), mb_per_s(p),
                              die_busy_share(fill), stopped_outcome(fill)});
        continue;
      }
      const kv::KvPhase& p = fill.phases.back();
      mb[{paper_mib, budget}] = mb_per_s(p);
      result.table.add_row({paper_mib, budget, open, ops_per_s(p), mb_per_s(p),
                            die_busy_share(fill), std::string("ok")});
    }
  }
  result.parameters = common_parameters(options);
  result.parameters["workload"] = "fillrandom of fill_keys keys on a fresh DB";
  result.parameters["budgets"] = budgets;
  result.plot = {"open_block_budget",
                 "mb_per_s",
                 "zone_size_mib",
                 "open-block budget (blocks)",
                 "fillrandom MB/s (device time)",
                 "zone size (MiB)",
                 "RocksDB writes against the open-block budget (seed 001 Fig. 8)"};
  result.comparisons.push_back(
      emerged({"fillrandom MB/s, 512 MiB zones at 1,024 open blocks / 2 GiB at 2,560", "x",
               paper::kFig8Gain, ratio(mb[{512, 1024}], mb[{2048, 2560}]), "one run each"}));
  return result;
}

// --- §IV-D: two tenants, shared BaseZNS or each on its own dies

struct TenantSetup {
  const char* name;
  std::string zones;
  std::string parity;
  bool isolated;
};

Result<ExperimentResult> run_tenants(const RunOptions& options) {
  const Scale scale = scale_of(options);
  const uint64_t small = model_bytes(512);
  // Each tenant's set on half the dies: 512 MiB zones over 16 dies, two a
  // superblock per half.
  const uint32_t half = most_that_fit({}, small, ParityPlacement::kSeparate) / 2;
  const std::vector<TenantSetup> setups = {
      {"BaseZNS shared", format_of("BaseZNS", 0).zones, "in-zone", false},
      {"FlexZNS on separate dies",
       fmt::format("{}:{}@0-31,{}:{}@32-63", size_text(small), half, size_text(small), half),
       "separate", true}};
  ExperimentResult result;
  result.table = Table({"setup", "tenant", "second", "ops_per_s", "mb_per_s"});
  std::map<std::string, double> aggregate;
  std::map<std::string, double> p99_alone;
  std::map<std::string, double> p99_beside;
  // The reader's device reads (the modeled latency of each read command its
  // gets sent, device time): the drive's part of its P99, without this
  // host's scheduling of two RocksDBs' threads on its cores.
  std::map<std::string, double> device_p99_alone;
  std::map<std::string, double> device_p99_beside;
  for (const TenantSetup& s : setups) {
    options.report(fmt::format("flexzns-rocksdb: tenants: {}", s.name));
    auto config = device(s.zones, s.parity);
    if (!config) return Error{config.error()};
    fs::MkfsOptions mkfs = mkfs_options();
    // The writer takes the first set: the file system's metadata zones are
    // the namespace's first zones, and the journal's writes are more the
    // writer's than the reader's.
    if (s.isolated) mkfs.tenants = {"writer=0", "reader=1"};
    auto image = image_of(*config, mkfs, s.name);
    if (!image) return Error{image.error()};
    Phase load{"fillseq", scale.tenant_records};
    Phase read{"readrandom", scale.tenant_records, 0, scale.tenant_seconds, 2};
    Phase write{"fillrandom", scale.tenant_records * 4, 0, scale.tenant_seconds, 2};
    if (s.isolated) {
      load.tenant = read.tenant = "reader";
      write.tenant = "writer";
    } else {
      load.db = read.db = "/reader";
      write.db = "/writer";
    }
    auto loaded = run(*image, load);
    if (!loaded) return Error{fmt::format("{}: {}", s.name, loaded.error())};
    auto alone = run(*image, read);
    if (!alone) return Error{fmt::format("{}: {}", s.name, alone.error())};
    p99_alone[s.name] = p99_us(reads(*alone).latency_ns, kTimeScale);
    device_p99_alone[s.name] = p99_us(reads(*alone).device_read_latency_ns, 1.0);
    kv::KvTenantsResult both =
        kv::run_kv_tenants_loaded({kv_options(*image, read), kv_options(*image, write)});
    if (!both.ok()) {
      std::string why = both.error;
      for (const kv::KvResult& r : both.tenants) {
        if (!r.ok()) why += r.error;
      }
      return Error{fmt::format("{}: tenants: {}", s.name, why)};
    }
    p99_beside[s.name] = p99_us(reads(both.tenants[0]).latency_ns, kTimeScale);
    device_p99_beside[s.name] = p99_us(reads(both.tenants[0]).device_read_latency_ns, 1.0);
    double total = 0;
    const char* names[] = {"reader", "writer"};
    for (size_t t = 0; t < 2; ++t) {
      const kv::KvPhase& p = both.tenants[t].phases.back();
      total += mb_per_s(p);
      const double bytes_per_op = static_cast<double>(kKeyBytes + kValueBytes);
      for (size_t i = 0; i < p.ops_per_s_series.size(); ++i) {
        const double ops = p.ops_per_s_series[i] * kTimeScale;
        result.table.add_row({std::string(s.name), std::string(names[t]),
                              static_cast<double>(i + 1) / kTimeScale, ops,
                              ops * bytes_per_op / kBytesPerMb});
      }
    }
    aggregate[s.name] = total;
  }
  const std::string shared = setups[0].name;
  const std::string isolated = setups[1].name;
  result.parameters = common_parameters(options);
  result.parameters["reader"] =
      "readrandom by 2 threads over a DB of tenant_records keys (fillseq first), alone and "
      "beside the writer";
  result.parameters["writer"] = "fillrandom by 2 threads, as long as the reader";
  result.parameters["tenant_records"] = scale.tenant_records;
  result.parameters["tenant_seconds_wall"] = scale.tenant_seconds;
  result.parameters["formats"] = {{shared, setups[0].zones}, {isolated, setups[1].zones}};
  result.plot = {"second",
                 "mb_per_s",
                 "tenant",
                 "device time (s)",
                 "MB/s (device time)",
                 "tenant",
                 "Two tenants, shared BaseZNS and FlexZNS on separate dies (§IV-D)"};
  result.plot.panel = "setup";
  result.comparisons.push_back(
      emerged({"aggregate MB/s, FlexZNS on separate dies / BaseZNS shared, in %", "%",
               (paper::kTenantGainLow + paper::kTenantGainHigh) / 2,
               100.0 * (ratio(aggregate[isolated], aggregate[shared]) - 1.0),
               "the paper's 17.1-52.9 % is F2FS's (Fig. 7); the middle is shown"}));
  for (const std::string& s : {isolated, shared}) {
    result.comparisons.push_back(
        emerged({fmt::format("reader P99 beside the writer / alone, {}", s), "x", std::nullopt,
                 ratio(p99_beside[s], p99_alone[s]), "no number in the paper"}));
  }
  for (const std::string& s : {isolated, shared}) {
    result.comparisons.push_back(emerged(
        {fmt::format("reader's device reads, P99 beside the writer / alone, {}", s), "x",
         std::nullopt, ratio(device_p99_beside[s], device_p99_alone[s]),
         fmt::format("each read command's modeled latency, device time: {:.0f} us alone, {:.0f} "
                     "us beside; no number in the paper",
                     device_p99_alone[s], device_p99_beside[s])}));
  }
  return result;
}

constexpr Experiment kExperiments[] = {
    {"fig2", "RocksDB overwrite against the zone size", "seed 001 §II, Fig. 2",
     "On FlexZNS formats of one zone size each (128 MiB to 2 GiB, scaled by 1/128; separate "
     "parity), fillrandom of the keys on a fresh DB, then overwrite of as many; ops/s in device "
     "time and garbage collection's write amplification. --quick: 512 MiB and 2 GiB.",
     run_fig2},
    {"fig6", "YCSB A, B, F on BaseZNS, FlexZNS and FlexZNS-1/x", "seed 001 §IV-C, Fig. 6",
     "BaseZNS (2 GiB zones, parity in the zone), FlexZNS (512 MiB zones, parity area) and "
     "FlexZNS-1/x (1/x of the superblocks in 512 MiB zones holding the WAL, L0 and L1, the rest "
     "2 GiB zones) for x = 16, 8, 4, 2 (--quick: 16): YCSB's load, then A, B and F in turn; "
     "ops/s in device time, garbage collection's write amplification per workload, parity's "
     "share of the flash; what the clients waited on: their reads' mean latency, the P99 of the "
     "device reads under them (device time) and RocksDB's write stalls (device seconds).",
     run_fig6},
    {"hot_levels", "Which levels the small zones of a mixed format take",
     "seed 001 §IV-C (Fig. 6's mixed formats)",
     "FlexZNS-1/x for x = 16, 4, 2 (--quick: 16) with the WAL, L0 and L1 in the small zones, "
     "with L2 as well, and with the WAL, L0 and L1 there and the other levels spilling into them "
     "while they are the emptier set (mkfs --spill-cold); BaseZNS and FlexZNS beside (--quick: "
     "BaseZNS): YCSB's load, then A, B and F in turn; ops/s in device time, garbage "
     "collection's write amplification over each workload, each set's, and how full each set "
     "ended.",
     run_hot_levels},
    {"fig8", "RocksDB writes against the open-block budget", "seed 001 §IV-E, Fig. 8",
     "fillrandom on FlexZNS formats of 512 MiB, 1 GiB and 2 GiB zones under open-block budgets "
     "(zns.max_open_blocks) of 768 to 4,096 blocks (--quick: 512 MiB and 2 GiB at 1,024 and "
     "2,560); MB/s of keys and values in device time.",
     run_fig8},
    {"tenants", "Two tenants: shared BaseZNS against FlexZNS on separate dies",
     "seed 001 §IV-D (Fig. 7's setup, with RocksDB)",
     "A reader (readrandom, 2 threads) and a writer (fillrandom, 2 threads) at once, each its own "
     "RocksDB: on BaseZNS sharing every zone, and on FlexZNS with each a tenant (mkfs --tenant) on "
     "a zone set bound to half the dies; each tenant's MB/s per device second, the aggregate, "
     "and the reader's P99 alone and beside the writer.",
     run_tenants},
};

}  // namespace

ExperimentSet flexzns_rocksdb_experiments() {
  return {"flexzns-rocksdb", "FlexZNS under RocksDB: zone sizes, mixed formats, budget, tenants",
          "seed 001 §II, §IV", kExperiments, /*deterministic=*/false};
}

}  // namespace zonelab
