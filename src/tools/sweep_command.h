// `zonelab sweep SPEC`: a parameter sweep (src/sweep/sweep.h, docs/sweep.md)
// run on a Dask cluster -- a local one of --workers processes by default,
// or the scheduler at --scheduler -- through the Python module's driver
// (python/zonelab/sweep.py, which this command becomes), or in this process
// with --serial. Points found in the cache are not run again; when every
// point is cached the files are written here, without Dask.
//
// `zonelab experiment points SPEC|SET` lists a sweep's points (or a set's
// members) and `zonelab experiment run-point SPEC|SET INDEX` runs one into
// the cache, for GNU parallel and Slurm arrays; a `zonelab sweep --serial`
// afterwards finds them all cached and writes the files.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "tools/cli.h"

namespace zonelab::cli {

struct SweepCommandOptions {
  std::string spec;
  std::string out;    // default: results/NAME
  std::string cache;  // default: PointCache::default_dir()
  bool no_cache = false;
  bool serial = false;
  uint64_t workers = 2;
  std::string scheduler;
  bool no_plots = false;
  bool json = false;
  bool quiet = false;
};

void add_sweep_command(CLI::App& app, SweepCommandOptions& options);
int run_sweep_command(const SweepCommandOptions& options);

struct PointCommandOptions {
  std::string spec;  // a spec file, or an experiment set's name
  bool quick = false;
  std::string cache;
  bool no_cache = false;
  std::optional<uint64_t> index;
  bool json = false;
};

void add_points_commands(CLI::App* experiment, CLI::App*& points, CLI::App*& run_point,
                         PointCommandOptions& options);
int run_points_command(const PointCommandOptions& options);
int run_point_command(const PointCommandOptions& options);

}  // namespace zonelab::cli
