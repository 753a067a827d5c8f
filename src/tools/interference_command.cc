// The interference command; see interference_command.h.
#include "tools/interference_command.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <set>

#include "common/units.h"
#include "workload/interference.h"

namespace zonelab::cli {
namespace {

struct Flag {
  const char* name;
  const char* help;
};

constexpr Flag kFlags[] = {
    {"foreground", "write (CL threads, a zone each), append or read (one zone, queue depth CL)"},
    {"background", "reset, finish, or softfinish (finish as host writes: host.softfinish.*)"},
    {"intensity", "background rate in percent of its peak, 0-100"},
    {"levels", "concurrency levels: A-B or a list 1,2,4 (default 1-7; read 1,2,4,...,128)"},
    {"bs", "foreground request size, a multiple of the LBA size (default 16KiB)"},
    {"alpha", "M^Inter weight of throughput, 0-1; latency gets 1 - alpha (default 0.5)"},
    {"runtime",
     "virtual time each run measures the foreground (default: by the window rule, a whole "
     "number of background periods, 4s to 30s; see docs/interference.md)"},
    {"scheduler", "host I/O scheduler: none, mq-deadline or zinc (knobs: host.zinc.*)"},
    {"peak", "background peak in ops/s to take instead of measuring it"},
    {"time-scale", "with --realtime: wall time per unit of device time (implies --realtime)"},
};

double rounded(double value, double scale) { return std::round(value * scale) / scale; }

Json run_json(const InterferenceRun& run, bool with_background) {
  Json j;
  j["iops"] = rounded(run.iops, 1e3);
  j["p50_ns"] = run.latency_ns.percentile(50);
  j["p95_ns"] = run.latency_ns.percentile(95);
  j["p99_ns"] = run.latency_ns.percentile(99);
  j["p999_ns"] = run.latency_ns.percentile(99.9);
  j["ops"] = run.ops;
  j["mean_ns"] = std::llround(run.latency_ns.mean());
  j["zone_resets"] = run.zone_resets;
  if (with_background) {
    j["background_ops"] = run.background_ops;
    j["background_mean_latency_ns"] = std::llround(run.background_latency_ns.mean());
  }
  j["virtual_end_ns"] = run.virtual_end_ns;
  return j;
}

Json result_json(const InterferenceResult& r) {
  const InterferenceSpec& spec = r.spec;
  Json out = status_json(r.first_status);
  if (r.first_status != Status::kSuccess) out["error"] = r.first_error;
  out["foreground"] = {
      {"op", std::string(foreground_op_name(spec.foreground))},
      {"bs", spec.block_size_bytes},
      {"scaling", spec.foreground == ForegroundOp::kWrite ? "threads" : "queue_depth"},
      {"zones", r.foreground_zones}};
  Histogram bg_latency = r.background_latency_ns();
  std::string peak_source = "none";  // intensity 0: no background, no peak
  if (r.peak_ops_per_s > 0) peak_source = r.peak_measured ? "measured" : "given";
  out["background"] = {{"op", std::string(background_op_name(spec.background))},
                       {"intensity_percent", spec.intensity_percent},
                       {"peak_ops_per_s", rounded(r.peak_ops_per_s, 1e6)},
                       {"peak", peak_source},
                       {"rate_ops_per_s", rounded(r.rate_ops_per_s, 1e6)},
                       {"zones", r.background_zones},
                       {"ops", r.background_ops()},
                       {"mean_latency_ns", std::llround(bg_latency.mean())}};
  out["scheduler"] = spec.scheduler;
  out["alpha"] = spec.alpha;
  out["runtime_ns"] = spec.runtime_ns;
  out["window"] = spec.window_rule ? "rule" : "given";
  Json levels = Json::array();
  for (const auto& level : r.levels) {
    levels.push_back({{"cl", level.cl},
                      {"iso", run_json(level.iso, false)},
                      {"int", run_json(level.inter, true)},
                      {"distance", rounded(level.distance, 1e6)}});
  }
  out["levels"] = levels;
  out["m_inter"] = rounded(r.m_inter, 1e6);
  if (spec.realtime) {
    const Histogram& e = r.completion_error_ns;
    out["realtime"] = {{"time_scale", spec.time_scale},
                       {"completions", e.count()},
                       {"completion_error_ns",
                        {{"mean", std::llround(e.mean())},
                         {"p50", e.percentile(50)},
                         {"p99", e.percentile(99)},
                         {"max", e.max()}}}};
  }
  out["peak_probe_virtual_ns"] = r.peak_probe_virtual_ns;
  out["virtual_time_ns"] = r.virtual_time_ns;
  return out;
}

void print_table(const InterferenceResult& r) {
  const InterferenceSpec& spec = r.spec;
  bool threads = spec.foreground == ForegroundOp::kWrite;
  fmt::print("foreground: {} {}, CL = {}, runtime {}{}\n", foreground_op_name(spec.foreground),
             format_size(spec.block_size_bytes),
             threads ? "threads at QD1, a zone each" : "queue depth on one zone",
             spec.window_rule ? format_duration(spec.runtime_ns) : format_time(spec.runtime_ns),
             spec.window_rule ? " (window rule: whole background periods)" : "");
  if (spec.intensity_percent > 0) {
    fmt::print("background: {} at {}% of {:.4g} ops/s ({}) = {:.4g} ops/s, QD1, scheduler {}\n",
               background_op_name(spec.background), spec.intensity_percent, r.peak_ops_per_s,
               r.peak_measured ? "measured" : "given", r.rate_ops_per_s, spec.scheduler);
  } else {
    fmt::print("background: none (intensity 0)\n");
  }
  fmt::print("{:>5} {:>11} {:>10} {:>11} {:>10} {:>9} {:>7} {:>10}\n", "CL", "iso IOPS", "iso p95",
             "int IOPS", "int p95", "distance", "bg ops", "bg mean");
  for (const auto& level : r.levels) {
    const InterferenceRun& iso = level.iso;
    const InterferenceRun& in = level.inter;
    fmt::print("{:>5} {:>11.1f} {:>10} {:>11.1f} {:>10} {:>9.4f} {:>7} {:>10}\n", level.cl,
               iso.iops, format_duration(iso.latency_ns.percentile(95)), in.iops,
               format_duration(in.latency_ns.percentile(95)), level.distance, in.background_ops,
               in.background_ops == 0
                   ? std::string("-")
                   : format_duration(static_cast<uint64_t>(in.background_latency_ns.mean())));
  }
  fmt::print("M^Inter {:.4f} (alpha {}, beta {}) over {} level{}; virtual time {:.3f} s\n",
             r.m_inter, spec.alpha, 1 - spec.alpha, r.levels.size(),
             r.levels.size() == 1 ? "" : "s", static_cast<double>(r.virtual_time_ns) / 1e9);
  if (spec.realtime) {
    const Histogram& e = r.completion_error_ns;
    fmt::print("real time (scale {}): {} completions, error p50 {} p99 {} max {}\n",
               spec.time_scale, e.count(), format_duration(e.percentile(50)),
               format_duration(e.percentile(99)), format_duration(e.max()));
  }
}

bool write_csv(std::FILE* file, const InterferenceResult& r) {
  fmt::print(file, "cl,iso_iops,iso_p95_ns,int_iops,int_p95_ns,distance\n");
  for (const auto& level : r.levels) {
    fmt::print(file, "{},{:.3f},{},{:.3f},{},{:.6f}\n", level.cl, level.iso.iops,
               level.iso.latency_ns.percentile(95), level.inter.iops,
               level.inter.latency_ns.percentile(95), level.distance);
  }
  return std::fflush(file) == 0 && std::ferror(file) == 0;
}

}  // namespace

void add_interference_command(CLI::App& app, InterferenceOptions& o) {
  auto* cmd = app.add_subcommand(
      "interference", "I/O management interference runs (seed 003 section 2.2) with M^Inter");
  cmd->add_option("IMAGE", o.image,
                  "take the configuration of this image (it is not changed), or use --preset");
  add_config_options(*cmd, o.config);
  cmd->add_option("--job", o.job_file, "TOML file with the options below as top-level keys");
  for (const Flag& flag : kFlags) {
    std::string key = flag.name;
    cmd->add_option_function<std::string>(
        "--" + key,
        [&o, key](const std::string& value) {
          o.flags.push_back({key, value});
        },
        flag.help);
  }
  cmd->add_option("--csv", o.csv_file, "also write one row per level to this CSV file");
  cmd->add_flag("--json", o.json, "print JSON");
  cmd->add_flag("--quiet", o.quiet, "no progress lines on stderr");
  cmd->add_flag_callback(
      "--realtime",
      [&o] {
        o.flags.push_back({"realtime", "true"});
      },
      "run each measured window paced to the wall clock (real-time driver) and report the "
      "completion error");
  cmd->callback([] {});
}

int run_interference_command(const InterferenceOptions& o) {
  bool has_config =
      !o.config.preset.empty() || !o.config.config_file.empty() || !o.config.overrides.empty();
  if (!o.image.empty() && has_config) {
    return bad_input("interference: give an IMAGE or --preset/--config/--set, not both");
  }
  InterferenceSpec spec;
  std::set<std::string> given;
  if (!o.job_file.empty()) {
    auto options = parse_interference_job_file(o.job_file);
    if (!options) return bad_input(options.error());
    for (const auto& option : *options) {
      auto set = set_interference_option(spec, option.key, option.value);
      if (!set) return bad_input(fmt::format("{}: {}", one_line(o.job_file), set.error()));
      given.insert(option.key);
    }
  }
  for (const auto& [flag, value] : o.flags) {  // flags override the job file
    std::string key = flag == "time-scale" ? "time_scale" : flag;
    auto set = set_interference_option(spec, key, value);
    if (!set) return bad_input(fmt::format("--{}: {}", flag, set.error()));
    given.insert(key);
  }
  // Without a runtime the window is the studies' (zn540's): whole periods
  // of the background, so that it holds the work its intensity asks for.
  if (!given.contains("runtime")) spec.window_rule = interference_window_rule(false);
  if (!given.contains("foreground") || !given.contains("background") ||
      !given.contains("intensity")) {
    return bad_input(
        "interference: give --foreground write|append|read, --background reset|finish and "
        "--intensity PERCENT (or a --job file with them)");
  }

  Config config;
  if (!o.image.empty()) {
    // Read for its configuration only, shared: never saved.
    auto image = Image::open(o.image, Image::Access::kReadOnly);
    if (!image) return bad_input(image.error());
    config = (*image)->state().config;
  } else {
    auto resolved = resolve_config(o.config);
    if (!resolved) return bad_input(resolved.error());
    config = *resolved;
  }
  auto checked = check_interference(config, spec);
  if (!checked) return bad_input(fmt::format("interference: {}", checked.error()));

  std::unique_ptr<std::FILE, int (*)(std::FILE*)> csv(nullptr, &std::fclose);
  if (!o.csv_file.empty()) {
    if (auto problem = output_is_image("--csv", o.csv_file, o.image)) return bad_input(*problem);
    csv.reset(std::fopen(o.csv_file.c_str(), "w"));
    if (!csv) return bad_input(fmt::format("{}: cannot write the CSV file", one_line(o.csv_file)));
  }

  ProgressThrottle throttle(o.quiet);
  InterferenceProgress progress = [&](size_t done, size_t total) {
    if (!throttle.due()) return;
    fmt::print(stderr, "progress: {} of {} runs, {:.0f} s wall\n", done, total, throttle.wall_s());
  };
  auto result = run_interference(config, spec, progress);
  if (!result) return bad_input(fmt::format("interference: {}", result.error()));

  if (result->first_status != Status::kSuccess) {
    if (o.json) {
      print_json(result_json(*result));
    } else {
      fmt::print(stderr, "zonelab: device error: {}\n", result->first_error);
    }
    return kExitDeviceError;
  }
  if (csv && !write_csv(csv.get(), *result)) {
    fmt::print(stderr, "zonelab: error: writing {} failed\n", one_line(o.csv_file));
    return kExitInternal;
  }
  if (o.json) {
    print_json(result_json(*result));
  } else {
    print_table(*result);
  }
  return kExitOk;
}

}  // namespace zonelab::cli
