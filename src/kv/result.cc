// See kv/result.h.
#include "kv/result.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "fs/metadata.h"
#include "zonelab/result.h"

namespace zonelab::rocksdb_plugin {

using Json = nlohmann::ordered_json;

namespace {

Json latency_us_json(const Histogram& h) {
  auto us = [](double ns) { return std::round(ns) / 1000.0; };
  return Json{{"mean", us(h.mean())},
              {"p50", us(static_cast<double>(h.percentile(50)))},
              {"p95", us(static_cast<double>(h.percentile(95)))},
              {"p99", us(static_cast<double>(h.percentile(99)))},
              {"p999", us(static_cast<double>(h.percentile(99.9)))},
              {"max", us(static_cast<double>(h.max()))}};
}

double per_second(uint64_t count, double seconds) {
  return seconds > 0 ? std::round(static_cast<double>(count) / seconds * 10) / 10 : 0.0;
}

Json phase_json(const KvPhase& phase) {
  Json j;
  j["seconds"] = std::round(phase.seconds * 1e6) / 1e6;
  j["ops"] = phase.ops();
  j["ops_per_s"] = per_second(phase.ops(), phase.seconds);
  j["bytes"] = phase.bytes();
  Json types = Json::object();
  for (size_t i = 0; i < kOpTypeCount; ++i) {
    const KvOpStats& s = phase.by_type[i];
    if (s.ops == 0) continue;
    Json t{{"ops", s.ops}, {"ops_per_s", per_second(s.ops, phase.seconds)}, {"bytes", s.bytes}};
    if (s.found + s.not_found != 0) {
      t["found"] = s.found;
      t["not_found"] = s.not_found;
    }
    t["lat_us"] = latency_us_json(s.latency_ns);
    if (s.device_read_latency_ns.count() != 0) {
      t["device_reads"] = s.device_read_latency_ns.count();
      t["device_read_lat_us"] = latency_us_json(s.device_read_latency_ns);
    }
    types[std::string(op_type_name(static_cast<OpType>(i)))] = t;
  }
  j["by_type"] = types;
  Json series = Json::array();
  for (double rate : phase.ops_per_s_series) series.push_back(std::round(rate * 10) / 10);
  j["series"] = {{"interval_s", phase.interval_s}, {"ops_per_s", series}};
  if (!phase.appended_bytes_series.empty()) {
    Json wal = Json::array(), flush = Json::array(), compaction = Json::array();
    for (const KvAppendedBytes& b : phase.appended_bytes_series) {
      wal.push_back(b.wal);
      flush.push_back(b.flush);
      compaction.push_back(b.compaction);
    }
    j["series"]["appended_bytes"] = {{"wal", wal}, {"flush", flush}, {"compaction", compaction}};
    j["series"]["flush_bandwidth_cv"] = std::round(phase.flush_bandwidth_cv() * 1e4) / 1e4;
  }
  bool writes = false;
  for (const KvWriteLatencyWindow& w : phase.write_latency_series) writes = writes || w.count != 0;
  if (writes) {
    Json count = Json::array(), p99 = Json::array(), p999 = Json::array(), p9999 = Json::array(),
         max = Json::array();
    auto us = [](uint64_t ns) { return std::round(static_cast<double>(ns) / 1e3 * 1e3) / 1e3; };
    for (const KvWriteLatencyWindow& w : phase.write_latency_series) {
      count.push_back(w.count);
      p99.push_back(us(w.p99));
      p999.push_back(us(w.p999));
      p9999.push_back(us(w.p9999));
      max.push_back(us(w.max));
    }
    j["series"]["write_lat_us"] = {
        {"count", count}, {"p99", p99}, {"p999", p999}, {"p9999", p9999}, {"max", max}};
  }
  if (phase.interrupted) j["interrupted"] = true;
  return j;
}

}  // namespace

void KvOpStats::merge(const KvOpStats& other) {
  ops += other.ops;
  latency_ns.merge(other.latency_ns);
  device_read_latency_ns.merge(other.device_read_latency_ns);
  found += other.found;
  not_found += other.not_found;
  bytes += other.bytes;
}

uint64_t KvPhase::ops() const {
  uint64_t sum = 0;
  for (const auto& s : by_type) sum += s.ops;
  return sum;
}

double KvPhase::flush_bandwidth_cv() const {
  // The last interval is shorter unless the phase ended on a report.
  size_t whole = std::min(appended_bytes_series.size(), ops_per_s_series.size());
  if (whole > 0 && seconds < interval_s * static_cast<double>(whole) - 1e-9) --whole;
  if (whole < 2) return 0;
  double sum = 0;
  for (size_t i = 0; i < whole; ++i) sum += static_cast<double>(appended_bytes_series[i].flush);
  const double mean = sum / static_cast<double>(whole);
  if (mean <= 0) return 0;
  double squares = 0;
  for (size_t i = 0; i < whole; ++i) {
    double d = static_cast<double>(appended_bytes_series[i].flush) - mean;
    squares += d * d;
  }
  return std::sqrt(squares / static_cast<double>(whole)) / mean;
}

uint64_t KvPhase::bytes() const {
  uint64_t sum = 0;
  for (const auto& s : by_type) sum += s.bytes;
  return sum;
}

std::optional<std::string> check_kv_options(const KvOptions& o) {
  if (o.workload == nullptr) return "kv: no workload";
  if (o.disable_wal && o.sync) return "--disable-wal with --sync: no log is written to sync";
  if (o.disable_wal && !o.ack_log_path.empty()) {
    return "--disable-wal with --ack-log: without the log an acknowledged write is not durable";
  }
  if (o.threads < 1 || o.threads > kKvThreadsMax) {
    return fmt::format("--threads {}: from 1 to {}", o.threads, kKvThreadsMax);
  }
  if (o.num < 1 || o.num > kKvNumMax)
    return fmt::format("--num {}: from 1 to {}", o.num, kKvNumMax);
  if (o.ops && *o.ops > kKvOpsMax) return fmt::format("--ops {}: at most {}", *o.ops, kKvOpsMax);
  if (!(o.duration_s >= 0 && o.duration_s <= kKvDurationSecondsMax)) {
    return fmt::format("--duration {}: from 0 to {} seconds", o.duration_s, kKvDurationSecondsMax);
  }
  if (o.value_bytes > kKvValueBytesMax) {
    return fmt::format("--value-size {}: at most {} bytes", o.value_bytes, kKvValueBytesMax);
  }
  if (o.key_bytes < kDbBenchKeyBytesMin || o.key_bytes > kKeyBytesMax) {
    return fmt::format("--key-size {}: from {} to {} bytes", o.key_bytes, kDbBenchKeyBytesMin,
                       kKeyBytesMax);
  }
  if (o.max_bytes_for_level_base != 0 && (o.max_bytes_for_level_base < kKvLevelBaseBytesMin ||
                                          o.max_bytes_for_level_base > kKvLevelBaseBytesMax)) {
    return fmt::format("--max-bytes-for-level-base {}: from {} to {} bytes",
                       o.max_bytes_for_level_base, kKvLevelBaseBytesMin, kKvLevelBaseBytesMax);
  }
  if (!(o.report_interval_s >= kKvReportIntervalSecondsMin &&
        o.report_interval_s <= kKvReportIntervalSecondsMax)) {
    return fmt::format("--report-interval {}: from {} to {} seconds", o.report_interval_s,
                       kKvReportIntervalSecondsMin, kKvReportIntervalSecondsMax);
  }
  // The file system's own rule for its paths, so that the DB directory is
  // a path `zonelab fs` names the same way (no "//", ".", ".." to resolve).
  if (fs::FsStatus path = fs::check_path(o.db_dir); !path) {
    return fmt::format("--db: {}", one_line(path.message()));
  }
  if (o.workload->family == WorkloadFamily::kVerify && o.ack_log_path.empty()) {
    return "kv: --workload verify needs --ack-log PATH (the log a writing run kept)";
  }
  return std::nullopt;
}

Json kv_result_json(const KvOptions& o, const KvResult& r) {
  Json j;
  j["workload"] = std::string(o.workload->name);
  j["num"] = o.num;
  j["threads"] = o.threads;
  WorkloadFamily keys =
      o.workload->family == WorkloadFamily::kVerify ? o.verify_keys : o.workload->family;
  j["key_format"] = keys == WorkloadFamily::kYcsb ? "ycsb" : "db_bench";
  if (keys != WorkloadFamily::kYcsb) j["key_size"] = o.key_bytes;
  j["value_size"] = o.value_bytes;
  if (o.ops) j["ops"] = *o.ops;
  if (o.duration_s > 0) j["duration_s"] = o.duration_s;
  j["sync"] = o.sync;
  if (o.disable_wal) j["disable_wal"] = true;
  if (o.compaction_readahead_bytes != 0) {
    j["compaction_readahead_size"] = o.compaction_readahead_bytes;
  }
  j["seed"] = o.seed;
  j["db"] = o.db_dir;
  j["uri"] = o.uri;
  j["options"] = {{"write_buffer_size", o.write_buffer_bytes},
                  {"target_file_size_base", r.target_file_size_bytes},
                  {"max_bytes_for_level_base", r.max_bytes_for_level_base},
                  {"max_background_jobs", o.max_background_jobs},
                  {"block_cache_size", o.block_cache_bytes},
                  {"compression", r.compression}};
  if (o.workload->family == WorkloadFamily::kYcsb) {
    j["distribution"] = std::string(key_distribution_name(o.workload->distribution));
    j["records"] = r.records;
  }
  if (r.interrupted) j["interrupted"] = true;
  for (const KvPhase& phase : r.phases) j[phase.name] = phase_json(phase);
  if (r.verify) {
    j["verify"] = {{"listed", r.verify->listed},
                   {"found", r.verify->found},
                   {"missing", r.verify->missing},
                   {"wrong", r.verify->wrong}};
  }
  j["rocksdb"] = r.rocksdb;
  j["session"] = r.session;
  return j;
}

}  // namespace zonelab::rocksdb_plugin
