// Job options and job files; see job.h.
#include "workload/job.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "common/text_input.h"
#include "common/units.h"

namespace zonelab {
namespace {

constexpr std::array<std::string_view, 7> kKindNames{"read",   "randread", "write",     "append",
                                                     "finish", "reset",    "softfinish"};
// The kinds a job file may name in `rw`: the data kinds, which come first.
constexpr size_t kDataKindCount = 4;

Result<std::pair<uint32_t, uint32_t>> parse_zone_range(std::string_view text) {
  auto dash = text.find('-');
  std::string_view first = text.substr(0, dash);
  std::string_view last = dash == std::string_view::npos ? text : text.substr(dash + 1);
  auto a = parse_count(first);
  auto b = parse_count(last);
  if (!a || !b || *a > *b || *b > UINT32_MAX) {
    return Error{fmt::format("zones '{}': expected A-B with A <= B, e.g. 0-15", text)};
  }
  return std::pair<uint32_t, uint32_t>{static_cast<uint32_t>(*a), static_cast<uint32_t>(*b)};
}

Result<uint64_t> bounded_count(std::string_view key, std::string_view value, uint64_t max) {
  auto n = parse_count(value);
  if (!n) return Error{fmt::format("{}: {}", key, n.error())};
  if (*n == 0 || *n > max) {
    return Error{fmt::format("{} = {} is out of range [1, {}]", key, value, max)};
  }
  return *n;
}

}  // namespace

std::string_view job_kind_name(JobKind kind) { return kKindNames[static_cast<size_t>(kind)]; }

bool is_management(JobKind kind) {
  return kind == JobKind::kFinish || kind == JobKind::kReset || kind == JobKind::kSoftfinish;
}

std::optional<JobKind> job_kind_from_name(std::string_view name) {
  for (size_t i = 0; i < kDataKindCount; ++i) {
    if (kKindNames[i] == name) return static_cast<JobKind>(i);
  }
  return std::nullopt;
}

Outcome set_job_option(JobSpec& job, std::string_view key, std::string_view value) {
  if (key == "name") {
    if (value.empty() || value.size() > 64) return Error{"name must be 1-64 characters"};
    job.name = std::string(value);
  } else if (key == "rw") {
    auto kind = job_kind_from_name(value);
    if (!kind)
      return Error{fmt::format("rw = '{}': expected read, randread, write or append", value)};
    job.kind = *kind;
  } else if (key == "bs") {
    auto bs = parse_size_bytes(value);
    if (!bs) return Error{fmt::format("bs: {}", bs.error())};
    if (*bs == 0 || *bs > (1ULL << 30))
      return Error{fmt::format("bs = {} is out of range (1 B to 1 GiB)", value)};
    job.block_size_bytes = *bs;
  } else if (key == "iodepth") {
    auto n = bounded_count(key, value, 65536);
    if (!n) return Error{n.error()};
    job.iodepth = static_cast<uint32_t>(*n);
  } else if (key == "numjobs") {
    auto n = bounded_count(key, value, 4096);
    if (!n) return Error{n.error()};
    job.numjobs = static_cast<uint32_t>(*n);
  } else if (key == "zones") {
    auto range = parse_zone_range(value);
    if (!range) return Error{range.error()};
    job.zones = *range;
  } else if (key == "size") {
    if (!value.empty() && value.back() == '%') {
      auto pct = parse_count(value.substr(0, value.size() - 1));
      if (!pct || *pct == 0 || *pct > 100000) {
        return Error{fmt::format("size = {}: a percentage must be 1% to 100000%", value)};
      }
      job.size_percent = static_cast<double>(*pct);
      job.size_bytes = 0;
    } else {
      auto bytes = parse_size_bytes(value);
      if (!bytes || *bytes == 0)
        return Error{
            fmt::format("size = '{}': expected bytes (1GiB) or a percentage (400%)", value)};
      job.size_bytes = *bytes;
      job.size_percent = 0;
    }
  } else if (key == "runtime") {
    auto ns = parse_time_ns(value);
    if (!ns || *ns == 0)
      return Error{fmt::format("runtime = '{}': expected a time such as 2s", value)};
    job.runtime_ns = *ns;
  } else if (key == "rate") {
    auto rate = parse_rate_bytes_per_s(value);
    if (!rate || *rate == 0)
      return Error{fmt::format("rate = '{}': expected a rate such as 100MiB/s", value)};
    job.rate_bytes_per_s = *rate;
  } else if (key == "zone_order") {
    if (value != "sequential" && value != "random") {
      return Error{
          fmt::format("zone_order = '{}': expected sequential or random", one_line(value, 32))};
    }
    job.random_zones = value == "random";
  } else if (key == "log_interval") {
    auto ns = parse_time_ns(value);
    if (!ns || *ns < 1000)
      return Error{fmt::format("log_interval = '{}': expected a time of 1us or more, such as 100ms",
                               one_line(value, 32))};
    job.log_interval_ns = *ns;
  } else if (key == "stream") {
    auto n = parse_count(value);
    if (!n || *n > 65535)
      return Error{fmt::format("stream = '{}': expected 0-65535", one_line(value, 32))};
    job.stream = static_cast<uint16_t>(*n);
  } else if (key == "stonewall") {
    if (value != "true" && value != "false") return Error{"stonewall must be true or false"};
    job.stonewall = value == "true";
  } else {
    return Error{fmt::format("unknown job option '{}'", one_line(key, 64))};
  }
  return {};
}

namespace {

Outcome apply_job_table(JobSpec& job, const toml::table& table, std::string_view origin) {
  for (const auto& [key, node] : table) {
    std::string value;
    if (auto s = node.as_string()) {
      value = s->get();
    } else if (auto i = node.as_integer()) {
      value = fmt::format("{}", i->get());
    } else if (auto b = node.as_boolean()) {
      value = b->get() ? "true" : "false";
    } else {
      return Error{fmt::format("{}: job option '{}' must be a string, integer or boolean", origin,
                               key.str())};
    }
    auto outcome = set_job_option(job, key.str(), value);
    if (!outcome) return Error{fmt::format("{}: [{}] {}", origin, job.name, outcome.error())};
  }
  return {};
}

}  // namespace

Result<std::vector<JobSpec>> parse_job_file_text(std::string_view text, std::string_view origin) {
  auto parsed = parse_toml(text, origin);
  if (!parsed) return Error{parsed.error()};
  const toml::table& root = *parsed;
  JobSpec global;
  if (auto* g = root["global"].as_table()) {
    auto outcome = apply_job_table(global, *g, origin);
    if (!outcome) return Error{outcome.error()};
  }
  // TOML tables are kept sorted by key; jobs run in the order they are written.
  std::vector<std::pair<uint32_t, std::string_view>> order;
  for (const auto& [name, node] : root) {
    if (name.str() != "global") order.push_back({node.source().begin.line, name.str()});
  }
  std::sort(order.begin(), order.end());
  std::vector<JobSpec> jobs;
  for (const auto& [line, name_view] : order) {
    toml::key name(name_view);
    const toml::node& node = *root.get(name_view);
    const auto* table = node.as_table();
    if (table == nullptr) {
      return Error{
          fmt::format("{}: '{}' must be a job table ([{}])", origin, name.str(), name.str())};
    }
    JobSpec job = global;
    job.name = std::string(name.str());
    auto outcome = apply_job_table(job, *table, origin);
    if (!outcome) return Error{outcome.error()};
    jobs.push_back(std::move(job));
  }
  if (jobs.empty()) return Error{fmt::format("{}: no job tables", origin)};
  if (jobs.size() > 256) return Error{fmt::format("{}: more than 256 jobs", origin)};
  return jobs;
}

Result<std::vector<JobSpec>> parse_job_file(const std::string& path) {
  auto text = read_text_file(path, "job file");
  if (!text) return Error{text.error()};
  return parse_job_file_text(*text, path);
}

}  // namespace zonelab
