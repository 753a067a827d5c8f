// The kv command; see kv_command.h.
#include "tools/kv_command.h"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <charconv>
#include <cmath>
#include <csignal>
#include <filesystem>

#include "common/schedulers.h"
#include "common/units.h"
#include "fs/journal.h"
#include "kv/runtime.h"
#include "sim/realtime.h"

namespace zonelab::cli {
namespace {

namespace kv = rocksdb_plugin;

// db_bench's default value size; YCSB's record is 10 fields of 100 bytes.
constexpr uint32_t kDbBenchValueBytesDefault = 100;
constexpr uint32_t kYcsbValueBytesDefault = 1000;
// Progress lines start once a phase has run this long.
constexpr double kProgressAfterSeconds = 2.0;

// "--flag VALUE: reason", the value as written.
std::string flag_error(const char* flag, const std::string& text, const std::string& reason) {
  return fmt::format("{} '{}': {}", flag, one_line(text, 64), reason);
}

std::optional<std::string> count_flag(const char* flag, const std::optional<std::string>& text,
                                      uint64_t min, uint64_t max, uint64_t* out) {
  if (!text) return std::nullopt;
  auto n = parse_count(*text);
  if (!n) return flag_error(flag, *text, "not a whole number");
  if (*n < min) return flag_error(flag, *text, fmt::format("less than {}", min));
  if (*n > max) return flag_error(flag, *text, fmt::format("more than the limit of {}", max));
  *out = *n;
  return std::nullopt;
}

std::optional<std::string> size_flag(const char* flag, const std::optional<std::string>& text,
                                     uint64_t min, uint64_t max, uint64_t* out) {
  if (!text) return std::nullopt;
  auto n = parse_job_size_bytes(*text, kKbBaseDefault);
  if (!n) return fmt::format("{}: {}", flag, n.error());
  if (*n < min) {
    std::string bytes =
        format_size(min) == std::to_string(min) ? "bytes" : fmt::format("({} bytes)", min);
    return flag_error(flag, *text, fmt::format("less than {} {}", format_size(min), bytes));
  }
  if (*n > max) {
    return flag_error(flag, *text,
                      fmt::format("more than the limit of {} ({} bytes)", format_size(max), max));
  }
  *out = *n;
  return std::nullopt;
}

std::optional<std::string> seconds_flag(const char* flag, const std::optional<std::string>& text,
                                        double min_s, double max_s, double* out) {
  if (!text) return std::nullopt;
  auto ns = parse_job_time_ns(*text);
  if (!ns) return fmt::format("{}: {}", flag, ns.error());
  double seconds = static_cast<double>(*ns) / 1e9;
  if (seconds < min_s || seconds > max_s) {
    return flag_error(flag, *text, fmt::format("from {:g} to {:g} seconds", min_s, max_s));
  }
  *out = seconds;
  return std::nullopt;
}

std::optional<std::string> choice_flag(const char* flag, const std::string& text,
                                       std::initializer_list<std::string_view> choices) {
  std::string names;
  for (std::string_view choice : choices) {
    if (text == choice) return std::nullopt;
    names += (names.empty() ? "" : ", ") + std::string(choice);
  }
  return flag_error(flag, text, "one of " + names);
}

// Bytes outside [A-Za-z0-9/._~-] as %XX, so any path goes into the URI.
std::string uri_escape(std::string_view path) {
  std::string out;
  for (char c : path) {
    auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '/' || c == '.' || c == '_' || c == '~' || c == '-') {
      out += c;
    } else {
      out += fmt::format("%{:02X}", u);
    }
  }
  return out;
}

Result<std::string> image_uri(const KvCommandOptions& c, double time_scale) {
  std::error_code ec;
  std::filesystem::path absolute = std::filesystem::absolute(c.image, ec);
  if (ec) return Error{fmt::format("kv: {}: {}", one_line(c.image), ec.message())};
  std::string uri = fmt::format(
      "zonelab://{}?timing={}&time_scale={}&scheduler={}&pacing={}&gc={}&write_behind={}&"
      "stats=none",
      uri_escape(absolute.lexically_normal().string()), c.timing, time_scale, c.scheduler, c.pacing,
      c.gc, c.write_behind);
  if (c.create) uri += "&create=" + uri_escape(*c.create);
  if (c.power_cut_after) {
    const std::string& n = *c.power_cut_after;
    if (n.empty() || n.size() > 19 || n.find_first_not_of("0123456789") != std::string::npos) {
      return Error{fmt::format("--power-cut-after {}: a count of commands", one_line(n))};
    }
    uri += "&power_cut_after=" + n;
  }
  return uri;
}

std::optional<std::string> check_switches(const KvCommandOptions& c) {
  if (auto bad = choice_flag("--timing", c.timing, {"modeled", "off"})) return bad;
  if (!known_scheduler(c.scheduler)) {
    return flag_error("--scheduler", c.scheduler, "one of " + scheduler_list());
  }
  if (auto bad = choice_flag("--pacing", c.pacing, {"auto", "spin", "sleep"})) return bad;
  if (auto bad = choice_flag("--gc", c.gc, {"on", "off"})) return bad;
  if (auto bad = choice_flag("--write-behind", c.write_behind, {"on", "off"})) return bad;
  if (c.verify_keys) {
    if (auto bad = choice_flag("--verify-keys", *c.verify_keys, {"db_bench", "ycsb"})) return bad;
  }
  if (c.create && !preset_config(*c.create)) {
    std::string names;
    for (const auto& name : preset_names()) names += (names.empty() ? "" : ", ") + name;
    return flag_error("--create", *c.create, "not a preset (" + names + ")");
  }
  return std::nullopt;
}

// The workload's own rules: what applies to which family.
std::optional<std::string> check_combinations(const KvCommandOptions& c,
                                              const kv::WorkloadSpec& spec) {
  bool verify = spec.family == kv::WorkloadFamily::kVerify;
  bool ycsb_keys = spec.family == kv::WorkloadFamily::kYcsb ||
                   (verify && c.verify_keys && *c.verify_keys == "ycsb");
  if (c.key_size && ycsb_keys) {
    return "--key-size: YCSB keys are \"user\" + a hash of the key number; the key size applies "
           "to db_bench's workloads";
  }
  if (c.write_rate && !spec.background_writer) {
    return fmt::format("--write-rate: {} has no background writer (readwhilewriting has)",
                       spec.name);
  }
  if (verify && (c.ops || c.duration)) {
    return "--workload verify reads every key of the ack log: no --ops or --duration";
  }
  if (c.verify_keys && !verify) return "--verify-keys applies to --workload verify";
  return std::nullopt;
}

std::optional<std::string> parse_sizes(const KvCommandOptions& c, const kv::WorkloadSpec& spec,
                                       kv::KvOptions& o) {
  bool ycsb = spec.family == kv::WorkloadFamily::kYcsb ||
              (spec.family == kv::WorkloadFamily::kVerify && c.verify_keys == "ycsb");
  uint64_t value = ycsb ? kYcsbValueBytesDefault : kDbBenchValueBytesDefault;
  uint64_t key = o.key_bytes;
  if (auto bad = size_flag("--value-size", c.value_size, 0, kv::kKvValueBytesMax, &value)) {
    return bad;
  }
  if (auto bad =
          size_flag("--key-size", c.key_size, kv::kDbBenchKeyBytesMin, kv::kKeyBytesMax, &key)) {
    return bad;
  }
  o.value_bytes = static_cast<uint32_t>(value);
  o.key_bytes = static_cast<uint32_t>(key);
  if (auto bad = size_flag("--target-file-size", c.target_file_size, kv::kKvTargetFileBytesMin,
                           kv::kKvTargetFileBytesMax, &o.target_file_size_bytes)) {
    return bad;
  }
  if (auto bad = size_flag("--max-bytes-for-level-base", c.max_bytes_for_level_base,
                           kv::kKvLevelBaseBytesMin, kv::kKvLevelBaseBytesMax,
                           &o.max_bytes_for_level_base)) {
    return bad;
  }
  if (auto bad = size_flag("--write-buffer-size", c.write_buffer_size, kv::kKvWriteBufferBytesMin,
                           kv::kKvWriteBufferBytesMax, &o.write_buffer_bytes)) {
    return bad;
  }
  if (auto bad = size_flag("--compaction-readahead-size", c.compaction_readahead_size, 0,
                           kv::kKvCompactionReadaheadBytesMax, &o.compaction_readahead_bytes)) {
    return bad;
  }
  return size_flag("--cache-size", c.cache_size, 0, kv::kKvWriteBufferBytesMax,
                   &o.block_cache_bytes);
}

std::optional<std::string> parse_counts(const KvCommandOptions& c, kv::KvOptions& o) {
  uint64_t threads = o.threads, jobs = o.max_background_jobs, ops = 0;
  if (auto bad = count_flag("--num", c.num, 1, kv::kKvNumMax, &o.num)) return bad;
  if (auto bad = count_flag("--ops", c.ops, 1, kv::kKvOpsMax, &ops)) return bad;
  if (c.ops) o.ops = ops;
  if (auto bad = count_flag("--threads", c.threads, 1, kv::kKvThreadsMax, &threads)) return bad;
  o.threads = static_cast<uint32_t>(threads);
  if (auto bad = count_flag("--max-background-jobs", c.max_background_jobs, 1,
                            kv::kKvBackgroundJobsMax, &jobs)) {
    return bad;
  }
  o.max_background_jobs = static_cast<uint32_t>(jobs);
  if (auto bad = count_flag("--seed", c.seed, 0, UINT64_MAX, &o.seed)) return bad;
  if (c.write_rate) {
    auto rate = parse_job_rate_bytes_per_s(*c.write_rate, kKbBaseDefault);
    if (!rate) return "--write-rate: " + rate.error();
    if (*rate == 0 || *rate > kv::kKvWriteRateBytesPerSecondMax) {
      return flag_error(
          "--write-rate", *c.write_rate,
          fmt::format("from 1 B/s to {}/s", format_size(kv::kKvWriteRateBytesPerSecondMax)));
    }
    o.write_rate_bytes_per_s = *rate;
  }
  if (auto bad =
          seconds_flag("--duration", c.duration, 1e-3, kv::kKvDurationSecondsMax, &o.duration_s)) {
    return bad;
  }
  return seconds_flag("--report-interval", c.report_interval, kv::kKvReportIntervalSecondsMin,
                      kv::kKvReportIntervalSecondsMax, &o.report_interval_s);
}

Result<double> parse_time_scale(const KvCommandOptions& c) {
  if (!c.time_scale) return 1.0;
  double scale = 0;
  const std::string& text = *c.time_scale;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), scale);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty() ||
      !(scale >= kMinTimeScale && scale <= kMaxTimeScale)) {
    return Error{
        flag_error("--time-scale", text,
                   fmt::format("a number from {:g} to {:g}", kMinTimeScale, kMaxTimeScale))};
  }
  return scale;
}

// Everything the command line says, checked; nothing is opened yet.
Result<kv::KvOptions> kv_options(const KvCommandOptions& c) {
  const kv::WorkloadSpec* spec = kv::find_workload(c.workload);
  if (spec == nullptr) {
    return Error{flag_error("--workload", c.workload, "one of " + kv::workload_names())};
  }
  kv::KvOptions o;
  o.workload = spec;
  if (auto bad = check_switches(c)) return Error{*bad};
  if (auto bad = check_combinations(c, *spec)) return Error{*bad};
  if (auto bad = parse_counts(c, o)) return Error{*bad};
  if (auto bad = parse_sizes(c, *spec, o)) return Error{*bad};
  auto scale = parse_time_scale(c);
  if (!scale) return Error{scale.error()};
  auto uri = image_uri(c, *scale);
  if (!uri) return Error{uri.error()};
  o.uri = *uri;
  o.sync = c.sync;
  o.disable_wal = c.disable_wal;
  o.db_dir = c.db;
  o.fresh = c.fresh;
  if (c.ack_log) o.ack_log_path = *c.ack_log;
  if (c.verify_keys && *c.verify_keys == "ycsb") o.verify_keys = kv::WorkloadFamily::kYcsb;
  if (auto bad = kv::check_kv_options(o)) return Error{*bad};
  return o;
}

std::string us(double ns) { return fmt::format("{:.1f}", ns / 1000.0); }

// "mean M p50 A p95 B p99 C p99.9 D max E", in us.
std::string percentiles_us(const Histogram& h) {
  return fmt::format("mean {} p50 {} p95 {} p99 {} p99.9 {} max {}", us(h.mean()),
                     us(static_cast<double>(h.percentile(50))),
                     us(static_cast<double>(h.percentile(95))),
                     us(static_cast<double>(h.percentile(99))),
                     us(static_cast<double>(h.percentile(99.9))), us(static_cast<double>(h.max())));
}

void print_phase(const kv::KvOptions& o, const kv::KvPhase& phase) {
  std::string label = std::string(o.workload->name);
  if (phase.name != "run" && phase.name != label) label += " " + phase.name;
  uint64_t ops = phase.ops();
  double micros_per_op = ops == 0 ? 0 : phase.seconds * 1e6 / static_cast<double>(ops);
  double ops_per_s = phase.seconds > 0 ? static_cast<double>(ops) / phase.seconds : 0;
  fmt::print(
      "{:<18}: {:>11.3f} micros/op {:>9.0f} ops/sec {:>9.3f} seconds {:>10} operations; "
      "{:>7.1f} MB/s{}\n",
      label, micros_per_op, ops_per_s, phase.seconds, ops,
      phase.seconds > 0 ? static_cast<double>(phase.bytes()) / phase.seconds / 1e6 : 0.0,
      phase.interrupted ? " (interrupted)" : "");
  for (size_t i = 0; i < kv::kOpTypeCount; ++i) {
    const kv::KvOpStats& s = phase.by_type[i];
    if (s.ops == 0) continue;
    std::string found = s.found + s.not_found == 0
                            ? ""
                            : fmt::format("  ({} of {} found)", s.found, s.found + s.not_found);
    fmt::print("  {:<17} {:>10} ops {:>10.0f} ops/s  us: {}{}\n",
               kv::op_type_name(static_cast<kv::OpType>(i)), s.ops,
               phase.seconds > 0 ? static_cast<double>(s.ops) / phase.seconds : 0.0,
               percentiles_us(s.latency_ns), found);
    if (s.device_read_latency_ns.count() != 0) {
      fmt::print("  {:<17} {:>10} device reads, modeled us: {}\n", "",
                 s.device_read_latency_ns.count(), percentiles_us(s.device_read_latency_ns));
    }
  }
}

// For people: "13.4MiB".
std::string human_size(uint64_t bytes) {
  constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  while (value >= 1024 && unit + 1 < std::size(kUnits)) {
    value /= 1024;
    ++unit;
  }
  return unit == 0 ? fmt::format("{}B", bytes) : fmt::format("{:.1f}{}", value, kUnits[unit]);
}

uint64_t u64(const Json& j, const char* key) {
  return j.contains(key) && j[key].is_number() ? j[key].get<uint64_t>() : 0;
}

std::string ratio(const Json& j, const char* key) {
  return j.contains(key) && j[key].is_number() ? fmt::format("{:.3f}", j[key].get<double>()) : "-";
}

void print_rocksdb(const Json& db) {
  fmt::print(
      "rocksdb: flush wrote {}, compaction read {} wrote {}, stalls {} us, block cache hit {} "
      "miss {}, files per level {}\n",
      human_size(u64(db, "flush_write_bytes")), human_size(u64(db, "compact_read_bytes")),
      human_size(u64(db, "compact_write_bytes")), u64(db, "stall_micros"),
      u64(db, "block_cache_hit"), u64(db, "block_cache_miss"), db["files_per_level"].dump());
}

void print_session(const Json& session) {
  if (session.contains("device")) {
    const Json& d = session["device"];
    fmt::print("device: host writes {}, reads {}, erases {}, write amplification {}\n",
               human_size(u64(d, "host_write_bytes")), human_size(u64(d, "host_read_bytes")),
               u64(d, "erases"), ratio(d, "write_amplification"));
  }
  if (session.contains("fs") && session["fs"].contains("space")) {
    const Json& space = session["fs"]["space"];
    fmt::print("file system: {} files, {} used, {} free, write amplification {}\n",
               u64(space, "files"), human_size(u64(space, "used_bytes")),
               human_size(u64(space, "free_bytes")), ratio(space, "write_amplification"));
  }
  if (session.contains("fs") && session["fs"].contains("space") &&
      session["fs"]["space"].contains("tenants")) {
    for (const Json& t : session["fs"]["space"]["tenants"]) {
      fmt::print(
          "  tenant {}: {} files, {} used, {} free, data written {}, gc {}, write "
          "amplification {}\n",
          t.value("tenant", std::string("?")), u64(t, "files"), human_size(u64(t, "used_bytes")),
          human_size(u64(t, "free_bytes")), human_size(u64(t, "data_written_bytes")),
          human_size(u64(t, "gc_written_bytes")), ratio(t, "write_amplification"));
    }
  }
  if (session.contains("realtime")) {
    const Json& rt = session["realtime"];
    fmt::print("real time: timing {}, {} completions, driver CPU share {}\n",
               rt.value("timing", std::string("?")), u64(rt, "completions"),
               ratio(rt, "loop_cpu_share"));
  }
}

// The phases and the verify of one run (one tenant's).
void print_phases(const kv::KvOptions& o, const kv::KvResult& r) {
  for (const auto& phase : r.phases) print_phase(o, phase);
  if (r.verify) {
    fmt::print("verify: {} keys listed, {} found, {} missing, {} wrong\n", r.verify->listed,
               r.verify->found, r.verify->missing, r.verify->wrong);
  }
}

void print_table(const kv::KvOptions& o, const kv::KvResult& r) {
  print_phases(o, r);
  print_rocksdb(r.rocksdb);
  print_session(r.session);
}

// Progress lines on stderr once a phase has run a while; `label` ("a ")
// names a tenant.
std::function<void(const kv::KvProgress&)> progress_lines(const KvCommandOptions& c,
                                                          std::string label) {
  return [&c, label = std::move(label)](const kv::KvProgress& p) {
    if (c.quiet || p.elapsed_s < kProgressAfterSeconds) return;
    fmt::print(stderr, "progress: {}{} {:.1f} s, {} ops, {:.0f} ops/s\n", label, p.phase,
               p.elapsed_s, p.ops, p.ops_per_s);
  };
}

// --- SIGINT and SIGTERM: the first stops the run, the second ends the process

std::atomic<bool> g_stop{false};
volatile std::sig_atomic_t g_stop_signal = 0;
static_assert(std::atomic<bool>::is_always_lock_free, "set from a signal handler");

void on_stop_signal(int signal) {
  if (g_stop_signal != 0) {
    // The second: the default action (the process ends by the signal) now.
    std::signal(signal, SIG_DFL);
    std::raise(signal);
    return;
  }
  g_stop_signal = signal;
  g_stop.store(true);
}

// Installs the handlers, except for a signal the parent set to be ignored
// (a shell's background job): it stays ignored.
void catch_stop_signals() {
  for (int signal : {SIGINT, SIGTERM}) {
    struct sigaction current {};
    if (::sigaction(signal, nullptr, &current) != 0 || current.sa_handler == SIG_IGN) continue;
    struct sigaction action {};
    action.sa_handler = on_stop_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    ::sigaction(signal, &action, nullptr);
  }
}

const char* signal_name(int signal) { return signal == SIGINT ? "SIGINT" : "SIGTERM"; }

// A signal that ended the run, in the JSON.
void mark_interrupted(Json& out, int signal) {
  if (signal == 0) return;
  out["interrupted"] = true;
  out["signal"] = signal_name(signal);
}

// The shells' code for a process a signal ended: 130 for SIGINT, 143 for
// SIGTERM (what fio and db_bench users see when they stop a run).
int interrupted_exit_code(int signal) { return 128 + signal; }

int fail(const kv::KvResult& r) {
  fmt::print(stderr, "zonelab: error: {}\n", one_line(r.error, 1000));
  return r.failure == kv::KvFailure::kBadInput ? kExitBadInput : kExitDeviceError;
}

// The options that take a value, in the order help lists them.
struct KvFlag {
  const char* name;
  const char* type;
  std::optional<std::string> KvCommandOptions::*value;
  const char* help;
};

constexpr KvFlag kValueFlags[] = {
    {"--num", "N", &KvCommandOptions::num,
     "keys (db_bench) or records (YCSB), 1-10^9 (default 10^6)"},
    {"--ops", "N", &KvCommandOptions::ops, "operations of the run phase (default: --num)"},
    {"--duration", "SECONDS", &KvCommandOptions::duration,
     "stop the run phase after this long, at most 3600 (30, 1.5s, 2m)"},
    {"--threads", "N", &KvCommandOptions::threads, "threads issuing operations, 1-64 (default 1)"},
    {"--value-size", "BYTES", &KvCommandOptions::value_size,
     "value bytes, at most 1MiB (default 100; YCSB 1000)"},
    {"--key-size", "BYTES", &KvCommandOptions::key_size, "db_bench key bytes, 8-1024 (default 16)"},
    {"--seed", "N", &KvCommandOptions::seed, "seed of keys and values (default 0)"},
    {"--write-rate", "BYTES/s", &KvCommandOptions::write_rate,
     "readwhilewriting: the writer's rate (e.g. 1MiB/s; default: unlimited)"},
    {"--report-interval", "SECONDS", &KvCommandOptions::report_interval,
     "between ops/s samples and progress lines, 0.1-3600 (default 1)"},
    {"--time-scale", "X", &KvCommandOptions::time_scale,
     "wall time per unit of device time, 0.001-10^6 (default 1)"},
    {"--target-file-size", "BYTES", &KvCommandOptions::target_file_size,
     "RocksDB target_file_size_base (default 90% of a zone's capacity; the smallest zone's on zone "
     "sets)"},
    {"--max-bytes-for-level-base", "BYTES", &KvCommandOptions::max_bytes_for_level_base,
     "RocksDB max_bytes_for_level_base, level 1's size, 64KiB-64GiB (default 256MiB)"},
    {"--write-buffer-size", "BYTES", &KvCommandOptions::write_buffer_size,
     "RocksDB write_buffer_size, 64KiB-4GiB (default 64MiB)"},
    {"--max-background-jobs", "N", &KvCommandOptions::max_background_jobs,
     "RocksDB max_background_jobs, 1-64 (default 2)"},
    {"--cache-size", "BYTES", &KvCommandOptions::cache_size,
     "block cache, at most 4GiB (default 8MiB)"},
    {"--compaction-readahead-size", "BYTES", &KvCommandOptions::compaction_readahead_size,
     "RocksDB compaction_readahead_size, at most 64MiB (default 0: block by block)"},
    {"--ack-log", "PATH", &KvCommandOptions::ack_log,
     "append each acknowledged write's key number to this host file (verify reads it)"},
    {"--verify-keys", "FORMAT", &KvCommandOptions::verify_keys,
     "verify: the keys the writing run used, db_bench (default) or ycsb"},
    {"--create", "PRESET", &KvCommandOptions::create,
     "make the image with this preset and a file system when it does not exist"},
    {"--power-cut-after", "N", &KvCommandOptions::power_cut_after,
     "test hook: the device loses power after N state-changing commands (every I/O after "
     "fails; the image keeps what it had)"},
};

}  // namespace

void add_kv_command(CLI::App& app, KvCommandOptions& o) {
  auto* kv = app.add_subcommand(
      "kv", "RocksDB on the image's zoned file system: db_bench and YCSB workloads");
  kv->add_option("IMAGE", o.image, "device image with a file system (zonelab mkfs)")->required();
  kv->add_option("--workload", o.workload, kv::workload_names())->type_name("W")->required();
  for (const KvFlag& flag : kValueFlags) {
    kv->add_option(flag.name, o.*flag.value, flag.help)->type_name(flag.type);
  }
  kv->add_option("--db", o.db, "DB directory in the file system (default /db)")->type_name("DIR");
  kv->add_option("--timing", o.timing, "modeled (default) or off (no device time)")
      ->type_name("MODE");
  kv->add_option("--scheduler", o.scheduler,
                 "host I/O scheduler: " + scheduler_list() + " (default: mq-deadline)")
      ->type_name("NAME");
  kv->add_option("--pacing", o.pacing,
                 "device thread: auto (default: spin with 4 or more processors), spin or sleep")
      ->type_name("MODE");
  kv->add_option("--gc", o.gc, "file-system garbage collection: on (default) or off")
      ->type_name("on|off");
  kv->add_option("--write-behind", o.write_behind,
                 "each file's full buffer goes to the device while the next fills: on "
                 "(default) or off (every write waits)")
      ->type_name("on|off");
  kv->add_flag("--sync", o.sync, "sync the WAL on every write");
  kv->add_flag("--disable-wal", o.disable_wal,
               "write no WAL (db_bench --disable_wal): a crash loses what the memtables held");
  kv->add_flag("--fresh", o.fresh, "destroy the DB first (otherwise writes go on top of it)");
  kv->add_option("--tenant", o.tenants,
                 "run a tenant's RocksDB (in /NAME, on its zone sets; zonelab mkfs --tenant) "
                 "beside the others; FLAGS are its own (e.g. 'a:--workload ycsb-c --threads 2'); "
                 "repeatable")
      ->type_name("NAME[:FLAGS]");
  kv->add_flag("--quiet", o.quiet, "no progress lines on stderr");
  kv->add_flag("--json", o.json, "print one JSON object");
}

namespace {

// The flags a tenant may give for itself: its workload and RocksDB's; the
// device's (timing, scheduler, ...) are the run's.
constexpr const char* kDeviceFlags[] = {"--time-scale", "--create", "--power-cut-after"};

struct Tenant {
  std::string name;
  KvCommandOptions command;
  kv::KvOptions options;
};

Result<Tenant> tenant_options(const KvCommandOptions& base, const std::string& spec) {
  Tenant t;
  const size_t colon = spec.find(':');
  t.name = spec.substr(0, colon);
  if (std::string why = fs::tenant_name_problem(t.name); !why.empty()) {
    return Error{fmt::format("--tenant {}: {}", one_line(spec, 64), why)};
  }
  t.command = base;
  t.command.tenants.clear();
  if (colon != std::string::npos) {
    CLI::App app("tenant " + t.name);
    app.add_option("--workload", t.command.workload);
    for (const KvFlag& flag : kValueFlags) {
      if (std::find_if(std::begin(kDeviceFlags), std::end(kDeviceFlags), [&](const char* f) {
            return std::string_view(f) == flag.name;
          }) != std::end(kDeviceFlags)) {
        continue;
      }
      app.add_option(flag.name, t.command.*flag.value);
    }
    app.add_option("--db", t.command.db);
    app.add_flag("--sync", t.command.sync);
    app.add_flag("--disable-wal", t.command.disable_wal);
    app.add_flag("--fresh", t.command.fresh);
    try {
      app.parse(spec.substr(colon + 1), false);
    } catch (const CLI::ParseError& e) {
      return Error{
          fmt::format("--tenant {}: {} (a tenant's own flags are its workload's and "
                      "RocksDB's)",
                      one_line(spec, 64), one_line(e.what(), 200))};
    }
  }
  auto parsed = kv_options(t.command);
  if (!parsed) return Error{fmt::format("--tenant {}: {}", t.name, parsed.error())};
  t.options = *parsed;
  t.options.uri += "&tenant=" + t.name;
  return t;
}

Json tenants_json(const std::vector<Tenant>& tenants, const kv::KvTenantsResult& r) {
  Json out = status_json(Status::kSuccess);
  Json list = Json::array();
  for (size_t i = 0; i < tenants.size(); ++i) {
    Json one = {{"tenant", tenants[i].name}};
    one.update(kv::kv_result_json(tenants[i].options, r.tenants[i]));
    one.erase("session");
    // The tenant's share of the file system (its zone sets).
    if (r.session.contains("fs") && r.session["fs"].contains("space") &&
        r.session["fs"]["space"].contains("tenants")) {
      for (const Json& t : r.session["fs"]["space"]["tenants"]) {
        if (t.value("tenant", "") == tenants[i].name) one["fs"] = t;
      }
    }
    list.push_back(std::move(one));
  }
  out["tenants"] = std::move(list);
  out["session"] = r.session;
  return out;
}

int run_kv_tenants(const KvCommandOptions& c) {
  std::vector<Tenant> tenants;
  for (const std::string& spec : c.tenants) {
    auto t = tenant_options(c, spec);
    if (!t) return bad_input(t.error());
    for (const Tenant& other : tenants) {
      if (other.name == t->name) return bad_input(fmt::format("--tenant {}: named twice", t->name));
      if (!other.options.ack_log_path.empty() &&
          other.options.ack_log_path == t->options.ack_log_path) {
        return bad_input(fmt::format("--tenant {}: --ack-log {} is tenant {}'s too", t->name,
                                     t->options.ack_log_path, other.name));
      }
    }
    tenants.push_back(std::move(*t));
  }
  std::vector<kv::KvOptions> options;
  for (Tenant& t : tenants) {
    t.options.progress = progress_lines(c, t.name + " ");
    t.options.stop = &g_stop;
    options.push_back(t.options);
  }
  catch_stop_signals();
  kv::KvTenantsResult r = kv::run_kv_tenants_loaded(options);
  if (!r.error.empty()) return bad_input(r.error);
  for (size_t i = 0; i < tenants.size(); ++i) {
    if (!r.tenants[i].ok()) {
      kv::KvResult failed = r.tenants[i];
      failed.error = fmt::format("tenant {}: {}", tenants[i].name, failed.error);
      return fail(failed);
    }
  }
  const int signal = g_stop_signal;
  if (c.json) {
    Json out = tenants_json(tenants, r);
    mark_interrupted(out, signal);
    print_json(out);
  } else {
    for (size_t i = 0; i < tenants.size(); ++i) {
      fmt::print("tenant {} ({}):\n", tenants[i].name, tenants[i].options.db_dir);
      print_phases(tenants[i].options, r.tenants[i]);
    }
    for (size_t i = 0; i < tenants.size(); ++i) {
      fmt::print("tenant {}: ", tenants[i].name);
      print_rocksdb(r.tenants[i].rocksdb);
    }
    print_session(r.session);
    if (signal != 0) {
      fmt::print(
          "interrupted by {}: every tenant's threads stopped; the DBs are closed and the "
          "image saved\n",
          signal_name(signal));
    }
  }
  if (signal != 0) return interrupted_exit_code(signal);
  for (size_t i = 0; i < tenants.size(); ++i) {
    const kv::KvResult& t = r.tenants[i];
    if (t.verify && !t.verify->clean()) {
      fmt::print(stderr,
                 "zonelab: verify failed: tenant {}: {} of {} acknowledged keys missing, {} "
                 "wrong\n",
                 tenants[i].name, t.verify->missing, t.verify->listed, t.verify->wrong);
      return kExitDeviceError;
    }
  }
  return kExitOk;
}

}  // namespace

int run_kv_command(const KvCommandOptions& c) {
  if (!c.tenants.empty()) return run_kv_tenants(c);
  auto parsed = kv_options(c);
  if (!parsed) return bad_input(parsed.error());
  kv::KvOptions o = *parsed;
  o.progress = progress_lines(c, "");
  o.stop = &g_stop;
  catch_stop_signals();
  kv::KvResult r = kv::run_kv_loaded(o);
  if (!r.ok()) return fail(r);
  // A signal that came while the DB closed stopped nothing, but it was
  // still sent to end the run: it decides the exit code all the same.
  const int signal = g_stop_signal;
  if (c.json) {
    Json out = status_json(Status::kSuccess);
    out.update(kv::kv_result_json(o, r));
    mark_interrupted(out, signal);
    print_json(out);
  } else {
    print_table(o, r);
    if (signal != 0) {
      fmt::print(
          "interrupted by {}: the threads stopped taking operations; above is what ran, "
          "the DB is closed and the image saved\n",
          signal_name(signal));
    }
  }
  if (signal != 0) return interrupted_exit_code(signal);
  if (r.verify && !r.verify->clean()) {
    fmt::print(stderr, "zonelab: verify failed: {} of {} acknowledged keys missing, {} wrong\n",
               r.verify->missing, r.verify->listed, r.verify->wrong);
    return kExitDeviceError;
  }
  return kExitOk;
}

}  // namespace zonelab::cli
