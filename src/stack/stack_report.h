// What a running stack reports, as JSON, for every tool that runs one (the
// benchmark runner, the file system's statistics, the RocksDB plugin): a
// latency histogram, the device's counters over a span of device time, and
// the real-time driver's pacing.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "common/histogram.h"
#include "controller/modeled_device.h"
#include "sim/realtime.h"
#include "zonelab/result.h"

namespace zonelab {

// {mean, p50, p95, p99, p999, max}, in the histogram's unit.
nlohmann::ordered_json latency_json(const Histogram& h);
// What the device is: interface, LBA size, zone size, capacity and count,
// capacity, open and active limits, ZASL, the volatile write cache and the
// zone sets (`zonelab info --json` and the Python module's Device.info).
nlohmann::ordered_json device_info_json(const DeviceInfo& info);
// Host and flash bytes, erases, write amplification, per-resource busy
// fractions over `span_ns`, and what the device's interface adds.
nlohmann::ordered_json device_counters_json(const ModeledDevice& device, uint64_t span_ns);
// The mean of one of those busy arrays (`die_busy`, `channel_busy`), as
// read back from a statistics document; 0 when it is missing or empty.
double mean_busy(const nlohmann::ordered_json& shares);
// Timing, time scale, spin, completions, their error and turnaround, and
// the loop threads' CPU use.
nlohmann::ordered_json realtime_stats_json(const RealtimeOptions& options,
                                           const RealtimeStats& stats);

// Writes a statistics document to `path` as a whole or not at all (a
// temporary file beside it, renamed over it), so that a reader never sees
// half of one; the error reads "PATH: statistics not written: REASON".
Outcome write_stats_file(const std::string& path, std::string_view text);

}  // namespace zonelab
