// Replays a trace (workload/trace.h) against a device in virtual time, as
// fast as the model runs (docs/replay.md).
//
// Two ways to pace it:
//   - timestamps: each operation is issued at its time in the trace (from
//     the first operation; iolog v2's waits add up to times), whatever has
//     completed: the trace's own arrival process, open loop. At most
//     `iodepth` are in flight; one that finds them all busy waits and is
//     counted as delayed.
//   - asap: the trace's order, `iodepth` in flight, the next issued when
//     one completes (a trace's waits and times are ignored).
//
// Addresses: byte offsets become LBAs; an operation that is not whole LBAs
// is widened to the LBAs it touches (counted). An operation past the
// device's end is refused before anything runs, with its line. On a zoned
// namespace each write must land at its zone's write pointer, as the
// device will require, and a trim must cover whole zones (it resets them):
// checked before anything runs, following the write pointers through the
// trace; the first that does not is refused with its line and why.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "common/histogram.h"
#include "sim/simulator.h"
#include "workload/runner.h"
#include "workload/trace.h"
#include "zonelab/device.h"

namespace zonelab {

struct ReplayOptions {
  bool timestamps = true;  // false: as fast as possible
  uint32_t iodepth = 32;   // 1..65536
};

struct ReplayResult {
  struct Kind {
    uint64_t ops = 0;
    uint64_t bytes = 0;
    Histogram latency_ns;
  };
  Kind read, write, trim, flush;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint64_t commands = 0;  // device commands (a zone-reset trim is one per zone)
  uint64_t delayed = 0;   // timestamps: issued later than their time (iodepth full)
  uint64_t delay_ns = 0;  // the sum of those delays
  uint64_t widened = 0;   // operations widened to whole LBAs
  uint64_t errors = 0;    // commands the device failed
  std::string first_error;
};

// The result as `zonelab replay --json` prints it (and the Python module's
// Device.replay): read, write, trim and flush (ops, bytes, IOPS, bandwidth
// and latency percentiles over the replay's device time), virtual_time_ns,
// commands, delayed, delay_ns, widened, errors (and first_error).
nlohmann::ordered_json replay_result_json(const ReplayResult& r);

// Checks every operation against the device before anything runs.
Outcome check_trace(const Trace& trace, const DeviceInfo& info, const Device& device);

ReplayResult replay_trace(Device& device, Simulator& sim, const Trace& trace,
                          const ReplayOptions& options, const ProgressFn& progress = nullptr);

}  // namespace zonelab
