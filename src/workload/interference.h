// Interference runs (seed 003 §2.2): how much an I/O management workload in
// the background (finish or reset) slows a foreground I/O workload (write,
// append or read) on disjoint zones of the same device.
//
// For every concurrency level (CL) the foreground runs twice, each time on a
// fresh device built from the same configuration: alone (the isolated run)
// and beside a background thread throttled to a percentage of its peak rate
// (the interfered run). Both runs prepare the device the same way, so with
// intensity 0 the two are identical. Write scales across zones (CL threads,
// each at queue depth 1 in its own zone); append and read scale within one
// zone (one thread at queue depth CL). The background is one thread at queue
// depth 1 on its own zones, issuing op k at k / rate after the start or when
// op k-1 completes, whichever is later.
//
// The foreground runs for `runtime_ns` of virtual time; its throughput is the
// operations completed in that window over the window, its latency the P95
// of their submission-to-completion times. M^Inter (seed 003 Eq. 1-3)
// summarises the distance between the two runs over all levels. Everything
// is a pure function of the configuration (its seed included) and the spec.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/histogram.h"
#include "zonelab/config.h"
#include "zonelab/result.h"
#include "zonelab/status.h"

namespace zonelab {

enum class ForegroundOp : uint8_t { kWrite, kAppend, kRead };
// softfinish: the finish done by the host (src/host/softfinish.h), its
// writes through the scheduler like the foreground's.
enum class BackgroundOp : uint8_t { kReset, kFinish, kSoftfinish };

std::string_view foreground_op_name(ForegroundOp op);
std::string_view background_op_name(BackgroundOp op);

// The measuring window of the interference studies. A background at rate r
// starts an op every 1 / r (its period); a window that holds part of a
// period holds more or less background work than the intensity asks for,
// depending on the phase -- a 2 s window beside a background whose period is
// 19 s holds one whole op of 9.5 s or none. So a window is a whole number of
// periods, at least `min_ns`; at most `max_ns` (then possibly part of a
// period when one period is longer), and at most as many periods as the
// device has zones to spare for the background (each op takes a zone of its
// own; a reset op's zone is written full first, so resets take at most
// `reset_zones_max`, which bounds the run's preparation).
struct InterferenceWindowRule {
  uint64_t min_ns = 0;
  uint64_t max_ns = 0;
  uint32_t reset_zones_max = 0;
};

// The studies' rule: 4 s to 30 s and 256 reset zones; quick, 0.25 s to 1 s
// and 32.
InterferenceWindowRule interference_window_rule(bool quick);

struct InterferenceSpec;
// The window by `rule` for `spec`'s foreground, levels and background at
// `rate_ops_per_s` (0: no background; the window is rule.min_ns) on a
// device of `zone_count` zones.
uint64_t interference_window_ns(const InterferenceWindowRule& rule, const InterferenceSpec& spec,
                                uint32_t zone_count, double rate_ops_per_s);

struct InterferenceSpec {
  ForegroundOp foreground = ForegroundOp::kWrite;
  BackgroundOp background = BackgroundOp::kFinish;
  double intensity_percent = 0;  // of the background's peak rate; 0: no background
  std::vector<uint32_t> levels;  // empty: default_levels(foreground)
  uint64_t block_size_bytes = 16 << 10;
  double alpha = 0.5;  // M^Inter weight of throughput; latency gets 1 - alpha
  uint64_t runtime_ns = 2'000'000'000;
  // Set: the window is chosen by this rule once the background's rate is
  // known, and runtime_ns is not used (the result's spec has the window).
  std::optional<InterferenceWindowRule> window_rule;
  double peak_ops_per_s = 0;  // the background's peak; 0: measure it
  std::string scheduler;      // host.scheduler for the runs; empty: the configuration's
  // Runs each measured window on the real-time driver (src/sim/realtime.h),
  // paced to the wall clock at `time_scale`; the results then carry the
  // completion error.
  bool realtime = false;
  double time_scale = 1.0;
};

// Seed 003 §2.2: 1-7 for write and append, powers of two up to 128 for read.
std::vector<uint32_t> default_levels(ForegroundOp op);

// Sets one option from text. Keys: foreground, background, intensity,
// levels, bs, alpha, runtime, scheduler, peak (the command's flag names).
Outcome set_interference_option(InterferenceSpec& spec, std::string_view key,
                                std::string_view value);

// One option of a job file, as text for set_interference_option.
struct InterferenceOption {
  std::string key;
  std::string value;
};
// A TOML job file holds the options as top-level keys: strings, numbers, or
// for `levels` also an array of integers. Unknown keys are errors; values are
// checked when they are set.
Result<std::vector<InterferenceOption>> parse_interference_job_text(std::string_view text,
                                                                    std::string_view origin);
Result<std::vector<InterferenceOption>> parse_interference_job_file(const std::string& path);

// Checks a spec against the device a configuration describes (sizes, zone
// counts, open/active limits), before anything runs.
Outcome check_interference(const Config& config, const InterferenceSpec& spec);

// One run at one concurrency level.
struct InterferenceRun {
  uint64_t ops = 0;  // foreground operations completed in the window
  double iops = 0;
  Histogram latency_ns;
  uint64_t zone_resets = 0;               // foreground zones reset after they filled
  uint64_t background_ops = 0;            // issued in the window, each run to completion
  uint64_t background_ops_in_window = 0;  // of those, completed in the window
  Histogram background_latency_ns;        // of the finish or reset command
  uint64_t window_start_ns = 0;
  uint64_t window_end_ns = 0;
  uint64_t virtual_end_ns = 0;  // when the device was idle again
};

struct InterferenceLevel {
  uint32_t cl = 0;
  InterferenceRun iso;
  InterferenceRun inter;
  double distance = 0;  // this level's term of Eq. 1
};

struct InterferenceResult {
  InterferenceSpec spec;  // levels resolved
  bool peak_measured = false;
  double peak_ops_per_s = 0;  // 0 when the intensity is 0 and no peak was given
  double rate_ops_per_s = 0;  // intensity x peak
  uint64_t peak_probe_virtual_ns = 0;
  uint32_t foreground_zones = 0;  // zones 0 .. foreground_zones - 1
  uint32_t background_zones = 0;  // the next ones
  std::vector<InterferenceLevel> levels;
  double m_inter = 0;
  uint64_t virtual_time_ns = 0;   // simulated by every device of the run, together
  Histogram completion_error_ns;  // with spec.realtime: every run's, together
  // The first command the device failed, if any (the run stops there).
  Status first_status = Status::kSuccess;
  std::string first_error;

  uint64_t background_ops() const;
  Histogram background_latency_ns() const;
};

// Called after each of the 2 x levels runs.
using InterferenceProgress = std::function<void(size_t runs_done, size_t runs_total)>;

// Errors are bad input: a spec the device cannot serve, a background that
// would run out of zones, a window in which no foreground operation ends.
Result<InterferenceResult> run_interference(const Config& config, const InterferenceSpec& spec,
                                            const InterferenceProgress& progress = nullptr);

}  // namespace zonelab
