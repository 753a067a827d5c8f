// Runs benchmark jobs against a device in virtual time and measures them:
// operations, bytes, and a latency histogram per job (latency is submission
// to completion, so it includes any wait in the device's queue).
//
// Jobs run together unless one says `stonewall`, which starts a new group
// after every earlier job has finished. A clone stops at its first failed
// command (as fio does by default) and the job reports the error; with
// exitall_on_error every job stops issuing.
//
// A management job (finish, reset, softfinish) counts one operation per zone
// it manages, with the latency of the finish or reset command (softfinish:
// of the whole fill); the write before a finish is part of the op, not
// counted on its own. `size` does not apply: the job makes one pass over its
// zones, or with a runtime runs until it ends (running out of zones first is
// an error). A job with a runtime and count_within_runtime measures a
// window: what completes after it is late.
//
// randwrite and randrw visit the bs-sized blocks of each clone's zones in a
// random order, each block once per pass (fio's random map), a new order
// each pass; randrw makes each op a read with probability rwmixread %.
// trim deallocates each clone's zones in order, bs at a time.
//
// A bandwidth log (log_interval) has at most kBwLogEntriesMax entries:
// check_jobs refuses a runtime that would need more, and a job without a
// runtime that runs past them doubles its interval, merging entries in
// pairs (JobResult::bw_log_interval_ns says which interval the log has).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/histogram.h"
#include "sim/simulator.h"
#include "workload/job.h"
#include "zonelab/device.h"

namespace zonelab {

struct JobResult {
  JobSpec spec;
  uint64_t ops = 0;  // successful data commands, or zones managed
  uint64_t bytes = 0;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  Histogram latency_ns;
  uint64_t resets = 0;  // zone resets the job issued to reuse zones
  Histogram reset_latency_ns;
  uint64_t flushes = 0;  // Flush commands (fsync=N)
  Histogram flush_latency_ns;
  uint64_t errors = 0;
  // The device's status for the first failed command; SUCCESS with errors > 0
  // means the job could not be planned (e.g. nothing to read).
  Status first_status = Status::kSuccess;
  std::string first_error;  // "ZONE_INVALID_WRITE at LBA 123 (write)"
  // With spec.log_interval_ns: bytes completed in each interval of
  // bw_log_interval_ns from start_ns (the spec's interval, or a multiple of
  // it when the log would have grown past kBwLogEntriesMax).
  std::vector<uint64_t> bw_log;
  uint64_t bw_log_interval_ns = 0;
  // With spec.runtime_ns: operations that completed after the runtime. They
  // count in ops, bytes and latency too, unless spec.count_within_runtime.
  uint64_t late_ops = 0;
  // randrw: the reads and the writes apart (ops, bytes and latency_ns above
  // count both).
  struct Direction {
    uint64_t ops = 0;
    uint64_t bytes = 0;
    Histogram latency_ns;
  };
  Direction reads;
  Direction writes;

  double seconds() const {
    return end_ns > start_ns ? static_cast<double>(end_ns - start_ns) / 1e9 : 0.0;
  }
  double iops() const { return seconds() > 0 ? static_cast<double>(ops) / seconds() : 0.0; }
  double bandwidth_bytes_per_s() const {
    return seconds() > 0 ? static_cast<double>(bytes) / seconds() : 0.0;
  }
};

struct RunResult {
  std::vector<JobResult> jobs;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint64_t commands = 0;
  uint64_t errors = 0;
  // The job whose error came first (SIZE_MAX: none failed).
  size_t first_failed_job = SIZE_MAX;
};

// Called now and then during a run with the commands completed so far.
using ProgressFn = std::function<void(uint64_t virtual_ns, uint64_t commands)>;

// Checks jobs against the device before anything runs (zone ranges and
// offsets, block sizes, the interface a kind needs, sizes, logs and the
// commands in flight within their limits); the message names the job, the
// option and the limit.
Outcome check_jobs(const std::vector<JobSpec>& jobs, const DeviceInfo& info);
// Checks what depends on the device's present state, so that a run is not
// refused halfway: the zones writers keep active and open, beside those
// already active, within zns.max_active and zns.max_open (each group of
// jobs that runs together against the state before the run), and a
// rate-limited job's pace within the virtual time the runner can count.
Outcome check_jobs_on_device(const std::vector<JobSpec>& jobs, const Device& device);

// Runs the simulation until nothing is left to do; run_jobs calls it after
// starting each group of jobs. By default sim.run() (virtual time); the
// real-time driver's run_until_idle paces the same events to the wall clock
// (then `device` is the driver's device() and the engine runs in the loop).
using DriveFn = std::function<void()>;

// A job's result as `zonelab bench --json` prints it in `jobs[]` (and the
// Python module's Device.bench): name, rw, bs, ops, bytes, IOPS, bandwidth,
// latency percentiles, resets, flushes, errors, randrw's directions.
nlohmann::ordered_json job_result_json(const JobResult& r);

RunResult run_jobs(Device& device, Simulator& sim, const std::vector<JobSpec>& jobs, uint64_t seed,
                   const ProgressFn& progress = nullptr, const DriveFn& drive = nullptr);

}  // namespace zonelab
