// See kv_runner.h.
#include "rocksdb/kv_runner.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <rocksdb/cache.h>
#include <rocksdb/convenience.h>
#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <rocksdb/statistics.h>
#include <rocksdb/table.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

#include "fs/device_io.h"
#include "fs/metadata.h"
#include "fs/zoned_fs.h"
#include "rocksdb/registry.h"
#include "zonelab/assert.h"
#include "zonelab/result.h"

namespace zonelab::rocksdb_plugin {

namespace rdb = ROCKSDB_NAMESPACE;
using Clock = std::chrono::steady_clock;
using Json = nlohmann::ordered_json;

namespace {

// Where YCSB's record count is kept in the DB (no workload names a key so).
constexpr std::string_view kRecordsMarkerKey = "zonelab.ycsb.records";
// An ack-log line: a key number and '\n'.
constexpr size_t kAckLineBytesMax = 21;
// The share of a zone's capacity a table file gets, as ZenFS users set it.
constexpr double kTargetFileZoneShare = 0.9;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// --- the ack log

class AckLog {
 public:
  ~AckLog() {
    if (fd_ >= 0) ::close(fd_);
  }
  std::optional<std::string> open(const std::string& path) {
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd_ < 0) return fmt::format("--ack-log {}: {}", one_line(path), std::strerror(errno));
    path_ = path;
    return std::nullopt;
  }
  // One write(2) a line: a kill leaves whole lines only.
  std::optional<std::string> append(uint64_t key) {
    char line[kAckLineBytesMax + 1];
    auto [end, ec] = std::to_chars(line, line + sizeof(line) - 1, key);
    *end++ = '\n';
    auto bytes = static_cast<size_t>(end - line);
    for (;;) {
      ssize_t n = ::write(fd_, line, bytes);
      if (n == static_cast<ssize_t>(bytes)) return std::nullopt;
      if (n < 0 && errno == EINTR) continue;
      int error = n < 0 ? errno : EIO;
      return fmt::format("--ack-log {}: {}", one_line(path_), std::strerror(error));
    }
  }

 private:
  int fd_ = -1;
  std::string path_;
};

// The distinct key numbers of an ack log, in order. A last line without its
// newline (a write cut short) is left out.
Result<std::vector<uint64_t>> read_ack_log(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "r");
  if (f == nullptr)
    return Error{fmt::format("--ack-log {}: {}", one_line(path), std::strerror(errno))};
  std::vector<uint64_t> keys;
  char line[64];
  uint64_t number = 0;
  std::optional<std::string> bad;
  while (!bad && std::fgets(line, sizeof(line), f) != nullptr) {
    ++number;
    size_t len = std::strlen(line);
    if (len == 0 || line[len - 1] != '\n') {
      if (std::feof(f) && len > 0) break;  // the torn last line
      bad =
          fmt::format("--ack-log {}: line {} is longer than a key number", one_line(path), number);
      break;
    }
    uint64_t key = 0;
    auto [end, ec] = std::from_chars(line, line + len - 1, key);
    if (ec != std::errc() || end != line + len - 1 || len == 1) {
      bad = fmt::format("--ack-log {}: line {} '{}' is not a key number", one_line(path), number,
                        one_line(std::string_view(line, len - 1)));
    } else if (keys.size() >= kKvAckLogLinesMax) {
      bad = fmt::format("--ack-log {}: more than {} lines", one_line(path), kKvAckLogLinesMax);
    } else {
      keys.push_back(key);
    }
  }
  bool read_error = std::ferror(f) != 0;
  std::fclose(f);
  if (bad) return Error{*bad};
  if (read_error) return Error{fmt::format("--ack-log {}: read error", one_line(path))};
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  return keys;
}

// --- the DB

struct OpenDb {
  std::shared_ptr<rdb::FileSystem> fs;
  ZonelabFileSystem* zonelab_fs = nullptr;
  std::unique_ptr<rdb::Env> env;
  rdb::Options options;
  std::unique_ptr<rdb::DB> db;
};

rdb::CompressionType default_compression() {
  auto supported = rdb::GetSupportedCompressions();
  bool snappy =
      std::find(supported.begin(), supported.end(), rdb::kSnappyCompression) != supported.end();
  return snappy ? rdb::kSnappyCompression : rdb::kNoCompression;
}

std::string compression_name(rdb::CompressionType type) {
  std::string name;
  if (!rdb::GetStringFromCompressionType(&name, type).ok()) return "unknown";
  return name;
}

uint64_t default_target_file_bytes(ZonelabFileSystem& fs) {
  const uint64_t block = fs.session().fs().block_bytes();
  const uint64_t zone = fs.session().fs().space().zone_bytes;
  auto share = static_cast<uint64_t>(static_cast<double>(zone) * kTargetFileZoneShare);
  return std::max(block, share / block * block);
}

rdb::Options db_options(const KvOptions& o, rdb::Env* env, uint64_t target_file_bytes) {
  rdb::Options options;
  options.env = env;
  options.create_if_missing = true;
  options.statistics = rdb::CreateDBStatistics();
  options.write_buffer_size = o.write_buffer_bytes;
  options.target_file_size_base = target_file_bytes;
  if (o.max_bytes_for_level_base != 0)
    options.max_bytes_for_level_base = o.max_bytes_for_level_base;
  options.max_background_jobs = static_cast<int>(o.max_background_jobs);
  options.compression = default_compression();
  rdb::BlockBasedTableOptions table;
  table.block_cache = rdb::NewLRUCache(o.block_cache_bytes);
  options.table_factory.reset(rdb::NewBlockBasedTableFactory(table));
  options.compaction_readahead_size = o.compaction_readahead_bytes;
  return options;
}

// Opens the URI's file system and the DB on it; fills `result`'s failure
// when it cannot.
std::optional<OpenDb> open_db(const KvOptions& o, KvResult& result) {
  auto fs = open_file_system(o.uri);
  if (!fs) {
    result.failure = KvFailure::kBadInput;
    result.error = fs.error();
    return std::nullopt;
  }
  OpenDb open;
  open.zonelab_fs = fs->get();
  open.fs = std::move(fs).value();
  open.env = rdb::NewCompositeEnv(open.fs);
  result.target_file_size_bytes = o.target_file_size_bytes != 0
                                      ? o.target_file_size_bytes
                                      : default_target_file_bytes(*open.zonelab_fs);
  open.options = db_options(o, open.env.get(), result.target_file_size_bytes);
  result.max_bytes_for_level_base = open.options.max_bytes_for_level_base;
  result.compression = compression_name(open.options.compression);
  if (o.fresh) {
    rdb::Status destroyed = rdb::DestroyDB(o.db_dir, open.options);
    if (!destroyed.ok() && !destroyed.IsNotFound() && !destroyed.IsPathNotFound()) {
      result.failure = KvFailure::kDbError;
      result.error = fmt::format("kv: destroying {}: {}", o.db_dir, destroyed.ToString());
      return std::nullopt;
    }
  }
  rdb::DB* db = nullptr;
  rdb::Status opened = rdb::DB::Open(open.options, o.db_dir, &db);
  if (!opened.ok()) {
    result.failure = KvFailure::kDbError;
    result.error = fmt::format("kv: opening {}: {}", o.db_dir, opened.ToString());
    return std::nullopt;
  }
  open.db.reset(db);
  return open;
}

// RocksDB's counters, taken after the close: a compaction still running
// when the workload ends finishes (or stops) inside Close(), and the file
// system's counts, taken then too, include its bytes.
void add_rocksdb_tickers(Json& j, rdb::Statistics& stats) {
  j["flush_write_bytes"] = stats.getTickerCount(rdb::FLUSH_WRITE_BYTES);
  j["compact_read_bytes"] = stats.getTickerCount(rdb::COMPACT_READ_BYTES);
  j["compact_write_bytes"] = stats.getTickerCount(rdb::COMPACT_WRITE_BYTES);
  j["stall_micros"] = stats.getTickerCount(rdb::STALL_MICROS);
  j["block_cache_hit"] = stats.getTickerCount(rdb::BLOCK_CACHE_HIT);
  j["block_cache_miss"] = stats.getTickerCount(rdb::BLOCK_CACHE_MISS);
  j["wal_bytes"] = stats.getTickerCount(rdb::WAL_FILE_BYTES);
  j["wal_syncs"] = stats.getTickerCount(rdb::WAL_FILE_SYNCED);
  j["user_bytes_written"] = stats.getTickerCount(rdb::BYTES_WRITTEN);
  j["user_bytes_read"] = stats.getTickerCount(rdb::BYTES_READ);
}

Json rocksdb_levels_json(rdb::DB& db) {
  Json j;
  Json levels = Json::array();
  for (int level = 0; level < db.NumberLevels(); ++level) {
    std::string files;
    db.GetProperty(fmt::format("rocksdb.num-files-at-level{}", level), &files);
    levels.push_back(std::strtoull(files.c_str(), nullptr, 10));
  }
  j["files_per_level"] = levels;
  return j;
}

// --- one phase: threads taking operation indexes until done, stopped or failed

struct PhaseControl {
  uint64_t total = UINT64_MAX;  // operation indexes to hand out
  std::atomic<uint64_t> next_index{0};
  std::atomic<uint64_t> done{0};
  std::atomic<bool> stop{false};
  std::atomic<bool> workers_done{false};  // the operation threads are finished
  std::mutex mutex;
  std::condition_variable changed;
  uint32_t running = 0;
  KvFailure failure = KvFailure::kNone;
  std::string error;

  bool claim(uint64_t* index) {
    if (stop.load(std::memory_order_relaxed)) return false;
    *index = next_index.fetch_add(1, std::memory_order_relaxed);
    return *index < total;
  }
  void fail(KvFailure kind, std::string message) {
    std::lock_guard lock(mutex);
    if (failure == KvFailure::kNone) {
      failure = kind;
      error = one_line(message, 1000);
    }
    stop = true;
  }
};

using OpStatsArray = std::array<KvOpStats, kOpTypeCount>;
using WorkerFn = std::function<void(uint32_t thread, OpStatsArray& stats)>;

// The bytes files of each class were given so far (the file system's
// counters, cumulative since mkfs).
KvAppendedBytes appended_so_far(const fs::ZonedFs& fs) {
  const fs::FsCounters c = fs.counters();
  auto of = [&c](fs::IoClass io_class) { return c.appended_bytes[static_cast<size_t>(io_class)]; };
  return {of(fs::IoClass::kWal), of(fs::IoClass::kFlush), of(fs::IoClass::kCompaction)};
}

// The latencies of the writes finished since the last report interval
// ended: every writing thread records into it, the report clock takes it.
class WriteWindow {
 public:
  void record(uint64_t ns) {
    std::lock_guard lock(mutex_);
    histogram_.record(ns);
  }
  KvWriteLatencyWindow take() {
    std::lock_guard lock(mutex_);
    KvWriteLatencyWindow w{histogram_.count(), histogram_.percentile(99),
                           histogram_.percentile(99.9), histogram_.percentile(99.99),
                           histogram_.max()};
    histogram_ = Histogram();
    return w;
  }

 private:
  std::mutex mutex_;
  Histogram histogram_;
};

// The report clock of a phase: the series of ops/s, of the bytes appended
// by class and of the writes' tail latency, progress lines.
class Reporter {
 public:
  Reporter(const KvOptions& o, std::string_view phase, KvPhase& out, const fs::ZonedFs& fs,
           WriteWindow& writes)
      : o_(o), phase_(phase), out_(out), fs_(fs), writes_(writes), start_(Clock::now()) {
    (void)writes_.take();  // what finished before the phase is not its
    out_.interval_s = o.report_interval_s;
    last_appended_ = appended_so_far(fs_);
  }
  Clock::time_point next_report() const {
    return start_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(
                        o_.report_interval_s * static_cast<double>(reports_ + 1)));
  }
  void report(uint64_t done) {
    double rate = static_cast<double>(done - last_done_) / o_.report_interval_s;
    out_.ops_per_s_series.push_back(rate);
    push_appended();
    out_.write_latency_series.push_back(writes_.take());
    last_done_ = done;
    ++reports_;
    if (o_.progress) o_.progress({phase_, seconds_since(start_), done, rate});
  }
  // The part interval after the last report, when anything finished in it
  // (however short it is: every write of the phase is in one interval).
  void finish(uint64_t done) {
    double tail_s = seconds_since(start_) - o_.report_interval_s * static_cast<double>(reports_);
    KvWriteLatencyWindow tail = writes_.take();
    if (done > last_done_ || tail.count > 0) {
      out_.ops_per_s_series.push_back(tail_s > 0 ? static_cast<double>(done - last_done_) / tail_s
                                                 : 0.0);
      push_appended();
      out_.write_latency_series.push_back(tail);
    }
    out_.seconds = seconds_since(start_);
    ZL_ASSERT(out_.appended_bytes_series.size() == out_.ops_per_s_series.size());
  }
  Clock::time_point start() const { return start_; }

 private:
  void push_appended() {
    const KvAppendedBytes now = appended_so_far(fs_);
    out_.appended_bytes_series.push_back({now.wal - last_appended_.wal,
                                          now.flush - last_appended_.flush,
                                          now.compaction - last_appended_.compaction});
    last_appended_ = now;
  }

  const KvOptions& o_;
  std::string_view phase_;
  KvPhase& out_;
  const fs::ZonedFs& fs_;
  WriteWindow& writes_;
  Clock::time_point start_;
  uint64_t reports_ = 0;
  uint64_t last_done_ = 0;
  KvAppendedBytes last_appended_;
};

// Runs `threads` workers (and a background worker beside them, which stops
// once they are done) while this thread keeps the report clock and the
// deadline.
KvPhase run_phase(const KvOptions& o, const fs::ZonedFs& fs, WriteWindow& writes,
                  std::string_view name, PhaseControl& control, uint32_t threads,
                  const WorkerFn& worker, double duration_s, const WorkerFn* background) {
  KvPhase phase;
  phase.name = std::string(name);
  std::vector<OpStatsArray> stats(threads + 1);
  Reporter reporter(o, name, phase, fs, writes);
  control.running = threads;
  std::vector<std::thread> pool;
  for (uint32_t t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      worker(t, stats[t]);
      std::lock_guard lock(control.mutex);
      --control.running;
      control.changed.notify_all();
    });
  }
  std::thread side;
  if (background != nullptr) side = std::thread([&] { (*background)(threads, stats[threads]); });
  const auto deadline = reporter.start() + std::chrono::duration_cast<Clock::duration>(
                                               std::chrono::duration<double>(duration_s));
  const auto poll = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(kKvStopPollSeconds));
  {
    std::unique_lock lock(control.mutex);
    bool timed = duration_s > 0;  // until the deadline has passed
    while (control.running > 0) {
      auto wake = timed ? std::min(reporter.next_report(), deadline) : reporter.next_report();
      // A signal handler cannot wake a condition variable: the stop flag is
      // polled.
      if (o.stop != nullptr && !phase.interrupted) wake = std::min(wake, Clock::now() + poll);
      control.changed.wait_until(lock, wake, [&] { return control.running == 0; });
      if (control.running == 0) break;
      if (o.stop != nullptr && !phase.interrupted && o.stop->load()) {
        phase.interrupted = true;
        control.stop = true;
      }
      if (timed && Clock::now() >= deadline) {
        control.stop = true;
        timed = false;
      }
      if (Clock::now() >= reporter.next_report()) {
        lock.unlock();
        reporter.report(control.done.load());
        lock.lock();
      }
    }
  }
  for (auto& thread : pool) thread.join();
  control.workers_done = true;
  if (side.joinable()) side.join();
  reporter.finish(control.done.load());
  for (const auto& thread_stats : stats) {
    for (size_t i = 0; i < kOpTypeCount; ++i) phase.by_type[i].merge(thread_stats[i]);
  }
  return phase;
}

// --- operations on the DB

struct RunContext {
  const KvOptions& o;
  rdb::DB& db;
  const fs::ZonedFs& fs;  // the file system under the DB (its counters)
  WorkloadFamily family;
  AckLog* ack = nullptr;
  InsertCounter* inserts = nullptr;
  rdb::WriteOptions write_options;
  WriteWindow writes = {};  // the writes' latencies of the current report interval
};

// One thread's executor of operations: keys and values built, each RocksDB
// call timed, acknowledged writes logged.
class OpExecutor {
 public:
  explicit OpExecutor(RunContext& context) : c_(context) {}

  // An error leaves a one-line message and its kind.
  bool run(const Op& op, OpStatsArray& stats);
  bool put_timed(uint64_t key, KvOpStats& stats);
  bool get_timed(uint64_t key, KvOpStats& stats, bool* found);
  KvFailure failure() const { return failure_; }
  const std::string& error() const { return error_; }
  const std::string& value_read() const { return read_; }

 private:
  bool put(uint64_t key, KvOpStats& stats);
  bool get(uint64_t key, KvOpStats& stats, bool* found);
  bool scan(uint64_t key, uint32_t length, KvOpStats& stats);
  bool db_error(std::string_view what, uint64_t key, const rdb::Status& status) {
    failure_ = KvFailure::kDbError;
    error_ = fmt::format("kv: {} key {}: {}", what, key, status.ToString());
    return false;
  }

  RunContext& c_;
  std::string key_;
  std::string value_;
  std::string read_;
  KvFailure failure_ = KvFailure::kNone;
  std::string error_;
};

uint64_t record_latency(KvOpStats& stats, Clock::time_point start) {
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
  const auto latency = static_cast<uint64_t>(std::max<int64_t>(0, ns));
  stats.latency_ns.record(latency);
  ++stats.ops;
  return latency;
}

bool OpExecutor::put(uint64_t key, KvOpStats& stats) {
  key_ = key_for(c_.family, key, c_.o.key_bytes);
  fill_value(key, c_.o.seed, c_.o.value_bytes, &value_);
  rdb::Status s = c_.db.Put(c_.write_options, key_, value_);
  if (!s.ok()) return db_error("put", key, s);
  stats.bytes += key_.size() + value_.size();
  if (c_.ack != nullptr) {
    if (auto failed = c_.ack->append(key)) {
      failure_ = KvFailure::kBadInput;
      error_ = *failed;
      return false;
    }
  }
  return true;
}

bool OpExecutor::get(uint64_t key, KvOpStats& stats, bool* found) {
  key_ = key_for(c_.family, key, c_.o.key_bytes);
  rdb::Status s = c_.db.Get(rdb::ReadOptions(), key_, &read_);
  *found = s.ok();
  if (!s.ok() && !s.IsNotFound()) return db_error("get", key, s);
  ++(*found ? stats.found : stats.not_found);
  stats.bytes += *found ? key_.size() + read_.size() : 0;
  return true;
}

bool OpExecutor::scan(uint64_t key, uint32_t length, KvOpStats& stats) {
  key_ = key_for(c_.family, key, c_.o.key_bytes);
  std::unique_ptr<rdb::Iterator> it(c_.db.NewIterator(rdb::ReadOptions()));
  uint32_t seen = 0;
  for (it->Seek(key_); it->Valid() && seen < length; it->Next(), ++seen) {
    stats.bytes += it->key().size() + it->value().size();
  }
  if (!it->status().ok()) return db_error("scan from", key, it->status());
  ++(seen > 0 ? stats.found : stats.not_found);
  return true;
}

bool OpExecutor::put_timed(uint64_t key, KvOpStats& stats) {
  auto start = Clock::now();
  bool ok = put(key, stats);
  c_.writes.record(record_latency(stats, start));
  return ok;
}

bool OpExecutor::get_timed(uint64_t key, KvOpStats& stats, bool* found) {
  auto start = Clock::now();
  bool ok = get(key, stats, found);
  record_latency(stats, start);
  return ok;
}

bool OpExecutor::run(const Op& op, OpStatsArray& stats) {
  KvOpStats& s = stats[static_cast<size_t>(op.type)];
  // The device reads this operation makes on this thread (RocksDB reads a
  // table's blocks on the caller's thread).
  fs::ReadLatencyScope device_reads(s.device_read_latency_ns);
  bool found = false;
  switch (op.type) {
    case OpType::kRead:
      return get_timed(op.key, s, &found);
    case OpType::kUpdate:
    case OpType::kWrite:
      return put_timed(op.key, s);
    case OpType::kInsert: {
      bool ok = put_timed(op.key, s);
      if (ok) c_.inserts->acknowledge(op.key);
      return ok;
    }
    case OpType::kScan: {
      auto start = Clock::now();
      bool ok = scan(op.key, op.scan_length, s);
      record_latency(s, start);
      return ok;
    }
    case OpType::kReadModifyWrite: {
      auto start = Clock::now();
      bool ok = get(op.key, s, &found) && put(op.key, s);
      record_latency(s, start);
      return ok;
    }
  }
  return false;
}

// --- the phases

GeneratorParams generator_params(const KvOptions& o, uint64_t records, uint32_t thread) {
  GeneratorParams p;
  p.records = std::max<uint64_t>(1, records);
  p.ops = o.ops;
  p.seed = o.seed;
  p.thread = thread;
  return p;
}

// The run phase of any workload but verify.
KvPhase run_workload(const KvOptions& o, RunContext& c, PhaseControl& control, uint64_t records) {
  const WorkloadSpec& spec = *o.workload;
  control.total = o.ops ? *o.ops : (o.duration_s > 0 ? UINT64_MAX : o.num);
  WorkerFn worker = [&](uint32_t thread, OpStatsArray& stats) {
    OpGenerator gen(spec, generator_params(o, records, thread), c.inserts);
    OpExecutor exec(c);
    uint64_t index = 0;
    while (control.claim(&index)) {
      if (!exec.run(gen.next(index), stats)) return control.fail(exec.failure(), exec.error());
      control.done.fetch_add(1, std::memory_order_relaxed);
    }
  };
  // readwhilewriting's writer: random keys, paced to --write-rate.
  WorkerFn writer = [&](uint32_t thread, OpStatsArray& stats) {
    OpGenerator gen(spec, generator_params(o, records, thread), c.inserts);
    OpExecutor exec(c);
    auto start = Clock::now();
    uint64_t written_bytes = 0;
    while (!control.workers_done.load() && !control.stop.load()) {
      KvOpStats& s = stats[static_cast<size_t>(OpType::kWrite)];
      uint64_t before = s.bytes;
      if (!exec.put_timed(gen.uniform_key(), s)) return control.fail(exec.failure(), exec.error());
      written_bytes += s.bytes - before;
      if (o.write_rate_bytes_per_s == 0) continue;
      auto due =
          start +
          std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(
              static_cast<double>(written_bytes) / static_cast<double>(o.write_rate_bytes_per_s)));
      while (Clock::now() < due && !control.workers_done.load() && !control.stop.load()) {
        std::this_thread::sleep_for(
            std::min<Clock::duration>(due - Clock::now(), std::chrono::milliseconds(10)));
      }
    }
  };
  return run_phase(o, c.fs, c.writes, "run", control, o.threads, worker, o.duration_s,
                   spec.background_writer ? &writer : nullptr);
}

// YCSB's load phase: keys [first, num) inserted.
KvPhase load_records(const KvOptions& o, RunContext& c, PhaseControl& control, uint64_t first) {
  control.total = o.num - first;
  WorkerFn worker = [&](uint32_t, OpStatsArray& stats) {
    OpExecutor exec(c);
    uint64_t index = 0;
    while (control.claim(&index)) {
      if (!exec.put_timed(first + index, stats[static_cast<size_t>(OpType::kInsert)])) {
        return control.fail(exec.failure(), exec.error());
      }
      control.done.fetch_add(1, std::memory_order_relaxed);
    }
  };
  return run_phase(o, c.fs, c.writes, "load", control, o.threads, worker, 0, nullptr);
}

KvPhase verify_keys(const KvOptions& o, RunContext& c, PhaseControl& control,
                    const std::vector<uint64_t>& keys, KvVerify& verify) {
  control.total = keys.size();
  std::atomic<uint64_t> found{0}, missing{0}, wrong{0};
  WorkerFn worker = [&](uint32_t, OpStatsArray& stats) {
    OpExecutor exec(c);
    std::string expected;
    uint64_t index = 0;
    while (control.claim(&index)) {
      bool present = false;
      if (!exec.get_timed(keys[index], stats[static_cast<size_t>(OpType::kRead)], &present)) {
        return control.fail(exec.failure(), exec.error());
      }
      fill_value(keys[index], o.seed, o.value_bytes, &expected);
      ++(!present ? missing : (exec.value_read() == expected ? found : wrong));
      control.done.fetch_add(1, std::memory_order_relaxed);
    }
  };
  KvPhase phase = run_phase(o, c.fs, c.writes, "verify", control, o.threads, worker, 0, nullptr);
  verify = {keys.size(), found.load(), missing.load(), wrong.load()};
  return phase;
}

// The records a YCSB DB holds (0 when it has no marker).
std::optional<uint64_t> read_records_marker(rdb::DB& db, KvResult& result) {
  std::string value;
  rdb::Status s = db.Get(rdb::ReadOptions(), kRecordsMarkerKey, &value);
  if (s.IsNotFound()) return 0;
  if (!s.ok()) {
    result.failure = KvFailure::kDbError;
    result.error = fmt::format("kv: get {}: {}", kRecordsMarkerKey, s.ToString());
    return std::nullopt;
  }
  uint64_t records = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), records);
  return ec == std::errc() && end == value.data() + value.size() ? records : 0;
}

bool write_records_marker(rdb::DB& db, const rdb::WriteOptions& wo, uint64_t records,
                          KvResult& result) {
  rdb::Status s = db.Put(wo, kRecordsMarkerKey, std::to_string(records));
  if (s.ok()) return true;
  result.failure = KvFailure::kDbError;
  result.error = fmt::format("kv: put {}: {}", kRecordsMarkerKey, s.ToString());
  return false;
}

bool take_failure(PhaseControl& control, KvResult& result) {
  if (control.failure == KvFailure::kNone) return false;
  result.failure = control.failure;
  result.error = control.error;
  return true;
}

// YCSB: load what is missing, run, remember the records.
void run_ycsb(const KvOptions& o, RunContext& c, KvResult& result) {
  auto marker = read_records_marker(c.db, result);
  if (!marker) return;
  if (*marker < o.num) {
    PhaseControl load;
    result.phases.push_back(load_records(o, c, load, *marker));
    if (take_failure(load, result)) return;
    // Cut short, the load leaves the marker as it was: a later run loads
    // the records again from there.
    if (result.phases.back().interrupted) return;
    if (!write_records_marker(c.db, c.write_options, o.num, result)) return;
  }
  const uint64_t records = std::max(*marker, o.num);
  InsertCounter inserts(records);
  c.inserts = &inserts;
  PhaseControl control;
  result.phases.push_back(run_workload(o, c, control, records));
  result.records = inserts.written();
  if (take_failure(control, result)) return;
  if (result.records != records)
    write_records_marker(c.db, c.write_options, result.records, result);
}

// What the run needs from the host, taken before the image is opened, so
// that a bad path changes nothing: the ack log to append to, or the keys
// one lists (verify).
struct HostInputs {
  AckLog ack;
  bool ack_open = false;
  std::vector<uint64_t> verify_keys;
};

bool take_host_inputs(const KvOptions& o, HostInputs& in, KvResult& result) {
  std::optional<std::string> failed;
  if (o.workload->family == WorkloadFamily::kVerify) {
    auto keys = read_ack_log(o.ack_log_path);
    if (keys) in.verify_keys = std::move(keys).value();
    if (!keys) failed = keys.error();
  } else if (!o.ack_log_path.empty()) {
    failed = in.ack.open(o.ack_log_path);
    in.ack_open = !failed;
  }
  if (!failed) return true;
  result.failure = KvFailure::kBadInput;
  result.error = *failed;
  return false;
}

void run_phases(const KvOptions& o, OpenDb& open, HostInputs& in, KvResult& result) {
  const fs::ZonedFs& fs = open.zonelab_fs->session().fs();
  RunContext c{o, *open.db, fs, o.workload->family, nullptr, nullptr, rdb::WriteOptions()};
  c.write_options.sync = o.sync;
  c.write_options.disableWAL = o.disable_wal;
  c.ack = in.ack_open ? &in.ack : nullptr;
  PhaseControl control;
  if (o.workload->family == WorkloadFamily::kVerify) {
    c.family = o.verify_keys;
    KvVerify verify;
    result.phases.push_back(verify_keys(o, c, control, in.verify_keys, verify));
    if (!take_failure(control, result) && !result.phases.back().interrupted) {
      result.verify = verify;
    }
    return;
  }
  if (o.workload->family == WorkloadFamily::kYcsb) return run_ycsb(o, c, result);
  result.phases.push_back(run_workload(o, c, control, o.num));
  take_failure(control, result);
}

void close_db(OpenDb& open, KvResult& result) {
  result.rocksdb = rocksdb_levels_json(*open.db);
  rdb::Status closed = open.db->Close();
  open.db.reset();
  add_rocksdb_tickers(result.rocksdb, *open.options.statistics);
  if (!closed.ok() && result.ok()) {
    result.failure = KvFailure::kDbError;
    result.error = fmt::format("kv: closing the DB: {}", closed.ToString());
  }
  Json session = Json::parse(open.zonelab_fs->session().stats_json());
  session.erase("zones");
  result.session = std::move(session);
}

}  // namespace

KvResult run_kv(const KvOptions& o) {
  KvResult result;
  if (auto bad = check_kv_options(o)) {
    result.failure = KvFailure::kBadInput;
    result.error = *bad;
    return result;
  }
  HostInputs in;
  if (!take_host_inputs(o, in, result)) return result;
  auto open = open_db(o, result);
  if (!open) return result;
  // A stop before the DB was open runs no phase; the DB is still closed.
  if (o.stop == nullptr || !o.stop->load()) run_phases(o, *open, in, result);
  result.interrupted = o.stop != nullptr && o.stop->load();
  close_db(*open, result);
  return result;
}

KvTenantsResult run_kv_tenants(const std::vector<KvOptions>& tenants) {
  KvTenantsResult result;
  if (tenants.empty()) {
    result.error = "kv: no tenants";
    return result;
  }
  // The session, held across every tenant's run: its statistics are read
  // once every DB has closed.
  auto held = open_file_system(tenants.front().uri);
  if (!held) {
    result.error = held.error();
    return result;
  }
  result.tenants.resize(tenants.size());
  std::vector<std::thread> threads;
  threads.reserve(tenants.size());
  for (size_t i = 0; i < tenants.size(); ++i) {
    threads.emplace_back([&, i] { result.tenants[i] = run_kv(tenants[i]); });
  }
  for (std::thread& t : threads) t.join();
  for (KvResult& r : result.tenants) r.session = nullptr;
  Json session = Json::parse((*held)->session().stats_json());
  session.erase("zones");
  result.session = std::move(session);
  return result;
}

}  // namespace zonelab::rocksdb_plugin
