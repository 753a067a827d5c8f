// Experiments: runs of the model that reproduce a paper's measurements,
// grouped in named sets (`zonelab experiment run confznspp`). An experiment
// is one function that returns a result table, the numbers the paper
// reports beside the model's, and how to plot the table; a set is a list of
// experiments. Adding an experiment to a set is one function and one row of
// the set's table; adding a set is one file and one row in experiment.cc.
//
// Experiments run in virtual time and read no clock, so the same build
// gives the same results to the last digit.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "experiments/table.h"
#include "zonelab/config.h"
#include "zonelab/result.h"

namespace zonelab {

// How the plotting tool (tools/plot/plot.py) draws a result table: one line
// per distinct value of the `series` column, `y` against `x`. A line joins
// its points in the order of the `order` column (empty: of `x`); with an
// `order` column the report's grid has a row per value of it, each cell
// showing x / y (e.g. throughput / latency per concurrency level).
//
// `kind` "heatmap" draws a grid instead, a row per value of `x` and a column
// per value of `series`, each cell coloured and labelled with `y` (the
// report's grid has the same shape); "bar" draws one horizontal bar per row,
// labelled with its `x`, of length `y`, coloured by `series`. `panel` names a
// column whose values split a line plot into side-by-side panels.
// `references` are dashed lines across the plot at those values of `y`.
struct PlotSpec {
  std::string x;
  std::string y;
  std::string series;
  std::string xlabel;
  std::string ylabel;
  std::string series_label;
  std::string title;
  bool logx = false;
  bool logy = false;
  std::string order = {};
  std::string order_label = {};
  std::string kind = {};  // empty: lines
  std::string panel = {};
  std::vector<double> references = {};
};

// What a measured number is evidence of. `kFitted`: a parameter of the
// configuration was calibrated to the paper's number (or to another number
// this one follows from), so agreement shows the fit, not the model.
// `kClosedForm`: it follows from the configuration's arithmetic (a latency
// the preset takes from the paper, a capacity from the geometry), so it
// checks the configuration and the bookkeeping. `kEmerged`: it came out of
// the model's dynamics (queueing, contention, scheduling) with nothing set
// to produce it: the only kind that is evidence for the model.
enum class Evidence { kUnstated, kFitted, kClosedForm, kEmerged };

// "fitted", "closed form", "emerged" ("unstated" for kUnstated).
std::string_view evidence_name(Evidence kind);

// One number the paper reports, beside the model's number for the same
// quantity. `paper` is a constant written in the experiment's definition,
// or nothing where the paper gives no number for a quantity the report
// shows; `measured` always comes from the run. Every row states its `kind`;
// `basis` names, for a fitted number, the parameter(s) calibrated to it
// and, for a closed-form one, the arithmetic it follows from.
struct Comparison {
  std::string quantity;
  std::string unit;
  std::optional<double> paper;
  double measured = 0;
  std::string note;  // where the two are not quite the same quantity
  Evidence kind = Evidence::kUnstated;
  std::string basis = {};
};

// The same row with its kind stated (for rows built in a loop).
inline Comparison emerged(Comparison c) {
  c.kind = Evidence::kEmerged;
  return c;
}
inline Comparison fitted(std::string parameter, Comparison c) {
  c.kind = Evidence::kFitted;
  c.basis = std::move(parameter);
  return c;
}
inline Comparison closed_form(std::string arithmetic, Comparison c) {
  c.kind = Evidence::kClosedForm;
  c.basis = std::move(arithmetic);
  return c;
}

struct ExperimentResult {
  Table table{{"empty"}};
  nlohmann::ordered_json parameters = nlohmann::ordered_json::object();
  PlotSpec plot;
  std::vector<Comparison> comparisons;
};

struct RunOptions {
  bool quick = false;                                   // a few points, for tests and CI
  std::function<void(std::string_view line)> progress;  // may be empty

  void report(std::string_view line) const {
    if (progress) progress(line);
  }
};

using ExperimentFn = Result<ExperimentResult> (*)(const RunOptions& options);

struct Experiment {
  std::string_view name;         // file names: NAME.csv, NAME.json, NAME.png
  std::string_view title;        // one line
  std::string_view source;       // e.g. "seed 003 §5.2, Fig. 9a"
  std::string_view description;  // what is run and how it maps to the paper
  ExperimentFn run;
};

struct ExperimentSet {
  std::string_view name;  // what `zonelab experiment run NAME` takes
  std::string_view title;
  std::string_view source;
  std::span<const Experiment> experiments;
  // Runs in virtual time only, so the same build writes the same bytes;
  // false for a set that reads the wall clock (real RocksDB).
  bool deterministic = true;
};

// A shipped preset with `--set`-style overrides applied in order, then the
// overrides of the innermost PresetOverridesScope alive on this thread.
// Experiments build every configuration they run through it.
Result<Config> preset_with(std::string_view preset, const std::vector<std::string>& overrides);

// While alive, preset_with on this thread applies `overrides` after an
// experiment's own: how a sweep runs a member with its point's
// configuration and seed (src/sweep/sweep.h).
// The overrides of the scope alive on this thread, one per line (empty
// outside any): what a member that keeps results for reuse within a process
// must key them by, besides its own parameters.
std::string preset_overrides_key();

class PresetOverridesScope {
 public:
  explicit PresetOverridesScope(std::vector<std::string> overrides);
  ~PresetOverridesScope();
  PresetOverridesScope(const PresetOverridesScope&) = delete;
  PresetOverridesScope& operator=(const PresetOverridesScope&) = delete;

 private:
  std::vector<std::string> overrides_;
  const std::vector<std::string>* outer_;
};

// Every set, in the order `zonelab experiment list` prints them.
std::span<const ExperimentSet> experiment_sets();
const ExperimentSet* find_experiment_set(std::string_view name);
const Experiment* find_experiment(const ExperimentSet& set, std::string_view name);
// "confznspp, ..." for error messages.
std::string experiment_set_names();

// The sets, one file each.
ExperimentSet confznspp_experiments();
ExperimentSet block_tax_experiments();
ExperimentSet zinc_softfinish_experiments();
// Real RocksDB in real time: unlike the others, these runs read the wall
// clock and vary a little from run to run.
ExperimentSet rocksdb_zns_vs_block_experiments();
// ZenFS+ against ZenFS under real RocksDB on seed 004's small-zone drive
// (real time too).
ExperimentSet rocksdb_zenfsplus_experiments();
// RocksDB on XFS and f2fs in User-Mode Linux on the block SSD against the
// zoned file system on ZNS (real time, real kernels).
ExperimentSet rocksdb_fs_vs_zenfs_experiments();
// FlexZNS zone formats and their parity, from the layout plan.
ExperimentSet flexzns_experiments();
// FlexZNS under real RocksDB: zone sizes, mixed formats, the open-block
// budget and tenants (real time).
ExperimentSet flexzns_rocksdb_experiments();
// The ZN540 interference study of seed 003 (Fig. 2-4, 7, 8) on `zn540`.
ExperimentSet zn540_experiments();
// ConfZNS's intra- and inter-zone parallelism (seed 002 Observations 3-4).
ExperimentSet confzns_experiments();

}  // namespace zonelab
