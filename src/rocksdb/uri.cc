// See uri.h.
#include "rocksdb/uri.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <set>
#include <thread>
#include <vector>

#include "common/schedulers.h"
#include "fs/journal.h"
#include "zonelab/config.h"

namespace zonelab::rocksdb_plugin {
namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// %XX escapes decoded ('+' stays '+', as RFC 3986 has it); an incomplete
// one, or one that gives NUL, is an error. Applied to each part after the
// URI is split at '?', '&' and '=', so an escaped %26 or %3D is a byte of
// its part, never a separator.
Result<std::string> percent_decode(std::string_view text, std::string_view what) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out += text[i];
      continue;
    }
    int hi = i + 1 < text.size() ? hex_value(text[i + 1]) : -1;
    int lo = i + 2 < text.size() ? hex_value(text[i + 2]) : -1;
    if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) {
      return Error{fmt::format("zonelab:// URI: {} '{}' has a bad %-escape", what, one_line(text))};
    }
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

Result<double> parse_double(std::string_view key, std::string_view value) {
  double out = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), out);
  if (ec != std::errc() || end != value.data() + value.size() || value.empty()) {
    return Error{fmt::format("zonelab:// URI: {}={}: not a number", key, one_line(value))};
  }
  return out;
}

Result<uint32_t> parse_percent(std::string_view key, std::string_view value) {
  uint32_t out = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), out);
  if (ec != std::errc() || end != value.data() + value.size() || value.empty() || out > 100) {
    return Error{
        fmt::format("zonelab:// URI: {}={}: a whole percentage, 0 to 100", key, one_line(value))};
  }
  return out;
}

Result<bool> parse_switch(std::string_view key, std::string_view value, std::string_view on,
                          std::string_view off) {
  if (value == on) return true;
  if (value == off) return false;
  return Error{fmt::format("zonelab:// URI: {}={}: {} or {}", key, one_line(value), on, off)};
}

Outcome apply(UriOptions& o, std::string_view key, std::string_view value) {
  if (key == "timing") {
    if (value == "on") value = "modeled";
    auto timing = timing_from_name(value);
    if (!timing) {
      return Error{
          fmt::format("zonelab:// URI: timing={}: modeled (or on) or off", one_line(value))};
    }
    o.timing = *timing;
  } else if (key == "time_scale") {
    auto scale = parse_double(key, value);
    if (!scale) return Error{scale.error()};
    if (!(*scale >= kMinTimeScale && *scale <= kMaxTimeScale)) {
      return Error{fmt::format("zonelab:// URI: time_scale={}: from {:g} to {:g}", one_line(value),
                               kMinTimeScale, kMaxTimeScale)};
    }
    o.time_scale = *scale;
  } else if (key == "scheduler") {
    if (!known_scheduler(value)) {
      return Error{
          fmt::format("zonelab:// URI: scheduler={}: {}", one_line(value), scheduler_list(" or "))};
    }
    o.scheduler = std::string(value);
  } else if (key == "pacing") {
    if (value == "auto") {
      o.spin.reset();
    } else {
      auto spin = parse_switch(key, value, "spin", "sleep");
      if (!spin) return Error{fmt::format("{} (or auto)", spin.error())};
      o.spin = *spin;
    }
  } else if (key == "gc") {
    auto gc = parse_switch(key, value, "on", "off");
    if (!gc) return Error{gc.error()};
    o.gc = *gc;
  } else if (key == "write_behind") {
    auto behind = parse_switch(key, value, "on", "off");
    if (!behind) return Error{behind.error()};
    o.write_behind = *behind;
  } else if (key == "stats") {
    if (value.empty()) return Error{"zonelab:// URI: stats= needs a path (or none)"};
    o.stats_path = value == "none" ? "" : std::string(value);
  } else if (key == "create") {
    if (value.empty()) return Error{"zonelab:// URI: create= needs a preset name"};
    // Checked whether or not the image exists: a misspelt preset is an
    // error on the first run and on every run after it alike.
    std::vector<std::string> presets = preset_names();
    if (std::find(presets.begin(), presets.end(), value) == presets.end()) {
      std::string names;
      for (const std::string& name : presets) names += (names.empty() ? "" : ", ") + name;
      return Error{
          fmt::format("zonelab:// URI: create={}: not a preset ({})", one_line(value), names)};
    }
    o.create_preset = std::string(value);
  } else if (key == "finish_threshold") {
    auto pct = parse_percent(key, value);
    if (!pct) return Error{pct.error()};
    o.finish_threshold_pct = *pct;
  } else if (key == "tenant") {
    if (std::string why = fs::tenant_name_problem(value); !why.empty()) {
      return Error{fmt::format("zonelab:// URI: tenant={}: {}", one_line(value), why)};
    }
    o.tenant = std::string(value);
  } else if (key == "power_cut_after") {
    uint64_t n = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
    if (ec != std::errc() || end != value.data() + value.size() || value.empty()) {
      return Error{
          fmt::format("zonelab:// URI: power_cut_after={}: a count of commands", one_line(value))};
    }
    o.power_cut_after = n;
  } else {
    return Error{fmt::format(
        "zonelab:// URI: unknown option '{}' (known: timing, time_scale, scheduler, pacing, gc, "
        "write_behind, stats, create, finish_threshold, tenant, power_cut_after)",
        one_line(key))};
  }
  return {};
}

}  // namespace

Result<UriOptions> parse_uri(std::string_view uri) {
  if (uri.size() > kUriBytesMax) {
    return Error{fmt::format("zonelab:// URI: {} bytes, longer than {}", uri.size(), kUriBytesMax)};
  }
  if (uri.substr(0, kUriScheme.size()) != kUriScheme) {
    return Error{fmt::format("'{}' is not a zonelab:// URI", one_line(uri))};
  }
  std::string_view rest = uri.substr(kUriScheme.size());
  size_t question = rest.find('?');
  std::string_view path_part = rest.substr(0, question);
  std::string_view query = question == std::string_view::npos ? "" : rest.substr(question + 1);
  auto path = percent_decode(path_part, "path");
  if (!path) return Error{path.error()};
  if (path->empty() || (*path)[0] != '/') {
    return Error{fmt::format(
        "zonelab:// URI: '{}' names no absolute image path (write zonelab:///abs/path/dev.img)",
        one_line(uri))};
  }
  UriOptions o;
  o.image = std::filesystem::path(*path).lexically_normal().string();
  if (o.image.size() > 1 && o.image.back() == '/') {
    return Error{
        fmt::format("zonelab:// URI: '{}' names a directory, not an image", one_line(*path))};
  }
  o.stats_path = o.image + ".stats.json";
  std::set<std::string> seen;
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? "" : query.substr(amp + 1);
    if (pair.empty()) continue;
    size_t eq = pair.find('=');
    if (eq == std::string_view::npos) {
      return Error{
          fmt::format("zonelab:// URI: option '{}' has no value (key=value)", one_line(pair))};
    }
    auto key = percent_decode(pair.substr(0, eq), "option");
    if (!key) return Error{key.error()};
    auto value = percent_decode(pair.substr(eq + 1), "the value of " + one_line(*key));
    if (!value) return Error{value.error()};
    if (!seen.insert(*key).second) {
      return Error{fmt::format("zonelab:// URI: option '{}' given twice", one_line(*key))};
    }
    Outcome applied = apply(o, *key, *value);
    if (!applied) return Error{applied.error()};
  }
  return o;
}

bool spin_pacing(const UriOptions& options) {
  if (options.spin) return *options.spin;
  return std::thread::hardware_concurrency() >= 4;
}

}  // namespace zonelab::rocksdb_plugin
