// A benchmark job, fio-like: what to do (rw), in what pieces (bs), how many
// at once (iodepth per clone, numjobs clones), where (a zone range), and
// until when (size or virtual runtime), at what pace (rate).
//
// zonelab splits a job's zones among its clones (clone k of n takes every
// n-th zone of the range), so clones never write the same zone; `size` and
// `rate` are the job's totals, shared evenly by its clones.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "zonelab/result.h"

namespace zonelab {

enum class JobKind : uint8_t { kRead, kRandRead, kWrite, kAppend };

std::string_view job_kind_name(JobKind kind);
std::optional<JobKind> job_kind_from_name(std::string_view name);

struct JobSpec {
  std::string name = "job";
  JobKind kind = JobKind::kRandRead;
  uint64_t block_size_bytes = 4096;
  uint32_t iodepth = 1;
  uint32_t numjobs = 1;
  std::optional<std::pair<uint32_t, uint32_t>> zones;  // inclusive range
  uint64_t size_bytes = 0;                             // 0: see size_percent
  double size_percent = 0;        // of the range's usable capacity; 0 and size 0: one pass
  uint64_t runtime_ns = 0;        // 0: no time limit
  uint64_t rate_bytes_per_s = 0;  // 0: unlimited
  bool stonewall = false;         // start after every earlier job has finished
  // Writers: the zone after a full one is the next of the clone's zones in
  // order, or one of them at random (seed 000 §5.1: "a new zone is chosen").
  bool random_zones = false;
  uint64_t log_interval_ns = 0;  // > 0: bandwidth per interval (fio's bw log)
  uint16_t stream = 0;           // the write stream (block interface)
};

// Sets one job option from text (shared by CLI flags and job files).
Outcome set_job_option(JobSpec& job, std::string_view key, std::string_view value);
// Parses a TOML job file: an optional [global] table and one table per job.
Result<std::vector<JobSpec>> parse_job_file_text(std::string_view text, std::string_view origin);
Result<std::vector<JobSpec>> parse_job_file(const std::string& path);

}  // namespace zonelab
