// A benchmark job, fio-like: what to do (rw), in what pieces (bs), how many
// at once (iodepth per clone, numjobs clones), where (a zone range, from an
// offset), and until when (size or virtual runtime), at what pace (rate).
//
// zonelab splits a job's zones among its clones (clone k of n takes every
// n-th zone of the range), so clones never write the same zone; `size` and
// `rate` are the job's totals, shared evenly by its clones.
//
// Job options take fio's names and fio's units (docs/cli-compat.md): sizes
// such as 4k and 1M are powers of kb_base (1024 unless kb_base=1000), a
// bare runtime is seconds, and an option may be written with dashes or
// underscores. Every option has a limit, named in its error.
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
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "zonelab/result.h"

namespace zonelab {

// randwrite, randrw and trim need the block interface: a ZNS zone takes
// writes only at its write pointer and a ZNS namespace has no deallocate.
enum class JobKind : uint8_t {
  kRead,
  kRandRead,
  kWrite,
  kAppend,
  kFinish,
  kReset,
  kSoftfinish,
  kRandWrite,  // bs-aligned writes at random over the clone's zones
  kRandRw,     // the same, each op a read with probability rwmixread %
  kTrim,       // sequential deallocates (fio's trim)
};

bool is_management(JobKind kind);
// Writes at zone write pointers (write, append): each clone keeps one zone
// active while it writes.
bool is_zone_writer(JobKind kind);
// Kinds that a ZNS device cannot run (randwrite, randrw, trim).
bool needs_block_interface(JobKind kind);

std::string_view job_kind_name(JobKind kind);
// The data kinds only: what `rw` takes.
std::optional<JobKind> job_kind_from_name(std::string_view name);

// Limits of job options (each error names its limit).
inline constexpr uint64_t kJobRuntimeMaxNs = 3600ULL * 1'000'000'000;  // as interference's
inline constexpr uint64_t kJobSizePercentMax = 100'000;                // 1000 passes over the range
inline constexpr uint32_t kJobIodepthMax = 65'536;
inline constexpr uint32_t kJobNumjobsMax = 4'096;
inline constexpr uint64_t kJobBlockSizeMaxBytes = 1ULL << 30;
inline constexpr size_t kJobNameMaxChars = 64;
inline constexpr size_t kJobCountMax = 256;
// Commands in flight over every clone of every job of a run.
inline constexpr uint64_t kRunInflightMax = 1ULL << 20;
// Entries of one job's bandwidth log: a runtime that would need more is
// refused; a job without one doubles its interval instead (runner.h).
inline constexpr uint64_t kBwLogEntriesMax = 100'000;

struct JobSpec {
  std::string name = "job";
  JobKind kind = JobKind::kRandRead;
  uint64_t block_size_bytes = 4096;
  uint32_t iodepth = 1;
  uint32_t numjobs = 1;
  std::optional<std::pair<uint32_t, uint32_t>> zones;  // inclusive range
  uint64_t size_bytes = 0;                             // 0: see size_percent
  double size_percent = 0;  // of the range's usable capacity; 0 and size 0: one pass
  // Where the job starts in its range: a byte offset (a whole number of
  // zones) or a percentage of the range's zones (rounded down to a zone).
  uint64_t offset_bytes = 0;
  double offset_percent = 0;
  uint64_t runtime_ns = 0;          // 0: no time limit
  bool time_based = false;          // with runtime: run for all of it, whatever size says
  uint64_t rate_bytes_per_s = 0;    // 0: unlimited
  uint32_t rwmixread_percent = 50;  // randrw: the share of reads
  uint64_t fsync = 0;               // writers: an NVMe Flush after every N writes (fio's fsync)
  uint32_t kb_base = 1024;          // how its sizes were read (1024 or 1000)
  bool stonewall = false;           // start after every earlier job has finished
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

  // Field by field: two jobs that do the same, however they were written.
  bool operator==(const JobSpec&) const = default;
};

// One job option, as `bench --help` and docs/cli-compat.md show it.
struct JobOptionInfo {
  std::string_view name;     // fio's spelling, with underscores
  std::string_view aliases;  // fio's other names for it, space-separated
  std::string_view value;    // what it takes, e.g. "SIZE"; empty: a flag
  std::string_view help;
};
std::span<const JobOptionInfo> job_options();

// The option's name as set_job_option knows it: dashes read as
// underscores, aliases as their option ("blocksize" -> "bs"); empty if
// there is no such option.
std::string canonical_job_option(std::string_view key);

// Sets one job option from text (shared by CLI flags and job files). An
// error starts with the key as written and names the value as written.
Outcome set_job_option(JobSpec& job, std::string_view key, std::string_view value);
using JobOptionList = std::vector<std::pair<std::string, std::string>>;
// Sets options in order, except that kb_base comes first wherever it is
// written, since it changes how the others' sizes read (as in fio).
Outcome set_job_options(JobSpec& job, const JobOptionList& options);
// Parses a TOML job file: an optional [global] table and one table per job.
Result<std::vector<JobSpec>> parse_job_file_text(std::string_view text, std::string_view origin);
Result<std::vector<JobSpec>> parse_job_file(const std::string& path);

}  // namespace zonelab
