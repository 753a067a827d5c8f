// A benchmark job, fio-like: what to do (rw), in what pieces (bs), how many
// at once (iodepth per clone, numjobs clones), where (a zone range), and
// until when (size or virtual runtime), at what pace (rate).
//
// zonelab splits a job's zones among its clones (clone k of n takes every
// n-th zone of the range), so clones never write the same zone; `size` and
// `rate` are the job's totals, shared evenly by its clones.
//
// Besides the data kinds a job may manage zones, one zone per operation,
// taking the clone's zones in order: `finish` writes bs bytes at the zone's
// write pointer and then finishes it (the finish has data to pad),
// `softfinish` writes the same and then has the host fill the zone
// (src/host/softfinish.h), `reset` resets it. Programs such as interference
// runs build these jobs; job files name only the data kinds.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "zonelab/result.h"

namespace zonelab {

enum class JobKind : uint8_t { kRead, kRandRead, kWrite, kAppend, kFinish, kReset, kSoftfinish };

bool is_management(JobKind kind);

std::string_view job_kind_name(JobKind kind);
// The data kinds only: what `rw` takes.
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
  // Operations per second, the job's total shared evenly by its clones (0:
  // unlimited; fio's rate_iops, in ops/s as a real number): a clone's op k
  // starts no earlier than k / rate after the job starts, nor before a slot
  // frees, and an op falling due after the runtime ends the clone.
  double rate_iops = 0;
  // Seeds clone k's random choices with randseed + k instead of a seed
  // derived from the run's (fio's randseed).
  std::optional<uint64_t> randseed;
  // With runtime: only operations that complete within it count (ops, bytes,
  // latency, bw log); those still in flight complete but count apart
  // (JobResult::late_ops), so a measured window ends sharply.
  bool count_within_runtime = false;
  // Writers: a zone is reused only after the clone's commands in flight have
  // completed, and the clone issues nothing while the reset runs (a thread
  // that drains its queue), rather than queuing the reset behind them.
  bool zone_reset_drain = false;
  // A failed operation of this job stops every job of the run from issuing
  // more (fio's exitall_on_error); commands in flight complete.
  bool exitall_on_error = false;
  // softfinish: the host's fill writes and the pause between them (the
  // configuration's host.softfinish.chunk and .pause).
  uint64_t softfinish_chunk_bytes = 16 << 10;
  uint64_t softfinish_pause_ns = 0;
};

// Sets one job option from text (shared by CLI flags and job files).
Outcome set_job_option(JobSpec& job, std::string_view key, std::string_view value);
// Parses a TOML job file: an optional [global] table and one table per job.
Result<std::vector<JobSpec>> parse_job_file_text(std::string_view text, std::string_view origin);
Result<std::vector<JobSpec>> parse_job_file(const std::string& path);

}  // namespace zonelab
