// `zonelab bench`: fio-like jobs on an image or a preset device, in virtual
// time, reported as a table or JSON.
#pragma once

#include <optional>
#include <string>

#include "tools/cli.h"

namespace zonelab::cli {

struct BenchOptions {
  std::string image;
  ConfigOptions config;
  std::string job_file;
  std::vector<std::pair<std::string, std::string>> job_flags;  // (option, value) in order
  bool json = false;
  bool no_wall_clock = false;
  bool quiet = false;
  std::string scheduler;  // empty: the configuration's host.scheduler
};

void add_bench_command(CLI::App& app, BenchOptions& options);
int run_bench(const BenchOptions& options);

}  // namespace zonelab::cli
