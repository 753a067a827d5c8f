// The sweep command and experiment points/run-point; see sweep_command.h.
#include "tools/sweep_command.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "sweep/plotter.h"
#include "sweep/sweep.h"

namespace zonelab::cli {
namespace {

namespace fs = std::filesystem;

#ifndef ZONELAB_PYTHON_DIR
#define ZONELAB_PYTHON_DIR "python"
#endif
#ifndef ZONELAB_MODULE_PYTHON
#define ZONELAB_MODULE_PYTHON "/usr/bin/python3"
#endif

constexpr uint64_t kWorkersMax = 1024;

std::optional<PointCache> cache_of(const std::string& dir, bool no_cache) {
  if (no_cache) return std::nullopt;
  return PointCache(dir.empty() ? PointCache::default_dir() : fs::path(dir));
}

// A cached result, or nothing; a damaged entry is said on stderr.
std::optional<std::string> cached_result(const std::optional<PointCache>& cache,
                                         const SweepPoint& p, bool* recomputed) {
  if (!cache) return std::nullopt;
  PointCache::Lookup found = cache->lookup(p);
  if (!found.problem.empty()) {
    note(fmt::format("sweep: point {} ({}): cache entry {} is unusable ({}); recomputed", p.index,
                     p.label, cache->path_of(p).string(), found.problem));
    if (recomputed != nullptr) *recomputed = true;
  }
  return found.result;
}

// Becomes the Python driver (python/zonelab/sweep.py) with the same
// options; returns only if it cannot.
int exec_python_driver(const SweepCommandOptions& o) {
  std::string python = ZONELAB_MODULE_PYTHON;
  fs::path package = fs::path(ZONELAB_PYTHON_DIR) / "zonelab" / "sweep.py";
  std::error_code ec;
  if (!fs::exists(package, ec)) {
    return bad_input(fmt::format(
        "sweep: the Python module is not built ({} is missing; run make), or use --serial",
        package.string()));
  }
  std::vector<std::string> args = {python, "-m", "zonelab.sweep", o.spec};
  if (!o.out.empty()) args.insert(args.end(), {"--out", o.out});
  if (!o.cache.empty()) args.insert(args.end(), {"--cache", o.cache});
  if (o.no_cache) args.push_back("--no-cache");
  if (!o.scheduler.empty()) args.insert(args.end(), {"--scheduler", o.scheduler});
  args.insert(args.end(), {"--workers", std::to_string(o.workers)});
  if (o.no_plots) args.push_back("--no-plots");
  if (o.json) args.push_back("--json");
  if (o.quiet) args.push_back("--quiet");
  // The module must be this command's build: both key the same cache.
  args.insert(args.end(), {"--build-id", std::string(zonelab_build_id())});
  std::string path = ZONELAB_PYTHON_DIR;
  if (const char* old = std::getenv("PYTHONPATH"); old != nullptr && old[0] != '\0') {
    path += ":" + std::string(old);
  }
  setenv("PYTHONPATH", path.c_str(), 1);
  std::vector<char*> argv;
  for (auto& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  execv(python.c_str(), argv.data());
  return bad_input(fmt::format("sweep: cannot run {}: {} (use --serial to run without Dask)",
                               python, std::strerror(errno)));
}

int run_serial(const SweepCommandOptions& o, const SweepSpec& spec,
               const std::optional<PointCache>& cache) {
  auto start = std::chrono::steady_clock::now();
  ProgressThrottle throttle(o.quiet);
  std::vector<std::string> results(spec.points.size());
  uint64_t computed = 0;
  uint64_t from_cache = 0;
  uint64_t failed = 0;
  std::string first_failure;
  Json recomputed = Json::array();
  for (const SweepPoint& p : spec.points) {
    bool damaged = false;
    if (auto hit = cached_result(cache, p, &damaged)) {
      results[p.index] = std::move(*hit);
      ++from_cache;
    } else {
      if (damaged) recomputed.push_back(p.index);
      auto result = run_sweep_point(spec, p.index);
      if (!result) {
        // The other points still run (and are cached); no files are written.
        if (failed++ == 0) first_failure = result.error();
        continue;
      }
      results[p.index] = std::move(*result);
      ++computed;
      if (cache) {
        auto stored = cache->store(p, results[p.index]);
        if (!stored) return bad_input(fmt::format("sweep: cache: {}", stored.error()));
      }
    }
    if (throttle.due()) {
      fmt::print(stderr, "sweep {}: {}/{} points ({} computed, {} from the cache), {:.1f} s\n",
                 spec.name, p.index + 1, spec.points.size(), computed, from_cache,
                 throttle.wall_s());
    }
  }
  if (failed != 0) {
    return bad_input(fmt::format("sweep {}: {} of {} points failed, the first: {}", spec.name,
                                 failed, spec.points.size(), first_failure));
  }
  auto files = sweep_files(spec, results);
  if (!files) return bad_input(files.error());
  fs::path out = o.out.empty() ? fs::path("results") / spec.name : fs::path(o.out);
  auto json_path = write_sweep_files(spec, *files, out);
  if (!json_path) return bad_input(json_path.error());
  std::string plots = "skipped";
  if (!o.no_plots && files->plottable) {
    std::string failure = run_plotter({*json_path});
    plots = failure.empty() ? "written" : "failed";
    if (!failure.empty())
      note(fmt::format("sweep: no plot ({}); CSV and JSON are written", failure));
  }
  double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (o.json) {
    Json j = status_json(Status::kSuccess);
    j["sweep"] = spec.name;
    j["out"] = out.string();
    j["files"] = {{"csv", spec.name + ".csv"},
                  {"json", spec.name + ".json"},
                  {"png", plots == "written" ? Json(spec.name + ".png") : Json(nullptr)}};
    j["points"] = spec.points.size();
    j["computed"] = computed;
    j["cached"] = from_cache;
    j["recomputed"] = recomputed;
    j["executor"] = "serial";
    j["plots"] = plots;
    j["wall_time_s"] = std::round(wall_s * 1000.0) / 1000.0;
    print_json(j);
  } else {
    fmt::print("sweep {}: {} points ({} computed, {} from the cache) in {:.1f} s; results in {}\n",
               spec.name, spec.points.size(), computed, from_cache, wall_s, out.string());
  }
  return kExitOk;
}

}  // namespace

void add_sweep_command(CLI::App& app, SweepCommandOptions& o) {
  auto* sweep = app.add_subcommand(
      "sweep", "run a parameter sweep (configurations x members x seeds) on Dask, cached");
  sweep->add_option("SPEC", o.spec, "sweep spec (TOML; docs/sweep.md)")->required();
  sweep->add_option("--out", o.out, "output directory (default: results/NAME)");
  sweep->add_option("--cache", o.cache,
                    "point cache directory (default: $XDG_CACHE_HOME/zonelab/sweep or "
                    "~/.cache/zonelab/sweep)");
  sweep->add_flag("--no-cache", o.no_cache, "neither read nor write the point cache");
  sweep->add_flag("--serial", o.serial, "run the points one after another in this process");
  add_count_option(sweep, "--workers", o.workers,
                   "worker processes of the local Dask cluster (default 2)");
  sweep->add_option("--scheduler", o.scheduler,
                    "a running Dask scheduler's address (tcp://HOST:8786) instead of a local "
                    "cluster");
  sweep->add_flag("--no-plots", o.no_plots, "do not run the plotting tool");
  sweep->add_flag("--json", o.json, "print a JSON summary");
  sweep->add_flag("--quiet", o.quiet, "no progress lines on stderr");
}

int run_sweep_command(const SweepCommandOptions& o) {
  if (o.workers == 0 || o.workers > kWorkersMax) {
    return bad_input(fmt::format("--workers: from 1 to {}", kWorkersMax));
  }
  if (o.serial && !o.scheduler.empty()) {
    return bad_input("sweep: give --serial or --scheduler, not both");
  }
  auto spec = load_sweep_spec(o.spec);
  if (!spec) return bad_input(spec.error());
  auto cache = cache_of(o.cache, o.no_cache);
  bool all_cached = cache.has_value();
  if (!o.serial && cache) {
    for (const SweepPoint& p : spec->points) {
      if (!cache->lookup(p).result) {
        all_cached = false;
        break;
      }
    }
  }
  if (o.serial || all_cached) return run_serial(o, *spec, cache);
  return exec_python_driver(o);
}

void add_points_commands(CLI::App* experiment, CLI::App*& points, CLI::App*& run_point,
                         PointCommandOptions& o) {
  points = experiment->add_subcommand(
      "points", "list a sweep's points (or an experiment set's members), each with its key");
  points->add_option("SPEC", o.spec, "a sweep spec, or an experiment set's name")->required();
  points->add_flag("--quick", o.quick, "an experiment set's quick run");
  points->add_option("--cache", o.cache, "say which points this cache holds");
  points->add_flag("--json", o.json, "print JSON");
  run_point = experiment->add_subcommand(
      "run-point", "run one point of a sweep into the point cache (for GNU parallel, Slurm)");
  run_point->add_option("SPEC", o.spec, "a sweep spec, or an experiment set's name")->required();
  add_count_option(run_point, "INDEX", o.index, "the point, from 0 (`experiment points`)")
      ->required();
  run_point->add_flag("--quick", o.quick, "an experiment set's quick run");
  run_point->add_option("--cache", o.cache, "point cache directory (default: as sweep's)");
  run_point->add_flag("--no-cache", o.no_cache, "run it and print it; keep nothing");
  run_point->add_flag("--json", o.json, "print the point and its result as JSON");
}

int run_points_command(const PointCommandOptions& o) {
  auto spec = load_sweep_spec_or_set(o.spec, o.quick);
  if (!spec) return bad_input(spec.error());
  std::optional<PointCache> cache;
  if (!o.cache.empty()) cache.emplace(o.cache);
  if (o.json) {
    Json j = status_json(Status::kSuccess);
    j["sweep"] = spec->name;
    j["axes"] = spec->axes;
    Json list = Json::array();
    for (const SweepPoint& p : spec->points) {
      Json item = point_json(p);
      if (cache) item["cached"] = cache->lookup(p).result.has_value();
      list.push_back(std::move(item));
    }
    j["points"] = std::move(list);
    print_json(j);
    return kExitOk;
  }
  for (const SweepPoint& p : spec->points) {
    std::string state;
    if (cache) state = cache->lookup(p).result ? "  cached" : "  -";
    fmt::print("{}\t{}\t{}{}\n", p.index, p.key.substr(0, 16), p.label, state);
  }
  return kExitOk;
}

int run_point_command(const PointCommandOptions& o) {
  auto spec = load_sweep_spec_or_set(o.spec, o.quick);
  if (!spec) return bad_input(spec.error());
  uint64_t index = o.index.value_or(0);
  if (index >= spec->points.size()) {
    return bad_input(fmt::format("run-point: {} has points 0 to {}; there is no point {}",
                                 spec->origin, spec->points.size() - 1, index));
  }
  const SweepPoint& p = spec->points[index];
  auto cache = cache_of(o.cache, o.no_cache);
  bool from_cache = false;
  std::string result;
  if (auto hit = cached_result(cache, p, nullptr)) {
    result = std::move(*hit);
    from_cache = true;
  } else {
    auto ran = run_sweep_point(*spec, p.index);
    if (!ran) return bad_input(ran.error());
    result = std::move(*ran);
    if (cache) {
      auto stored = cache->store(p, result);
      if (!stored) return bad_input(fmt::format("run-point: cache: {}", stored.error()));
    }
  }
  if (o.json) {
    Json j = status_json(Status::kSuccess);
    j["point"] = point_json(p);
    j["cached"] = from_cache;
    j["result"] = Json::parse(result);
    print_json(j);
  } else if (cache) {
    fmt::print("point {} ({}): {}; {}\n", p.index, p.label,
               from_cache ? "already in the cache" : "computed", cache->path_of(p).string());
  } else {
    fmt::print("{}\n", result);
  }
  return kExitOk;
}

}  // namespace zonelab::cli
