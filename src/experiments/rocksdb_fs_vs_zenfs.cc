// RocksDB on kernel file systems on a block-interface SSD against RocksDB
// on the zoned file system on a ZNS SSD of the same flash, as seed 000 ran
// it (§5.2, Fig. 6-9) and seed 004 aged it (Fig. 12).
//
// The block side is the real thing: stock db_bench (rocksdb-tools 7.8.3)
// inside User-Mode Linux on XFS or f2fs, made by their own mkfs, on the
// modeled conventional SSD served to it (`zonelab vm`, docs/serve.md). The ZNS side is the same
// stock db_bench, natively, on `zonelab://` through the plugin (libzonelab_rocksdb.so preloaded):
// the zoned file system in ZenFS's place. Both run the same db_bench flags; the block side adds
// direct reads, so that neither side reads from a page cache (its writes go through the guest's
// page cache, RocksDB's default). Each phase is a process of its own (a boot of the guest, a run of
// db_bench), so the device's counters are the phase's.
//
// Scaling (docs/experiments.md, "rocksdb-fs-vs-zenfs"): the flash is the
// zn540 preset's timings with the emulator front end (front_end.h), 2
// channels of 2 dies of 2 planes, 1 MiB blocks, 64 a plane: 512 MiB, which
// at 28 % OP shows 400 MiB to the host (XFS needs at least 300 MB); a zone
// is 16 MiB on both dies of a channel pair. The dataset is 20-byte keys and 800-byte
// values that compress to half (the paper's), 250,000 of them: about a
// quarter of the host capacity once stored, which RocksDB's WAL, flushes
// and compactions write over more than once in each phase, so that the
// drive, told of nothing freed, collects garbage in the overwrite (the
// paper's "80 % of the SSD" ran out of space here: XFS's 750,000 keys at
// 450,000).
// fillrandom fills, overwrite rewrites every key.
//
// What the block side cannot be told apart from: the guest kernel runs in
// User-Mode Linux, where every system call of db_bench's is a round trip
// through the host's ptrace, so its host CPU per operation is many times
// the ZNS side's; the device runs slowed (kTimeScale) so that it, not the
// host, bounds both sides. The virtio disk passes the guest's queue on
// (its requests in flight reach the device: kGuestDisk).
#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "common/self_path.h"
#include "experiments/experiment.h"
#include "experiments/front_end.h"
#include "experiments/seed000_rocksdb.h"
#include "fs/zoned_fs.h"
#include "stack/stack.h"
#include "stack/stack_report.h"

extern char** environ;

namespace zonelab {
namespace {

namespace fsys = std::filesystem;
using Json = nlohmann::ordered_json;

namespace paper {
using namespace seed000;
// seed 004 Fig. 12: the aged block SSD loses 44-58 %, the aged ZNS SSD 2-4 %.
constexpr double kAgedBlockLoss = 0.51;
constexpr double kAgedZnsLoss = 0.03;
// seed 000 §5.3, Fig. 10: RocksDB on XFS at 7 % OP, streams enabled over
// disabled: fillrandom 11 % and overwrite 16 % more throughput.
constexpr double kStreamsXfsFillGain = 1.11;
constexpr double kStreamsXfsOverwriteGain = 1.16;
}  // namespace paper

constexpr uint32_t kPagesPerBlock = 64;

// RocksDB's sizes are seed 000's scaled by one factor, 1/128: its 128 MiB
// SST files are 1 MiB on the block SSD (kBlockSstBytes), and level 1 --
// db_bench's default max_bytes_for_level_base, 256 MiB, which the paper
// kept -- is 2 MiB. The paper's 1.6 TB stored (3.8 billion keys of 420
// bytes) spans levels 1 to 5 of a 256 MiB base, most of it in the last;
// this set's 100 MB spans levels 1 to 3 of a 2 MiB base. With the default
// base it sat in L0 and L1 alone, where every L0 compaction rewrites all of
// L1, so that every table lived about as long as every other and the block
// SSD's collection found whole blocks dead (XFS's overwrite at WA 1.16
// with it, 1.71 with 2 MiB, one run each, docs/experiments.md).
constexpr uint64_t kLevelBaseBytes = 2 << 20;

struct Setup {
  std::string name;
  std::string fs;  // "xfs", "f2fs"; empty: ZNS with the zoned file system
  std::string op;  // block.overprovisioning
  // Runs of each point: the headline pair (XFS at 28 % OP, ZNS) three
  // times, the others once, to keep the set within 45 minutes here.
  uint32_t repetitions = 1;
  // The block SSD's write streams (block.streams), and whether db_bench's
  // write-lifetime hints reach them (zonelab vm --write-hints).
  uint32_t streams = 1;
  bool hints = false;
  // Pages of a flash block; the planes hold as many more blocks as makes
  // the same flash.
  uint32_t pages_per_block = kPagesPerBlock;
  // RocksDB's max_bytes_for_level_base; 0: db_bench's default (256 MiB).
  uint64_t level_base_bytes = kLevelBaseBytes;
  // The production drive's front end (production_front_end()) instead of
  // the emulator's.
  bool production = false;
  // The block side's file system mounted with discard (zonelab vm
  // --discard on): what it frees is trimmed on the drive as it goes.
  bool discard = false;
};

struct Scale {
  uint32_t blocks_per_plane;
  uint64_t keys;
  double read_seconds;
  double aging_passes;  // device capacities written to age a drive
  std::vector<Setup> setups;
};

Scale scale_of(const RunOptions& o) {
  if (o.quick) {
    // XFS takes no device under 300 MB: the full run's flash, fewer keys
    // (each of the quick set's 13 phases in the guest runs db_bench there).
    return {
        128, 20'000, 3.0, 1.0, {{"XFS, 28% OP", "xfs", "28%", 1}, {"ZNS, zoned fs", "", "", 1}}};
  }
  return {64,
          250'000,
          10.0,
          5.0,
          {{"XFS, 28% OP", "xfs", "28%", 3},
           {"f2fs, 28% OP", "f2fs", "28%", 1},
           {"f2fs, 28% OP, discard", "f2fs", "28%", 1, 1, false, kPagesPerBlock, kLevelBaseBytes,
            false, true},
           {"XFS, 7% OP", "xfs", "7%", 1},
           {"f2fs, 7% OP", "f2fs", "7%", 1},
           {"ZNS, zoned fs", "", "", 3}}};
}

// The rate-limited writer's rate in device time (db_bench is given the
// wall-clock rate, this over kTimeScale).
constexpr uint64_t kRateLimitBytesPerS = 4 << 20;
// Wall time per device time, on both sides: the device runs 12 times
// slower than the wall clock, so that it, not the host, limits RocksDB.
// In the guest every I/O costs the host context switches (host CPU 150 us
// an operation on XFS against 5-25 us natively), and at time scale 1 the
// block side's dies were busy 15-17 % of db_bench's fillrandom and
// overwrite; at 12 they are busy 98-130 % of it (the guest's unmount
// writes back what was still dirty) and the ZNS side's 61-98 %
// (docs/experiments.md). Every rate and latency reported is in device time:
// db_bench's ops/s times the scale, its percentiles over it. The
// guest's page cache is held to 4 MiB of dirty data (2 MiB before
// writeback starts) so that db_bench's writes reach the device within its
// run: its 384 MiB would otherwise take the whole dataset's writes, where
// the paper's 1.6 TB was many times its host's memory.
constexpr double kTimeScale = 12.0;
constexpr uint64_t kGuestDirtyBytes = 4 << 20;
constexpr uint64_t kGuestDirtyBackgroundBytes = 2 << 20;
constexpr const char* kGuestMemory = "384MiB";
// The guest's disk: `zonelab vm`'s virtio disk, which passes the guest's
// queue and flushes on (UML's ubd disk sends one 4 KiB request at a time
// and no flush).
constexpr const char* kGuestDisk = "virtio";

// The zn540 preset's production front end over this set's flash, for both
// interfaces (controller/front_end.h): its write-back buffer scaled with
// the dies (16 MiB over 32 dies, here 4: 2 MiB), power-safe; its three
// firmware cores and their service times, the mapping table's work, reads
// queued by die, and program/erase suspend, as the preset has them. The
// flash stays the emulator front end's, as in every other member.
const std::vector<std::string>& production_front_end() {
  static const std::vector<std::string> kOverrides = {
      "buffer.size=2MiB",
      "buffer.power_loss_protection=on",
      "buffer.internal_share=18.75%",
      "controller.cores=3",
      "controller.read=10us",
      "controller.write=15us",
      "controller.management=10us",
      "controller.flush=10us",
      "controller.map_update=3290ns",
      "controller.unmap=15200us",
      "controller.unmap_lock=75%",
      "controller.read_dispatch=die",
      "flash.suspend.program=true",
      "flash.suspend.erase=true",
      "flash.suspend.latency=30us",
      "flash.suspend.resume=20us",
      "flash.suspend.max=12",
  };
  return kOverrides;
}

std::vector<std::string> device_overrides(uint32_t blocks_per_plane, const Setup& s) {
  std::vector<std::string> o = {"store.backing=file",
                                "flash.channels=2",
                                "flash.dies_per_channel=2",
                                "zns.channels_per_zone=2",
                                "zns.dies_per_zone=2",
                                fmt::format("flash.pages_per_block={}", s.pages_per_block),
                                fmt::format("flash.blocks_per_plane={}",
                                            blocks_per_plane * kPagesPerBlock / s.pages_per_block),
                                "zns.zone_capacity=16MiB",
                                "zns.zone_size=16MiB",
                                "zns.zone_count=0"};
  o.insert(o.end(), emulator_front_end().begin(), emulator_front_end().end());
  if (s.production) o.insert(o.end(), production_front_end().begin(), production_front_end().end());
  if (s.fs.empty()) {
    o.push_back("interface=zns");
  } else {
    o.push_back("interface=block");
    o.push_back("block.overprovisioning=" + s.op);
    if (s.streams > 1) o.push_back(fmt::format("block.streams={}", s.streams));
  }
  return o;
}

std::string self_path() {
  std::string self = executable_path();
  return self.empty() ? "zonelab" : self;
}

std::string plugin_path() {
  if (const char* env = std::getenv("ZONELAB_ROCKSDB_LIBRARY")) return env;
  return beside_executable("libzonelab_rocksdb.so");
}

// A process run to its end: exit status, its CPU (with its children's) and
// wall time.
struct Ran {
  int status = -1;
  double cpu_s = 0;
  double wall_s = 0;
};

Result<Ran> run_process(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                        const std::string& out_path, const std::string& err_path) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) env_strings.emplace_back(*e);
  env_strings.insert(env_strings.end(), env.begin(), env.end());
  std::vector<char*> envp;
  for (std::string& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  auto start = std::chrono::steady_clock::now();
  pid_t pid = 0;
  int spawned = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return Error{fmt::format("{}: {}", argv[0], std::strerror(spawned))};
  int status = 0;
  rusage usage{};
  while (wait4(pid, &status, 0, &usage) < 0) {
    if (errno != EINTR) return Error{fmt::format("{}: wait: {}", argv[0], std::strerror(errno))};
  }
  Ran r;
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.cpu_s = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
            static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string last_lines(const std::string& text, size_t n) {
  std::vector<std::string> lines;
  std::stringstream s(text);
  for (std::string line; std::getline(s, line);) lines.push_back(line);
  std::string out;
  for (size_t i = lines.size() > n ? lines.size() - n : 0; i < lines.size(); ++i) {
    out += (out.empty() ? "" : " | ") + lines[i];
  }
  return out;
}

// What db_bench said last about an error ("put error: IO error: No space
// left on device ..."), or its last lines: its progress lines end in a
// carriage return, so that an error ends a line of them.
std::string db_bench_said(const std::string& text, size_t lines) {
  size_t at = text.rfind("error:");
  if (at == std::string::npos) return last_lines(text, lines);
  size_t start = text.find_last_of("\r\n", at);
  start = start == std::string::npos ? 0 : start + 1;
  size_t end = text.find_first_of("\r\n", at);
  return text.substr(
      start, std::min<size_t>(end == std::string::npos ? text.size() - start : end - start, 400));
}

// What db_bench printed for its one benchmark.
struct Bench {
  double ops_per_s = 0;
  double seconds = 0;     // the benchmark's own run, wall
  double operations = 0;  // as db_bench counted them (0: it did not say)
  double p50_us = 0, p99_us = 0, p999_us = 0, p9999_us = 0;
};

Result<Bench> parse_db_bench(const std::string& text, const std::string& benchmark) {
  Bench b;
  std::smatch m;
  std::regex summary("(^|\\n)" + benchmark +
                     "\\s*:\\s*[0-9.]+ micros/op ([0-9]+) ops/sec ([0-9.]+) seconds"
                     "(\\s+([0-9]+) operations)?");
  if (!std::regex_search(text, m, summary)) {
    return Error{fmt::format("db_bench printed no {} result: {}", benchmark, last_lines(text, 3))};
  }
  b.ops_per_s = std::stod(m[2]);
  b.seconds = std::stod(m[3]);
  if (m[5].matched) b.operations = std::stod(m[5]);
  // The benchmark's histogram follows its summary line.
  const std::string after = m.suffix().str();
  std::regex pct(
      "Percentiles: P50: ([0-9.]+) P75: [0-9.]+ P99: ([0-9.]+) P99\\.9: ([0-9.]+) P99\\.99: "
      "([0-9.]+)");
  if (std::regex_search(after, m, pct)) {
    b.p50_us = std::stod(m[1]);
    b.p99_us = std::stod(m[2]);
    b.p999_us = std::stod(m[3]);
    b.p9999_us = std::stod(m[4]);
  }
  return b;
}

// One phase's numbers.
struct Phase {
  Bench bench;
  double device_wa = 0;
  uint64_t host_write_bytes = 0;
  uint64_t erases = 0;
  // The dies' mean busy time in the phase's session (device seconds), and
  // its share of the benchmark's own run in device time: a session in the
  // guest also boots, makes and mounts the file system and unmounts it,
  // which a share of the whole session would count as idle time.
  double die_busy_s = 0;
  double die_busy = 0;
  double cpu_us_per_op = 0;
  double wall_s = 0;
  double ops = 0;                            // operations the benchmark did
  uint64_t hint_records = 0;                 // --write-hints: the shim's records taken
  std::vector<uint64_t> stream_write_bytes;  // the served writes by stream
  // The production front end's (zero without it): bytes its buffer took,
  // writes that waited for room, reads it served.
  uint64_t buffer_admitted_bytes = 0;
  uint64_t buffer_waits = 0;
  uint64_t buffer_read_hits = 0;
};

// `session`: the statistics of the phase's session (the plugin's file, or
// zonelab vm's JSON): its device section and its virtual time.
void take_device(Phase& p, const Json& session) {
  const Json& device = session["device"];
  const Json& wa = device["write_amplification"];
  p.device_wa = wa.is_number() ? wa.get<double>() : 1.0;
  p.host_write_bytes = device.value("host_write_bytes", uint64_t{0});
  p.erases = device.value("erases", uint64_t{0});
  p.die_busy_s = mean_busy(device["die_busy"]) *
                 static_cast<double>(session.value("virtual_time_ns", uint64_t{0})) / 1e9;
  if (device.contains("drive")) {
    const Json& drive = device["drive"];
    p.buffer_admitted_bytes = drive.value("buffer_admitted_bytes", uint64_t{0});
    p.buffer_waits = drive.value("buffer_waits", uint64_t{0});
    p.buffer_read_hits = drive.value("buffer_read_hits", uint64_t{0});
  }
}

struct PhaseSpec {
  std::string benchmark;
  bool fresh = false;
  double seconds = 0;
  uint32_t threads = 1;
  uint64_t write_rate = 0;
  std::string label;  // for progress and errors
  // db_bench first waits until RocksDB has no compaction left to do
  // (its waitforcompaction), so that a read phase does not read beside the
  // compactions the writes before it left (and, on the block side, the
  // drive's collection they cause).
  bool settle = false;
};

// RocksDB's target SST size, as seed 000 set it for each side: 128 MiB on
// the block SSD, whose erase unit (a superblock over its dies, about a
// zone's 1 GiB) then holds about 8 files written around the same time; the
// zone's capacity for ZenFS. Scaled: the block SSD here fills 8 planes' open
// 1 MiB blocks together, an 8 MiB unit, so 1 MiB files; the ZNS side's
// 16 MiB zones take 14 MiB files (90 % of a zone, ZenFS's usual advice).
constexpr uint64_t kBlockSstBytes = 1 << 20;
constexpr uint64_t kZnsSstBytes = 14 << 20;
constexpr uint64_t kCompactionReadaheadBytes = 2 << 20;
constexpr uint64_t kSoftPendingCompactionBytes = 64 << 20;
constexpr uint64_t kHardPendingCompactionBytes = 128 << 20;

std::vector<std::string> db_bench_flags(const Scale& scale, const PhaseSpec& p, uint64_t sst_bytes,
                                        uint64_t level_base_bytes) {
  std::vector<std::string> f = {
      "--benchmarks=" + std::string(p.settle ? "waitforcompaction," : "") + p.benchmark,
      fmt::format("--num={}", scale.keys),
      "--key_size=20",
      "--value_size=800",
      "--compression_type=snappy",
      "--compression_ratio=0.5",
      fmt::format("--target_file_size_base={}", sst_bytes),
      fmt::format("--write_buffer_size={}", 4 << 20),
      fmt::format("--cache_size={}", 2 << 20),
      "--max_background_jobs=4",
      "--histogram=1",
      "--stats_interval_seconds=0",
      "--seed=7",
      fmt::format("--threads={}", p.threads),
      fmt::format("--use_existing_db={}", p.fresh ? 0 : 1),
      // Compaction reads 2 MiB at a time on both sides: what RocksDB sets
      // itself under direct reads (the block side's), which the ZNS side,
      // reading without them, would otherwise read block by block.
      fmt::format("--compaction_readahead_size={}", kCompactionReadaheadBytes),
      // Writes slow down, then stop, when compaction falls behind by this
      // much (RocksDB's soft and hard pending-compaction limits; 64 and
      // 256 GiB by default): the tree stays within the block side's
      // 400 MiB whatever the host's speed against the device's (at time
      // scale 6 XFS's overwrite ran out of space without them).
      fmt::format("--soft_pending_compaction_bytes_limit={}", kSoftPendingCompactionBytes),
      fmt::format("--hard_pending_compaction_bytes_limit={}", kHardPendingCompactionBytes),
  };
  if (level_base_bytes != 0) {
    f.push_back(fmt::format("--max_bytes_for_level_base={}", level_base_bytes));
  }
  if (p.seconds > 0) {
    // db_bench looks at the clock every this many operations (1,000 by
    // default: on the slowed device, reads of a Get take milliseconds).
    f.push_back(fmt::format("--duration={}", static_cast<int>(p.seconds)));
    f.push_back("--ops_between_duration_checks=10");
  }
  if (p.write_rate != 0) {
    f.push_back(fmt::format("--benchmark_write_rate_limit={}",
                            static_cast<uint64_t>(static_cast<double>(p.write_rate) / kTimeScale)));
  }
  return f;
}

// A drive of one setup, in a private directory: the image, and where each
// phase's output goes.
struct Drive {
  Setup setup;
  fsys::path dir;
  std::string image;
  bool made_fs = false;  // the block side's file system exists
  int phases = 0;
};

Result<Drive> make_drive(const Scale& scale, const Setup& setup, bool aged,
                         const RunOptions& options) {
  static int counter = 0;
  Drive d;
  d.setup = setup;
  std::error_code ec;
  d.dir = fsys::temp_directory_path(ec) /
          fmt::format("zonelab-fs-vs-zenfs-{}-{}", ::getpid(), ++counter);
  fsys::remove_all(d.dir, ec);
  fsys::create_directories(d.dir / "out", ec);
  if (ec) return Error{fmt::format("{}: {}", d.dir.string(), ec.message())};
  d.image = (d.dir / "dev.img").string();
  auto config = preset_with("zn540", device_overrides(scale.blocks_per_plane, setup));
  if (!config) return Error{config.error()};
  auto created = Stack::create_image(d.image, *config, true);
  if (!created) return Error{created.error()};
  {
    // Every drive is preconditioned, as seed 000's fillrandom "fills drive
    // capacity several times" before the measured runs: written once over,
    // in order, so that the block SSD holds no flash it was never told of
    // (a file system that does not discard never tells it otherwise). An
    // aged drive (seed 004) is written several times its capacity instead:
    // the block SSD at random, the ZNS SSD's zones in random order (reset
    // as they fill). mkfs then resets every zone of the ZNS SSD.
    double passes = aged ? scale.aging_passes : 1.0;
    options.report(fmt::format("rocksdb-fs-vs-zenfs: {}: {} ({:g} capacities written)", setup.name,
                               aged ? "aging" : "preconditioning", passes));
    std::string size = fmt::format("{}%", static_cast<int>(passes * 100));
    std::vector<std::string> argv = {self_path(), "bench",     d.image, "--quiet",        "--size",
                                     size,        "--iodepth", "32",    "--no-wall-clock"};
    if (setup.fs.empty()) {
      argv.insert(argv.end(), {"--rw", "write", "--bs", "64KiB", "--zone_order",
                               aged ? "random" : "sequential"});
    } else if (aged) {
      argv.insert(argv.end(), {"--rw", "randwrite", "--bs", "16KiB"});
    } else {
      argv.insert(argv.end(), {"--rw", "write", "--bs", "1MiB"});
    }
    auto ran = run_process(argv, {}, (d.dir / "age.out").string(), (d.dir / "age.err").string());
    if (!ran) return Error{ran.error()};
    if (ran->status != 0) {
      return Error{fmt::format("{}: preconditioning: {}", setup.name,
                               last_lines(read_text((d.dir / "age.err").string()), 2))};
    }
  }
  if (setup.fs.empty()) {
    auto stack = Stack::open(d.image);
    if (!stack) return Error{stack.error()};
    fs::MkfsOptions mkfs;
    mkfs.uuid_seed = 1;
    if (fs::FsStatus made = fs::ZonedFs::mkfs(**stack, mkfs); !made) {
      return Error{fmt::format("{}: mkfs: {}", setup.name, made.message())};
    }
    if (Outcome closed = (*stack)->close(); !closed) return Error{closed.error()};
  }
  return d;
}

void remove_drive(const Drive& d) {
  std::error_code ec;
  fsys::remove_all(d.dir, ec);
}

// A phase's failure: the drive, its image and every log of its sessions
// (the guest's db_bench output in out/) are kept for a look, and named.
Error failed_on(const Drive& d, const std::string& e) {
  return Error{fmt::format("{} (the drive and its logs are kept in {})", e, d.dir.string())};
}

Result<Phase> run_phase(const Scale& scale, Drive& d, const PhaseSpec& p,
                        const RunOptions& options) {
  options.report(fmt::format("rocksdb-fs-vs-zenfs: {}: {}", d.setup.name, p.label));
  const std::string out = (d.dir / fmt::format("phase{}.out", d.phases)).string();
  const std::string err = (d.dir / fmt::format("phase{}.err", d.phases)).string();
  ++d.phases;
  Phase phase;
  std::vector<std::string> flags = db_bench_flags(
      scale, p, d.setup.fs.empty() ? kZnsSstBytes : kBlockSstBytes, d.setup.level_base_bytes);
  Result<Ran> ran = Error{"not run"};
  std::string bench_text;
  if (d.setup.fs.empty()) {
    const std::string stats = (d.dir / "stats.json").string();
    std::string uri =
        fmt::format("zonelab://{}?timing=modeled&scheduler=mq-deadline&stats={}", d.image, stats);
    if (kTimeScale != 1.0) uri += fmt::format("&time_scale={}", kTimeScale);
    std::vector<std::string> argv = {"db_bench", "--fs_uri=" + uri, "--db=/db"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    ran = run_process(argv, {"LD_PRELOAD=" + plugin_path()}, out, err);
    if (!ran) return Error{ran.error()};
    bench_text = read_text(out) + read_text(err);
    if (ran->status != 0) {
      return Error{fmt::format("{}: {}: db_bench exit {}: {}", d.setup.name, p.label, ran->status,
                               db_bench_said(bench_text, 3))};
    }
    Json s = Json::parse(read_text(stats), nullptr, false);
    if (s.is_discarded()) return Error{fmt::format("{}: no statistics in {}", d.setup.name, stats)};
    take_device(phase, s);
  } else {
    // Reads bypass the guest's page cache, as the ZNS side's do; writes go
    // through it (RocksDB's default): UML's disk says its sectors are 512
    // bytes, so RocksDB's direct writes would be aligned to 512 and the
    // server would merge the 4 KiB LBAs they cut (docs/serve.md).
    std::string command = fmt::format(
        "echo {} > /proc/sys/vm/dirty_bytes && echo {} > /proc/sys/vm/dirty_background_bytes && "
        "db_bench --db=/mnt/db --use_direct_reads=1",
        kGuestDirtyBytes, kGuestDirtyBackgroundBytes);
    for (const std::string& f : flags) command += " " + f;
    command += " > db_bench.txt 2>&1";
    std::vector<std::string> argv = {self_path(),
                                     "vm",
                                     d.image,
                                     "--fs",
                                     d.setup.fs,
                                     "--out",
                                     (d.dir / "out").string(),
                                     "--json",
                                     "--memory",
                                     kGuestMemory,
                                     "--disk",
                                     kGuestDisk,
                                     "--time-scale",
                                     fmt::format("{}", kTimeScale)};
    if (d.made_fs) argv.push_back("--no-mkfs");
    if (d.setup.discard) argv.insert(argv.end(), {"--discard", "on"});
    if (d.setup.hints) argv.push_back("--write-hints");
    argv.insert(argv.end(), {"--", "sh", "-c", command});
    ran = run_process(argv, {}, out, err);
    if (!ran) return Error{ran.error()};
    bench_text = read_text((d.dir / "out" / "db_bench.txt").string());
    std::string text = read_text(out);
    Json j = Json::parse(last_lines(text, 1), nullptr, false);
    if (ran->status != 0 || j.is_discarded()) {
      std::string why = !j.is_discarded() && j.contains("error") ? j["error"].get<std::string>()
                                                                 : last_lines(read_text(err), 2);
      return Error{fmt::format("{}: {}: zonelab vm exit {}: {}; db_bench: {}", d.setup.name,
                               p.label, ran->status, why, db_bench_said(bench_text, 2))};
    }
    d.made_fs = true;
    take_device(phase, j);
    if (j.contains("stream_hints")) {
      const Json& h = j["stream_hints"];
      phase.hint_records = h.value("records", uint64_t{0});
      for (const auto& b : h["write_bytes_by_stream"]) {
        phase.stream_write_bytes.push_back(b.get<uint64_t>());
      }
    }
  }
  auto bench = parse_db_bench(bench_text, p.benchmark);
  if (!bench) return Error{fmt::format("{}: {}: {}", d.setup.name, p.label, bench.error())};
  phase.bench = *bench;
  // db_bench's clock is the wall's: its rates and latencies in device time.
  phase.bench.ops_per_s *= kTimeScale;
  for (double* us :
       {&phase.bench.p50_us, &phase.bench.p99_us, &phase.bench.p999_us, &phase.bench.p9999_us}) {
    *us /= kTimeScale;
  }
  phase.wall_s = ran->wall_s;
  // Operations done: as db_bench counted them; a timed phase's from its
  // wall-clock rate and run where it did not say.
  double ops = bench->operations > 0 ? bench->operations : bench->ops_per_s * bench->seconds;
  if (p.seconds == 0) ops = static_cast<double>(scale.keys);
  phase.ops = ops;
  const double bench_device_s = bench->seconds / kTimeScale;
  phase.die_busy = bench_device_s <= 0 ? 0 : phase.die_busy_s / bench_device_s;
  phase.cpu_us_per_op = ops <= 0 ? 0 : ran->cpu_s * 1e6 / ops;
  return phase;
}

// Every run the figures need: per setup and repetition, fillrandom and
// overwrite; the 28 % setups and ZNS then read.
struct Runs {
  // [setup][repetition]
  std::map<std::string, std::vector<Phase>> fill, overwrite, randomread, limited;
  // seed 004 Fig. 12: [setup + state][repetition][benchmark]
  std::map<std::string, std::vector<std::vector<Phase>>> aging;
  // seed 000 Fig. 10: streams off and on, [setup][repetition]
  std::map<std::string, std::vector<Phase>> streams_fill, streams_overwrite;
  // The production drive on both interfaces, [setup][repetition]
  std::map<std::string, std::vector<Phase>> production_fill, production_overwrite;
};

bool reads_for(const Setup& s) { return s.op != "7%"; }

Outcome run_write_and_read(const Scale& scale, const RunOptions& options, Runs& runs) {
  uint32_t most = 0;
  for (const Setup& setup : scale.setups) most = std::max(most, setup.repetitions);
  for (uint32_t rep = 0; rep < most; ++rep) {
    for (const Setup& setup : scale.setups) {
      if (rep >= setup.repetitions) continue;
      auto drive = make_drive(scale, setup, false, options);
      if (!drive) return Error{drive.error()};
      Drive d = std::move(drive).value();
      std::string r = fmt::format(" (run {}/{})", rep + 1, setup.repetitions);
      auto fill = run_phase(scale, d, {"fillrandom", true, 0, 1, 0, "fillrandom" + r}, options);
      if (!fill) return failed_on(d, fill.error());
      auto over = run_phase(scale, d, {"overwrite", false, 0, 1, 0, "overwrite" + r}, options);
      if (!over) return failed_on(d, over.error());
      runs.fill[setup.name].push_back(*fill);
      runs.overwrite[setup.name].push_back(*over);
      if (reads_for(setup)) {
        auto rr = run_phase(scale, d,
                            {"readrandom", false, scale.read_seconds, 4, 0, "readrandom" + r, true},
                            options);
        if (!rr) return failed_on(d, rr.error());
        auto lim = run_phase(scale, d,
                             {"readwhilewriting", false, scale.read_seconds, 4, kRateLimitBytesPerS,
                              "readwhilewriting, writes limited" + r},
                             options);
        if (!lim) return failed_on(d, lim.error());
        runs.randomread[setup.name].push_back(*rr);
        runs.limited[setup.name].push_back(*lim);
      }
      remove_drive(d);
    }
  }
  return {};
}

// seed 004 Fig. 12: a block SSD of about 15 % OP under XFS (fresh and aged
// once each), and the ZNS SSD (three times each, once with --quick): ZNS's
// loss is the paper's 2-4 %, smaller than one run's spread.
std::vector<Setup> aging_setups(bool quick) {
  return {{"XFS, 15% OP", "xfs", "15%", 1}, {"ZNS, zoned fs", "", "", quick ? 1u : 3u}};
}
const char* const kAgingBenchmarks[] = {"fillrandom", "overwrite", "readrandom"};
// The benchmarks run on each drive, by their index in kAgingBenchmarks:
// --quick leaves out overwrite, to keep the quick set within its budget.
std::vector<size_t> aging_benchmarks(bool quick) {
  if (quick) return {0, 2};
  return {0, 1, 2};
}

Outcome run_aging(const Scale& scale, const RunOptions& options, Runs& runs) {
  for (const Setup& setup : aging_setups(options.quick)) {
    for (uint32_t rep = 0; rep < setup.repetitions; ++rep) {
      for (bool aged : {false, true}) {
        auto drive = make_drive(scale, setup, aged, options);
        if (!drive) return Error{drive.error()};
        Drive d = std::move(drive).value();
        std::vector<Phase> phases;
        for (size_t index : aging_benchmarks(options.quick)) {
          const char* b = kAgingBenchmarks[index];
          bool read = std::string_view(b) == "readrandom";
          PhaseSpec spec{b,
                         std::string_view(b) == "fillrandom",
                         read ? scale.read_seconds : 0,
                         read ? 4u : 1u,
                         0,
                         fmt::format("{} ({}, run {}/{})", b, aged ? "aged" : "fresh", rep + 1,
                                     setup.repetitions),
                         read};
          auto p = run_phase(scale, d, spec, options);
          if (!p) return failed_on(d, p.error());
          phases.push_back(*p);
        }
        remove_drive(d);
        runs.aging[setup.name + (aged ? ", aged" : ", fresh")].push_back(std::move(phases));
      }
    }
  }
  return {};
}

// seed 000 Fig. 10 (§5.3): XFS on the block SSD at 7 % OP with streams
// disabled and enabled. Each stream fills an open block of its own on every
// plane, out of the spare: at 7 % OP a plane of 64 blocks has room for one
// stream only, and a drive whose planes hold few blocks loses a real share
// of its spare to the open blocks of five (planes of 128 blocks of 1 MiB:
// fillrandom's device write amplification was 1.11 with streams off and
// 1.14 and 1.20 in two runs with them on, measured). A drive's planes hold thousands of blocks;
// these drives have the same flash in blocks of 16 pages, four times as many, so that four more
// open blocks a plane cost 1.6 % of the flash rather than 6 % (the other drives' planes of 64
// blocks). Both sides of the pair have that geometry. Five streams: stream 0 for what carries no
// hint (XFS's metadata and log, RocksDB's MANIFEST and LOG), then RocksDB's short (its WAL), medium
// (L0 and the base level) and long-or-extreme hints. Level 1 of 16 MiB, so that the dataset (about
// 105 MB stored) spans levels 0 to 2 and the hints tell them apart (db_bench's default of 256 MiB
// keeps every table in L0 and L1, all of one hint, medium). The pair keeps the 16 MiB it was
// measured with, not the set's 2 MiB (kLevelBaseBytes).
constexpr uint32_t kStreamsPagesPerBlock = 16;
constexpr uint32_t kStreams = 5;
constexpr uint64_t kStreamsLevelBaseBytes = 16 << 20;

std::vector<Setup> streams_setups() {
  return {{"XFS, 7% OP, streams off", "xfs", "7%", 1, 1, false, kStreamsPagesPerBlock,
           kStreamsLevelBaseBytes},
          {"XFS, 7% OP, streams on", "xfs", "7%", 1, kStreams, true, kStreamsPagesPerBlock,
           kStreamsLevelBaseBytes}};
}

// The streams and production pairs' scale. --quick: a quarter of the keys
// and fillrandom alone, to keep the set within its budget.
Scale pair_scale(const Scale& scale, bool quick) {
  Scale s = scale;
  if (quick) s.keys /= 4;
  return s;
}

// fillrandom, then (not under --quick) overwrite, on a fresh drive of each
// setup, into `fill` and `overwrite`.
Outcome run_fill_and_overwrite(const Scale& s, const std::vector<Setup>& setups,
                               const RunOptions& options,
                               std::map<std::string, std::vector<Phase>>& fills,
                               std::map<std::string, std::vector<Phase>>& overwrites) {
  for (const Setup& setup : setups) {
    for (uint32_t rep = 0; rep < setup.repetitions; ++rep) {
      auto drive = make_drive(s, setup, false, options);
      if (!drive) return Error{drive.error()};
      Drive d = std::move(drive).value();
      std::string r = fmt::format(" (run {}/{})", rep + 1, setup.repetitions);
      auto fill = run_phase(s, d, {"fillrandom", true, 0, 1, 0, "fillrandom" + r}, options);
      if (!fill) return failed_on(d, fill.error());
      fills[setup.name].push_back(*fill);
      if (!options.quick) {
        auto over = run_phase(s, d, {"overwrite", false, 0, 1, 0, "overwrite" + r}, options);
        if (!over) return failed_on(d, over.error());
        overwrites[setup.name].push_back(*over);
      }
      remove_drive(d);
    }
  }
  return {};
}

// The production drive (production_front_end()) under both interfaces: XFS
// on the block SSD at 28 % OP, and the zoned file system on ZNS, once each,
// at the set's scale (--quick: a quarter of the keys, fillrandom alone).
std::vector<Setup> production_setups() {
  Setup xfs{"XFS, 28% OP, production drive", "xfs", "28%", 1};
  Setup zns{"ZNS, zoned fs, production drive", "", "", 1};
  xfs.production = zns.production = true;
  return {xfs, zns};
}

// What a member needs run: the write and read pairs (write_throughput,
// read_latency; production compares with their emulator front end), the
// aging pairs (aged), the streams pair, the production pair. A full run
// runs them in this order, each once; `--only MEMBER` runs what that member
// needs and nothing else.
enum class Part { kWriteReadRuns, kAgingRuns, kStreamsRuns, kProductionRuns };

const Result<Runs>& shared_runs(const RunOptions& options, std::vector<Part> need) {
  static std::optional<bool> quick;
  static std::vector<Part> done;
  static Result<Runs> runs = Runs{};  // what the parts in `done` ran, or the first failure
  if (!quick || *quick != options.quick) {
    quick = options.quick;
    done.clear();
    runs = Runs{};
  }
  if (!runs) return runs;
  std::sort(need.begin(), need.end());
  const Scale scale = scale_of(options);
  for (Part part : need) {
    if (std::find(done.begin(), done.end(), part) != done.end()) continue;
    Runs& r = runs.value();
    Outcome ran;
    switch (part) {
      case Part::kWriteReadRuns:
        ran = run_write_and_read(scale, options, r);
        break;
      case Part::kAgingRuns:
        ran = run_aging(scale, options, r);
        break;
      case Part::kStreamsRuns:
        ran = run_fill_and_overwrite(pair_scale(scale, options.quick), streams_setups(), options,
                                     r.streams_fill, r.streams_overwrite);
        break;
      case Part::kProductionRuns:
        ran = run_fill_and_overwrite(pair_scale(scale, options.quick), production_setups(), options,
                                     r.production_fill, r.production_overwrite);
        break;
    }
    if (!ran) {
      runs = Error{ran.error()};
      return runs;
    }
    done.push_back(part);
  }
  return runs;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

template <typename F>
std::vector<double> each(const std::vector<Phase>& phases, F f) {
  std::vector<double> out;
  for (const Phase& p : phases) out.push_back(f(p));
  return out;
}

double med_ops(const std::vector<Phase>& v) {
  return median(each(v, [](const Phase& p) { return p.bench.ops_per_s; }));
}
double med_wa(const std::vector<Phase>& v) {
  return median(each(v, [](const Phase& p) { return p.device_wa; }));
}
double ratio(double a, double b) { return b == 0 ? 0 : a / b; }
// Operations per second of the dies' busy time: what the device, not the
// host, allows (the host's share drops out).
double med_device_ops(const std::vector<Phase>& v) {
  return median(each(v, [](const Phase& p) { return ratio(p.ops, p.die_busy_s); }));
}

Json parameters(const RunOptions& options) {
  const Scale scale = scale_of(options);
  Json p;
  p["base_preset"] = "zn540";
  Json setups = Json::array();
  for (const Setup& s : scale.setups) {
    setups.push_back({{"name", s.name},
                      {"file_system", s.fs.empty() ? "zoned file system (zonelab://)" : s.fs},
                      {"runs", s.repetitions},
                      {"discard", s.discard},
                      {"overrides", device_overrides(scale.blocks_per_plane, s)}});
  }
  p["setups"] = setups;
  p["keys"] = scale.keys;
  p["key_bytes"] = 20;
  p["value_bytes"] = 800;
  p["compression"] = "snappy, ratio 0.5";
  p["read_phase_seconds"] = scale.read_seconds;
  p["reader_threads"] = 4;
  p["rate_limited_writer_bytes_per_s"] = kRateLimitBytesPerS;
  p["time_scale"] = kTimeScale;
  p["rates_and_latencies"] =
      "device time: db_bench's ops/s times time_scale, its latencies over it";
  p["guest_dirty_bytes"] = kGuestDirtyBytes;
  p["guest_dirty_background_bytes"] = kGuestDirtyBackgroundBytes;
  p["guest_disk"] = kGuestDisk;
  p["target_file_size_block"] = kBlockSstBytes;
  p["target_file_size_zns"] = kZnsSstBytes;
  p["max_bytes_for_level_base"] = kLevelBaseBytes;
  p["max_bytes_for_level_base_streams"] = kStreamsLevelBaseBytes;
  p["compaction_readahead_size"] = kCompactionReadaheadBytes;
  p["soft_pending_compaction_bytes_limit"] = kSoftPendingCompactionBytes;
  p["hard_pending_compaction_bytes_limit"] = kHardPendingCompactionBytes;
  p["read_phases_wait_for_compaction"] =
      "db_bench's waitforcompaction before readrandom, the first read phase after overwrite";
  p["guest_memory"] = kGuestMemory;
  p["aging_capacities_written"] = scale.aging_passes;
  p["block_side"] =
      "stock db_bench in User-Mode Linux (zonelab vm), direct reads, buffered writes; mkfs told "
      "the LBA size (XFS -s size=4096, zonelab vm's default), mkfs and "
      "mount without discard (the setup named discard mounts with -o discard)";
  p["zns_side"] = "stock db_bench natively with libzonelab_rocksdb.so preloaded (--fs_uri)";
  return p;
}

std::string spread(const std::vector<double>& v) {
  if (v.empty()) return "-";
  auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return fmt::format("{:.0f}-{:.0f}", *lo, *hi);
}

// ops/s by benchmark (1 fillrandom, 2 overwrite), a line a setup.
PlotSpec ops_by_benchmark_plot(std::string title) {
  return {"benchmark_index", "ops_per_s", "setup",         "benchmark (1 fillrandom, 2 overwrite)",
          "ops/s",           "setup",     std::move(title)};
}

Result<ExperimentResult> run_write_throughput(const RunOptions& options) {
  const auto& runs = shared_runs(options, {Part::kWriteReadRuns});
  if (!runs) return Error{runs.error()};
  const Scale scale = scale_of(options);
  ExperimentResult result;
  result.table = Table({"setup", "benchmark", "benchmark_index", "ops_per_s", "ops_per_s_spread",
                        "device_write_amplification", "erases", "die_busy_share",
                        "ops_per_die_busy_s", "host_cpu_us_per_op", "runs"});
  for (const Setup& s : scale.setups) {
    int index = 1;
    for (const auto* phases : {&runs->fill.at(s.name), &runs->overwrite.at(s.name)}) {
      result.table.add_row(
          {s.name, std::string(index == 1 ? "fillrandom" : "overwrite"), int64_t{index},
           med_ops(*phases),
           spread(each(*phases, [](const Phase& p) { return p.bench.ops_per_s; })), med_wa(*phases),
           median(each(*phases, [](const Phase& p) { return static_cast<double>(p.erases); })),
           median(each(*phases, [](const Phase& p) { return p.die_busy; })),
           med_device_ops(*phases),
           median(each(*phases, [](const Phase& p) { return p.cpu_us_per_op; })),
           static_cast<uint64_t>(phases->size())});
      ++index;
    }
  }
  result.parameters = parameters(options);
  result.plot = ops_by_benchmark_plot(
      "RocksDB on kernel file systems vs the zoned file system (seed 000 Fig. 6, 9)");
  const std::string zns = "ZNS, zoned fs";
  const std::string xfs = "XFS, 28% OP";
  result.comparisons.push_back(emerged(
      {"overwrite ops/s, ZNS / XFS 28% OP", "x", paper::kOverwriteZnsOverXfs,
       ratio(med_ops(runs->overwrite.at(zns)), med_ops(runs->overwrite.at(xfs))),
       "device time, the device slowed by time_scale so that it bounds both sides (the dies' "
       "busy share in the table)"}));
  result.comparisons.push_back(emerged(
      {"overwrite ops per second of die time, ZNS / XFS 28% OP", "x", paper::kOverwriteZnsOverXfs,
       ratio(med_device_ops(runs->overwrite.at(zns)), med_device_ops(runs->overwrite.at(xfs))),
       "operations over the dies' mean busy time in the phase's session: the device's cost "
       "per operation"}));
  result.comparisons.push_back(emerged({"device write amplification (overwrite), XFS 28% OP", "x",
                                        paper::kXfsDeviceWa, med_wa(runs->overwrite.at(xfs)), ""}));
  if (runs->overwrite.count("f2fs, 28% OP") != 0) {
    result.comparisons.push_back(
        emerged({"device write amplification (overwrite), f2fs 28% OP", "x", paper::kF2fsDeviceWa,
                 med_wa(runs->overwrite.at("f2fs, 28% OP")), ""}));
  }
  if (runs->overwrite.count("f2fs, 28% OP, discard") != 0) {
    result.comparisons.push_back(
        emerged({"device write amplification (overwrite), f2fs 28% OP, mounted with discard", "x",
                 std::nullopt, med_wa(runs->overwrite.at("f2fs, 28% OP, discard")),
                 "what f2fs frees trimmed as it goes"}));
  }
  result.comparisons.push_back(
      closed_form("ZNS has no device GC: every flash program is a host write",
                  {"device write amplification (overwrite), ZNS", "x", paper::kZnsDeviceWa,
                   med_wa(runs->overwrite.at(zns)), ""}));
  for (const char* fs : {"XFS", "f2fs"}) {
    std::string at28 = fmt::format("{}, 28% OP", fs);
    std::string at7 = fmt::format("{}, 7% OP", fs);
    if (runs->fill.count(at7) == 0) continue;
    result.comparisons.push_back(emerged(
        {fmt::format("fillrandom ops/s, {} 28% OP / 7% OP", fs), "x", paper::kFillrandomOpGain,
         ratio(med_ops(runs->fill.at(at28)), med_ops(runs->fill.at(at7))), "Fig. 9a"}));
    result.comparisons.push_back(emerged(
        {fmt::format("overwrite ops/s, {} 28% OP / 7% OP", fs), "x",
         std::string(fs) == "XFS" ? paper::kOverwriteOpGainXfs : paper::kOverwriteOpGainF2fs,
         ratio(med_ops(runs->overwrite.at(at28)), med_ops(runs->overwrite.at(at7))), "Fig. 9b"}));
    result.comparisons.push_back(
        emerged({fmt::format("device write amplification (overwrite), "
                             "{} 7% OP",
                             fs),
                 "x", std::nullopt, med_wa(runs->overwrite.at(at7)), "the paper gives no number"}));
  }
  return result;
}

Result<ExperimentResult> run_read_latency(const RunOptions& options) {
  const auto& runs = shared_runs(options, {Part::kWriteReadRuns});
  if (!runs) return Error{runs.error()};
  const Scale scale = scale_of(options);
  ExperimentResult result;
  result.table = Table({"series", "percentile", "latency_us", "order", "read_ops_per_s"});
  for (const Setup& s : scale.setups) {
    if (!reads_for(s)) continue;
    for (const auto& [name, phases] : {std::pair{"randomread", &runs->randomread.at(s.name)},
                                       std::pair{"rww limited", &runs->limited.at(s.name)}}) {
      const double ops = med_ops(*phases);
      int order = 0;
      for (auto [pct, field] :
           {std::pair{50.0, &Bench::p50_us}, std::pair{99.0, &Bench::p99_us},
            std::pair{99.9, &Bench::p999_us}, std::pair{99.99, &Bench::p9999_us}}) {
        double v = median(each(*phases, [f = field](const Phase& p) { return p.bench.*f; }));
        result.table.add_row({fmt::format("{}, {}", s.name, name), pct, v, int64_t{order++}, ops});
      }
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
  const std::string zns = "ZNS, zoned fs";
  const std::string xfs = "XFS, 28% OP";
  auto med_pct = [](const std::vector<Phase>& v, double Bench::*f) {
    return median(each(v, [f](const Phase& p) { return p.bench.*f; }));
  };
  result.comparisons.push_back(
      emerged({"randomread P99, ZNS / XFS 28% OP", "x", paper::kRandomReadP99ZnsOverXfs,
               ratio(med_pct(runs->randomread.at(zns), &Bench::p99_us),
                     med_pct(runs->randomread.at(xfs), &Bench::p99_us)),
               "a Get on the block side goes through UML's QD1 disk path"}));
  result.comparisons.push_back(emerged({"rate-limited readwhilewriting P99.9, ZNS / XFS 28% OP",
                                        "x", paper::kRateLimitedP999ZnsOverXfs,
                                        ratio(med_pct(runs->limited.at(zns), &Bench::p999_us),
                                              med_pct(runs->limited.at(xfs), &Bench::p999_us)),
                                        "writes limited to 4 MiB/s (the paper: 20 MiB/s)"}));
  return result;
}

Result<ExperimentResult> run_aged(const RunOptions& options) {
  const auto& runs = shared_runs(options, {Part::kAgingRuns});
  if (!runs) return Error{runs.error()};
  ExperimentResult result;
  result.table =
      Table({"setup", "benchmark", "benchmark_index", "runs", "fresh_ops_per_s", "aged_ops_per_s",
             "aged_over_fresh", "aged_device_write_amplification", "fresh_ops_per_s_min",
             "fresh_ops_per_s_max", "aged_ops_per_s_min", "aged_ops_per_s_max"});
  std::map<std::string, double> worst_loss;
  for (const Setup& s : aging_setups(options.quick)) {
    const auto& fresh = runs->aging.at(s.name + ", fresh");
    const auto& aged = runs->aging.at(s.name + ", aged");
    const std::vector<size_t> run = aging_benchmarks(options.quick);
    for (size_t i = 0; i < run.size(); ++i) {
      const size_t b = run[i];
      std::vector<double> f, a, wa;
      for (const auto& rep : fresh) f.push_back(rep[i].bench.ops_per_s);
      for (const auto& rep : aged) {
        a.push_back(rep[i].bench.ops_per_s);
        wa.push_back(rep[i].device_wa);
      }
      double r = ratio(median(a), median(f));
      worst_loss[s.name] = std::max(worst_loss[s.name], 1 - r);
      result.table.add_row(
          {s.name, std::string(kAgingBenchmarks[b]), static_cast<int64_t>(b + 1),
           static_cast<uint64_t>(a.size()), median(f), median(a), r, median(wa),
           *std::min_element(f.begin(), f.end()), *std::max_element(f.begin(), f.end()),
           *std::min_element(a.begin(), a.end()), *std::max_element(a.begin(), a.end())});
    }
  }
  result.parameters = parameters(options);
  result.parameters["aging_setups"] = Json::array({"XFS on the block SSD at 15% OP", "ZNS"});
  result.plot = {"benchmark_index",
                 "aged_over_fresh",
                 "setup",
                 "benchmark (1 fillrandom, 2 overwrite, 3 readrandom)",
                 "aged / fresh ops/s",
                 "setup",
                 "Aged against fresh drives (seed 004 Fig. 12)"};
  result.comparisons.push_back(
      emerged({"largest loss, aged block SSD (XFS, 15% OP)", "share", paper::kAgedBlockLoss,
               worst_loss["XFS, 15% OP"], "the paper: 44-58 %"}));
  result.comparisons.push_back(emerged(
      {"largest loss, aged ZNS SSD", "share", paper::kAgedZnsLoss, worst_loss["ZNS, zoned fs"],
       "the paper: 2-4 % (8 % on readrandom); of the medians of the runs"}));
  return result;
}

// Each setup's fillrandom (benchmark index 1) and overwrite (2) phases of a
// pair member, in order; --quick has no overwrite.
template <typename F>
void for_each_pair_phase(const std::vector<Setup>& setups,
                         const std::map<std::string, std::vector<Phase>>& fills,
                         const std::map<std::string, std::vector<Phase>>& overwrites, F f) {
  for (const Setup& s : setups) {
    int64_t index = 0;
    for (const auto* by_setup : {&fills, &overwrites}) {
      ++index;
      if (by_setup->count(s.name) == 0) continue;
      f(s, std::string(index == 1 ? "fillrandom" : "overwrite"), index, by_setup->at(s.name));
    }
  }
}

Result<ExperimentResult> run_streams_member(const RunOptions& options) {
  const auto& runs = shared_runs(options, {Part::kStreamsRuns});
  if (!runs) return Error{runs.error()};
  const Scale scale = pair_scale(scale_of(options), options.quick);
  ExperimentResult result;
  result.table = Table({"setup", "benchmark", "benchmark_index", "ops_per_s",
                        "device_write_amplification", "erases", "die_busy_share",
                        "ops_per_die_busy_s", "hint_records", "hinted_stream_write_share", "runs"});
  for_each_pair_phase(
      streams_setups(), runs->streams_fill, runs->streams_overwrite,
      [&](const Setup& s, const std::string& benchmark, int64_t index,
          const std::vector<Phase>& phases) {
        // The share of the served writes that went to a hinted stream (1+).
        auto hinted_share = [](const Phase& p) {
          uint64_t all = 0, hinted = 0;
          for (size_t i = 0; i < p.stream_write_bytes.size(); ++i) {
            all += p.stream_write_bytes[i];
            if (i > 0) hinted += p.stream_write_bytes[i];
          }
          return all == 0 ? 0.0 : static_cast<double>(hinted) / static_cast<double>(all);
        };
        result.table.add_row(
            {s.name, benchmark, index, med_ops(phases), med_wa(phases),
             median(each(phases, [](const Phase& p) { return static_cast<double>(p.erases); })),
             median(each(phases, [](const Phase& p) { return p.die_busy; })),
             med_device_ops(phases),
             median(
                 each(phases, [](const Phase& p) { return static_cast<double>(p.hint_records); })),
             median(each(phases, hinted_share)), static_cast<uint64_t>(phases.size())});
      });
  result.parameters = parameters(options);
  Json setups = Json::array();
  for (const Setup& s : streams_setups()) {
    setups.push_back({{"name", s.name},
                      {"write_hints", s.hints},
                      {"overrides", device_overrides(scale.blocks_per_plane, s)}});
  }
  result.parameters["streams_setups"] = setups;
  result.parameters["streams_keys"] = scale.keys;
  result.parameters["streams_max_bytes_for_level_base"] = kStreamsLevelBaseBytes;
  result.parameters["streams_hint_to_stream"] =
      "none: 0 (XFS's metadata and log); short (WAL): 2; medium (L0, base level): 3; long, "
      "extreme: 4";
  result.plot =
      ops_by_benchmark_plot("RocksDB on XFS at 7% OP, streams off and on (seed 000 Fig. 10)");
  const std::string off = streams_setups()[0].name;
  const std::string on = streams_setups()[1].name;
  result.comparisons.push_back(
      emerged({"fillrandom ops/s, XFS 7% OP, streams on / off", "x", paper::kStreamsXfsFillGain,
               ratio(med_ops(runs->streams_fill.at(on)), med_ops(runs->streams_fill.at(off))),
               "device time"}));
  if (runs->streams_overwrite.empty()) return result;  // --quick
  result.comparisons.push_back(emerged(
      {"overwrite ops/s, XFS 7% OP, streams on / off", "x", paper::kStreamsXfsOverwriteGain,
       ratio(med_ops(runs->streams_overwrite.at(on)), med_ops(runs->streams_overwrite.at(off))),
       ""}));
  result.comparisons.push_back(
      emerged({"overwrite ops per second of die time, XFS 7% OP, streams on / off", "x",
               paper::kStreamsXfsOverwriteGain,
               ratio(med_device_ops(runs->streams_overwrite.at(on)),
                     med_device_ops(runs->streams_overwrite.at(off))),
               "the device's cost per operation, the host's taken out"}));
  result.comparisons.push_back(emerged(
      {"device write amplification (overwrite), XFS 7% OP, streams on / off", "x", std::nullopt,
       ratio(med_wa(runs->streams_overwrite.at(on)), med_wa(runs->streams_overwrite.at(off))),
       "the paper gives no number"}));
  return result;
}

Result<ExperimentResult> run_production_member(const RunOptions& options) {
  const auto& runs = shared_runs(options, {Part::kWriteReadRuns, Part::kProductionRuns});
  if (!runs) return Error{runs.error()};
  const Scale scale = pair_scale(scale_of(options), options.quick);
  ExperimentResult result;
  result.table = Table({"setup", "benchmark", "benchmark_index", "ops_per_s",
                        "device_write_amplification", "die_busy_share", "host_cpu_us_per_op",
                        "buffer_admitted_bytes", "buffer_waits", "buffer_read_hits", "runs"});
  for_each_pair_phase(
      production_setups(), runs->production_fill, runs->production_overwrite,
      [&](const Setup& s, const std::string& benchmark, int64_t index,
          const std::vector<Phase>& phases) {
        auto med = [&](auto f) { return median(each(phases, f)); };
        result.table.add_row(
            {s.name, benchmark, index, med_ops(phases), med_wa(phases),
             med([](const Phase& p) { return p.die_busy; }),
             med([](const Phase& p) { return p.cpu_us_per_op; }),
             med([](const Phase& p) { return static_cast<double>(p.buffer_admitted_bytes); }),
             med([](const Phase& p) { return static_cast<double>(p.buffer_waits); }),
             med([](const Phase& p) { return static_cast<double>(p.buffer_read_hits); }),
             static_cast<uint64_t>(phases.size())});
      });
  result.parameters = parameters(options);
  Json setups = Json::array();
  for (const Setup& s : production_setups()) {
    setups.push_back(
        {{"name", s.name}, {"overrides", device_overrides(scale.blocks_per_plane, s)}});
  }
  result.parameters["production_setups"] = setups;
  result.parameters["production_keys"] = scale.keys;
  result.plot = ops_by_benchmark_plot(
      "RocksDB on XFS and the zoned fs, the production front end on both interfaces");
  const std::string xfs = production_setups()[0].name;
  const std::string zns = production_setups()[1].name;
  // The same ratio on the emulator front end (write_throughput's runs, at
  // the set's full key count; --quick: the same count as here).
  auto emulator_ratio = [&](const std::map<std::string, std::vector<Phase>>& by_setup) {
    if (by_setup.count("XFS, 28% OP") == 0 || by_setup.count("ZNS, zoned fs") == 0) return 0.0;
    return ratio(med_ops(by_setup.at("ZNS, zoned fs")), med_ops(by_setup.at("XFS, 28% OP")));
  };
  double fill =
      ratio(med_ops(runs->production_fill.at(zns)), med_ops(runs->production_fill.at(xfs)));
  result.comparisons.push_back(
      emerged({"fillrandom ops/s, ZNS / XFS 28% OP, production drive", "x", std::nullopt, fill,
               fmt::format("on the emulator front end: {:.2f} (write_throughput)",
                           emulator_ratio(runs->fill))}));
  if (runs->production_overwrite.empty()) return result;  // --quick
  result.comparisons.push_back(emerged(
      {"overwrite ops/s, ZNS / XFS 28% OP, production drive", "x", paper::kOverwriteZnsOverXfs,
       ratio(med_ops(runs->production_overwrite.at(zns)),
             med_ops(runs->production_overwrite.at(xfs))),
       fmt::format("on the emulator front end: {:.2f} (write_throughput)",
                   emulator_ratio(runs->overwrite))}));
  result.comparisons.push_back(
      emerged({"device write amplification (overwrite), XFS 28% OP, "
               "production drive",
               "x", paper::kXfsDeviceWa, med_wa(runs->production_overwrite.at(xfs)), ""}));
  result.comparisons.push_back(
      emerged({"device write amplification (overwrite), ZNS, production drive", "x",
               paper::kZnsDeviceWa, med_wa(runs->production_overwrite.at(zns)), ""}));
  return result;
}

constexpr Experiment kExperiments[] = {
    {"write_throughput",
     "RocksDB fillrandom and overwrite: XFS and f2fs on the block SSD, the zoned fs on ZNS",
     "seed 000 §5.2, Fig. 6 and 9",
     "Stock db_bench fillrandom then overwrite: inside User-Mode Linux on XFS and f2fs on the "
     "block-interface SSD at 28 % and 7 % OP, and natively on the zoned file system on the ZNS "
     "SSD of the same flash. Median of the repetitions with their spread; device write "
     "amplification, erases, the dies' busy share, host CPU per operation.",
     run_write_throughput},
    {"read_latency", "RocksDB read latency: randomread and rate-limited readwhilewriting",
     "seed 000 §5.2, Fig. 8",
     "After the writes: 4 threads of random reads, then the same beside a writer limited to "
     "4 MiB/s; db_bench's P50, P99, P99.9 and P99.99 for the 28 % OP setups and ZNS.",
     run_read_latency},
    {"aged", "Aged against fresh: the block SSD at 15 % OP under XFS, and ZNS", "seed 004 Fig. 12",
     "fillrandom, overwrite and readrandom on a fresh drive and on one aged by writing it "
     "several times over first (random 16 KiB writes on the block SSD; zones written in random "
     "order on ZNS), the file system made without discard (--quick: fillrandom and readrandom).",
     run_aged},
    {"streams", "Streams: RocksDB on XFS at 7 % OP with the block SSD's streams off and on",
     "seed 000 §5.3, Fig. 10",
     "Stock db_bench fillrandom then overwrite inside User-Mode Linux on XFS on the block SSD at "
     "7 % OP, its streams disabled (one) and enabled (five, db_bench's write-lifetime hints "
     "carried to them by zonelab vm --write-hints); the same flash in blocks of 16 pages, so "
     "that five streams' open blocks take a small share of 7 % OP's spare, as on a drive "
     "(--quick: fillrandom of a quarter of the keys only), and a 16 MiB level 1 so that the "
     "tables span three levels of two hints. f2fs "
     "is not run: it writes at its logs' heads, "
     "not where fallocate reserved room, so the hints cannot be mapped to its blocks "
     "(docs/serve.md).",
     run_streams_member},
    {"production", "One production drive under both interfaces: XFS on the block SSD, ZNS",
     "seed 000 §5.2, Fig. 6",
     "Stock db_bench fillrandom then overwrite on XFS on the block SSD at 28 % OP and on the "
     "zoned file system on ZNS, both drives with the zn540 preset's production front end "
     "(write-back buffer scaled to 2 MiB, power-safe; three firmware cores; the mapping "
     "table's work; reads queued by die; program/erase suspend) over the set's flash, once each "
     "(--quick: fillrandom of a quarter of the keys only); the emulator front end's ratio "
     "beside.",
     run_production_member},
};

}  // namespace

ExperimentSet rocksdb_fs_vs_zenfs_experiments() {
  return {"rocksdb-fs-vs-zenfs",
          "RocksDB on XFS and f2fs on a block SSD against the zoned file system on ZNS",
          "seed 000 §5.2-5.3, seed 004 Fig. 12", kExperiments, /*deterministic=*/false};
}

}  // namespace zonelab
