// `zonelab experiment list|run|check|points|run-point`: runs a set of experiments (src/experiments)
// and writes, into the output directory, NAME.csv and NAME.json for each
// experiment, NAME.png through the plotting tool (tools/plot/plot.py, run
// as a separate Python process) and README.md for the set.
//
// The output directory's files are the run's own: it writes only the files
// its set names, records them in DIR/.zonelab-experiment, and before it
// runs refuses a path that is a symlink or not a regular file, and a file
// it did not write (unless --force).
//
// `check` reruns a set and compares what it would write (CSV, JSON,
// README.md) with a directory of committed results: exit 0 when they are
// the same bytes, 3 when a file differs or is missing (each named, with the
// first differing line).
#pragma once

#include <string>
#include <vector>

#include "tools/cli.h"
#include "tools/sweep_command.h"

namespace zonelab::cli {

struct ExperimentOptions {
  CLI::App* list = nullptr;
  CLI::App* run = nullptr;
  CLI::App* check = nullptr;
  bool json = false;
  std::string name;
  bool quick = false;
  std::string out;  // default: results/NAME
  bool no_plots = false;
  bool force = false;  // overwrite files of DIR that zonelab did not write
  std::vector<std::string> only;
  std::string against;            // check: the committed results
  CLI::App* points = nullptr;     // experiment points (tools/sweep_command.h)
  CLI::App* run_point = nullptr;  // experiment run-point
  PointCommandOptions point;
};

void add_experiment_command(CLI::App& app, ExperimentOptions& options);
int run_experiment_command(const ExperimentOptions& options);

}  // namespace zonelab::cli
