// Job options and job files; see job.h. Every option is one row of
// kJobOptions below: its name, fio's other names for it, its help, and the
// function that reads its value. Flags, job files, `bench --help` and the
// option tables in docs/ all come from that one list.
#include "workload/job.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>

#include "common/text_input.h"
#include "common/units.h"

namespace zonelab {
namespace {

constexpr std::array<std::string_view, 10> kKindNames{
    "read",  "randread",   "write",     "append", "finish",
    "reset", "softfinish", "randwrite", "randrw", "trim"};
// What `rw` takes: the data kinds, in the order help lists them.
constexpr std::array<JobKind, 7> kDataKinds{JobKind::kRead,   JobKind::kRandRead,  JobKind::kWrite,
                                            JobKind::kAppend, JobKind::kRandWrite, JobKind::kRandRw,
                                            JobKind::kTrim};

// A user's value inside a one-line message.
std::string shown(std::string_view value) { return one_line(value, 64); }

Result<bool> parse_bool(std::string_view value) {
  if (value == "true" || value == "1") return true;
  if (value == "false" || value == "0") return false;
  return Error{fmt::format("'{}' is not true or false (or 1 or 0)", shown(value))};
}

// A whole number from `min` to `max`, named as written when it is not.
Result<uint64_t> bounded_count(std::string_view value, uint64_t min, uint64_t max) {
  auto n = parse_count(value);
  if (!n) return Error{n.error()};
  if (*n < min || *n > max) {
    return Error{fmt::format("'{}' is out of range [{}, {}]", shown(value), min, max)};
  }
  return *n;
}

// "400%" -> 400; nullopt if the value is not a percentage.
std::optional<Result<uint64_t>> percentage(std::string_view value, uint64_t min, uint64_t max) {
  if (value.empty() || value.back() != '%') return std::nullopt;
  auto pct = parse_count(value.substr(0, value.size() - 1));
  if (!pct || *pct < min || *pct > max) {
    return Result<uint64_t>(Error{fmt::format(
        "'{}': a percentage must be a whole number from {}% to {}%", shown(value), min, max)});
  }
  return Result<uint64_t>(*pct);
}

Result<std::pair<uint32_t, uint32_t>> parse_zone_range(std::string_view text) {
  auto dash = text.find('-');
  std::string_view first = text.substr(0, dash);
  std::string_view last = dash == std::string_view::npos ? text : text.substr(dash + 1);
  auto a = parse_count(first);
  auto b = parse_count(last);
  if (!a || !b || *a > *b || *b > UINT32_MAX) {
    return Error{
        fmt::format("'{}': expected a zone range A-B with A <= B, e.g. 0-15", shown(text))};
  }
  return std::pair<uint32_t, uint32_t>{static_cast<uint32_t>(*a), static_cast<uint32_t>(*b)};
}

// --- One reader per option ---------------------------------------------------

Outcome set_name(JobSpec& job, std::string_view value) {
  bool printable = std::none_of(value.begin(), value.end(), [](char c) {
    auto u = static_cast<unsigned char>(c);
    return u < 0x20 || u == 0x7f;
  });
  if (value.empty() || value.size() > kJobNameMaxChars || !printable) {
    return Error{fmt::format("'{}': a job name is 1 to {} printable characters", shown(value),
                             kJobNameMaxChars)};
  }
  job.name = std::string(value);
  return {};
}

Outcome set_rw(JobSpec& job, std::string_view value) {
  auto kind = job_kind_from_name(value);
  if (!kind) {
    return Error{fmt::format(
        "'{}' is not one of read, randread, write, append, randwrite, randrw, trim", shown(value))};
  }
  job.kind = *kind;
  return {};
}

Outcome set_bs(JobSpec& job, std::string_view value) {
  auto bs = parse_job_size_bytes(value, job.kb_base);
  if (!bs) return Error{bs.error()};
  if (*bs == 0 || *bs > kJobBlockSizeMaxBytes) {
    return Error{fmt::format("'{}' is out of range (1 B to 1 GiB)", shown(value))};
  }
  job.block_size_bytes = *bs;
  return {};
}

Outcome set_iodepth(JobSpec& job, std::string_view value) {
  auto n = bounded_count(value, 1, kJobIodepthMax);
  if (!n) return Error{n.error()};
  job.iodepth = static_cast<uint32_t>(*n);
  return {};
}

Outcome set_numjobs(JobSpec& job, std::string_view value) {
  auto n = bounded_count(value, 1, kJobNumjobsMax);
  if (!n) return Error{n.error()};
  job.numjobs = static_cast<uint32_t>(*n);
  return {};
}

Outcome set_zones(JobSpec& job, std::string_view value) {
  auto range = parse_zone_range(value);
  if (!range) return Error{range.error()};
  job.zones = *range;
  return {};
}

Outcome set_size(JobSpec& job, std::string_view value) {
  if (auto pct = percentage(value, 1, kJobSizePercentMax)) {
    if (!*pct) return Error{pct->error()};
    job.size_percent = static_cast<double>(**pct);
    job.size_bytes = 0;
    return {};
  }
  auto bytes = parse_job_size_bytes(value, job.kb_base);
  if (!bytes) return Error{bytes.error()};
  if (*bytes == 0) return Error{fmt::format("'{}': a size must be above 0", shown(value))};
  job.size_bytes = *bytes;
  job.size_percent = 0;
  return {};
}

Outcome set_offset(JobSpec& job, std::string_view value) {
  if (auto pct = percentage(value, 0, 99)) {
    if (!*pct) return Error{pct->error()};
    job.offset_percent = static_cast<double>(**pct);
    job.offset_bytes = 0;
    return {};
  }
  auto bytes = parse_job_size_bytes(value, job.kb_base);
  if (!bytes) return Error{bytes.error()};
  job.offset_bytes = *bytes;
  job.offset_percent = 0;
  return {};
}

// A time option: fio's syntax, above 0 and at most kJobRuntimeMaxNs.
Result<uint64_t> bounded_time(std::string_view value, uint64_t min_ns) {
  auto ns = parse_job_time_ns(value);
  if (!ns) return Error{ns.error()};
  if (*ns < min_ns || *ns > kJobRuntimeMaxNs) {
    return Error{fmt::format("'{}' is out of range ({} to 3600s; a bare number is seconds)",
                             shown(value), format_time(min_ns))};
  }
  return *ns;
}

Outcome set_runtime(JobSpec& job, std::string_view value) {
  auto ns = bounded_time(value, 1);
  if (!ns) return Error{ns.error()};
  job.runtime_ns = *ns;
  return {};
}

Outcome set_time_based(JobSpec& job, std::string_view value) {
  auto on = parse_bool(value);
  if (!on) return Error{on.error()};
  job.time_based = *on;
  return {};
}

Outcome set_rate(JobSpec& job, std::string_view value) {
  auto rate = parse_job_rate_bytes_per_s(value, job.kb_base);
  if (!rate) return Error{rate.error()};
  if (*rate == 0) return Error{fmt::format("'{}': a rate must be above 0", shown(value))};
  job.rate_bytes_per_s = *rate;
  return {};
}

Outcome set_fsync(JobSpec& job, std::string_view value) {
  auto n = parse_count(value);
  if (!n || *n > (uint64_t{1} << 32)) {
    return Error{fmt::format("'{}': expected a count of writes (0 = never)", shown(value))};
  }
  job.fsync = *n;
  return {};
}

Outcome set_rate_iops(JobSpec& job, std::string_view value) {
  double rate = 0;
  const char* end = value.data() + value.size();
  auto [ptr, ec] = std::from_chars(value.data(), end, rate, std::chars_format::fixed);
  if (value.empty() || ec != std::errc() || ptr != end || !(rate > 0) || rate > 1e12) {
    return Error{
        fmt::format("'{}': expected operations per second above 0, e.g. 500 or 2.5", shown(value))};
  }
  job.rate_iops = rate;
  return {};
}

Outcome set_rwmixread(JobSpec& job, std::string_view value) {
  auto pct = bounded_count(value, 0, 100);
  if (!pct) return Error{pct.error()};
  job.rwmixread_percent = static_cast<uint32_t>(*pct);
  return {};
}

Outcome set_rwmixwrite(JobSpec& job, std::string_view value) {
  auto pct = bounded_count(value, 0, 100);
  if (!pct) return Error{pct.error()};
  job.rwmixread_percent = static_cast<uint32_t>(100 - *pct);
  return {};
}

Outcome set_kb_base(JobSpec& job, std::string_view value) {
  if (value != "1024" && value != "1000") {
    return Error{fmt::format("'{}' is not 1024 or 1000", shown(value))};
  }
  job.kb_base = value == "1000" ? 1000 : 1024;
  return {};
}

Outcome set_zone_order(JobSpec& job, std::string_view value) {
  if (value != "sequential" && value != "random") {
    return Error{fmt::format("'{}' is not sequential or random", shown(value))};
  }
  job.random_zones = value == "random";
  return {};
}

Outcome set_log_interval(JobSpec& job, std::string_view value) {
  auto ns = bounded_time(value, 1'000);
  if (!ns) return Error{ns.error()};
  job.log_interval_ns = *ns;
  return {};
}

Outcome set_log_avg_msec(JobSpec& job, std::string_view value) {
  auto ms = bounded_count(value, 1, kJobRuntimeMaxNs / 1'000'000);
  if (!ms) return Error{ms.error()};
  job.log_interval_ns = *ms * 1'000'000;
  return {};
}

Outcome set_stream(JobSpec& job, std::string_view value) {
  auto n = bounded_count(value, 0, 65535);
  if (!n) return Error{n.error()};
  job.stream = static_cast<uint16_t>(*n);
  return {};
}

Outcome set_randseed(JobSpec& job, std::string_view value) {
  auto seed = parse_count(value);
  if (!seed) return Error{seed.error()};
  job.randseed = *seed;
  return {};
}

Outcome set_stonewall(JobSpec& job, std::string_view value) {
  auto on = parse_bool(value);
  if (!on) return Error{on.error()};
  job.stonewall = *on;
  return {};
}

struct JobOption {
  JobOptionInfo info;
  Outcome (*set)(JobSpec&, std::string_view);
};

// The options, in the order help lists them.
const std::array<JobOption, 22> kJobOptions{{
    {{"name", "", "NAME",
      "job name in the output; on the command line each --name starts a new job (options before "
      "the first are every job's)"},
     set_name},
    {{"rw", "readwrite", "KIND",
      "read, randread, write (sequential at write pointers), append, or on the block interface "
      "randwrite, randrw, trim"},
     set_rw},
    {{"bs", "blocksize", "SIZE", "bytes per command, e.g. 4k or 16KiB"}, set_bs},
    {{"iodepth", "", "N", "commands each clone keeps in flight (1-65536)"}, set_iodepth},
    {{"numjobs", "", "N", "clones (1-4096); writers split the job's zones between them"},
     set_numjobs},
    {{"zones", "", "A-B", "zone range (default: every zone)"}, set_zones},
    {{"offset", "", "SIZE|PCT%",
      "start this far into the zone range: a whole number of zones in bytes, or a percentage of "
      "its zones"},
     set_offset},
    {{"size", "", "SIZE|PCT%",
      "bytes or % of the range's capacity, for the whole job (default: one pass; at most 1000 "
      "passes)"},
     set_size},
    {{"runtime", "", "TIME",
      "stop issuing after this much virtual time; a bare number is seconds (at most 3600s)"},
     set_runtime},
    {{"time_based", "", "", "with runtime: run for all of it, even when size is done"},
     set_time_based},
    {{"rate", "", "RATE", "the job's bandwidth limit, e.g. 100m or 100MiB/s"}, set_rate},
    {{"rate_iops", "", "N", "the job's operations per second"}, set_rate_iops},
    {{"rwmixread", "", "PCT", "randrw: percent of the ops that read (default 50)"}, set_rwmixread},
    {{"fsync", "", "N", "writers: an NVMe Flush after every N writes (0 = never, the default)"},
     set_fsync},
    {{"rwmixwrite", "", "PCT", "randrw: percent of the ops that write (100 - rwmixread)"},
     set_rwmixwrite},
    {{"kb_base", "", "1024|1000",
      "what k, M, G... mean in this job's sizes and rates (KiB, MiB... are always 1024-based)"},
     set_kb_base},
    {{"zone_order", "", "ORDER", "writers: next zone sequential (default) or random"},
     set_zone_order},
    {{"log_interval", "", "TIME", "log the bandwidth per interval, e.g. 1s (JSON bw_log)"},
     set_log_interval},
    {{"log_avg_msec", "", "MS", "log_interval in milliseconds (fio's name)"}, set_log_avg_msec},
    {{"stream", "", "N", "write stream (block interface with block.streams > 1)"}, set_stream},
    {{"randseed", "", "N", "seed of the job's random choices (clone k takes N + k)"}, set_randseed},
    {{"stonewall", "", "", "start after every earlier job has finished"}, set_stonewall},
}};

const JobOption* find_option(std::string_view canonical) {
  for (const JobOption& option : kJobOptions) {
    if (option.info.name == canonical) return &option;
  }
  return nullptr;
}

}  // namespace

std::string_view job_kind_name(JobKind kind) { return kKindNames[static_cast<size_t>(kind)]; }

bool is_management(JobKind kind) {
  return kind == JobKind::kFinish || kind == JobKind::kReset || kind == JobKind::kSoftfinish;
}

bool is_zone_writer(JobKind kind) { return kind == JobKind::kWrite || kind == JobKind::kAppend; }

bool needs_block_interface(JobKind kind) {
  return kind == JobKind::kRandWrite || kind == JobKind::kRandRw || kind == JobKind::kTrim;
}

std::optional<JobKind> job_kind_from_name(std::string_view name) {
  for (JobKind kind : kDataKinds) {
    if (job_kind_name(kind) == name) return kind;
  }
  return std::nullopt;
}

std::span<const JobOptionInfo> job_options() {
  static const std::vector<JobOptionInfo> kInfos = [] {
    std::vector<JobOptionInfo> infos;
    for (const JobOption& option : kJobOptions) infos.push_back(option.info);
    return infos;
  }();
  return kInfos;
}

std::string canonical_job_option(std::string_view key) {
  std::string name(key);
  std::replace(name.begin(), name.end(), '-', '_');
  for (const JobOption& option : kJobOptions) {
    if (option.info.name == name) return name;
    std::string_view aliases = option.info.aliases;
    while (!aliases.empty()) {
      size_t space = std::min(aliases.find(' '), aliases.size());
      if (aliases.substr(0, space) == name) return std::string(option.info.name);
      aliases.remove_prefix(std::min(space + 1, aliases.size()));
    }
  }
  return {};
}

Outcome set_job_option(JobSpec& job, std::string_view key, std::string_view value) {
  const JobOption* option = find_option(canonical_job_option(key));
  if (option == nullptr) {
    return Error{fmt::format("{}: unknown job option (see docs/benchmarks.md)", shown(key))};
  }
  auto set = option->set(job, value);
  if (!set) return Error{fmt::format("{}: {}", shown(key), set.error())};
  return {};
}

Outcome set_job_options(JobSpec& job, const JobOptionList& options) {
  for (bool kb_base : {true, false}) {
    for (const auto& [key, value] : options) {
      if ((canonical_job_option(key) == "kb_base") != kb_base) continue;
      auto set = set_job_option(job, key, value);
      if (!set) return set;
    }
  }
  return {};
}

namespace {

// A job table's options as text, in the table's order.
Result<JobOptionList> table_options(const toml::table& table) {
  JobOptionList options;
  for (const auto& [key, node] : table) {
    std::string value;
    if (auto s = node.as_string()) {
      value = s->get();
    } else if (auto i = node.as_integer()) {
      value = fmt::format("{}", i->get());
    } else if (auto f = node.as_floating_point()) {
      value = fmt::format("{}", f->get());
    } else if (auto b = node.as_boolean()) {
      value = b->get() ? "true" : "false";
    } else {
      return Error{
          fmt::format("{}: a job option is a string, number or boolean", shown(key.str()))};
    }
    options.push_back({std::string(key.str()), std::move(value)});
  }
  return options;
}

Outcome apply_job_table(JobSpec& job, const toml::table& table) {
  auto options = table_options(table);
  if (!options) return Error{options.error()};
  return set_job_options(job, *options);
}

}  // namespace

Result<std::vector<JobSpec>> parse_job_file_text(std::string_view text, std::string_view origin) {
  std::string where = one_line(origin);
  auto parsed = parse_toml(text, origin);
  if (!parsed) return Error{parsed.error()};
  const toml::table& root = *parsed;
  JobSpec global;
  if (const toml::node* g = root.get("global")) {
    if (g->as_table() == nullptr) return Error{fmt::format("{}: 'global' must be a table", where)};
    auto outcome = apply_job_table(global, *g->as_table());
    if (!outcome) return Error{fmt::format("{}: [global] {}", where, outcome.error())};
  }
  // TOML tables are kept sorted by key; jobs run in the order they are written.
  std::vector<std::pair<uint32_t, std::string_view>> order;
  for (const auto& [name, node] : root) {
    if (name.str() != "global") order.push_back({node.source().begin.line, name.str()});
  }
  if (order.size() > kJobCountMax) {
    return Error{
        fmt::format("{}: {} jobs, more than the limit of {}", where, order.size(), kJobCountMax)};
  }
  std::sort(order.begin(), order.end());
  std::vector<JobSpec> jobs;
  for (const auto& [line, name] : order) {
    const auto* table = root.get(name)->as_table();
    if (table == nullptr) {
      return Error{
          fmt::format("{}: '{}' must be a job table ([{}])", where, shown(name), shown(name))};
    }
    JobSpec job = global;
    if (!set_name(job, name)) {
      return Error{fmt::format("{}: job table [{}]: a job name is 1 to {} printable characters",
                               where, shown(name), kJobNameMaxChars)};
    }
    auto outcome = apply_job_table(job, *table);
    if (!outcome) return Error{fmt::format("{}: [{}] {}", where, shown(name), outcome.error())};
    jobs.push_back(std::move(job));
  }
  if (jobs.empty()) return Error{fmt::format("{}: no job tables", where)};
  return jobs;
}

Result<std::vector<JobSpec>> parse_job_file(const std::string& path) {
  auto text = read_text_file(path, "job file");
  if (!text) return Error{text.error()};
  return parse_job_file_text(*text, path);
}

}  // namespace zonelab
