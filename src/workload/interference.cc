// Interference runs; see interference.h. The foreground threads and the
// background thread are jobs of the benchmark runner (runner.h), run
// together on one fresh device; the run function measures the background's
// peak, checks that its zones suffice, and drives an isolated and an
// interfered run per concurrency level.
#include "workload/interference.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <memory>

#include "common/rng.h"
#include "common/schedulers.h"
#include "common/text_input.h"
#include "common/units.h"
#include "controller/modeled_device.h"
#include "flash/flash.h"
#include "host/softfinish.h"
#include "sim/realtime.h"
#include "sim/simulator.h"
#include "stack/device_factory.h"
#include "stack/stack.h"
#include "workload/interference_model.h"
#include "workload/runner.h"
#include "zonelab/assert.h"

namespace zonelab {
namespace {

constexpr uint32_t kMaxLevel = 4096;   // threads (write) or queue depth (append, read)
constexpr size_t kMaxLevelCount = 64;  // levels in one run
constexpr uint64_t kMaxRuntimeNs = 3600ULL * 1'000'000'000;
constexpr uint32_t kPeakProbeOps = 4;          // background ops timed to find the peak
constexpr uint64_t kPrefillBytes = 4 << 20;    // one prefill write
constexpr uint64_t kReadStream = 0x7265'6164;  // seeds the read offsets of a level

constexpr std::array<std::string_view, 3> kForegroundNames{"write", "append", "read"};
constexpr std::array<std::string_view, 3> kBackgroundNames{"reset", "finish", "softfinish"};
constexpr std::array<std::string_view, 11> kOptionKeys{
    "foreground", "background", "intensity", "levels",   "bs",        "alpha",
    "runtime",    "scheduler",  "peak",      "realtime", "time_scale"};

Result<double> parse_decimal(std::string_view text, std::string_view key) {
  double value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value, std::chars_format::general);
  if (text.empty() || ec != std::errc() || ptr != end || !std::isfinite(value)) {
    return Error{fmt::format("{} = '{}': expected a number", key, one_line(text, 64))};
  }
  return value;
}

Result<std::vector<uint32_t>> parse_levels(std::string_view text) {
  auto bad = [&] {
    return Error{fmt::format(
        "levels = '{}': expected a range A-B or a list such as 1,2,4 of levels from 1 to {}",
        one_line(text, 64), kMaxLevel)};
  };
  std::vector<uint32_t> levels;
  auto add = [&](uint64_t level) {
    if (level == 0 || level > kMaxLevel) return false;
    levels.push_back(static_cast<uint32_t>(level));
    return true;
  };
  auto dash = text.find('-');
  if (text.find(',') == std::string_view::npos && dash != std::string_view::npos) {
    auto first = parse_count(text.substr(0, dash));
    auto last = parse_count(text.substr(dash + 1));
    if (!first || !last || *first == 0 || *first > *last || *last > kMaxLevel) return bad();
    if (*last - *first >= kMaxLevelCount) {
      return Error{
          fmt::format("levels = '{}': more than {} levels", one_line(text, 64), kMaxLevelCount)};
    }
    for (uint64_t level = *first; level <= *last; ++level) add(level);
    return levels;
  }
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = std::min(text.find(',', start), text.size());
    auto level = parse_count(text.substr(start, comma - start));
    if (!level || !add(*level)) return bad();
    if (levels.size() > kMaxLevelCount) {
      return Error{
          fmt::format("levels = '{}': more than {} levels", one_line(text, 64), kMaxLevelCount)};
    }
    start = comma + 1;
  }
  return levels;
}

// A device of its own for one run, behind the host scheduler.
using Rig = Stack;

Result<std::unique_ptr<Rig>> make_rig(const Config& config) { return Stack::make(config); }

// A device error: the first failed command and what it was.
struct Failure {
  Status status = Status::kSuccess;
  std::string what;
  bool failed() const { return status != Status::kSuccess; }
};

std::string describe(const Command& c) {
  std::string_view op =
      c.opcode == Opcode::kZoneManagementSend ? zone_action_name(c.action) : opcode_name(c.opcode);
  return fmt::format("{} at LBA {} ({})", status_name(c.status), c.slba, op);
}

// Runs one command alone to completion (and the device to idle).
Status run_alone(Rig& rig, Command& command, Failure& failure) {
  rig.io().submit_wait(command);
  rig.drive();
  if (command.status != Status::kSuccess && !failure.failed()) {
    failure = Failure{command.status, describe(command)};
  }
  return command.status;
}

Command zone_command(Opcode opcode, uint64_t slba, uint32_t nlb,
                     ZoneAction action = ZoneAction::kNone) {
  Command c;
  c.opcode = opcode;
  c.slba = slba;
  c.nlb = nlb;
  c.action = action;
  return c;
}

// Writes a zone to capacity (it ends full), one large write at a time.
void fill_zone(Rig& rig, uint32_t zone, Failure& failure) {
  const DeviceInfo& info = rig.info();
  uint64_t start = static_cast<uint64_t>(zone) * info.zone_size_lbas;
  uint64_t chunk = std::max<uint64_t>(1, kPrefillBytes / info.lba_size_bytes);
  for (uint64_t done = 0; done < info.zone_capacity_lbas && !failure.failed();) {
    auto nlb = static_cast<uint32_t>(std::min(chunk, info.zone_capacity_lbas - done));
    Command c = zone_command(Opcode::kWrite, start + done, nlb);
    run_alone(rig, c, failure);
    done += nlb;
  }
}

// What every run of one interference run shares.
struct Plan {
  ForegroundOp foreground = ForegroundOp::kWrite;
  BackgroundOp background = BackgroundOp::kFinish;
  uint64_t block_size_bytes = 0;
  uint32_t foreground_zones = 0;  // the background's zones start here
  uint32_t background_zones = 0;
  double rate_ops_per_s = 0;
  uint64_t runtime_ns = 0;
  uint64_t seed = 0;
  bool realtime = false;
  RealtimeOptions realtime_options;
};

struct RunOutcome {
  InterferenceRun run;
  Histogram completion_error_ns;  // real-time runs
  Failure failure;
  bool out_of_zones = false;
};

// The foreground of one level as a job: write scales across zones (CL
// clones at queue depth 1, one zone each), append and read within zone 0
// (one clone at queue depth CL, reads at random offsets of its capacity).
// Only operations that complete in the window count, a writer resets its
// full zone once its commands have drained, and a device error stops the run.
JobSpec foreground_job(const Plan& plan, uint32_t cl) {
  JobSpec job;
  job.name = std::string(foreground_op_name(plan.foreground));
  bool across_zones = plan.foreground == ForegroundOp::kWrite;
  job.numjobs = across_zones ? cl : 1;
  job.iodepth = across_zones ? 1 : cl;
  job.zones = {{0, job.numjobs - 1}};
  job.block_size_bytes = plan.block_size_bytes;
  job.runtime_ns = plan.runtime_ns;
  job.count_within_runtime = true;
  job.zone_reset_drain = true;
  job.exitall_on_error = true;
  switch (plan.foreground) {
    case ForegroundOp::kWrite:
      job.kind = JobKind::kWrite;
      break;
    case ForegroundOp::kAppend:
      job.kind = JobKind::kAppend;
      break;
    case ForegroundOp::kRead:
      job.kind = JobKind::kRandRead;
      job.randseed = derive_seed(plan.seed, kReadStream, cl);
      break;
  }
  return job;
}

// The background as a job: one zone of its own per op, op k due k / rate
// after the window opens and not before op k-1 ends; a finish first writes
// one flash page, so that it has a partly written zone to fill.
JobSpec background_job(const Plan& plan, const Config& config) {
  JobSpec job;
  job.name = std::string(background_op_name(plan.background));
  switch (plan.background) {
    case BackgroundOp::kReset:
      job.kind = JobKind::kReset;
      break;
    case BackgroundOp::kFinish:
      job.kind = JobKind::kFinish;
      break;
    case BackgroundOp::kSoftfinish:
      job.kind = JobKind::kSoftfinish;
      break;
  }
  job.block_size_bytes = config.flash.page_size_bytes;
  job.zones = {{plan.foreground_zones, plan.foreground_zones + plan.background_zones - 1}};
  job.runtime_ns = plan.runtime_ns;
  job.rate_iops = plan.rate_ops_per_s;
  job.exitall_on_error = true;
  job.softfinish_chunk_bytes = config.host.softfinish_chunk_bytes;
  job.softfinish_pause_ns = config.host.softfinish_pause_ns;
  return job;
}

// What the jobs did, as the run of a level. The background counts the ops it
// issued: each runs to completion, so they are its completed ops.
RunOutcome outcome_of(const RunResult& ran, const Plan& plan) {
  RunOutcome out;
  const JobResult& fg = ran.jobs[0];
  InterferenceRun& r = out.run;
  r.ops = fg.ops;
  r.latency_ns = fg.latency_ns;
  r.zone_resets = fg.resets;
  r.window_start_ns = fg.start_ns;
  r.window_end_ns = fg.start_ns + plan.runtime_ns;
  r.virtual_end_ns = ran.end_ns;
  r.iops = static_cast<double>(r.ops) * 1e9 / static_cast<double>(plan.runtime_ns);
  if (ran.jobs.size() > 1) {
    const JobResult& bg = ran.jobs[1];
    r.background_ops = bg.ops;
    r.background_ops_in_window = bg.ops - bg.late_ops;
    r.background_latency_ns = bg.latency_ns;
  }
  if (ran.first_failed_job < ran.jobs.size()) {
    const JobResult& failed = ran.jobs[ran.first_failed_job];
    // The background's only failure without a device error: no zone left.
    out.out_of_zones = failed.first_status == Status::kSuccess;
    ZL_ASSERT(!out.out_of_zones || ran.first_failed_job == 1);
    out.failure = Failure{failed.first_status, failed.first_error};
  }
  return out;
}

// One run at one level on a fresh device. Both runs of a level prepare the
// device alike: the read zone and the reset background's zones are written
// full first.
Result<RunOutcome> run_level(const Config& config, const Plan& plan, uint32_t cl, bool background) {
  auto rig = make_rig(config);
  if (!rig) return Error{rig.error()};
  Failure failure;
  if (plan.foreground == ForegroundOp::kRead) fill_zone(**rig, 0, failure);
  if (plan.background == BackgroundOp::kReset) {
    for (uint32_t z = 0; z < plan.background_zones && !failure.failed(); ++z) {
      fill_zone(**rig, plan.foreground_zones + z, failure);
    }
  }
  if (failure.failed()) {
    RunOutcome out;
    out.failure = failure;
    return out;
  }
  // The window opens on a quiet device: a write-back buffer has drained
  // what the preparation wrote (else every plane's programs would start in
  // step with the window).
  uint64_t drained = 0;
  (*rig)->inspect([&drained](const ModeledDevice& d) { drained = d.flash().drained_at_ns(); });
  if (drained > (*rig)->sim().now_ns()) (*rig)->sim().advance_to(drained);
  (*rig)->reset_stats();
  std::vector<JobSpec> jobs{foreground_job(plan, cl)};
  if (background && plan.rate_ops_per_s > 0) jobs.push_back(background_job(plan, (*rig)->config()));
  ZL_ASSERT(check_jobs(jobs, (*rig)->info()));  // check_interference vouches for the jobs
  if (!plan.realtime) {
    RunResult ran = run_jobs((*rig)->device(), (*rig)->sim(), jobs, plan.seed, nullptr,
                             [&rig] { (*rig)->drive(); });
    return outcome_of(ran, plan);
  }
  std::unique_ptr<RealtimeDriver> paced = (*rig)->pace(plan.realtime_options);
  RunResult ran = run_jobs(paced->device(), (*rig)->sim(), jobs, plan.seed, nullptr,
                           [&paced] { paced->run_until_idle(); });
  paced->stop();
  RunOutcome out = outcome_of(ran, plan);
  out.completion_error_ns = paced->stats().completion_error_ns;
  return out;
}

// The background op alone, closed loop at queue depth 1, on a fresh device:
// ops per second over kPeakProbeOps ops.
Result<double> measure_peak(const Config& config, const Plan& plan, uint64_t& virtual_ns,
                            Failure& failure) {
  auto made = make_rig(config);
  if (!made) return Error{made.error()};
  Rig& rig = **made;
  uint32_t first = plan.foreground_zones;
  if (plan.background == BackgroundOp::kReset) {
    for (uint32_t z = 0; z < kPeakProbeOps; ++z) fill_zone(rig, first + z, failure);
  }
  uint64_t start_ns = rig.sim().now_ns();
  const DeviceInfo& info = rig.info();
  // One flash page of data: the finish then has a partly written zone to fill.
  auto page_lbas = static_cast<uint32_t>(rig.config().flash.page_size_bytes / info.lba_size_bytes);
  for (uint32_t op = 0; op < kPeakProbeOps && !failure.failed(); ++op) {
    uint64_t slba = static_cast<uint64_t>(first + op) * info.zone_size_lbas;
    if (plan.background != BackgroundOp::kReset) {
      Command write = zone_command(Opcode::kWrite, slba, page_lbas);
      if (run_alone(rig, write, failure) != Status::kSuccess) break;
    }
    if (plan.background == BackgroundOp::kSoftfinish) {
      SoftFinish soft(rig.device(), rig.sim(), config.host);
      Status status = Status::kSuccess;
      soft.start(first + op, [&status](Status s, uint64_t) { status = s; });
      rig.drive();
      if (status != Status::kSuccess) {
        failure = Failure{status, fmt::format("softfinish of zone {}", first + op)};
      }
      continue;
    }
    ZoneAction action =
        plan.background == BackgroundOp::kFinish ? ZoneAction::kFinish : ZoneAction::kReset;
    Command manage = zone_command(Opcode::kZoneManagementSend, slba, 0, action);
    run_alone(rig, manage, failure);
  }
  virtual_ns = rig.sim().now_ns();
  if (failure.failed()) return 0.0;
  uint64_t elapsed_ns = std::max<uint64_t>(1, rig.sim().now_ns() - start_ns);
  return kPeakProbeOps * 1e9 / static_cast<double>(elapsed_ns);
}

std::vector<uint32_t> resolved_levels(const InterferenceSpec& spec) {
  return spec.levels.empty() ? default_levels(spec.foreground) : spec.levels;
}

uint32_t foreground_zone_count(const InterferenceSpec& spec, const std::vector<uint32_t>& levels) {
  if (spec.foreground != ForegroundOp::kWrite) return 1;
  return *std::max_element(levels.begin(), levels.end());
}

// The background's peak (given or measured) and rate, and the zones it
// needs; nothing at intensity 0. A device error in the peak probe is left in
// `result`.
Outcome plan_background(const Config& config, const InterferenceSpec& spec, uint32_t zone_count,
                        Plan& plan, InterferenceResult& result) {
  if (spec.intensity_percent == 0) return {};
  Failure failure;
  if (spec.peak_ops_per_s > 0) {
    result.peak_ops_per_s = spec.peak_ops_per_s;
  } else {
    auto peak = measure_peak(config, plan, result.peak_probe_virtual_ns, failure);
    if (!peak) return Error{peak.error()};
    result.peak_measured = true;
    result.peak_ops_per_s = *peak;
    result.virtual_time_ns += result.peak_probe_virtual_ns;
  }
  if (failure.failed()) {
    result.first_status = failure.status;
    result.first_error = "peak probe: " + failure.what;
    return {};
  }
  result.rate_ops_per_s = spec.intensity_percent / 100.0 * result.peak_ops_per_s;
  plan.rate_ops_per_s = result.rate_ops_per_s;
  if (spec.window_rule) {
    plan.runtime_ns =
        interference_window_ns(*spec.window_rule, spec, zone_count, result.rate_ops_per_s);
  }
  // Op k starts no earlier than k / rate, so at most floor(rate x runtime)
  // + 1 start in the window; one zone more covers rounding.
  double ops_max = std::floor(result.rate_ops_per_s * static_cast<double>(plan.runtime_ns) / 1e9);
  auto zones_left = static_cast<double>(zone_count - plan.foreground_zones);
  if (ops_max + 2 > zones_left) {
    return Error{fmt::format(
        "the {} background at {:.6g} ops/s for {} may issue {:.0f} ops, one zone each, but only "
        "{:.0f} zones are left beside the foreground's {}: lower --intensity or --runtime, give "
        "--peak, or use a device with more zones",
        background_op_name(spec.background), result.rate_ops_per_s, format_time(plan.runtime_ns),
        ops_max + 1, zones_left, plan.foreground_zones)};
  }
  plan.background_zones = static_cast<uint32_t>(ops_max) + 2;
  return {};
}

}  // namespace

std::string_view foreground_op_name(ForegroundOp op) {
  return kForegroundNames[static_cast<size_t>(op)];
}

std::string_view background_op_name(BackgroundOp op) {
  return kBackgroundNames[static_cast<size_t>(op)];
}

InterferenceWindowRule interference_window_rule(bool quick) {
  constexpr uint64_t kSecondNs = 1'000'000'000;
  return quick ? InterferenceWindowRule{kSecondNs / 4, kSecondNs, 32}
               : InterferenceWindowRule{4 * kSecondNs, 30 * kSecondNs, 256};
}

uint64_t interference_window_ns(const InterferenceWindowRule& rule, const InterferenceSpec& spec,
                                uint32_t zone_count, double rate_ops_per_s) {
  if (!(rate_ops_per_s > 0)) return rule.min_ns;
  const double period_ns = 1e9 / rate_ops_per_s;
  // A window of n periods starts at most n + 1 ops, one zone each; the
  // runner asks for one zone more.
  const uint32_t foreground_zones = foreground_zone_count(spec, resolved_levels(spec));
  double periods_max = std::max(1.0, static_cast<double>(zone_count) - foreground_zones - 3);
  if (spec.background == BackgroundOp::kReset) {
    periods_max = std::max(1.0, std::min<double>(periods_max, rule.reset_zones_max));
  }
  double periods = std::ceil(static_cast<double>(rule.min_ns) / period_ns);
  periods = std::min(periods, std::floor(static_cast<double>(rule.max_ns) / period_ns));
  periods = std::min(periods, periods_max);
  if (periods < 1) return rule.max_ns;
  return static_cast<uint64_t>(std::floor(periods * period_ns));
}

std::vector<uint32_t> default_levels(ForegroundOp op) {
  if (op == ForegroundOp::kRead) return {1, 2, 4, 8, 16, 32, 64, 128};
  return {1, 2, 3, 4, 5, 6, 7};
}

Outcome set_interference_option(InterferenceSpec& spec, std::string_view key,
                                std::string_view value) {
  if (key == "foreground") {
    auto it = std::find(kForegroundNames.begin(), kForegroundNames.end(), value);
    if (it == kForegroundNames.end()) {
      return Error{
          fmt::format("foreground = '{}': expected write, append or read", one_line(value, 64))};
    }
    spec.foreground = static_cast<ForegroundOp>(it - kForegroundNames.begin());
  } else if (key == "background") {
    auto it = std::find(kBackgroundNames.begin(), kBackgroundNames.end(), value);
    if (it == kBackgroundNames.end()) {
      return Error{fmt::format("background = '{}': expected reset, finish or softfinish",
                               one_line(value, 64))};
    }
    spec.background = static_cast<BackgroundOp>(it - kBackgroundNames.begin());
  } else if (key == "intensity") {
    std::string_view number = value;
    if (!number.empty() && number.back() == '%') number.remove_suffix(1);
    auto pct = parse_decimal(number, key);
    if (!pct) return Error{pct.error()};
    if (*pct < 0 || *pct > 100) {
      return Error{fmt::format(
          "intensity = {} is outside [0, 100] (percent of the background's peak rate)", *pct)};
    }
    spec.intensity_percent = *pct;
  } else if (key == "levels") {
    auto levels = parse_levels(value);
    if (!levels) return Error{levels.error()};
    spec.levels = *levels;
  } else if (key == "bs") {
    auto bs = parse_size_bytes(value);
    if (!bs) return Error{fmt::format("bs: {}", bs.error())};
    if (*bs == 0 || *bs > (1ULL << 30)) {
      return Error{fmt::format("bs = {} is out of range (1 B to 1 GiB)", one_line(value, 64))};
    }
    spec.block_size_bytes = *bs;
  } else if (key == "alpha") {
    auto alpha = parse_decimal(value, key);
    if (!alpha) return Error{alpha.error()};
    if (*alpha < 0 || *alpha > 1) {
      return Error{fmt::format("alpha = {} is outside [0, 1] (beta is 1 - alpha)", *alpha)};
    }
    spec.alpha = *alpha;
  } else if (key == "runtime") {
    auto ns = parse_time_ns(value);
    if (!ns || *ns == 0 || *ns > kMaxRuntimeNs) {
      return Error{fmt::format("runtime = '{}': expected a time from 1ns to 3600s, such as 2s",
                               one_line(value, 64))};
    }
    spec.runtime_ns = *ns;
  } else if (key == "scheduler") {
    if (!known_scheduler(value)) {
      return Error{fmt::format("scheduler = '{}': expected {}", one_line(value, 64),
                               scheduler_list(" or "))};
    }
    spec.scheduler = std::string(value);
  } else if (key == "realtime") {
    if (value != "true" && value != "false") return Error{"realtime must be true or false"};
    spec.realtime = value == "true";
  } else if (key == "time_scale") {
    auto scale = parse_decimal(value, key);
    if (!scale) return Error{scale.error()};
    if (*scale < kMinTimeScale || *scale > kMaxTimeScale) {
      return Error{
          fmt::format("time_scale = {} is outside [{}, {}]", *scale, kMinTimeScale, kMaxTimeScale)};
    }
    spec.time_scale = *scale;
    spec.realtime = true;
  } else if (key == "peak") {
    auto peak = parse_decimal(value, key);
    if (!peak) return Error{peak.error()};
    if (*peak <= 0) return Error{fmt::format("peak = {} must be above 0 ops/s", *peak)};
    spec.peak_ops_per_s = *peak;
  } else {
    return Error{fmt::format("unknown option '{}'", one_line(key, 64))};
  }
  return {};
}

Result<std::vector<InterferenceOption>> parse_interference_job_text(std::string_view text,
                                                                    std::string_view origin) {
  auto parsed = parse_toml(text, origin);
  if (!parsed) return Error{parsed.error()};
  std::vector<InterferenceOption> options;
  for (const auto& [key, node] : *parsed) {
    std::string_view name = key.str();
    if (std::find(kOptionKeys.begin(), kOptionKeys.end(), name) == kOptionKeys.end()) {
      return Error{fmt::format(
          "{}: unknown key '{}' (expected foreground, background, intensity, levels, bs, alpha, "
          "runtime, scheduler, peak, realtime or time_scale)",
          one_line(origin), one_line(name, 64))};
    }
    std::string value;
    if (auto s = node.as_string()) {
      value = s->get();
    } else if (auto i = node.as_integer()) {
      value = fmt::format("{}", i->get());
    } else if (auto f = node.as_floating_point()) {
      value = fmt::format("{}", f->get());
    } else if (auto b = node.as_boolean()) {
      value = b->get() ? "true" : "false";
    } else if (auto list = node.as_array(); list != nullptr && name == "levels") {
      for (const auto& item : *list) {
        auto level = item.as_integer();
        if (level == nullptr) {
          return Error{fmt::format("{}: levels must be integers", one_line(origin))};
        }
        value += fmt::format("{}{}", value.empty() ? "" : ",", level->get());
      }
    } else {
      return Error{fmt::format("{}: '{}' must be a string or a number", one_line(origin), name)};
    }
    options.push_back({std::string(name), value});
  }
  return options;
}

Result<std::vector<InterferenceOption>> parse_interference_job_file(const std::string& path) {
  auto text = read_text_file(path, "interference job file");
  if (!text) return Error{text.error()};
  return parse_interference_job_text(*text, path);
}

Outcome check_interference(const Config& config, const InterferenceSpec& spec) {
  if (config.interface != "zns") {
    return Error{"interference runs take a ZNS device (interface = \"zns\")"};
  }
  auto layout = device_info_of(config);
  if (!layout) return Error{layout.error()};
  if (!(spec.intensity_percent >= 0 && spec.intensity_percent <= 100)) {
    return Error{fmt::format("intensity = {} is outside [0, 100]", spec.intensity_percent)};
  }
  if (!(spec.alpha >= 0 && spec.alpha <= 1)) {
    return Error{fmt::format("alpha = {} is outside [0, 1]", spec.alpha)};
  }
  if (spec.runtime_ns == 0 || spec.runtime_ns > kMaxRuntimeNs) {
    return Error{"runtime must be from 1ns to 3600s"};
  }
  if (spec.realtime) {
    RealtimeOptions realtime;
    realtime.time_scale = spec.time_scale;
    auto ok = check_realtime_options(realtime);
    if (!ok) return ok;
  }
  if (!(spec.peak_ops_per_s >= 0) || !std::isfinite(spec.peak_ops_per_s)) {
    return Error{"peak must be a rate above 0 ops/s (or 0: measure it)"};
  }
  std::vector<uint32_t> levels = resolved_levels(spec);
  std::vector<uint32_t> sorted = levels;
  std::sort(sorted.begin(), sorted.end());
  if (sorted.front() == 0 || sorted.back() > kMaxLevel || levels.size() > kMaxLevelCount) {
    return Error{
        fmt::format("levels must be 1 to {}, at most {} of them", kMaxLevel, kMaxLevelCount)};
  }
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
    return Error{"levels must not repeat a level"};
  }
  if (!layout->uniform_zones()) {
    return Error{fmt::format(
        "interference runs take zones of one size; this format has {} zone sets (zns.format)",
        layout->zone_sets.size())};
  }
  uint64_t lba = layout->lba_size_bytes;
  uint64_t bs = spec.block_size_bytes;
  if (bs == 0 || bs % lba != 0) {
    return Error{fmt::format("bs {} is not a multiple of the LBA size {}", bs, lba)};
  }
  if (bs / lba > layout->zone_capacity_lbas) {
    return Error{fmt::format("bs {} is larger than a zone's capacity", format_size(bs))};
  }
  if (spec.foreground == ForegroundOp::kAppend && bs / lba > layout->zasl_lbas) {
    return Error{fmt::format("bs {} exceeds the zone append size limit (zns.zasl = {})",
                             format_size(bs), format_size(layout->zasl_lbas * lba))};
  }
  uint32_t fg_zones = foreground_zone_count(spec, levels);
  bool background = spec.intensity_percent > 0;
  uint32_t bg_min = !background ? 0 : spec.peak_ops_per_s > 0 ? 1 : kPeakProbeOps;
  if (uint64_t(fg_zones) + bg_min > layout->zone_count) {
    return Error{fmt::format(
        "the foreground needs {} zone(s) (one per write thread) and the background at least {}; "
        "the device has {}",
        fg_zones, bg_min, layout->zone_count)};
  }
  // Zones written at once: each write thread's, the append zone, and the
  // zone a finish op writes a page to.
  uint32_t open = spec.foreground == ForegroundOp::kRead ? 0 : fg_zones;
  if (background && spec.background != BackgroundOp::kReset) ++open;
  if (background && spec.background == BackgroundOp::kSoftfinish) {
    DeviceInfo info;
    info.lba_size_bytes = lba;
    auto chunk = SoftFinish::check(config.host, info);
    if (!chunk) return chunk;
  }
  // The device's limits: the configuration's, bounded by zns.max_open_blocks.
  for (auto [limit, name] : {std::pair{layout->max_open, "zns.max_open"},
                             std::pair{layout->max_active, "zns.max_active"}}) {
    if (limit != 0 && open > limit) {
      return Error{fmt::format("{} zones open at once (foreground and background) exceed {} = {}",
                               open, name, limit)};
    }
  }
  return {};
}

uint64_t InterferenceResult::background_ops() const {
  uint64_t ops = 0;
  for (const auto& level : levels) ops += level.inter.background_ops;
  return ops;
}

Histogram InterferenceResult::background_latency_ns() const {
  Histogram all;
  for (const auto& level : levels) all.merge(level.inter.background_latency_ns);
  return all;
}

Result<InterferenceResult> run_interference(const Config& config_in, const InterferenceSpec& spec,
                                            const InterferenceProgress& progress) {
  auto checked = check_interference(config_in, spec);
  if (!checked) return Error{checked.error()};
  Config config = config_in;
  config.store.backing = "none";  // the runs measure time; no data is kept
  if (!spec.scheduler.empty()) config.host.scheduler = spec.scheduler;
  auto layout = device_info_of(config);
  ZL_ASSERT(layout);

  InterferenceResult result;
  result.spec = spec;
  result.spec.levels = resolved_levels(spec);
  result.spec.scheduler = config.host.scheduler;
  Plan plan;
  plan.foreground = spec.foreground;
  plan.background = spec.background;
  plan.block_size_bytes = spec.block_size_bytes;
  plan.foreground_zones = foreground_zone_count(spec, result.spec.levels);
  // By the rule: the window of no background until the rate is known.
  plan.runtime_ns = spec.window_rule ? spec.window_rule->min_ns : spec.runtime_ns;
  plan.seed = config.seed;
  plan.realtime = spec.realtime;
  plan.realtime_options.time_scale = spec.time_scale;
  result.foreground_zones = plan.foreground_zones;

  auto planned = plan_background(config, spec, layout->zone_count, plan, result);
  if (!planned) return Error{planned.error()};
  result.spec.runtime_ns = plan.runtime_ns;
  if (result.first_status != Status::kSuccess) return result;
  result.background_zones = plan.background_zones;

  size_t total = result.spec.levels.size() * 2;
  std::vector<InterferencePoint> points;
  for (uint32_t cl : result.spec.levels) {
    InterferenceLevel level;
    level.cl = cl;
    for (bool background : {false, true}) {
      auto outcome = run_level(config, plan, cl, background);
      if (!outcome) return Error{outcome.error()};
      if (outcome->out_of_zones) {
        return Error{fmt::format("the {} background ran out of zones at CL {}",
                                 background_op_name(spec.background), cl)};
      }
      InterferenceRun& run = background ? level.inter : level.iso;
      run = outcome->run;
      result.completion_error_ns.merge(outcome->completion_error_ns);
      result.virtual_time_ns += run.virtual_end_ns;
      if (outcome->failure.failed()) {
        result.first_status = outcome->failure.status;
        result.first_error = fmt::format(
            "CL {} {} run: {}", cl, background ? "interfered" : "isolated", outcome->failure.what);
        result.levels.push_back(level);
        return result;
      }
      if (run.ops == 0) {
        return Error{fmt::format(
            "no foreground {} completed within the runtime of {} at CL {} ({} run); lengthen "
            "--runtime",
            foreground_op_name(spec.foreground), format_time(plan.runtime_ns), cl,
            background ? "interfered" : "isolated")};
      }
      if (progress) progress(result.levels.size() * 2 + (background ? 2 : 1), total);
    }
    InterferencePoint point{
        level.iso.iops, static_cast<double>(level.iso.latency_ns.percentile(95)), level.inter.iops,
        static_cast<double>(level.inter.latency_ns.percentile(95))};
    level.distance = interference_distance(point, spec.alpha);
    points.push_back(point);
    result.levels.push_back(level);
  }
  auto m = m_inter(points, spec.alpha);
  if (!m) return Error{m.error()};
  result.m_inter = *m;
  return result;
}

}  // namespace zonelab
