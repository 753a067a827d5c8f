// Parameter sweeps: a spec (TOML) expands a grid or list of configurations
// x experiment members x seeds into points; each point is a pure function
// of its configuration, its seed and the zonelab build, so it can run
// anywhere (in this process, on a Dask worker, in a Slurm array task) and
// its result can be cached under a hash of exactly those. The sweep's
// output (one CSV, one JSON, a plot) is assembled from the points' results
// in point order, so it is the same bytes however the points were run.
//
// A point runs either one bench job on a throwaway device built from a
// preset (a "bench sweep") or one member experiment of a deterministic
// experiment set with the point's overrides applied over every preset the
// member builds (an "experiment sweep"). docs/sweep.md has the format.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "experiments/experiment.h"
#include "workload/job.h"
#include "zonelab/result.h"

namespace zonelab {

// Bounds, each named in its error.
inline constexpr size_t kSweepPointsMax = 100'000;
inline constexpr size_t kSweepAxisValuesMax = 10'000;
inline constexpr size_t kSweepSeedsMax = 10'000;
inline constexpr size_t kSweepNameMaxChars = 64;

// The build the results come from: zonelab's version, and where the source
// is a git checkout the commit and (when the tree differs from it) a digest
// of the difference. Part of every cache key.
std::string_view zonelab_build_id();

// One value an axis takes, as `--set` would be given it.
struct AxisValue {
  std::string key;   // "zns.max_open", "job.iodepth" or "preset"
  std::string text;  // "8"
};

struct SweepPoint {
  size_t index = 0;
  std::vector<AxisValue> coordinates;  // the axes' values, in axis order
  std::string preset;                  // bench sweeps
  std::vector<std::string> overrides;  // "KEY=VALUE", the spec's `set` then the axes'
  JobOptionList job;                   // bench sweeps: the spec's [job], then the axes'
  std::string member;                  // experiment sweeps
  std::optional<uint64_t> seed;        // the configuration's `seed`
  nlohmann::ordered_json identity;     // what the key hashes (with zonelab_build_id())
  std::string key;                     // hex SHA-256 of identity's text
  std::string label;                   // "zns.max_open=8 job.iodepth=4 seed=1"
};

struct SweepPlot {
  std::string x;
  std::string y;
  std::string series;
  bool logx = false;
  bool logy = false;
};

struct SweepSpec {
  std::string name;    // stem of the output files
  std::string origin;  // the spec as named in messages
  std::string text;    // the spec's text (what a remote worker is sent)
  enum class Kind { kBench, kExperiment } kind = Kind::kBench;
  std::string experiment;         // experiment sweeps: the set
  bool quick = false;             // experiment sweeps: the set's quick run
  std::vector<std::string> axes;  // axis names, in order ("seed" is not one)
  bool seeded = false;            // the spec gives seeds
  std::optional<SweepPlot> plot;  // bench sweeps default to one
  std::vector<SweepPoint> points;
};

// Parses and expands a spec; a bench point's configuration and job are
// checked here, so a bad key or value is reported before anything runs, as
// "ORIGIN:LINE: ..." (the line where the message names one key). An
// experiment point's overrides are checked over the default configuration:
// a value that only a member's own preset refuses fails when it runs.
Result<SweepSpec> parse_sweep_spec_text(std::string_view text, std::string_view origin);
Result<SweepSpec> load_sweep_spec(const std::string& path);
// `zonelab experiment points/run-point NAME`: the spec of a whole set.
Result<SweepSpec> experiment_set_sweep(std::string_view set_name, bool quick);
// A spec file's path, or an experiment set's name.
Result<SweepSpec> load_sweep_spec_or_set(const std::string& spec_or_set, bool quick);

// Runs one point in this process: the result document, as compact JSON
// text. Deterministic: the same point and build give the same bytes.
Result<std::string> run_sweep_point(const SweepSpec& spec, size_t index);

// The point cache: one file per point, DIR/KK/KEY.json (KK: the key's first
// two hex digits), written to a temporary file and renamed into place, and
// holding the point's identity and a digest of its result, so a damaged or
// foreign file is found rather than believed.
class PointCache {
 public:
  explicit PointCache(std::filesystem::path dir) : dir_(std::move(dir)) {}
  // XDG_CACHE_HOME/zonelab/sweep, else HOME/.cache/zonelab/sweep.
  static std::filesystem::path default_dir();

  struct Lookup {
    std::optional<std::string> result;  // a hit
    std::string problem;                // a damaged entry: why it cannot be used
  };
  Lookup lookup(const SweepPoint& point) const;
  Outcome store(const SweepPoint& point, std::string_view result) const;
  std::filesystem::path path_of(const SweepPoint& point) const;
  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
};

// The sweep's files, from every point's result (in point order).
struct SweepFiles {
  std::string csv;
  std::string json;  // the rows again, the spec's points, and the plot spec
  bool plottable = false;
};
Result<SweepFiles> sweep_files(const SweepSpec& spec, const std::vector<std::string>& results);

// Writes NAME.csv and NAME.json into `out` (made if missing); the paths of
// the JSON document (what the plotting tool reads).
Result<std::filesystem::path> write_sweep_files(const SweepSpec& spec, const SweepFiles& files,
                                                const std::filesystem::path& out);

// The point as `experiment points --json` lists it.
nlohmann::ordered_json point_json(const SweepPoint& point);

}  // namespace zonelab
