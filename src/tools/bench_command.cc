// The bench command; see bench_command.h.
#include "tools/bench_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string_view>

#include "common/schedulers.h"
#include "common/units.h"
#include "sim/realtime.h"
#include "stack/stack_report.h"
#include "workload/runner.h"

namespace zonelab::cli {
namespace {

void print_realtime(const RealtimeOptions& options, const RealtimeStats& stats) {
  fmt::print("real time: timing {}, time scale {:g}, {} completions\n", timing_name(options.timing),
             options.time_scale, stats.completions);
  auto line = [](const char* what, const Histogram& h) {
    fmt::print("  {:<17} mean {:>9} p50 {:>9} p99 {:>9} p99.9 {:>9} max {:>9}\n", what,
               format_duration(static_cast<uint64_t>(h.mean())), format_duration(h.percentile(50)),
               format_duration(h.percentile(99)), format_duration(h.percentile(99.9)),
               format_duration(h.max()));
  };
  if (options.timing == Timing::kModeled) line("completion error", stats.completion_error_ns);
  line("turnaround (wall)", stats.turnaround_ns);
}

void print_table(const RunResult& run, const Json& device, double wall_s, bool show_wall) {
  fmt::print("{:<16} {:<8} {:>7} {:>8} {:>10} {:>10} {:>11} {:>9} {:>9} {:>9} {:>9} {:>9}\n", "job",
             "rw", "bs", "qd x n", "ops", "IOPS", "bandwidth", "mean", "p50", "p99", "p99.9",
             "max");
  for (const auto& r : run.jobs) {
    const Histogram& h = r.latency_ns;
    fmt::print("{:<16} {:<8} {:>7} {:>8} {:>10} {:>10.0f} {:>11} {:>9} {:>9} {:>9} {:>9} {:>9}\n",
               r.spec.name.substr(0, 16), job_kind_name(r.spec.kind),
               format_size(r.spec.block_size_bytes),
               fmt::format("{}x{}", r.spec.iodepth, r.spec.numjobs), r.ops, r.iops(),
               fmt::format("{:.1f}MiB/s", r.bandwidth_bytes_per_s() / 1048576.0),
               format_duration(static_cast<uint64_t>(h.mean())), format_duration(h.percentile(50)),
               format_duration(h.percentile(99)), format_duration(h.percentile(99.9)),
               format_duration(h.max()));
    if (r.spec.kind == JobKind::kRandRw) {
      for (const auto& [what, d] : {std::pair{"read", &r.reads}, std::pair{"write", &r.writes}}) {
        fmt::print("  {:<5} {:>10} ops {:>10.0f} IOPS {:>9.1f}MiB/s  mean {:>9} p99 {:>9}\n", what,
                   d->ops, r.seconds() > 0 ? static_cast<double>(d->ops) / r.seconds() : 0.0,
                   r.seconds() > 0 ? static_cast<double>(d->bytes) / r.seconds() / 1048576.0 : 0.0,
                   format_duration(static_cast<uint64_t>(d->latency_ns.mean())),
                   format_duration(d->latency_ns.percentile(99)));
      }
    }
    if (r.errors != 0) fmt::print("  {} error(s); first: {}\n", r.errors, r.first_error);
    if (r.resets != 0)
      fmt::print("  {} zone resets, mean {}\n", r.resets,
                 format_duration(static_cast<uint64_t>(r.reset_latency_ns.mean())));
    if (r.flushes != 0)
      fmt::print("  {} flushes, mean {}\n", r.flushes,
                 format_duration(static_cast<uint64_t>(r.flush_latency_ns.mean())));
  }
  auto mean_max = [](const Json& list) {
    double sum = 0, max = 0;
    for (const auto& v : list) {
      sum += v.get<double>();
      max = std::max(max, v.get<double>());
    }
    return std::pair<double, double>{list.empty() ? 0 : sum / static_cast<double>(list.size()),
                                     max};
  };
  auto [ch_mean, ch_max] = mean_max(device["channel_busy"]);
  auto [die_mean, die_max] = mean_max(device["die_busy"]);
  std::string waf = device["write_amplification"].is_null()
                        ? "-"
                        : fmt::format("{:.3f}", device["write_amplification"].get<double>());
  const uint64_t parity = device["flash_program_bytes"]["parity"].get<uint64_t>();
  fmt::print("device: host writes {}, flash programs host {} finish {}{}, erases {}, WA {}\n",
             format_size(device["host_write_bytes"].get<uint64_t>()),
             format_size(device["flash_program_bytes"]["host"].get<uint64_t>()),
             format_size(device["flash_program_bytes"]["finish"].get<uint64_t>()),
             parity != 0 ? " parity " + format_size(parity) : std::string(),
             device["erases"].get<uint64_t>(), waf);
  fmt::print("busy: channels mean {:.1f}% max {:.1f}%, dies mean {:.1f}% max {:.1f}%\n",
             ch_mean * 100, ch_max * 100, die_mean * 100, die_max * 100);
  double virtual_s = static_cast<double>(run.end_ns - run.start_ns) / 1e9;
  if (show_wall) {
    fmt::print("virtual time {:.6f} s; {} commands in {:.3f} s wall ({:.0f} commands/s)\n",
               virtual_s, run.commands, wall_s,
               wall_s > 0 ? static_cast<double>(run.commands) / wall_s : 0.0);
  } else {
    fmt::print("virtual time {:.6f} s; {} commands\n", virtual_s, run.commands);
  }
}

// The driver's options from the command line; every clone's commands may be
// in flight at once, so the driver takes at least that many.
Result<RealtimeOptions> realtime_options(const BenchOptions& o, const std::vector<JobSpec>& jobs) {
  RealtimeOptions options;
  auto timing = timing_from_name(o.timing);
  if (!timing)
    return Error{fmt::format("--timing: '{}' is not modeled or off", one_line(o.timing))};
  options.timing = *timing;
  options.time_scale = o.time_scale;
  uint64_t inflight = 0;
  for (const auto& job : jobs) inflight += uint64_t(job.iodepth) * job.numjobs;
  options.max_outstanding =
      static_cast<uint32_t>(std::clamp<uint64_t>(inflight, options.max_outstanding, UINT32_MAX));
  auto checked = check_realtime_options(options);
  if (!checked) return Error{"--time-scale: " + checked.error()};
  return options;
}

// The job options as flags: fio's spelling in help, and hidden beside it
// the same option with dashes and under fio's other names.
void add_job_flags(CLI::App& bench, BenchOptions& o) {
  for (const JobOptionInfo& option : job_options()) {
    std::vector<std::string> spellings{std::string(option.name)};
    std::string_view aliases = option.aliases;
    while (!aliases.empty()) {
      size_t space = std::min(aliases.find(' '), aliases.size());
      spellings.emplace_back(aliases.substr(0, space));
      aliases.remove_prefix(std::min(space + 1, aliases.size()));
    }
    size_t named = spellings.size();
    for (size_t i = 0; i < named; ++i) {
      std::string dashed = spellings[i];
      std::replace(dashed.begin(), dashed.end(), '_', '-');
      if (dashed != spellings[i]) spellings.push_back(dashed);
    }
    for (size_t i = 0; i < spellings.size(); ++i) {
      std::string key = spellings[i];
      CLI::Option* flag = nullptr;
      if (option.value.empty()) {
        flag = bench.add_flag_callback(
            "--" + key,
            [&o, key] {
              o.job_flags.push_back({key, "true"});
            },
            std::string(option.help));
      } else {
        flag = bench.add_option_function<std::string>(
            "--" + key,
            [&o, key](const std::string& value) {
              o.job_flags.push_back({key, value});
            },
            std::string(option.help));
        flag->type_name(std::string(option.value));
      }
      // In command-line order, each time given: a --name starts a job.
      flag->trigger_on_parse();
      if (i > 0) flag->group("");  // accepted, not listed
    }
  }
}

bool names_option(const JobOptionList& options, std::string_view canonical) {
  return std::any_of(options.begin(), options.end(), [canonical](const auto& option) {
    return canonical_job_option(option.first) == canonical;
  });
}

// The jobs of the command line, read as fio reads its own: options before
// the first --name are every job's, and each --name starts a job.
Result<std::vector<JobSpec>> jobs_from_flags(const JobOptionList& flags) {
  std::vector<JobOptionList> groups(1);
  for (const auto& flag : flags) {
    if (canonical_job_option(flag.first) == "name") groups.emplace_back();
    groups.back().push_back(flag);
  }
  if (groups.size() - 1 > kJobCountMax) {
    return Error{fmt::format("bench: {} jobs (--name), more than the limit of {}",
                             groups.size() - 1, kJobCountMax)};
  }
  JobSpec global;
  auto set = set_job_options(global, groups[0]);
  if (!set) return Error{"--" + set.error()};
  bool global_rw = names_option(groups[0], "rw");
  const std::string kNoRw =
      "give --rw read|randread|write|append|randwrite|randrw|trim or --job FILE";
  if (groups.size() == 1) {
    if (!global_rw) return Error{"bench: " + kNoRw};
    global.name = std::string(job_kind_name(global.kind));
    return std::vector<JobSpec>{global};
  }
  std::vector<JobSpec> jobs;
  for (size_t i = 1; i < groups.size(); ++i) {
    JobSpec job = global;
    set = set_job_options(job, groups[i]);
    if (!set) return Error{"--" + set.error()};
    if (!global_rw && !names_option(groups[i], "rw")) {
      return Error{fmt::format("bench: job {}: {}", job.name, kNoRw)};
    }
    jobs.push_back(std::move(job));
  }
  return jobs;
}

// Hidden second spellings of bench's own options (dashes and underscores).
void add_underscore_spellings(CLI::App& bench, BenchOptions& o) {
  bench.add_flag("--no_wall_clock", o.no_wall_clock)->group("");
  bench
      .add_option_function<double>("--time_scale",
                                   [&o](double scale) {
                                     o.time_scale = scale;
                                     o.realtime = true;
                                   })
      ->group("");
  bench.add_option("--output_format", o.output_format)->group("");
}

}  // namespace

void add_bench_command(CLI::App& app, BenchOptions& o) {
  auto* bench =
      app.add_subcommand("bench", "fio-like benchmark in virtual time (or paced: --realtime)");
  bench->add_option("IMAGE", o.image, "device image (or use --preset for a throwaway device)");
  add_config_options(*bench, o.config);
  bench->add_option_function<std::string>(
      "--job",
      [&o](const std::string& path) {
        o.job_file = path;
        o.job_file_given = true;
      },
      "TOML job file ([global] and one table per job)");
  add_job_flags(*bench, o);
  bench->add_flag("--json", o.json, "print JSON (the same as --output-format=json)");
  bench->add_option("--output-format", o.output_format,
                    "fio's output switch: json or normal (the table)");
  add_underscore_spellings(*bench, o);
  bench->add_flag("--no-wall-clock", o.no_wall_clock,
                  "leave out wall_time_s and sim_commands_per_s (for byte-identical output)");
  bench->add_flag("--quiet", o.quiet, "no progress lines on stderr");
  bench
      ->add_option("--scheduler", o.scheduler,
                   "host I/O scheduler in front of the device: " + scheduler_list(" or ") +
                       " (default: host.scheduler)")
      ->check(CLI::IsMember(scheduler_names()));
  bench->add_flag("--realtime", o.realtime,
                  "run paced to the wall clock (real-time driver) and report the completion error");
  bench->add_option_function<double>(
      "--time-scale",
      [&o](double scale) {
        o.time_scale = scale;
        o.realtime = true;
      },
      "wall time per unit of device time with --realtime (2 = twice as slow; implies --realtime)");
  bench->add_option_function<std::string>(
      "--timing",
      [&o](const std::string& timing) {
        o.timing = timing;
        o.realtime = true;
      },
      "modeled (default) or off: complete every command at once (implies --realtime)");
  bench->callback([] {});
}

int run_bench(const BenchOptions& o) {
  bool has_config =
      !o.config.preset.empty() || !o.config.config_file.empty() || !o.config.overrides.empty();
  if (!o.image.empty() && has_config) {
    return bad_input("bench: give an IMAGE or --preset/--config/--set, not both");
  }
  bool json = o.json;
  if (!o.output_format.empty()) {
    if (o.output_format != "json" && o.output_format != "normal") {
      return bad_input(fmt::format(
          "--output-format: '{}' is not json or normal (fio's terse and json+ are not supported)",
          one_line(o.output_format, 64)));
    }
    if (o.json && o.output_format == "normal") {
      return bad_input("bench: give --json or --output-format=normal, not both");
    }
    json = o.output_format == "json";
  }
  std::vector<JobSpec> jobs;
  if (o.job_file_given) {
    if (!o.job_flags.empty()) return bad_input("bench: give --job FILE or job flags, not both");
    auto parsed = parse_job_file(o.job_file);
    if (!parsed) return bad_input(parsed.error());
    jobs = *parsed;
  } else {
    auto parsed = jobs_from_flags(o.job_flags);
    if (!parsed) return bad_input(parsed.error());
    jobs = *parsed;
  }

  StackOptions stack_options;
  stack_options.scheduler = o.scheduler;
  auto opened = open_or_make_stack(o.image, o.config, stack_options);
  if (!opened) return bad_input(opened.error());
  Stack& stack = **opened;
  auto checked = check_jobs(jobs, stack.info());
  if (!checked) return bad_input(checked.error());
  checked = check_jobs_on_device(jobs, stack.device());
  if (!checked) return bad_input(checked.error());
  RealtimeOptions realtime;
  if (o.realtime) {
    auto parsed = realtime_options(o, jobs);
    if (!parsed) return bad_input(parsed.error());
    realtime = *parsed;
  }

  // A bench reports its jobs when they are done; until then its commands'
  // records need not be durable one by one (the image stays consistent).
  stack.defer_durability();
  stack.reset_stats();
  auto wall_start = std::chrono::steady_clock::now();
  ProgressThrottle throttle(o.quiet);
  ProgressFn progress = [&](uint64_t virtual_ns, uint64_t commands) {
    print_virtual_progress(throttle, virtual_ns, commands);
  };
  RunResult run;
  RealtimeStats realtime_stats;
  uint64_t seed = stack.config().seed;
  if (o.realtime) {
    // The job engine runs on this thread, inside the driver's paced loop.
    std::unique_ptr<RealtimeDriver> driver = stack.pace(realtime);
    run = run_jobs(driver->device(), stack.sim(), jobs, seed, progress,
                   [&driver] { driver->run_until_idle(); });
    driver->stop();
    realtime_stats = driver->stats();
  } else {
    run = run_jobs(stack.device(), stack.sim(), jobs, seed, progress);
  }
  double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();

  Status first_status = Status::kSuccess;
  std::string plan_error;
  for (const auto& r : run.jobs) {
    if (r.errors == 0) continue;
    if (r.first_status == Status::kSuccess && plan_error.empty())
      plan_error = fmt::format("job {}: {}", r.spec.name, r.first_error);
    if (r.first_status != Status::kSuccess && first_status == Status::kSuccess)
      first_status = r.first_status;
  }
  if (!plan_error.empty() && first_status == Status::kSuccess) return bad_input(plan_error);

  Outcome saved = stack.close(Stack::Save::kAlways);
  if (!saved) return bad_input(saved.error());
  uint64_t span = run.end_ns - run.start_ns;
  Json dev;
  stack.inspect([&](const ModeledDevice& device) { dev = device_counters_json(device, span); });
  if (json) {
    Json out = status_json(first_status);
    Json job_list = Json::array();
    for (const auto& r : run.jobs) job_list.push_back(job_result_json(r));
    out["jobs"] = job_list;
    out["device"] = dev;
    out["scheduler"] = stack.scheduler();
    out["virtual_time_ns"] = span;
    out["commands"] = run.commands;
    if (!o.no_wall_clock) {
      out["wall_time_s"] = std::round(wall_s * 1e6) / 1e6;
      out["sim_commands_per_s"] =
          wall_s > 0 ? std::llround(static_cast<double>(run.commands) / wall_s) : 0;
    }
    if (o.realtime) out["realtime"] = realtime_stats_json(realtime, realtime_stats);
    print_json(out);
  } else {
    print_table(run, dev, wall_s, !o.no_wall_clock);
    if (o.realtime) print_realtime(realtime, realtime_stats);
  }
  return first_status == Status::kSuccess ? kExitOk : kExitDeviceError;
}

}  // namespace zonelab::cli
