// `zonelab bench`: fio-like jobs on an image or a preset device, in virtual
// time or (--realtime) paced to the wall clock, reported as a table or JSON.
// Job flags are the job options of workload/job.h, shown in fio's spelling
// (--zone_order) and accepted with dashes too (--zone-order) and under
// fio's other names (--blocksize); as in fio, options before the first
// --name are every job's and each --name starts a job.
#pragma once

#include <optional>
#include <string>

#include "tools/cli.h"

namespace zonelab::cli {

struct BenchOptions {
  std::string image;
  ConfigOptions config;
  std::string job_file;
  bool job_file_given = false;  // --job "" is an empty path, not no --job
  std::vector<std::pair<std::string, std::string>> job_flags;  // (option, value) in order
  bool json = false;
  std::string output_format;  // fio's --output-format: json or normal (empty: not given)
  bool no_wall_clock = false;
  bool quiet = false;
  std::string scheduler;  // empty: the configuration's host.scheduler
  // The real-time driver (--realtime; --time-scale and --timing imply it).
  bool realtime = false;
  double time_scale = 1.0;
  std::string timing = "modeled";
};

void add_bench_command(CLI::App& app, BenchOptions& options);
int run_bench(const BenchOptions& options);

}  // namespace zonelab::cli
