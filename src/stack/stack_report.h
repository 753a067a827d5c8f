// What a running stack reports, as JSON, for every tool that runs one (the
// benchmark runner, the file system's statistics, the RocksDB plugin): a
// latency histogram, the device's counters over a span of device time, and
// the real-time driver's pacing.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>

#include "common/histogram.h"
#include "controller/modeled_device.h"
#include "sim/realtime.h"

namespace zonelab {

// {mean, p50, p95, p99, p999, max}, in the histogram's unit.
nlohmann::ordered_json latency_json(const Histogram& h);
// Host and flash bytes, erases, write amplification, per-resource busy
// fractions over `span_ns`, and what the device's interface adds.
nlohmann::ordered_json device_counters_json(const ModeledDevice& device, uint64_t span_ns);
// Timing, time scale, spin, completions, their error and turnaround, and
// the loop threads' CPU use.
nlohmann::ordered_json realtime_stats_json(const RealtimeOptions& options,
                                           const RealtimeStats& stats);

}  // namespace zonelab
