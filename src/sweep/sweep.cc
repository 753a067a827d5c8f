// Sweep specs, points, the point cache and the sweep's files; see sweep.h.
#include "sweep/sweep.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <system_error>
#include <thread>

#include "common/text_input.h"
#include "common/write_all.h"
#include "experiments/report.h"
#include "experiments/table.h"
#include "stack/device_factory.h"
#include "stack/stack.h"
#include "stack/stack_report.h"
#include "workload/runner.h"
#include "zonelab_build_id.h"

namespace zonelab {
namespace {

using Json = nlohmann::ordered_json;
namespace fs = std::filesystem;

constexpr std::string_view kCacheFormat = "zonelab sweep point 1";
constexpr uint64_t kCacheEntryMaxBytes = 256ULL << 20;
constexpr std::string_view kJobPrefix = "job.";

std::string sha256_hex(std::string_view text) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  EVP_Digest(text.data(), text.size(), digest.data(), &length, EVP_sha256(), nullptr);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) {
    hex += kHex[digest[i] >> 4];
    hex += kHex[digest[i] & 15];
  }
  return hex;
}

uint32_t line_of(const toml::node& node) { return node.source().begin.line; }

// A scalar TOML value as `--set` takes it.
Result<std::string> value_text(const toml::node& node) {
  if (auto v = node.as_integer()) return std::to_string(v->get());
  if (auto v = node.as_floating_point()) {
    if (!std::isfinite(v->get())) return Error{"a value is a finite number"};
    return fmt::format("{}", v->get());
  }
  if (auto v = node.as_boolean()) return std::string(v->get() ? "true" : "false");
  if (auto v = node.as_string()) return v->get();
  return Error{"a value is a number, a string or true/false"};
}

// An entry of a table, in the order it is written (toml++ keeps keys sorted).
std::vector<std::pair<std::string, const toml::node*>> in_written_order(const toml::table& table) {
  std::vector<std::pair<std::string, const toml::node*>> entries;
  for (const auto& [key, node] : table) entries.emplace_back(std::string(key.str()), &node);
  std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
    const auto& x = a.second->source().begin;
    const auto& y = b.second->source().begin;
    return x.line != y.line ? x.line < y.line : x.column < y.column;
  });
  return entries;
}

enum class AxisKind { kConfig, kJob, kPreset };

struct Axis {
  std::string name;
  AxisKind kind = AxisKind::kConfig;
  uint32_t line = 0;
  std::vector<std::string> values;  // grid axes
};

// One configuration of the point list: axis name -> (value, line).
using ListEntry = std::map<std::string, std::pair<std::string, uint32_t>>;

struct Draft {
  std::string where;  // the spec as named in messages
  SweepSpec spec;
  std::string preset = "small";
  uint32_t preset_line = 0;
  std::vector<std::pair<std::string, uint32_t>> set;     // base overrides
  std::vector<std::pair<std::string, std::string>> job;  // base job options
  std::vector<uint32_t> job_lines;
  uint32_t job_line = 0;
  std::vector<std::string> members;
  std::vector<uint64_t> seeds;
  std::vector<Axis> grid;
  std::vector<ListEntry> list;
  std::vector<std::string> list_axes;  // in first-written order
  std::map<std::string, uint32_t> list_axis_lines;
  uint32_t plot_line = 0;
};

Error at(const Draft& d, uint32_t line, std::string_view message) {
  if (line == 0) return Error{fmt::format("{}: {}", d.where, message)};
  return Error{fmt::format("{}:{}: {}", d.where, line, message)};
}

Result<AxisKind> axis_kind(const Draft& d, const std::string& name, uint32_t line) {
  if (name == "preset") {
    if (d.spec.kind == SweepSpec::Kind::kExperiment) {
      return at(d, line, "'preset': an experiment's members choose their presets");
    }
    return AxisKind::kPreset;
  }
  if (name.starts_with(kJobPrefix)) {
    if (d.spec.kind == SweepSpec::Kind::kExperiment) {
      return at(d, line, fmt::format("'{}': an experiment sweep has no [job]", one_line(name)));
    }
    std::string option = canonical_job_option(std::string_view(name).substr(kJobPrefix.size()));
    if (option.empty() || option == "name") {
      return at(d, line,
                fmt::format("'{}': no such job option (bench --help lists them)", one_line(name)));
    }
    return AxisKind::kJob;
  }
  if (name == "seed") return at(d, line, "'seed': give the seeds as seeds = [...]");
  // A configuration key; its values are checked with each point's whole
  // configuration when the points are made.
  for (const ConfigKeyInfo& key : config_keys()) {
    if (key.name == name) return AxisKind::kConfig;
  }
  return at(d, line,
            fmt::format("unknown key '{}': not a configuration key (docs/configuration.md), "
                        "'preset' or job.OPTION",
                        one_line(name)));
}

Outcome read_string_list(const Draft& d, const toml::node& node, std::string_view key,
                         std::vector<std::string>& out) {
  const toml::array* array = node.as_array();
  if (array == nullptr) {
    return at(d, line_of(node), fmt::format("'{}' is a list of strings", key));
  }
  for (const toml::node& item : *array) {
    auto text = item.as_string();
    if (text == nullptr) {
      return at(d, line_of(item), fmt::format("'{}' is a list of strings", key));
    }
    out.push_back(text->get());
  }
  return Outcome();
}

Outcome read_job(Draft& d, const toml::node& node) {
  const toml::table* table = node.as_table();
  if (table == nullptr) return at(d, line_of(node), "'job' must be a table ([job])");
  if (d.spec.kind == SweepSpec::Kind::kExperiment) {
    return at(d, line_of(node), "[job]: an experiment sweep runs the set's members, not a job");
  }
  d.job_line = line_of(node);
  for (const auto& [key, value] : in_written_order(*table)) {
    std::string option = canonical_job_option(key);
    if (option.empty() || option == "name") {
      return at(
          d, line_of(*value),
          fmt::format("[job] '{}': no such job option (bench --help lists them)", one_line(key)));
    }
    auto text = value_text(*value);
    if (!text) return at(d, line_of(*value), fmt::format("[job] '{}': {}", key, text.error()));
    d.job.emplace_back(option, *text);
    d.job_lines.push_back(line_of(*value));
  }
  return Outcome();
}

Outcome read_grid(Draft& d, const toml::node& node) {
  const toml::table* table = node.as_table();
  if (table == nullptr) return at(d, line_of(node), "'grid' must be a table ([grid])");
  for (const auto& [key, value] : in_written_order(*table)) {
    Axis axis;
    axis.name = key;
    axis.line = line_of(*value);
    auto kind = axis_kind(d, key, axis.line);
    if (!kind) return Error{kind.error()};
    axis.kind = *kind;
    if (const toml::array* values = value->as_array()) {
      if (values->empty()) return at(d, axis.line, fmt::format("[grid] '{}': no values", key));
      if (values->size() > kSweepAxisValuesMax) {
        return at(d, axis.line,
                  fmt::format("[grid] '{}': {} values, more than the limit of {}", key,
                              values->size(), kSweepAxisValuesMax));
      }
      for (const toml::node& item : *values) {
        auto text = value_text(item);
        if (!text) return at(d, line_of(item), fmt::format("[grid] '{}': {}", key, text.error()));
        axis.values.push_back(*text);
      }
    } else {
      auto text = value_text(*value);
      if (!text) return at(d, axis.line, fmt::format("[grid] '{}': {}", key, text.error()));
      axis.values.push_back(*text);
    }
    std::set<std::string> distinct(axis.values.begin(), axis.values.end());
    if (distinct.size() != axis.values.size()) {
      return at(d, axis.line, fmt::format("[grid] '{}': a value is given twice", key));
    }
    d.grid.push_back(std::move(axis));
  }
  return Outcome();
}

Outcome read_list(Draft& d, const toml::node& node) {
  const toml::array* array = node.as_array();
  if (array == nullptr || !array->is_array_of_tables()) {
    return at(d, line_of(node), "'points' is a list of tables ([[points]])");
  }
  if (array->size() > kSweepPointsMax) {
    return at(
        d, line_of(node),
        fmt::format("{} [[points]], more than the limit of {}", array->size(), kSweepPointsMax));
  }
  for (const toml::node& item : *array) {
    ListEntry entry;
    for (const auto& [key, value] : in_written_order(*item.as_table())) {
      uint32_t line = line_of(*value);
      auto kind = axis_kind(d, key, line);
      if (!kind) return Error{kind.error()};
      auto text = value_text(*value);
      if (!text) return at(d, line, fmt::format("[[points]] '{}': {}", key, text.error()));
      entry[key] = {*text, line};
      if (!d.list_axis_lines.contains(key)) {
        d.list_axis_lines[key] = line;
        d.list_axes.push_back(key);
      }
    }
    if (entry.empty()) return at(d, line_of(item), "[[points]]: an entry with no keys");
    d.list.push_back(std::move(entry));
  }
  return Outcome();
}

Outcome read_seeds(Draft& d, const toml::node& node) {
  const toml::array* array = node.as_array();
  auto bad = [&](const toml::node& n) {
    return at(d, line_of(n), "'seeds' is a list of whole numbers from 0");
  };
  if (array == nullptr) return bad(node);
  if (array->empty()) return at(d, line_of(node), "'seeds': no seeds");
  if (array->size() > kSweepSeedsMax) {
    return at(
        d, line_of(node),
        fmt::format("'seeds': {} seeds, more than the limit of {}", array->size(), kSweepSeedsMax));
  }
  for (const toml::node& item : *array) {
    auto v = item.as_integer();
    if (v == nullptr || v->get() < 0) return bad(item);
    d.seeds.push_back(static_cast<uint64_t>(v->get()));
  }
  std::set<uint64_t> distinct(d.seeds.begin(), d.seeds.end());
  if (distinct.size() != d.seeds.size()) {
    return at(d, line_of(node), "'seeds': a seed is given twice");
  }
  d.spec.seeded = true;
  return Outcome();
}

const std::vector<std::string>& bench_columns() {
  static const std::vector<std::string> kColumns = {
      "job",         "rw",         "ops",        "iops",        "bw_MiB_s",
      "lat_mean_us", "lat_p50_us", "lat_p99_us", "lat_p999_us", "write_amplification",
      "errors"};
  return kColumns;
}

const std::vector<std::string>& experiment_columns() {
  static const std::vector<std::string> kColumns = {"member", "quantity", "unit",
                                                    "paper",  "measured", "kind"};
  return kColumns;
}

std::vector<std::string> table_columns(const SweepSpec& spec) {
  std::vector<std::string> columns = {"point"};
  for (const auto& axis : spec.axes) columns.push_back(axis);
  if (spec.seeded) columns.push_back("seed");
  const auto& tail = spec.kind == SweepSpec::Kind::kBench ? bench_columns() : experiment_columns();
  columns.insert(columns.end(), tail.begin(), tail.end());
  return columns;
}

Outcome read_plot(Draft& d, const toml::node& node) {
  const toml::table* table = node.as_table();
  if (table == nullptr) return at(d, line_of(node), "'plot' must be a table ([plot])");
  d.plot_line = line_of(node);
  SweepPlot plot;
  for (const auto& [key, value] : in_written_order(*table)) {
    uint32_t line = line_of(*value);
    if (key == "x" || key == "y" || key == "series") {
      auto text = value->as_string();
      if (text == nullptr) return at(d, line, fmt::format("[plot] '{}' is a column name", key));
      (key == "x" ? plot.x : key == "y" ? plot.y : plot.series) = text->get();
    } else if (key == "logx" || key == "logy") {
      auto flag = value->as_boolean();
      if (flag == nullptr) return at(d, line, fmt::format("[plot] '{}' is true or false", key));
      (key == "logx" ? plot.logx : plot.logy) = flag->get();
    } else {
      return at(
          d, line,
          fmt::format("[plot] '{}': not a plot key (x, y, series, logx, logy)", one_line(key)));
    }
  }
  d.spec.plot = plot;
  return Outcome();
}

std::string label_of(const SweepPoint& p, const SweepSpec& spec) {
  std::string label;
  auto add = [&](std::string_view part) {
    if (!label.empty()) label += ' ';
    label += part;
  };
  if (spec.kind == SweepSpec::Kind::kExperiment) add(p.member);
  for (const auto& c : p.coordinates) {
    if (!c.text.empty()) add(fmt::format("{}={}", one_line(c.key, 60), one_line(c.text, 60)));
  }
  if (p.seed) add(fmt::format("seed={}", *p.seed));
  if (label.empty()) add("the base configuration");
  return label;
}

// The overrides a point's configuration is built with, seed last.
std::vector<std::string> config_overrides(const SweepPoint& p) {
  std::vector<std::string> all = p.overrides;
  if (p.seed) all.push_back(fmt::format("seed={}", *p.seed));
  return all;
}

// The point's configuration; `presets` keeps each preset made (a preset is
// a TOML document: parsing it once per point would cost a large sweep
// seconds).
Result<Config> bench_config(const SweepPoint& p, std::map<std::string, Config>& presets) {
  auto found = presets.find(p.preset);
  if (found == presets.end()) {
    auto preset = preset_config(p.preset);
    if (!preset) return Error{preset.error()};
    found = presets.emplace(p.preset, *preset).first;
  }
  Config config = found->second;
  for (const std::string& assignment : config_overrides(p)) {
    auto applied = apply_override(config, assignment);
    if (!applied) return Error{applied.error()};
  }
  auto checked = check_device_config(config);
  if (!checked) return Error{checked.error()};
  return config;
}

Result<JobSpec> bench_job(const SweepPoint& p, std::string_view name) {
  JobSpec job;
  job.name = std::string(name);
  auto set = set_job_options(job, p.job);
  if (!set) return Error{set.error()};
  return job;
}

// Checks a point as far as can be done without running it; the line of
// what is wrong where one thing can be named.
// Whether `message` names `name` as a whole word (not inside a longer key).
bool names(std::string_view message, std::string_view name) {
  auto part_of_key = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
  };
  for (size_t at = message.find(name); at != std::string_view::npos;
       at = message.find(name, at + 1)) {
    size_t end = at + name.size();
    if ((at == 0 || !part_of_key(message[at - 1])) &&
        (end == message.size() || !part_of_key(message[end]) ||
         (message[end] == '.' && (end + 1 == message.size() || message[end + 1] == ' ')))) {
      return true;
    }
  }
  return false;
}

// The keys a point's message may name, with their lines, axes first.
using KeyLines = std::vector<std::pair<std::string, uint32_t>>;

// What a point runs, resolved: two points that resolve alike run the same
// thing, however their values were written ("4k" and "4096").
struct Resolved {
  std::string config;  // config_to_json
  JobSpec job;         // a bench point's job (a default one for experiments)
};

Result<Resolved> check_point(const Draft& d, const SweepPoint& p, const KeyLines& lines,
                             std::map<std::string, Config>& presets) {
  auto fail = [&](std::string_view message) {
    // The line of the first axis, `set` entry or [job] option the message
    // names, if any.
    uint32_t line = 0;
    for (const auto& [key, key_line] : lines) {
      if (names(message, key.starts_with(kJobPrefix) ? key.substr(kJobPrefix.size()) : key)) {
        line = key_line;
        break;
      }
    }
    return at(d, line, fmt::format("point {} ({}): {}", p.index, p.label, one_line(message)));
  };
  if (d.spec.kind == SweepSpec::Kind::kExperiment) {
    Config probe = default_config();
    for (const std::string& assignment : config_overrides(p)) {
      auto applied = apply_override(probe, assignment);
      if (!applied) return fail(applied.error());
    }
    return Resolved{config_to_json(probe), JobSpec{}};
  }
  auto config = bench_config(p, presets);
  if (!config) return fail(config.error());
  auto job = bench_job(p, d.spec.name);
  if (!job) return fail(job.error());
  auto info = device_info_of(*config);
  if (!info) return fail(info.error());
  auto checked = check_jobs({*job}, *info);
  if (!checked) return fail(checked.error());
  return Resolved{config_to_json(*config), *job};
}

// The axes: the list's, then the grid's; a key in both is an error.
Outcome set_axes(Draft& d) {
  for (const auto& name : d.list_axes) d.spec.axes.push_back(name);
  for (const auto& axis : d.grid) {
    if (d.list_axis_lines.contains(axis.name)) {
      return at(d, axis.line,
                fmt::format("'{}' is both a [grid] axis and a [[points]] key", axis.name));
    }
    d.spec.axes.push_back(axis.name);
  }
  // Two spellings of one job option (job.bs, job.blocksize) are one axis.
  std::map<std::string, std::string> options;
  for (const auto& name : d.spec.axes) {
    if (!name.starts_with(kJobPrefix)) continue;
    std::string option = canonical_job_option(std::string_view(name).substr(kJobPrefix.size()));
    auto [other, fresh] = options.emplace(option, name);
    if (!fresh) {
      auto list_line = d.list_axis_lines.find(name);
      uint32_t line = 0;
      if (list_line != d.list_axis_lines.end()) line = list_line->second;
      for (const auto& axis : d.grid) {
        if (axis.name == name) line = axis.line;
      }
      return at(d, line,
                fmt::format("'{}' and '{}' are the same job option", one_line(other->second),
                            one_line(name)));
    }
  }
  return Outcome();
}

Result<SweepSpec> expand(Draft& d) {
  SweepSpec& spec = d.spec;
  KeyLines lines;
  for (const auto& [name, line] : d.list_axis_lines) lines.emplace_back(name, line);
  for (const auto& axis : d.grid) lines.emplace_back(axis.name, axis.line);
  // A key is given once: in `set`, in [job], or as an axis.
  std::set<std::string> fixed;
  for (const auto& [entry, line] : d.set) {
    std::string name = entry.substr(0, entry.find('='));
    if (!fixed.insert(name).second) {
      return at(d, line, fmt::format("'set': '{}' is set twice", one_line(name)));
    }
    lines.emplace_back(name, line);
  }
  for (size_t i = 0; i < d.job.size(); ++i) {
    std::string name = "job." + d.job[i].first;
    if (!fixed.insert(name).second) {
      return at(d, d.job_lines[i], fmt::format("[job] '{}' is given twice", d.job[i].first));
    }
    lines.emplace_back(name, d.job_lines[i]);
  }
  auto job_name = [](const std::string& axis) {
    return axis.starts_with(kJobPrefix)
               ? "job." + canonical_job_option(std::string_view(axis).substr(kJobPrefix.size()))
               : axis;
  };
  for (const auto& [name, line] : d.list_axis_lines) {
    if (fixed.contains(job_name(name))) {
      return at(d, line,
                fmt::format("'{}' is in {} and varies too", one_line(name),
                            name.starts_with(kJobPrefix) ? "[job]" : "`set`"));
    }
  }
  for (const auto& axis : d.grid) {
    if (fixed.contains(job_name(axis.name))) {
      return at(d, axis.line,
                fmt::format("'{}' is in {} and varies too", one_line(axis.name),
                            axis.name.starts_with(kJobPrefix) ? "[job]" : "`set`"));
    }
  }
  std::map<std::string, Config> presets;
  std::map<std::string, size_t> seen;  // key -> the first point with it
  // Member, seed and configuration -> the points with them and their jobs.
  std::map<std::string, std::vector<std::pair<size_t, JobSpec>>> resolved_seen;

  // How many points, before making any.
  std::vector<std::string> members = d.members;
  if (spec.kind == SweepSpec::Kind::kBench) members = {""};
  size_t count = std::max<size_t>(d.list.size(), 1);
  auto multiply = [&](size_t factor) {
    if (factor != 0 && count > kSweepPointsMax / factor)
      count = kSweepPointsMax + 1;
    else
      count *= factor;
  };
  for (const auto& axis : d.grid) multiply(axis.values.size());
  multiply(members.size());
  multiply(std::max<size_t>(d.seeds.size(), 1));
  if (count > kSweepPointsMax) {
    return at(d, 0, fmt::format("more than {} points", kSweepPointsMax));
  }

  std::vector<ListEntry> list = d.list;
  if (list.empty()) list.emplace_back();
  std::vector<size_t> odometer(d.grid.size(), 0);
  std::vector<std::optional<uint64_t>> seeds;
  for (uint64_t s : d.seeds) seeds.emplace_back(s);
  if (seeds.empty()) seeds.emplace_back(std::nullopt);
  std::vector<std::string> base_set;
  for (const auto& [entry, line] : d.set) base_set.push_back(entry);

  for (const ListEntry& entry : list) {
    std::fill(odometer.begin(), odometer.end(), 0);
    for (;;) {
      for (const std::string& member : members) {
        for (const auto& seed : seeds) {
          SweepPoint p;
          p.index = spec.points.size();
          p.preset = d.preset;
          p.overrides = base_set;
          p.job = d.job;
          p.member = member;
          p.seed = seed;
          auto take = [&](const std::string& name, const std::string& text) {
            p.coordinates.push_back({name, text});
            if (name == "preset") {
              p.preset = text;
            } else if (name.starts_with(kJobPrefix)) {
              p.job.emplace_back(canonical_job_option(name.substr(kJobPrefix.size())), text);
            } else {
              p.overrides.push_back(name + "=" + text);
            }
          };
          for (const auto& name : d.list_axes) {
            auto it = entry.find(name);
            if (it == entry.end()) {
              p.coordinates.push_back({name, ""});
            } else {
              take(name, it->second.first);
            }
          }
          for (size_t a = 0; a < d.grid.size(); ++a)
            take(d.grid[a].name, d.grid[a].values[odometer[a]]);
          p.label = label_of(p, spec);
          auto checked = check_point(d, p, lines, presets);
          if (!checked) return Error{checked.error()};

          Json identity;
          identity["zonelab"] = zonelab_build_id();
          if (spec.kind == SweepSpec::Kind::kBench) {
            identity["kind"] = "bench";
            identity["preset"] = p.preset;
            identity["overrides"] = p.overrides;
            Json job = Json::array();
            for (const auto& [k, v] : p.job) job.push_back({k, v});
            identity["job"] = job;
          } else {
            identity["kind"] = "experiment";
            identity["experiment"] = spec.experiment;
            identity["member"] = p.member;
            identity["quick"] = spec.quick;
            identity["overrides"] = p.overrides;
          }
          identity["seed"] = p.seed ? Json(*p.seed) : Json(nullptr);
          p.identity = identity;
          p.key = sha256_hex(identity.dump());
          auto [first, fresh] = seen.emplace(p.key, p.index);
          if (!fresh) {
            return at(d, 0,
                      fmt::format("points {} and {} are the same ({}): a point is run once",
                                  first->second, p.index, p.label));
          }
          {
            // Grouped by what tells jobs apart cheaply; JobSpec's == decides
            // within a group (a field missing here only makes groups larger).
            const JobSpec& j = checked->job;
            std::string group = fmt::format(
                "{}\n{}\n{}\n{} {} {} {} {} {} {} {} {} {} {} {} {} {} {}", p.member,
                p.seed ? std::to_string(*p.seed) : "-", checked->config, static_cast<int>(j.kind),
                j.block_size_bytes, j.iodepth, j.numjobs, j.size_bytes, j.size_percent,
                j.offset_bytes, j.offset_percent, j.runtime_ns, j.rate_bytes_per_s,
                j.rwmixread_percent, j.fsync, j.log_interval_ns, j.stream, j.rate_iops);
            auto& alike = resolved_seen[group];
            for (const auto& [index, job] : alike) {
              if (job == checked->job) {
                return at(d, 0,
                          fmt::format("points {} and {} are the same configuration ({} and {}): "
                                      "a point is run once",
                                      index, p.index, spec.points[index].label, p.label));
              }
            }
            alike.emplace_back(p.index, checked->job);
          }
          spec.points.push_back(std::move(p));
        }
      }
      // The next grid combination: the last axis turns fastest.
      size_t a = d.grid.size();
      while (a > 0) {
        --a;
        if (++odometer[a] < d.grid[a].values.size()) break;
        odometer[a] = 0;
        if (a == 0) {
          a = SIZE_MAX;
          break;
        }
      }
      if (d.grid.empty() || a == SIZE_MAX) break;
    }
  }
  return std::move(spec);
}

Outcome check_plot(Draft& d) {
  SweepSpec& spec = d.spec;
  std::vector<std::string> columns = table_columns(spec);
  if (!spec.plot) {
    if (spec.kind != SweepSpec::Kind::kBench) return Outcome();
    SweepPlot plot;
    plot.x = spec.axes.empty() ? (spec.seeded ? "seed" : "point") : spec.axes[0];
    plot.y = "iops";
    if (spec.axes.size() >= 2) plot.series = spec.axes[1];
    spec.plot = plot;
    return Outcome();
  }
  SweepPlot& plot = *spec.plot;
  if (plot.x.empty() || plot.y.empty()) return at(d, d.plot_line, "[plot]: give x and y");
  for (const std::string* name : {&plot.x, &plot.y, &plot.series}) {
    if (name->empty()) continue;
    if (std::find(columns.begin(), columns.end(), *name) == columns.end()) {
      std::string all;
      for (const auto& c : columns) all += (all.empty() ? "" : ", ") + c;
      return at(
          d, d.plot_line,
          fmt::format("[plot]: '{}' is not a column (the columns: {})", one_line(*name), all));
    }
  }
  return Outcome();
}

bool valid_name(std::string_view name) {
  if (name.empty() || name.size() > kSweepNameMaxChars || name.front() == '.') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  });
}

Result<std::string> read_file_bounded(const fs::path& path, uint64_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{std::strerror(errno)};
  std::string text;
  char buffer[65536];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    text.append(buffer, static_cast<size_t>(in.gcount()));
    if (text.size() > max_bytes) return Error{fmt::format("larger than {} bytes", max_bytes)};
  }
  return text;
}

Outcome write_file_atomically(const fs::path& path, std::string_view text) {
  // Unique among the writers of one cache: processes on several hosts may
  // share it (run-point in a Slurm array), so the host's name is in it.
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  fs::path tmp = path;
  tmp += fmt::format(".tmp.{}.{}.{}", one_line(host, 64), getpid(),
                     std::hash<std::thread::id>{}(std::this_thread::get_id()));
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Error{fmt::format("{}: {}", tmp.string(), std::strerror(errno))};
  if (auto written = write_all(fd, text); !written) {
    ::close(fd);
    ::unlink(tmp.c_str());
    return Error{fmt::format("{}: {}", tmp.string(), written.error())};
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    return Error{fmt::format("{}: {}", tmp.string(), std::strerror(e))};
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    return Error{fmt::format("{}: {}", path.string(), std::strerror(e))};
  }
  return Outcome();
}

// A value in a result document (from this build, a worker or the cache: its
// shape is checked, not assumed); a missing value reads as 0 or "", a
// value of another kind or a number that is not finite is a problem.
class ResultReader {
 public:
  const Json* at(const Json& j, std::initializer_list<const char*> path) {
    const Json* node = &j;
    for (const char* key : path) {
      if (!node->is_object()) {
        problem("is not an object where '" + std::string(key) + "' should be");
        return nullptr;
      }
      auto it = node->find(key);
      if (it == node->end()) return nullptr;
      node = &*it;
    }
    return node;
  }
  double number(const Json& j, std::initializer_list<const char*> path) {
    const Json* node = at(j, path);
    if (node == nullptr || node->is_null()) return 0;
    if (!node->is_number() || !std::isfinite(node->get<double>())) {
      problem("has a value that is not a finite number");
      return 0;
    }
    return node->get<double>();
  }
  uint64_t count(const Json& j, std::initializer_list<const char*> path) {
    const Json* node = at(j, path);
    if (node == nullptr || node->is_null()) return 0;
    if (!node->is_number_unsigned()) {
      problem("has a count that is not a whole number from 0");
      return 0;
    }
    return node->get<uint64_t>();
  }
  std::string text(const Json& j, const char* key) {
    const Json* node = at(j, {key});
    if (node == nullptr) return "";
    if (!node->is_string()) {
      problem("has a '" + std::string(key) + "' that is not text");
      return "";
    }
    return node->get<std::string>();
  }
  const Json& list(const Json& j, const char* key) {
    static const Json kEmpty = Json::array();
    const Json* node = at(j, {key});
    if (node == nullptr) return kEmpty;
    if (!node->is_array()) {
      problem("has a '" + std::string(key) + "' that is not a list");
      return kEmpty;
    }
    for (const Json& item : *node) {
      if (!item.is_object()) {
        problem("has an entry of '" + std::string(key) + "' that is not an object");
        return kEmpty;
      }
    }
    return *node;
  }
  const std::string& problem() const { return problem_; }

 private:
  void problem(std::string what) {
    if (problem_.empty()) problem_ = std::move(what);
  }
  std::string problem_;
};

}  // namespace

std::string_view zonelab_build_id() { return ZONELAB_BUILD_ID; }

Result<SweepSpec> parse_sweep_spec_text(std::string_view text, std::string_view origin) {
  Draft d;
  d.where = one_line(origin);
  auto parsed = parse_toml(text, origin);
  if (!parsed) return Error{parsed.error()};
  const toml::table& root = *parsed;
  d.spec.origin = d.where;
  d.spec.text = std::string(text);
  // The stem of the output files: `name`, else the spec file's stem.
  std::string stem = fs::path(std::string(origin)).stem().string();
  d.spec.name = valid_name(stem) ? stem : "sweep";

  // The kind first: what else is allowed depends on it.
  if (const toml::node* e = root.get("experiment")) {
    auto name = e->as_string();
    if (name == nullptr) return at(d, line_of(*e), "'experiment' is the name of a set");
    const ExperimentSet* set = find_experiment_set(name->get());
    if (set == nullptr) {
      return at(d, line_of(*e),
                fmt::format("no experiment set '{}' (the sets: {})", one_line(name->get()),
                            experiment_set_names()));
    }
    if (!set->deterministic) {
      return at(d, line_of(*e),
                fmt::format("'{}' reads the wall clock (real RocksDB): a sweep runs only sets "
                            "whose results are a function of their configuration",
                            set->name));
    }
    d.spec.kind = SweepSpec::Kind::kExperiment;
    d.spec.experiment = set->name;
    for (const Experiment& member : set->experiments) d.members.emplace_back(member.name);
  }
  bool members_given = false;
  for (const auto& [key, node] : in_written_order(root)) {
    uint32_t line = line_of(*node);
    Outcome ok = Outcome();
    if (key == "experiment") {
      continue;
    } else if (key == "name") {
      auto name = node->as_string();
      if (name == nullptr || !valid_name(name->get())) {
        return at(d, line,
                  fmt::format("'name': 1 to {} letters, digits, '-', '_' or '.' (not first)",
                              kSweepNameMaxChars));
      }
      d.spec.name = name->get();
    } else if (key == "preset") {
      if (d.spec.kind == SweepSpec::Kind::kExperiment) {
        return at(d, line, "'preset': an experiment's members choose their presets");
      }
      auto name = node->as_string();
      if (name == nullptr) return at(d, line, "'preset' is a preset's name");
      d.preset = name->get();
      d.preset_line = line;
      if (!preset_config(d.preset)) {
        std::string names;
        for (const auto& p : preset_names()) names += (names.empty() ? "" : ", ") + p;
        return at(d, line,
                  fmt::format("no preset '{}' (the presets: {})", one_line(d.preset), names));
      }
    } else if (key == "set") {
      std::vector<std::string> entries;
      ok = read_string_list(d, *node, "set", entries);
      if (ok) {
        const toml::array& array = *node->as_array();
        for (size_t i = 0; i < entries.size(); ++i) {
          uint32_t entry_line = line_of(*array.get(i));
          if (entries[i].find('=') == std::string::npos) {
            return at(d, entry_line,
                      fmt::format("'set': '{}' is not KEY=VALUE", one_line(entries[i])));
          }
          std::string name = entries[i].substr(0, entries[i].find('='));
          auto kind = axis_kind(d, name, entry_line);
          if (!kind) return Error{kind.error()};
          if (*kind != AxisKind::kConfig) {
            return at(d, entry_line,
                      fmt::format("'set': '{}' is not a configuration key", one_line(name)));
          }
          d.set.emplace_back(entries[i], entry_line);
        }
      }
    } else if (key == "seeds") {
      ok = read_seeds(d, *node);
    } else if (key == "members") {
      if (d.spec.kind != SweepSpec::Kind::kExperiment) {
        return at(d, line, "'members': only with experiment = \"SET\"");
      }
      std::vector<std::string> names;
      ok = read_string_list(d, *node, "members", names);
      if (ok) {
        const ExperimentSet* set = find_experiment_set(d.spec.experiment);
        for (const auto& name : names) {
          if (find_experiment(*set, name) == nullptr) {
            std::string all;
            for (const auto& m : d.members) all += (all.empty() ? "" : ", ") + m;
            return at(d, line,
                      fmt::format("'members': {} has no experiment '{}' (it has: {})",
                                  d.spec.experiment, one_line(name), all));
          }
        }
        if (names.empty()) return at(d, line, "'members': none named");
        std::set<std::string> distinct(names.begin(), names.end());
        if (distinct.size() != names.size()) {
          return at(d, line, "'members': a member is named twice");
        }
        d.members = names;
        members_given = true;
      }
    } else if (key == "quick") {
      if (d.spec.kind != SweepSpec::Kind::kExperiment) {
        return at(d, line, "'quick': only with experiment = \"SET\"");
      }
      auto flag = node->as_boolean();
      if (flag == nullptr) return at(d, line, "'quick' is true or false");
      d.spec.quick = flag->get();
    } else if (key == "job") {
      ok = read_job(d, *node);
    } else if (key == "grid") {
      ok = read_grid(d, *node);
    } else if (key == "points") {
      ok = read_list(d, *node);
    } else if (key == "plot") {
      ok = read_plot(d, *node);
    } else {
      return at(d, line,
                fmt::format("unknown key '{}' (a sweep spec has name, preset, set, seeds, "
                            "experiment, members, quick, [job], [grid], [[points]], [plot])",
                            one_line(key)));
    }
    if (!ok) return Error{ok.error()};
  }
  (void)members_given;
  if (d.spec.kind == SweepSpec::Kind::kBench && d.job.empty()) {
    return at(d, 0, "no [job] (what each point runs) and no experiment = \"SET\"");
  }
  auto axes = set_axes(d);
  if (!axes) return Error{axes.error()};
  auto plotted = check_plot(d);
  if (!plotted) return Error{plotted.error()};
  return expand(d);
}

Result<SweepSpec> load_sweep_spec(const std::string& path) {
  auto text = read_text_file(path, "sweep spec");
  if (!text) return Error{text.error()};
  return parse_sweep_spec_text(*text, path);
}

Result<SweepSpec> experiment_set_sweep(std::string_view set_name, bool quick) {
  std::string text = fmt::format("experiment = \"{}\"\nquick = {}\n", set_name, quick);
  auto spec = parse_sweep_spec_text(text, set_name);
  if (!spec) return Error{spec.error()};
  SweepSpec out = *spec;
  out.name = std::string(set_name);
  return out;
}

Result<SweepSpec> load_sweep_spec_or_set(const std::string& spec_or_set, bool quick) {
  std::error_code ec;
  if (find_experiment_set(spec_or_set) != nullptr && !fs::exists(spec_or_set, ec)) {
    return experiment_set_sweep(spec_or_set, quick);
  }
  if (!fs::exists(spec_or_set, ec)) {
    return Error{fmt::format("{}: no such sweep spec, nor an experiment set (the sets: {})",
                             one_line(spec_or_set), experiment_set_names())};
  }
  return load_sweep_spec(spec_or_set);
}

Result<std::string> run_sweep_point(const SweepSpec& spec, size_t index) {
  if (index >= spec.points.size()) {
    return Error{
        fmt::format("{}: no point {} (it has {}, from 0)", spec.origin, index, spec.points.size())};
  }
  const SweepPoint& p = spec.points[index];
  if (spec.kind == SweepSpec::Kind::kExperiment) {
    const ExperimentSet* set = find_experiment_set(spec.experiment);
    const Experiment* member = set == nullptr ? nullptr : find_experiment(*set, p.member);
    if (member == nullptr)
      return Error{fmt::format("no experiment {}/{}", spec.experiment, p.member)};
    PresetOverridesScope scope(config_overrides(p));
    RunOptions options;
    options.quick = spec.quick;
    auto result = member->run(options);
    if (!result) {
      return Error{fmt::format("point {} ({}): {}", p.index, p.label, result.error())};
    }
    ExperimentRun run{member, std::move(*result)};
    Json doc = experiment_json(*set, run, spec.quick);
    doc.erase("plot");
    doc.erase("files");
    return doc.dump();
  }
  std::map<std::string, Config> presets;
  auto config = bench_config(p, presets);
  if (!config) return Error{fmt::format("point {} ({}): {}", p.index, p.label, config.error())};
  auto job = bench_job(p, spec.name);
  if (!job) return Error{fmt::format("point {} ({}): {}", p.index, p.label, job.error())};
  auto stack = Stack::make(*config);
  if (!stack) return Error{fmt::format("point {} ({}): {}", p.index, p.label, stack.error())};
  Stack& s = **stack;
  std::vector<JobSpec> jobs = {*job};
  for (auto checked : {check_jobs(jobs, s.info()), check_jobs_on_device(jobs, s.device())}) {
    if (!checked) {
      return Error{fmt::format("point {} ({}): {}", p.index, p.label, checked.error())};
    }
  }
  RunResult run = run_jobs(s.device(), s.sim(), jobs, s.config().seed);
  Json doc;
  Json list = Json::array();
  for (const JobResult& r : run.jobs) list.push_back(job_result_json(r));
  doc["jobs"] = list;
  uint64_t span = run.end_ns - run.start_ns;
  s.inspect(
      [&](const ModeledDevice& device) { doc["device"] = device_counters_json(device, span); });
  doc["virtual_time_ns"] = span;
  doc["commands"] = run.commands;
  return doc.dump();
}

fs::path PointCache::default_dir() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && xdg[0] == '/') return fs::path(xdg) / "zonelab" / "sweep";
  const char* home = std::getenv("HOME");
  return fs::path(home != nullptr && home[0] != '\0' ? home : "/tmp") / ".cache" / "zonelab" /
         "sweep";
}

fs::path PointCache::path_of(const SweepPoint& point) const {
  return dir_ / point.key.substr(0, 2) / (point.key + ".json");
}

PointCache::Lookup PointCache::lookup(const SweepPoint& point) const {
  Lookup out;
  fs::path path = path_of(point);
  std::error_code ec;
  if (!fs::exists(path, ec)) return out;
  if (!fs::is_regular_file(path, ec)) {
    out.problem = "not a regular file";
    return out;
  }
  auto text = read_file_bounded(path, kCacheEntryMaxBytes);
  if (!text) {
    out.problem = text.error();
    return out;
  }
  Json entry = Json::parse(*text, nullptr, false);
  if (entry.is_discarded() || !entry.is_object()) {
    out.problem = "not a JSON document";
    return out;
  }
  auto string_at = [&](const char* key) -> std::string {
    auto it = entry.find(key);
    return it != entry.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  if (string_at("format") != kCacheFormat) {
    out.problem = "not a zonelab sweep point";
    return out;
  }
  if (string_at("key") != point.key || !entry.contains("identity") ||
      entry["identity"] != point.identity) {
    out.problem = "it holds another point";
    return out;
  }
  std::string result = string_at("result");
  if (result.empty() || sha256_hex(result) != string_at("result_sha256")) {
    out.problem = "its result does not match its digest";
    return out;
  }
  out.result = std::move(result);
  return out;
}

Outcome PointCache::store(const SweepPoint& point, std::string_view result) const {
  fs::path path = path_of(point);
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) return Error{fmt::format("{}: {}", path.parent_path().string(), ec.message())};
  Json entry;
  entry["format"] = kCacheFormat;
  entry["key"] = point.key;
  entry["identity"] = point.identity;
  entry["result_sha256"] = sha256_hex(result);
  entry["result"] = std::string(result);
  return write_file_atomically(path, entry.dump() + "\n");
}

Json point_json(const SweepPoint& point) {
  Json j;
  j["index"] = point.index;
  j["key"] = point.key;
  j["label"] = point.label;
  Json coordinates = Json::object();
  for (const auto& c : point.coordinates) coordinates[c.key] = c.text;
  j["coordinates"] = coordinates;
  if (!point.member.empty()) j["member"] = point.member;
  j["seed"] = point.seed ? Json(*point.seed) : Json(nullptr);
  return j;
}

Result<SweepFiles> sweep_files(const SweepSpec& spec, const std::vector<std::string>& results) {
  if (results.size() != spec.points.size()) {
    return Error{fmt::format("{} results for {} points", results.size(), spec.points.size())};
  }
  Table table(table_columns(spec));
  Json points = Json::array();
  for (const SweepPoint& p : spec.points) {
    Json result = Json::parse(results[p.index], nullptr, false);
    if (result.is_discarded() || !result.is_object()) {
      return Error{
          fmt::format("point {} ({}): its result is not a JSON document", p.index, p.label)};
    }
    std::vector<Cell> head = {static_cast<uint64_t>(p.index)};
    for (const auto& c : p.coordinates) head.emplace_back(c.text);
    if (spec.seeded) head.emplace_back(p.seed ? static_cast<uint64_t>(*p.seed) : 0);
    ResultReader read;
    std::vector<std::vector<Cell>> rows;
    if (spec.kind == SweepSpec::Kind::kBench) {
      double wa = read.number(result, {"device", "write_amplification"});
      for (const Json& job : read.list(result, "jobs")) {
        std::vector<Cell> row = head;
        row.emplace_back(read.text(job, "name"));
        row.emplace_back(read.text(job, "rw"));
        row.emplace_back(read.count(job, {"ops"}));
        row.emplace_back(read.number(job, {"iops"}));
        row.emplace_back(read.number(job, {"bw_bytes_per_s"}) / (1024.0 * 1024.0));
        for (const char* key : {"mean", "p50", "p99", "p999"}) {
          row.emplace_back(read.number(job, {"lat_ns", key}) / 1000.0);
        }
        row.emplace_back(wa);
        row.emplace_back(read.count(job, {"errors"}));
        rows.push_back(std::move(row));
      }
    } else {
      for (const Json& c : read.list(result, "comparison")) {
        std::vector<Cell> row = head;
        row.emplace_back(p.member);
        row.emplace_back(read.text(c, "quantity"));
        row.emplace_back(read.text(c, "unit"));
        const Json* paper = read.at(c, {"paper"});
        if (paper != nullptr && !paper->is_null()) {
          row.emplace_back(read.number(c, {"paper"}));
        } else {
          row.emplace_back(std::string());
        }
        row.emplace_back(read.number(c, {"measured"}));
        row.emplace_back(read.text(c, "kind"));
        rows.push_back(std::move(row));
      }
    }
    if (!read.problem().empty()) {
      return Error{fmt::format("point {} ({}): its result {}", p.index, p.label, read.problem())};
    }
    for (auto& row : rows) table.add_row(std::move(row));
    Json item = point_json(p);
    item["result"] = std::move(result);
    points.push_back(std::move(item));
  }

  SweepFiles files;
  files.csv = table.to_csv();
  Json doc;
  doc["sweep"] = spec.name;
  doc["kind"] = spec.kind == SweepSpec::Kind::kBench ? "bench" : "experiment";
  if (spec.kind == SweepSpec::Kind::kExperiment) {
    doc["experiment"] = spec.experiment;
    doc["quick"] = spec.quick;
  }
  doc["zonelab"] = zonelab_build_id();
  doc["axes"] = spec.axes;
  doc["columns"] = table.columns();
  Json rows = Json::array();
  for (const auto& row : table.rows()) {
    Json cells = Json::array();
    for (const Cell& cell : row) {
      std::visit([&](const auto& value) { cells.push_back(value); }, cell);
    }
    rows.push_back(std::move(cells));
  }
  doc["rows"] = std::move(rows);
  doc["points"] = std::move(points);
  if (spec.plot) {
    const SweepPlot& plot = *spec.plot;
    doc["plot"] = {{"x", plot.x},        {"y", plot.y},       {"series", plot.series},
                   {"xlabel", plot.x},   {"ylabel", plot.y},  {"series_label", plot.series},
                   {"title", spec.name}, {"logx", plot.logx}, {"logy", plot.logy}};
    files.plottable = true;
  }
  doc["files"] = {{"csv", spec.name + ".csv"}, {"png", spec.name + ".png"}};
  files.json = doc.dump(2) + "\n";
  return files;
}

Result<fs::path> write_sweep_files(const SweepSpec& spec, const SweepFiles& files,
                                   const fs::path& out) {
  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec) return Error{fmt::format("--out {}: {}", out.string(), ec.message())};
  if (!fs::is_directory(out, ec))
    return Error{fmt::format("--out {}: not a directory", out.string())};
  for (const auto& [name, text] :
       {std::pair{spec.name + ".csv", &files.csv}, std::pair{spec.name + ".json", &files.json}}) {
    fs::path path = out / name;
    if (fs::is_symlink(path, ec)) {
      return Error{fmt::format("--out {}: {} is a symlink; zonelab writes no file through one",
                               out.string(), name)};
    }
    auto written = write_file_atomically(path, *text);
    if (!written) return Error{written.error()};
  }
  return out / (spec.name + ".json");
}

}  // namespace zonelab
