// `zonelab interference`: seed 003 §2.2 interference runs (a foreground I/O
// workload alone and beside throttled finish or reset) with M^Inter, on
// fresh devices built from an image's configuration or a preset.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "tools/cli.h"

namespace zonelab::cli {

struct InterferenceOptions {
  std::string image;
  ConfigOptions config;
  std::string job_file;
  std::vector<std::pair<std::string, std::string>> flags;  // (option, value) in order
  std::string csv_file;
  bool json = false;
  bool quiet = false;
};

void add_interference_command(CLI::App& app, InterferenceOptions& options);
int run_interference_command(const InterferenceOptions& options);

}  // namespace zonelab::cli
