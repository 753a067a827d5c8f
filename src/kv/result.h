// What a key-value run is asked to do and what it did: the options of
// `zonelab kv` (and of the experiments that run RocksDB), their bounds, and
// the result with its JSON. No RocksDB here: the run itself is
// rocksdb/kv_runner.h, inside libzonelab_rocksdb.so, which the zonelab
// command loads only when a run needs it (kv/runtime.h).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/histogram.h"
#include "kv/workload.h"

namespace zonelab::rocksdb_plugin {

// Limits on what a run may ask for; the command line names them.
inline constexpr uint32_t kKvThreadsMax = 64;
inline constexpr uint32_t kKvValueBytesMax = 1 << 20;
inline constexpr uint64_t kKvNumMax = 1'000'000'000;
inline constexpr uint64_t kKvOpsMax = 1'000'000'000;
inline constexpr double kKvDurationSecondsMax = 3600;
inline constexpr double kKvReportIntervalSecondsMin = 0.1;
inline constexpr double kKvReportIntervalSecondsMax = 3600;
inline constexpr uint64_t kKvWriteBufferBytesMin = 64 << 10;
inline constexpr uint64_t kKvWriteBufferBytesMax = 4ULL << 30;
inline constexpr uint64_t kKvTargetFileBytesMin = 64 << 10;
inline constexpr uint64_t kKvTargetFileBytesMax = 64ULL << 30;
inline constexpr uint64_t kKvLevelBaseBytesMin = 64 << 10;
inline constexpr uint64_t kKvLevelBaseBytesMax = 64ULL << 30;
inline constexpr uint32_t kKvBackgroundJobsMax = 64;
inline constexpr uint64_t kKvWriteRateBytesPerSecondMax = 1ULL << 40;
inline constexpr uint64_t kKvAckLogLinesMax = 100'000'000;
inline constexpr uint64_t kKvCompactionReadaheadBytesMax = 64 << 20;

// Where a running phase is, for progress lines.
struct KvProgress {
  std::string_view phase;  // "load", "run" or "verify"
  double elapsed_s = 0;
  uint64_t ops = 0;      // done so far in the phase
  double ops_per_s = 0;  // over the last report interval
};

struct KvOptions {
  std::string uri;  // zonelab:///abs/path/dev.img?...
  const WorkloadSpec* workload = nullptr;
  uint64_t num = 1'000'000;     // key range (db_bench) or record count (YCSB)
  std::optional<uint64_t> ops;  // run-phase operations (default: num, or none with a duration)
  double duration_s = 0;        // run phase stops after this long (0: no limit)
  uint32_t threads = 1;
  uint32_t value_bytes = 100;
  uint32_t key_bytes = 16;   // db_bench keys
  bool sync = false;         // WriteOptions.sync
  bool disable_wal = false;  // WriteOptions.disableWAL (db_bench --disable_wal)
  uint64_t seed = 0;
  std::string db_dir = "/db";
  bool fresh = false;                   // destroy the DB first (db_bench without use_existing_db)
  uint64_t write_rate_bytes_per_s = 0;  // readwhilewriting's writer (0: as fast as it can)
  double report_interval_s = 1.0;
  uint64_t target_file_size_bytes = 0;  // 0: 90 % of a zone's capacity, in whole blocks
  uint64_t write_buffer_bytes = 64 << 20;
  uint64_t max_bytes_for_level_base = 0;  // level 1's size; 0: RocksDB's (256 MiB)
  uint32_t max_background_jobs = 2;
  uint64_t block_cache_bytes = 8 << 20;
  // RocksDB's compaction_readahead_size: a compaction reads its inputs this
  // much at a time (0: block by block).
  uint64_t compaction_readahead_bytes = 0;
  std::string ack_log_path;                               // empty: none
  WorkloadFamily verify_keys = WorkloadFamily::kDbBench;  // which keys `verify` reads
  std::function<void(const KvProgress&)> progress;        // each report interval
  // Set (by a signal handler, say) to end the run early: the threads stop
  // taking operations within kKvStopPollSeconds, no later phase starts, and
  // the DB is closed as at a normal end. Null: the run ends on its own.
  const std::atomic<bool>* stop = nullptr;
};

// How often a running phase looks at KvOptions::stop.
inline constexpr double kKvStopPollSeconds = 0.05;

// Bounds and combinations; the message names the option.
std::optional<std::string> check_kv_options(const KvOptions& options);

struct KvOpStats {
  uint64_t ops = 0;
  Histogram latency_ns;
  // The modeled latency (device time) of each read command the file system
  // sent for these operations (fs::ReadLatencyScope): the device's part,
  // without the host's time around it. Block-cache hits send none.
  Histogram device_read_latency_ns;
  uint64_t found = 0;      // reads (and the reads of read-modify-writes) that found the key
  uint64_t not_found = 0;  // ... that did not
  uint64_t bytes = 0;      // keys and values written or read
  void merge(const KvOpStats& other);
};

// What the file system's files were given in one report interval, by the
// class of the file (fs/metadata.h IoClass): the write-ahead log, flushes
// (level-0 tables) and compactions.
struct KvAppendedBytes {
  uint64_t wal = 0;
  uint64_t flush = 0;
  uint64_t compaction = 0;
};

// The latency of the writes (put, update, insert) that finished in one
// report interval, in ns: how many, and the tail percentiles.
struct KvWriteLatencyWindow {
  uint64_t count = 0;
  uint64_t p99 = 0, p999 = 0, p9999 = 0, max = 0;
};

struct KvPhase {
  std::string name;  // load, run or verify
  double seconds = 0;
  std::array<KvOpStats, kOpTypeCount> by_type;
  double interval_s = 1.0;
  std::vector<double> ops_per_s_series;  // one per report interval (the last may be shorter)
  // The same intervals: bytes appended to files of each class in each, from
  // the file system's counters (whatever wrote them: the operations, the
  // background flushes and compactions).
  std::vector<KvAppendedBytes> appended_bytes_series;
  // The same intervals: the tail latency of the writes finished in each.
  std::vector<KvWriteLatencyWindow> write_latency_series;
  bool interrupted = false;  // KvOptions::stop ended it early
  uint64_t ops() const;
  uint64_t bytes() const;
  // The coefficient of variation (standard deviation / mean) of the flush
  // bytes per interval, over the whole intervals (the last, shorter one
  // left out); 0 with fewer than two of them or no flush at all.
  double flush_bandwidth_cv() const;
};

struct KvVerify {
  uint64_t listed = 0;  // distinct keys in the ack log
  uint64_t found = 0;   // present with the right value
  uint64_t missing = 0;
  uint64_t wrong = 0;  // present with another value
  bool clean() const { return missing == 0 && wrong == 0; }
};

enum class KvFailure : uint8_t {
  kNone,
  kBadInput,  // the image, the options or the ack log cannot be used
  kDbError,   // RocksDB answered an operation with an error (NoSpace, IOError, ...)
};

struct KvResult {
  KvFailure failure = KvFailure::kNone;
  std::string error;  // one line, when failure != kNone
  std::vector<KvPhase> phases;
  std::optional<KvVerify> verify;
  uint64_t records = 0;  // YCSB: records the DB holds at the end
  uint64_t target_file_size_bytes = 0;
  uint64_t max_bytes_for_level_base = 0;  // as RocksDB ran with it
  std::string compression;
  nlohmann::ordered_json rocksdb;  // RocksDB's statistics that matter
  nlohmann::ordered_json session;  // Session::stats_json without the zones
  // KvOptions::stop ended the run: `phases` hold what ran (the last one cut
  // short), and `verify` is left out (not every key was read).
  bool interrupted = false;
  bool ok() const { return failure == KvFailure::kNone; }
};

// The result as one JSON object (the command's --json).
nlohmann::ordered_json kv_result_json(const KvOptions& options, const KvResult& result);

// Tenants (seed 001 §IV-D): several workloads at once, each on its own
// RocksDB in its tenant's directory of one file system (KvOptions::uri
// names the tenant), results per tenant and the session's once, taken
// after every tenant's DB closed.
struct KvTenantsResult {
  std::vector<KvResult> tenants;   // in the order given; `session` left empty
  nlohmann::ordered_json session;  // Session::stats_json without the zones
  std::string error;               // the session could not be opened
  bool ok() const {
    if (!error.empty()) return false;
    for (const KvResult& r : tenants) {
      if (!r.ok()) return false;
    }
    return true;
  }
};

}  // namespace zonelab::rocksdb_plugin
