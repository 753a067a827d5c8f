// Parsing and printing of sizes, times and rates; see units.h. Numbers are
// parsed exactly: "3.5ms" is 3 * 10^6 + 5 * 10^6 / 10 ns, in integers, and a
// value that is not a whole number of base units is refused, not rounded.
#include "common/units.h"

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <limits>

namespace zonelab {
namespace {

__extension__ typedef unsigned __int128 Wide;

struct Suffix {
  std::string_view name;
  uint64_t factor;
};

// "3.5ms" -> whole 3, fraction 5 over 10^1, suffix "ms".
struct Number {
  uint64_t whole = 0;
  uint64_t fraction = 0;
  uint64_t fraction_scale = 1;  // 10^digits
  std::string_view suffix;
  bool ok = false;
  bool negative = false;   // "-1": a sign zonelab's numbers never take
  bool too_large = false;  // the whole part is above 2^64 - 1
};

std::string_view trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
    text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.remove_suffix(1);
  return text;
}

// A user's text inside a one-line message.
std::string quoted(std::string_view text) { return one_line(text, 64); }

Number split_number(std::string_view text) {
  Number out;
  text = trim(text);
  if (!text.empty() && text.front() == '-') {
    out.negative = true;
    return out;
  }
  size_t i = 0;
  bool digits = false;
  Wide whole = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    whole = whole * 10 + static_cast<unsigned>(text[i] - '0');
    if (whole > std::numeric_limits<uint64_t>::max()) {
      out.too_large = true;
      return out;
    }
    digits = true;
    ++i;
  }
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
      if (out.fraction_scale >= 1'000'000'000'000'000ULL) return out;  // 18 digits at most
      out.fraction = out.fraction * 10 + static_cast<uint64_t>(text[i] - '0');
      out.fraction_scale *= 10;
      digits = true;
      ++i;
    }
  }
  if (!digits) return out;
  out.whole = static_cast<uint64_t>(whole);
  out.suffix = trim(text.substr(i));
  out.ok = true;
  return out;
}

Result<uint64_t> scale(std::string_view text, std::string_view what, const Number& n,
                       uint64_t factor) {
  Wide whole = static_cast<Wide>(n.whole) * factor;
  Wide part = static_cast<Wide>(n.fraction) * factor;
  if (part % n.fraction_scale != 0) {
    return Error{fmt::format("{} '{}' is not a whole number of {}", what, quoted(text),
                             what == "time" ? "nanoseconds" : "bytes")};
  }
  Wide value = whole + part / n.fraction_scale;
  if (value > std::numeric_limits<uint64_t>::max()) {
    return Error{fmt::format("{} '{}' is out of range (above 2^64 - 1 {})", what, quoted(text),
                             what == "time" ? "ns" : "bytes")};
  }
  return static_cast<uint64_t>(value);
}

// Why a number could not be split, or an empty string if it could.
std::string unsplit_reason(std::string_view text, std::string_view what, const Number& n,
                           std::string_view hint) {
  if (n.ok) return {};
  if (n.negative) return fmt::format("{} '{}' must not be negative", what, quoted(text));
  if (n.too_large) {
    return fmt::format("{} '{}' is out of range (above 2^64 - 1)", what, quoted(text));
  }
  return fmt::format("invalid {} '{}' (expected a number with a unit, e.g. {})", what, quoted(text),
                     hint);
}

Result<uint64_t> parse_with(std::string_view text, std::string_view what, const Suffix* suffixes,
                            size_t count, std::string_view hint) {
  Number n = split_number(text);
  if (!n.ok) return Error{unsplit_reason(text, what, n, hint)};
  for (size_t i = 0; i < count; ++i) {
    if (n.suffix == suffixes[i].name) return scale(text, what, n, suffixes[i].factor);
  }
  return Error{fmt::format("invalid {} '{}': unknown unit '{}' (e.g. {})", what, quoted(text),
                           quoted(n.suffix), hint)};
}

constexpr uint64_t kKi = 1024;
constexpr std::array<Suffix, 16> kSizeSuffixes{{
    {"", 1},
    {"B", 1},
    {"K", kKi},
    {"KiB", kKi},
    {"M", kKi* kKi},
    {"MiB", kKi* kKi},
    {"G", kKi* kKi* kKi},
    {"GiB", kKi* kKi* kKi},
    {"T", kKi* kKi* kKi* kKi},
    {"TiB", kKi* kKi* kKi* kKi},
    {"PiB", kKi* kKi* kKi* kKi* kKi},
    {"KB", 1'000},
    {"MB", 1'000'000},
    {"GB", 1'000'000'000},
    {"TB", 1'000'000'000'000},
    {"PB", 1'000'000'000'000'000},
}};

constexpr std::array<Suffix, 6> kTimeSuffixes{{
    {"", 1},
    {"ns", 1},
    {"us", 1'000},
    {"ms", 1'000'000},
    {"s", 1'000'000'000},
    {"µs", 1'000},
}};

// fio's size suffixes, in lower case: the power of the base, and whether the
// base is 1024 whatever kb_base says (the IEC names).
struct JobSizeSuffix {
  std::string_view name;
  int power;
  bool iec;
};

constexpr std::array<JobSizeSuffix, 17> kJobSizeSuffixes{{
    {"", 0, false},
    {"b", 0, false},
    {"k", 1, false},
    {"kb", 1, false},
    {"kib", 1, true},
    {"m", 2, false},
    {"mb", 2, false},
    {"mib", 2, true},
    {"g", 3, false},
    {"gb", 3, false},
    {"gib", 3, true},
    {"t", 4, false},
    {"tb", 4, false},
    {"tib", 4, true},
    {"p", 5, false},
    {"pb", 5, false},
    {"pib", 5, true},
}};
constexpr std::string_view kJobSizeHint = "4k, 16KiB or 1G";

// fio's time suffixes, in lower case; a bare number is seconds.
constexpr uint64_t kSecondNs = 1'000'000'000;
constexpr std::array<Suffix, 13> kJobTimeSuffixes{{
    {"", kSecondNs},
    {"ns", 1},
    {"us", 1'000},
    {"usec", 1'000},
    {"µs", 1'000},
    {"ms", 1'000'000},
    {"msec", 1'000'000},
    {"s", kSecondNs},
    {"sec", kSecondNs},
    {"m", 60 * kSecondNs},
    {"min", 60 * kSecondNs},
    {"h", 3600 * kSecondNs},
    {"d", 86400 * kSecondNs},
}};

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

Result<uint64_t> parse_job_size_bytes(std::string_view text, uint32_t kb_base) {
  ZL_ASSERT(kb_base == 1000 || kb_base == 1024);
  Number n = split_number(text);
  if (!n.ok) return Error{unsplit_reason(text, "size", n, kJobSizeHint)};
  std::string suffix = lower(n.suffix);
  for (const JobSizeSuffix& s : kJobSizeSuffixes) {
    if (suffix != s.name) continue;
    uint64_t base = s.iec ? 1024 : kb_base;
    uint64_t factor = 1;
    for (int i = 0; i < s.power; ++i) factor *= base;
    return scale(text, "size", n, factor);
  }
  return Error{fmt::format("invalid size '{}': unknown unit '{}' (e.g. {})", quoted(text),
                           quoted(n.suffix), kJobSizeHint)};
}

Result<uint64_t> parse_job_time_ns(std::string_view text) {
  Number n = split_number(text);
  if (!n.ok) return Error{unsplit_reason(text, "time", n, "30 (seconds), 1.5s, 500ms or 2m")};
  std::string suffix = lower(n.suffix);
  for (const Suffix& s : kJobTimeSuffixes) {
    if (suffix == s.name) return scale(text, "time", n, s.factor);
  }
  return Error{
      fmt::format("invalid time '{}': unknown unit '{}' (e.g. 30 (seconds), 1.5s, 500ms or 2m)",
                  quoted(text), quoted(n.suffix))};
}

Result<uint64_t> parse_job_rate_bytes_per_s(std::string_view text, uint32_t kb_base) {
  std::string_view body = trim(text);
  if (body.size() >= 2 && lower(body.substr(body.size() - 2)) == "/s") body.remove_suffix(2);
  auto bytes = parse_job_size_bytes(body, kb_base);
  if (bytes) return bytes;
  Number n = split_number(body);
  if (n.negative || n.too_large) return Error{unsplit_reason(text, "rate", n, "")};
  return Error{fmt::format("invalid rate '{}' (bytes per second, e.g. 100M, 100MiB/s or 1g/s)",
                           quoted(text))};
}

Result<uint64_t> parse_size_bytes(std::string_view text) {
  return parse_with(text, "size", kSizeSuffixes.data(), kSizeSuffixes.size(), "16KiB or 2GiB");
}

Result<uint64_t> parse_time_ns(std::string_view text) {
  return parse_with(text, "time", kTimeSuffixes.data(), kTimeSuffixes.size(), "450us or 3.5ms");
}

Result<uint64_t> parse_rate_bytes_per_s(std::string_view text) {
  std::string_view body = trim(text);
  if (body.size() >= 2 && body.substr(body.size() - 2) == "/s") body.remove_suffix(2);
  auto bytes =
      parse_with(body, "rate", kSizeSuffixes.data(), kSizeSuffixes.size(), "1.2GB/s or 100MiB/s");
  if (!bytes) {
    return Error{fmt::format("invalid rate '{}' (e.g. 1.2GB/s or 100MiB/s)", quoted(text))};
  }
  return bytes;
}

Result<uint64_t> parse_count(std::string_view text) {
  Number n = split_number(text);
  if (n.negative || n.too_large) return Error{unsplit_reason(text, "number", n, "")};
  if (!n.ok || !n.suffix.empty() || n.fraction != 0) {
    return Error{fmt::format("invalid number '{}' (expected a whole number)", quoted(text))};
  }
  return n.whole;
}

Result<uint64_t> parse_percent_basis_points(std::string_view text) {
  Number n = split_number(text);
  if (!n.ok || (!n.suffix.empty() && n.suffix != "%") || n.whole > 1'000'000) {
    return Error{fmt::format("invalid percentage '{}' (e.g. 7%, 28%, 6.25%)", quoted(text))};
  }
  // Hundredths of a percent; finer digits are refused rather than rounded.
  uint64_t scaled = n.fraction * 100;
  if (scaled % n.fraction_scale != 0) {
    return Error{fmt::format("percentage '{}' has more than two decimals", quoted(text))};
  }
  return n.whole * 100 + scaled / n.fraction_scale;
}

std::string format_percent_basis_points(uint64_t basis_points) {
  if (basis_points % 100 == 0) return fmt::format("{}%", basis_points / 100);
  if (basis_points % 10 == 0)
    return fmt::format("{}.{}%", basis_points / 100, basis_points / 10 % 10);
  return fmt::format("{}.{:02}%", basis_points / 100, basis_points % 100);
}

std::string format_size(uint64_t bytes) {
  static constexpr std::array<std::string_view, 5> kNames{"KiB", "MiB", "GiB", "TiB", "PiB"};
  if (bytes == 0) return "0";
  std::string best = fmt::format("{}", bytes);
  uint64_t unit = 1024;
  for (auto name : kNames) {
    if (bytes % unit != 0) break;
    best = fmt::format("{}{}", bytes / unit, name);
    if (unit > std::numeric_limits<uint64_t>::max() / 1024) break;
    unit *= 1024;
  }
  return best;
}

std::string format_time(uint64_t ns) {
  if (ns == 0) return "0ns";
  if (ns % 1'000'000'000 == 0) return fmt::format("{}s", ns / 1'000'000'000);
  if (ns % 1'000'000 == 0) return fmt::format("{}ms", ns / 1'000'000);
  if (ns % 1'000 == 0) return fmt::format("{}us", ns / 1'000);
  return fmt::format("{}ns", ns);
}

std::string format_rate(uint64_t bytes_per_s) {
  // GB/s or MB/s with at most three decimals reads best ("1.2GB/s"); rates in
  // binary units keep them ("100MiB/s"); what is left is KB/s or B/s.
  auto decimal = [bytes_per_s](uint64_t unit, std::string_view name) -> std::string {
    if (bytes_per_s < unit || bytes_per_s % (unit / 1000) != 0) return {};
    std::string text =
        fmt::format("{}.{:03}", bytes_per_s / unit, bytes_per_s % unit / (unit / 1000));
    while (text.back() == '0') text.pop_back();
    if (text.back() == '.') text.pop_back();
    return text + std::string(name);
  };
  if (auto text = decimal(1'000'000'000, "GB/s"); !text.empty()) return text;
  if (auto text = decimal(1'000'000, "MB/s"); !text.empty()) return text;
  if (bytes_per_s >= 1024 && bytes_per_s % 1024 == 0) return format_size(bytes_per_s) + "/s";
  if (auto text = decimal(1'000, "KB/s"); !text.empty()) return text;
  return fmt::format("{}B/s", bytes_per_s);
}

std::string format_duration(uint64_t ns) {
  if (ns < 1'000) return fmt::format("{}ns", ns);
  double value = static_cast<double>(ns);
  if (ns < 1'000'000) return fmt::format("{:.1f}us", value / 1e3);
  if (ns < 1'000'000'000) return fmt::format("{:.2f}ms", value / 1e6);
  return fmt::format("{:.3f}s", value / 1e9);
}

}  // namespace zonelab
