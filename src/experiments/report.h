// What an experiment run writes besides its CSV table: one JSON document
// per experiment (the table again, its parameters, the paper's numbers
// beside the measured ones, and the plot spec the plotting tool reads), and
// one markdown report per set. Neither holds anything that changes from run
// to run (no wall-clock time, no absolute paths), so the same build gives
// the same bytes.
#pragma once

#include <string>
#include <vector>

#include "experiments/experiment.h"

namespace zonelab {

struct ExperimentRun {
  const Experiment* experiment = nullptr;
  ExperimentResult result;
  bool plotted = false;  // NAME.png was written
};

// One comparison row: quantity, unit, paper, measured, kind, and the
// fitted parameter (`parameter`), the arithmetic (`arithmetic`) and the
// note where the row has them.
nlohmann::ordered_json comparison_json(const Comparison& c);

nlohmann::ordered_json experiment_json(const ExperimentSet& set, const ExperimentRun& run,
                                       bool quick);

// `command` regenerates the files, e.g.
// "zonelab experiment run confznspp --out experiments/confznspp".
std::string set_report_markdown(const ExperimentSet& set, const std::vector<ExperimentRun>& runs,
                                const std::string& command, bool quick);

// A number for people: six significant digits, no exponent for the
// magnitudes experiments report.
std::string format_number(double value);

}  // namespace zonelab
