// The experiment command; see experiment_command.h.
#include "tools/experiment_command.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <utility>

#include "common/write_all.h"
#include "experiments/experiment.h"
#include "experiments/report.h"
#include "sweep/plotter.h"

namespace zonelab::cli {
namespace {

namespace fs = std::filesystem;

int run_list(bool json) {
  if (json) {
    Json out = status_json(Status::kSuccess);
    Json sets = Json::array();
    for (const ExperimentSet& set : experiment_sets()) {
      Json members = Json::array();
      for (const Experiment& e : set.experiments) {
        members.push_back({{"name", e.name}, {"title", e.title}, {"source", e.source}});
      }
      sets.push_back({{"name", set.name},
                      {"title", set.title},
                      {"source", set.source},
                      {"deterministic", set.deterministic},
                      {"members", members}});
    }
    out["experiments"] = sets;
    print_json(out);
    return kExitOk;
  }
  for (const ExperimentSet& set : experiment_sets()) {
    fmt::print("{:<20} {} ({})\n", set.name, set.title, set.source);
    for (const Experiment& e : set.experiments) {
      fmt::print("  {:<18} {} ({})\n", e.name, e.title, e.source);
    }
  }
  return kExitOk;
}

// A word as a POSIX shell would need it quoted.
std::string shell_word(const std::string& word) {
  bool plain = !word.empty() && word.find_first_not_of(
                                    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                    "0123456789_./-+=:,@%") == std::string::npos;
  if (plain) return word;
  std::string out = "'";
  for (char c : word) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::string regenerate_command(const ExperimentOptions& o) {
  std::string command = "zonelab experiment run " + shell_word(o.name);
  if (o.quick) command += " --quick";
  if (!o.out.empty()) command += " --out " + shell_word(o.out);
  for (const std::string& only : o.only) command += " --only " + shell_word(only);
  if (o.no_plots) command += " --no-plots";
  return command;
}

// The record of what a run wrote into its directory: one file name a line.
constexpr const char* kManifest = ".zonelab-experiment";
constexpr uint64_t kManifestBytesMax = 1 << 16;

// The files a run of `set` writes (relative to its directory).
std::vector<std::string> owned_files(const ExperimentSet& set) {
  std::vector<std::string> files = {"README.md"};
  for (const Experiment& e : set.experiments) {
    for (const char* ext : {".csv", ".json", ".png"}) files.push_back(std::string(e.name) + ext);
  }
  return files;
}

// A file's bytes, at most `max_bytes`; nothing if it is missing, a symlink,
// not a regular file or bigger.
std::optional<std::string> read_bounded(const fs::path& path, uint64_t max_bytes) {
  std::error_code ec;
  if (fs::is_symlink(path, ec) || !fs::is_regular_file(path, ec) ||
      fs::file_size(path, ec) > max_bytes) {
    return std::nullopt;
  }
  std::ifstream in(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.good() && !in.eof()) return std::nullopt;
  return text;
}

// The names a manifest lists (bounded; a missing manifest lists none).
std::vector<std::string> read_manifest(const fs::path& dir) {
  std::vector<std::string> names;
  auto text = read_bounded(dir / kManifest, kManifestBytesMax);
  if (!text) return names;
  std::istringstream in(*text);
  for (std::string line; std::getline(in, line);) names.push_back(line);
  return names;
}

// Writes a file of the run's own, never through a symlink.
Outcome write_file(const fs::path& path, const std::string& text) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return Error{fmt::format("cannot write {}: {}", path.string(), std::strerror(errno))};
  if (auto written = write_all(fd, text); !written) {
    ::close(fd);
    return Error{fmt::format("cannot write {}: {}", path.string(), written.error())};
  }
  if (::close(fd) != 0) {
    return Error{fmt::format("cannot write {}: {}", path.string(), std::strerror(errno))};
  }
  return Outcome::success();
}

// Makes the directory and checks, before anything runs, every path the run
// will write: no symlink, nothing but a regular file, and no file the run
// did not write before (unless `force`). Then records the run's files.
Outcome prepare_out_dir(const fs::path& dir, const ExperimentSet& set, bool force) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Error{fmt::format("--out {}: {}", dir.string(), ec.message())};
  if (!fs::is_directory(dir, ec)) {
    return Error{fmt::format("--out {}: not a directory", dir.string())};
  }
  std::vector<std::string> ours = read_manifest(dir);
  std::vector<std::string> files = owned_files(set);
  files.push_back(kManifest);
  for (const std::string& name : files) {
    fs::path path = dir / name;
    auto status = fs::symlink_status(path, ec);
    if (ec || status.type() == fs::file_type::not_found) continue;
    if (status.type() == fs::file_type::symlink) {
      return Error{fmt::format("--out {}: {} is a symlink; zonelab writes no file through one",
                               dir.string(), name)};
    }
    if (status.type() != fs::file_type::regular) {
      return Error{fmt::format("--out {}: {} is not a regular file", dir.string(), name)};
    }
    bool written_before =
        name == kManifest || std::find(ours.begin(), ours.end(), name) != ours.end();
    if (!written_before && !force) {
      return Error{fmt::format(
          "--out {}: {} exists and was not written by `zonelab experiment run` (use --force "
          "to overwrite it)",
          dir.string(), name)};
    }
  }
  std::string manifest;
  for (const std::string& name : owned_files(set)) manifest += name + "\n";
  return write_file(dir / kManifest, manifest);
}

void print_summary(const ExperimentSet& set, const std::vector<ExperimentRun>& runs,
                   const fs::path& dir) {
  fmt::print("{}: results in {} (README.md, {} experiment(s))\n", set.name, dir.string(),
             runs.size());
  for (const ExperimentRun& run : runs) {
    fmt::print("{}: {} ({})\n", run.experiment->name, run.experiment->title,
               run.experiment->source);
    for (const Comparison& c : run.result.comparisons) {
      fmt::print("  {:<58} paper {:>9} {:<3} measured {:>9} {}\n", c.quantity,
                 c.paper ? format_number(*c.paper) : "-", c.unit, format_number(c.measured),
                 c.unit);
    }
  }
}

// What a run of one member writes: NAME.csv and NAME.json, with their text.
std::array<std::pair<std::string, std::string>, 2> member_files(const ExperimentSet& set,
                                                                const ExperimentRun& run,
                                                                bool quick) {
  const std::string name(run.experiment->name);
  return {{{name + ".csv", run.result.table.to_csv()},
           {name + ".json", experiment_json(set, run, quick).dump(2) + "\n"}}};
}

// The set and the members `--only` selects, or why not.
Result<std::pair<const ExperimentSet*, std::vector<const Experiment*>>> select(
    const ExperimentOptions& o) {
  const ExperimentSet* set = find_experiment_set(o.name);
  if (set == nullptr) {
    return Error{fmt::format("unknown experiment '{}' (available: {})", one_line(o.name),
                             experiment_set_names())};
  }
  std::vector<const Experiment*> selected;
  for (const Experiment& e : set->experiments) {
    bool wanted = o.only.empty();
    for (const std::string& only : o.only) wanted = wanted || only == e.name;
    if (wanted) selected.push_back(&e);
  }
  for (const std::string& only : o.only) {
    if (find_experiment(*set, only) == nullptr) {
      std::string names;
      for (const Experiment& e : set->experiments)
        names += (names.empty() ? "" : ", ") + std::string(e.name);
      return Error{fmt::format("--only: {} has no experiment '{}' (it has: {})", set->name,
                               one_line(only), names)};
    }
  }
  return std::pair{set, std::move(selected)};
}

// Runs the members; an error is an internal one (a bug or a broken
// definition), in one line.
Result<std::vector<ExperimentRun>> run_members(const ExperimentSet& set,
                                               const std::vector<const Experiment*>& selected,
                                               bool quick) {
  RunOptions options;
  options.quick = quick;
  options.progress = [&](std::string_view line) { fmt::print(stderr, "{}/{}\n", set.name, line); };
  std::vector<ExperimentRun> runs;
  for (const Experiment* e : selected) {
    auto result = e->run(options);
    if (!result) return Error{fmt::format("{}/{}: {}", set.name, e->name, result.error())};
    for (const Comparison& c : result->comparisons) {
      if (c.kind == Evidence::kUnstated) {
        return Error{
            fmt::format("{}/{}: the comparison '{}' states no kind (fitted, closed "
                        "form or emerged)",
                        set.name, e->name, c.quantity)};
      }
    }
    runs.push_back(ExperimentRun{e, std::move(result).value(), false});
  }
  return runs;
}

int run_set(const ExperimentOptions& o) {
  auto chosen = select(o);
  if (!chosen) return bad_input(chosen.error());
  const auto& [set, selected] = *chosen;
  const fs::path dir =
      o.out.empty() ? fs::path("results") / std::string(set->name) : fs::path(o.out);
  auto prepared = prepare_out_dir(dir, *set, o.force);
  if (!prepared) return bad_input(prepared.error());

  auto ran = run_members(*set, selected, o.quick);
  if (!ran) {
    fmt::print(stderr, "zonelab: internal error: {}\n", ran.error());
    return kExitInternal;
  }
  std::vector<ExperimentRun> runs = std::move(ran).value();
  std::vector<fs::path> json_files;
  for (const ExperimentRun& run : runs) {
    for (const auto& [name, text] : member_files(*set, run, o.quick)) {
      auto written = write_file(dir / name, text);
      if (!written) return bad_input(written.error());
    }
    json_files.push_back(dir / (std::string(run.experiment->name) + ".json"));
  }

  std::string plots = "skipped";
  if (!o.no_plots) {
    std::error_code ec;
    for (const ExperimentRun& run : runs)
      fs::remove(dir / fmt::format("{}.png", run.experiment->name), ec);
    fmt::print(stderr, "{}: plotting\n", set->name);
    std::string failure = run_plotter(json_files);
    if (failure.empty()) {
      plots = "written";
      for (ExperimentRun& run : runs) {
        run.plotted = fs::exists(dir / fmt::format("{}.png", run.experiment->name), ec);
      }
    } else {
      plots = "failed";
      fmt::print(stderr,
                 "zonelab: warning: no plots ({}); CSV, JSON and README.md are written; run "
                 "`make plot-deps` to install the plotting tool's Python packages\n",
                 failure);
    }
  }
  auto report = write_file(dir / "README.md",
                           set_report_markdown(*set, runs, regenerate_command(o), o.quick));
  if (!report) return bad_input(report.error());

  if (o.json) {
    Json out = status_json(Status::kSuccess);
    out["experiment"] = set->name;
    out["out"] = dir.string();
    out["quick"] = o.quick;
    out["plots"] = plots;
    Json list = Json::array();
    for (const ExperimentRun& run : runs) {
      std::string name(run.experiment->name);
      Json files = {{"csv", name + ".csv"},
                    {"json", name + ".json"},
                    {"png", run.plotted ? Json(name + ".png") : Json(nullptr)}};
      Json comparisons = Json::array();
      for (const Comparison& c : run.result.comparisons) comparisons.push_back(comparison_json(c));
      list.push_back({{"name", name}, {"files", files}, {"comparison", comparisons}});
    }
    out["experiments"] = list;
    out["report"] = "README.md";
    print_json(out);
  } else {
    print_summary(*set, runs, dir);
  }
  return kExitOk;
}

// A committed result file is read up to this size.
constexpr uint64_t kCheckedBytesMax = uint64_t{64} << 20;

// Where two texts first differ: "line N: committed '...', now '...'".
std::string first_difference(const std::string& committed, const std::string& now) {
  size_t line = 1;
  size_t a = 0;
  size_t b = 0;
  for (;;) {
    size_t ea = committed.find('\n', a);
    size_t eb = now.find('\n', b);
    std::string la = committed.substr(a, ea == std::string::npos ? std::string::npos : ea - a);
    std::string lb = now.substr(b, eb == std::string::npos ? std::string::npos : eb - b);
    if (la != lb || (ea == std::string::npos) != (eb == std::string::npos)) {
      auto cut = [](const std::string& text) {
        return text.size() > 160 ? text.substr(0, 160) + "..." : text;
      };
      return fmt::format("line {}: committed '{}', now '{}'", line, cut(one_line(la)),
                         cut(one_line(lb)));
    }
    if (ea == std::string::npos) return "the same lines, other bytes";
    a = ea + 1;
    b = eb + 1;
    ++line;
  }
}

// Runs the set and compares the CSV, JSON and README.md it would write with
// the files in --against, byte for byte (not the plots: their pixels are the
// plotting library's). The README is rendered with the command that would
// regenerate that directory, plotted where the directory holds the plot.
int run_check(const ExperimentOptions& o) {
  auto chosen = select(o);
  if (!chosen) return bad_input(chosen.error());
  const auto& [set, selected] = *chosen;
  const fs::path dir(o.against);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return bad_input(fmt::format("--against {}: not a directory", one_line(o.against)));
  }
  auto ran = run_members(*set, selected, o.quick);
  if (!ran) {
    fmt::print(stderr, "zonelab: internal error: {}\n", ran.error());
    return kExitInternal;
  }
  std::vector<ExperimentRun> runs = std::move(ran).value();
  std::vector<std::pair<std::string, std::string>> files;
  bool any_plot = false;
  for (ExperimentRun& run : runs) {
    std::string name(run.experiment->name);
    run.plotted = fs::exists(dir / (name + ".png"), ec);
    any_plot = any_plot || run.plotted;
    for (auto& file : member_files(*set, run, o.quick)) files.push_back(std::move(file));
  }
  ExperimentOptions as_run = o;
  as_run.out = o.against;
  as_run.no_plots = !any_plot;
  files.emplace_back("README.md",
                     set_report_markdown(*set, runs, regenerate_command(as_run), o.quick));

  Json differing = Json::array();
  for (const auto& [name, text] : files) {
    auto committed = read_bounded(dir / name, kCheckedBytesMax);
    std::string why;
    if (!committed) {
      why = "missing (or not a regular file)";
    } else if (*committed != text) {
      why = first_difference(*committed, text);
    } else {
      continue;
    }
    differing.push_back({{"file", name}, {"difference", why}});
    if (!o.json) fmt::print("{}: {}: {}\n", set->name, (dir / name).string(), why);
  }
  if (o.json) {
    Json out = status_json(Status::kSuccess);
    out["experiment"] = set->name;
    out["against"] = dir.string();
    out["quick"] = o.quick;
    out["files_checked"] = files.size();
    out["differing"] = differing;
    out["current"] = differing.empty();
    print_json(out);
  } else if (differing.empty()) {
    fmt::print("{}: {} is current ({} files the same)\n", set->name, dir.string(), files.size());
  } else {
    fmt::print("{}: {} is stale: {} of {} files differ (regenerate with `{}`)\n", set->name,
               dir.string(), differing.size(), files.size(), regenerate_command(as_run));
  }
  return differing.empty() ? kExitOk : kExitDeviceError;
}

}  // namespace

void add_experiment_command(CLI::App& app, ExperimentOptions& o) {
  auto* experiment = app.add_subcommand(
      "experiment", "reproduce a paper's measurements: CSV, JSON, PNG plots and a report");
  experiment->require_subcommand(1);
  o.list = experiment->add_subcommand("list", "list the experiments");
  o.list->add_flag("--json", o.json, "print JSON");
  o.run = experiment->add_subcommand("run", "run an experiment and write its results");
  o.run->add_option("NAME", o.name, "experiment (see `zonelab experiment list`)")->required();
  o.run->add_flag("--quick", o.quick, "a few points only (seconds; what the tests run)");
  o.run->add_option("--out", o.out, "output directory (default: results/NAME)");
  o.run->add_option("--only", o.only, "run only this member experiment (repeatable)")
      ->allow_extra_args(false);
  o.run->add_flag("--no-plots", o.no_plots, "do not run the plotting tool");
  o.run->add_flag("--force", o.force, "overwrite files in --out that an earlier run did not write");
  o.run->add_flag("--json", o.json, "print a JSON summary");
  o.check = experiment->add_subcommand(
      "check", "rerun an experiment and compare with committed results, byte for byte");
  o.check->add_option("NAME", o.name, "experiment (see `zonelab experiment list`)")->required();
  o.check->add_option("--against", o.against, "the directory of committed results")->required();
  o.check->add_flag("--quick", o.quick, "the committed results are of a quick run");
  o.check->add_option("--only", o.only, "check only this member experiment (repeatable)")
      ->allow_extra_args(false);
  o.check->add_flag("--json", o.json, "print JSON");
  add_points_commands(experiment, o.points, o.run_point, o.point);
}

int run_experiment_command(const ExperimentOptions& o) {
  if (o.list != nullptr && o.list->parsed()) return run_list(o.json);
  if (o.check != nullptr && o.check->parsed()) return run_check(o);
  if (o.points != nullptr && o.points->parsed()) return run_points_command(o.point);
  if (o.run_point != nullptr && o.run_point->parsed()) return run_point_command(o.point);
  return run_set(o);
}

}  // namespace zonelab::cli
