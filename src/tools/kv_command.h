// `zonelab kv`: RocksDB on a device image's zoned file system, driven by
// db_bench's and YCSB's workloads (rocksdb/kv_runner.h), reported as
// db_bench-like lines or one JSON object.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tools/cli.h"

namespace zonelab::cli {

// The flags as written; numbers are parsed and bounded in run_kv_command so
// that an error quotes the value as the user gave it.
struct KvCommandOptions {
  std::string image;
  std::string workload;
  std::optional<std::string> num;
  std::optional<std::string> ops;
  std::optional<std::string> duration;
  std::optional<std::string> threads;
  std::optional<std::string> value_size;
  std::optional<std::string> key_size;
  bool sync = false;
  bool disable_wal = false;
  std::optional<std::string> seed;
  std::string db = "/db";
  bool fresh = false;
  std::optional<std::string> write_rate;
  std::optional<std::string> report_interval;
  std::string timing = "modeled";
  std::optional<std::string> time_scale;
  std::string scheduler = "mq-deadline";
  std::string pacing = "auto";
  std::string gc = "on";
  std::string write_behind = "on";
  std::optional<std::string> target_file_size;
  std::optional<std::string> max_bytes_for_level_base;
  std::optional<std::string> write_buffer_size;
  std::optional<std::string> max_background_jobs;
  std::optional<std::string> cache_size;
  std::optional<std::string> compaction_readahead_size;
  std::optional<std::string> ack_log;
  std::optional<std::string> verify_keys;
  std::optional<std::string> create;
  std::optional<std::string> power_cut_after;
  // Tenants (seed 001 §IV-D): "NAME" or "NAME:FLAGS", each a RocksDB in
  // the file system's tenant NAME at once, FLAGS (--workload, --num, ...)
  // its own on top of the others given.
  std::vector<std::string> tenants;
  bool quiet = false;
  bool json = false;
};

void add_kv_command(CLI::App& app, KvCommandOptions& options);
int run_kv_command(const KvCommandOptions& options);

}  // namespace zonelab::cli
