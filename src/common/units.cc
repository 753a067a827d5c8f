// Parsing and printing of sizes, times and rates; see units.h.
#include "common/units.h"

#include <array>
#include <cctype>
#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace zonelab {
namespace {

struct Suffix {
  std::string_view name;
  long double factor;
};

// Splits "3.5ms" into a decimal number and a suffix; rejects anything else.
struct Split {
  long double number = 0;
  std::string_view suffix;
  bool ok = false;
};

Split split_number(std::string_view text) {
  Split out;
  size_t i = 0;
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  size_t start = i;
  bool digits = false;
  bool dot = false;
  while (i < text.size()) {
    char c = text[i];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      digits = true;
    } else if (c == '.' && !dot) {
      dot = true;
    } else {
      break;
    }
    ++i;
  }
  if (!digits || i - start > 30) return out;
  std::string number(text.substr(start, i - start));
  size_t end = text.size();
  while (end > i && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  out.suffix = text.substr(i, end - i);
  while (!out.suffix.empty() && out.suffix.front() == ' ') out.suffix.remove_prefix(1);
  out.number = std::strtold(number.c_str(), nullptr);
  out.ok = true;
  return out;
}

Result<uint64_t> scale(std::string_view text, std::string_view what,
                       const Split& split, long double factor) {
  long double value = split.number * factor;
  if (!std::isfinite(value) || value < 0 ||
      value > static_cast<long double>(std::numeric_limits<uint64_t>::max() / 2)) {
    return Error{fmt::format("{} '{}' is out of range", what, text)};
  }
  long double rounded = std::nearbyint(value);
  if (std::fabs(rounded - value) > 1e-6L * std::max<long double>(1.0L, value)) {
    return Error{fmt::format("{} '{}' is not a whole number of {}", what, text,
                             what == "time" ? "nanoseconds" : "bytes")};
  }
  return static_cast<uint64_t>(rounded);
}

Result<uint64_t> parse_with(std::string_view text, std::string_view what,
                            const Suffix* suffixes, size_t count, std::string_view hint) {
  Split split = split_number(text);
  if (!split.ok) {
    return Error{fmt::format("invalid {} '{}' (expected a number with a unit, e.g. {})", what,
                             text, hint)};
  }
  for (size_t i = 0; i < count; ++i) {
    if (split.suffix == suffixes[i].name) return scale(text, what, split, suffixes[i].factor);
  }
  return Error{fmt::format("invalid {} '{}': unknown unit '{}' (e.g. {})", what, text,
                           split.suffix, hint)};
}

constexpr long double kKi = 1024.0L;
constexpr std::array<Suffix, 16> kSizeSuffixes{{
    {"", 1},
    {"B", 1},
    {"K", kKi},
    {"KiB", kKi},
    {"M", kKi * kKi},
    {"MiB", kKi * kKi},
    {"G", kKi * kKi * kKi},
    {"GiB", kKi * kKi * kKi},
    {"T", kKi * kKi * kKi * kKi},
    {"TiB", kKi * kKi * kKi * kKi},
    {"PiB", kKi * kKi * kKi * kKi * kKi},
    {"KB", 1e3L},
    {"MB", 1e6L},
    {"GB", 1e9L},
    {"TB", 1e12L},
    {"PB", 1e15L},
}};

constexpr std::array<Suffix, 6> kTimeSuffixes{{
    {"", 1},
    {"ns", 1},
    {"us", 1e3L},
    {"ms", 1e6L},
    {"s", 1e9L},
    {"µs", 1e3L},
}};

}  // namespace

Result<uint64_t> parse_size_bytes(std::string_view text) {
  return parse_with(text, "size", kSizeSuffixes.data(), kSizeSuffixes.size(), "16KiB or 2GiB");
}

Result<uint64_t> parse_time_ns(std::string_view text) {
  return parse_with(text, "time", kTimeSuffixes.data(), kTimeSuffixes.size(), "450us or 3.5ms");
}

Result<uint64_t> parse_rate_bytes_per_s(std::string_view text) {
  std::string_view body = text;
  if (body.size() >= 2 && body.substr(body.size() - 2) == "/s") {
    body.remove_suffix(2);
  }
  auto bytes = parse_with(body, "rate", kSizeSuffixes.data(), kSizeSuffixes.size(),
                          "1.2GB/s or 100MiB/s");
  if (!bytes.ok()) return Error{fmt::format("invalid rate '{}' (e.g. 1.2GB/s or 100MiB/s)", text)};
  return bytes;
}

Result<uint64_t> parse_count(std::string_view text) {
  Split split = split_number(text);
  if (!split.ok || !split.suffix.empty() || split.number != std::floor(split.number)) {
    return Error{fmt::format("invalid number '{}' (expected a whole number)", text)};
  }
  return scale(text, "number", split, 1);
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
  if (bytes_per_s >= 1024 && bytes_per_s % 1024 == 0) return format_size(bytes_per_s) + "/s";
  static constexpr std::array<std::pair<uint64_t, std::string_view>, 3> kDecimal{
      {{1'000'000'000, "GB/s"}, {1'000'000, "MB/s"}, {1'000, "KB/s"}}};
  for (auto [unit, name] : kDecimal) {
    if (bytes_per_s >= unit && bytes_per_s % (unit / 1000) == 0) {
      // Exact with up to three decimals.
      double value = static_cast<double>(bytes_per_s) / static_cast<double>(unit);
      std::string text = fmt::format("{:.3f}", value);
      while (text.back() == '0') text.pop_back();
      if (text.back() == '.') text.pop_back();
      return text + std::string(name);
    }
  }
  return fmt::format("{}B/s", bytes_per_s);
}

}  // namespace zonelab
