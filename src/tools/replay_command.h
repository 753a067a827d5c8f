// `zonelab replay [IMAGE] TRACE`: a fio iolog (v2, v3) or blkparse text
// replayed against a device image or a throwaway device of a preset, in
// virtual time, with the trace's timestamps or as fast as possible
// (workload/replay.h, docs/replay.md).
#pragma once

#include <optional>
#include <string>

#include "tools/cli.h"

namespace zonelab::cli {

struct ReplayCommandOptions {
  std::string first;   // IMAGE, or TRACE when it is the only positional
  std::string second;  // TRACE
  ConfigOptions config;
  std::string timing = "auto";
  std::optional<uint64_t> iodepth;
  std::string scheduler;
  bool json = false;
  bool quiet = false;
  bool no_wall_clock = false;
};

void add_replay_command(CLI::App& app, ReplayCommandOptions& options);
int run_replay_command(const ReplayCommandOptions& options);

}  // namespace zonelab::cli
