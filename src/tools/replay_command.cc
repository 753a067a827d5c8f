#include "tools/replay_command.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>

#include "common/schedulers.h"
#include "stack/stack_report.h"
#include "workload/replay.h"

namespace zonelab::cli {

namespace {

constexpr uint64_t kIodepthMax = 65536;

}  // namespace

void add_replay_command(CLI::App& app, ReplayCommandOptions& o) {
  auto* replay = app.add_subcommand(
      "replay", "replay a fio iolog (v2, v3) or blkparse text against a device in virtual time");
  replay->add_option("IMAGE", o.first, "device image (or --preset for a throwaway device)")
      ->required();
  replay->add_option("TRACE", o.second, "the trace: fio iolog v2/v3, or blkparse's text output");
  add_config_options(*replay, o.config);
  replay->add_option("--timing", o.timing,
                     "trace: issue each operation at its time in the trace (iolog v3, "
                     "blkparse; v2's waits); asap: as fast as possible; auto (default): trace "
                     "when the trace has times");
  add_count_option(replay, "--iodepth", o.iodepth,
                   "operations in flight at most (default 32; 1-65536)");
  replay
      ->add_option("--scheduler", o.scheduler,
                   "host I/O scheduler in front of the device: " + scheduler_list(" or ") +
                       " (default: host.scheduler)")
      ->check(CLI::IsMember(scheduler_names()));
  replay->add_flag("--json", o.json, "print JSON");
  replay->add_flag("--quiet", o.quiet, "no progress lines on stderr");
  replay->add_flag("--no-wall-clock", o.no_wall_clock,
                   "leave out wall_time_s and sim_commands_per_s (for byte-identical output)");
}

int run_replay_command(const ReplayCommandOptions& o) {
  bool has_config =
      !o.config.preset.empty() || !o.config.config_file.empty() || !o.config.overrides.empty();
  std::string image = o.second.empty() ? "" : o.first;
  std::string trace_path = o.second.empty() ? o.first : o.second;
  if (!image.empty() && has_config) {
    return bad_input("replay: give an IMAGE or --preset/--config/--set, not both");
  }
  if (o.timing != "auto" && o.timing != "trace" && o.timing != "asap") {
    return bad_input(fmt::format("--timing {}: trace, asap or auto", o.timing));
  }
  uint64_t iodepth = o.iodepth.value_or(32);
  if (iodepth == 0 || iodepth > kIodepthMax) {
    return bad_input(fmt::format("--iodepth {}: from 1 to {}", iodepth, kIodepthMax));
  }
  auto trace = read_trace_file(trace_path);
  if (!trace) return bad_input(trace.error());

  StackOptions so;
  so.scheduler = o.scheduler;
  auto opened = open_or_make_stack(image, o.config, so);
  if (!opened) return bad_input(opened.error());
  Stack& stack = **opened;
  if (auto checked = check_trace(*trace, stack.info(), stack.device()); !checked) {
    (void)stack.close(Stack::Save::kNo);
    return bad_input(fmt::format("{}: {}", trace_path, checked.error()));
  }
  ReplayOptions ro;
  ro.timestamps = o.timing == "trace" || (o.timing == "auto" && trace->timed);
  ro.iodepth = static_cast<uint32_t>(iodepth);

  // A replay reports when it is done, as a benchmark does.
  stack.defer_durability();
  stack.reset_stats();
  auto wall_start = std::chrono::steady_clock::now();
  ProgressThrottle throttle(o.quiet);
  ProgressFn progress = [&](uint64_t virtual_ns, uint64_t commands) {
    print_virtual_progress(throttle, virtual_ns, commands);
  };
  ReplayResult r = replay_trace(stack.device(), stack.sim(), *trace, ro, progress);
  double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  Outcome saved = stack.close(Stack::Save::kAlways);
  if (!saved) return bad_input(saved.error());
  const uint64_t span = r.end_ns - r.start_ns;
  const double seconds = static_cast<double>(span) / 1e9;
  Json dev;
  stack.inspect([&](const ModeledDevice& device) { dev = device_counters_json(device, span); });
  if (o.json) {
    Json out;
    out["trace"] = {{"path", trace_path},
                    {"format", trace_format_name(trace->format)},
                    {"operations", trace->ops.size()},
                    {"skipped_lines", trace->skipped_lines}};
    out["timing"] = ro.timestamps ? "trace" : "asap";
    out["iodepth"] = iodepth;
    const Json result = replay_result_json(r);
    for (const auto& [key, value] : result.items()) out[key] = value;
    out["device"] = dev;
    out["scheduler"] = stack.scheduler();
    if (!o.no_wall_clock) {
      out["wall_time_s"] = std::round(wall_s * 1e6) / 1e6;
      out["sim_commands_per_s"] =
          wall_s > 0 ? std::llround(static_cast<double>(r.commands) / wall_s) : 0;
    }
    print_json(out);
  } else {
    fmt::print("{}: {} ({} operations), timing {}, iodepth {}\n", trace_path,
               trace_format_name(trace->format), trace->ops.size(),
               ro.timestamps ? "trace" : "asap", iodepth);
    auto line = [&](const char* name, const ReplayResult::Kind& k) {
      if (k.ops == 0) return;
      fmt::print(
          "  {:<6} {:>10} ops {:>14} bytes  {:>10.0f} IOPS  lat p50 {:.1f} us  p99 "
          "{:.1f} us  max {:.1f} us\n",
          name, k.ops, k.bytes, seconds > 0 ? static_cast<double>(k.ops) / seconds : 0.0,
          static_cast<double>(k.latency_ns.percentile(50)) / 1e3,
          static_cast<double>(k.latency_ns.percentile(99)) / 1e3,
          static_cast<double>(k.latency_ns.max()) / 1e3);
    };
    line("read", r.read);
    line("write", r.write);
    line("trim", r.trim);
    line("flush", r.flush);
    fmt::print(
        "  virtual time {:.6f} s, {} commands; delayed {} (iodepth full), widened {} "
        "(not whole LBAs), errors {}\n",
        seconds, r.commands, r.delayed, r.widened, r.errors);
    if (!o.no_wall_clock) {
      fmt::print("  wall {:.3f} s ({:.0f} commands/s)\n", wall_s,
                 wall_s > 0 ? static_cast<double>(r.commands) / wall_s : 0.0);
    }
  }
  if (r.errors != 0) {
    fmt::print(stderr, "zonelab: error: {} command(s) failed; the first: {}\n", r.errors,
               r.first_error);
    return kExitDeviceError;
  }
  return kExitOk;
}

}  // namespace zonelab::cli
