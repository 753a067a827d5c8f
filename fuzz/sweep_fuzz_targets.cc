// The sweep spec parser's fuzz target (see fuzz_targets.h): the bytes as a
// sweep spec, parsed and expanded but never run.
#include <set>
#include <string>
#include <string_view>

#include "fuzz_targets.h"
#include "sweep/sweep.h"

namespace zonelab {
namespace {

constexpr const char* kTarget = "sweep_spec";
constexpr std::string_view kOrigin = "fuzz.toml";

bool is_hex_key(const std::string& key) {
  return key.size() == 64 && key.find_first_not_of("0123456789abcdef") == std::string::npos;
}

void check_spec(const SweepSpec& spec) {
  if (spec.points.empty() || spec.points.size() > kSweepPointsMax) {
    fuzz_violated(kTarget, "a point count outside 1-" + std::to_string(kSweepPointsMax));
  }
  if (spec.name.empty() || spec.name.size() > kSweepNameMaxChars) {
    fuzz_violated(kTarget, "an output name of " + std::to_string(spec.name.size()) + " chars");
  }
  if (spec.name.find('/') != std::string::npos || spec.name.front() == '.') {
    fuzz_violated(kTarget, "an output name that is a path: " + spec.name);
  }
  if (spec.kind == SweepSpec::Kind::kBench && !spec.plot) {
    fuzz_violated(kTarget, "a bench sweep without a plot");
  }
  std::set<std::string> axes(spec.axes.begin(), spec.axes.end());
  if (axes.size() != spec.axes.size()) fuzz_violated(kTarget, "an axis named twice");
  if (axes.contains("seed")) fuzz_violated(kTarget, "'seed' as an axis");
  for (size_t i = 0; i < spec.points.size(); ++i) {
    const SweepPoint& p = spec.points[i];
    if (p.index != i) fuzz_violated(kTarget, "point " + std::to_string(i) + " has another index");
    if (p.coordinates.size() != spec.axes.size()) {
      fuzz_violated(kTarget, "point " + std::to_string(i) + ": not one coordinate per axis");
    }
    for (size_t a = 0; a < p.coordinates.size(); ++a) {
      if (p.coordinates[a].key != spec.axes[a]) {
        fuzz_violated(kTarget, "point " + std::to_string(i) + ": coordinates out of axis order");
      }
    }
    if (p.seed.has_value() != spec.seeded) {
      fuzz_violated(kTarget, "point " + std::to_string(i) + ": a seed only some points have");
    }
    if (!is_hex_key(p.key)) fuzz_violated(kTarget, "a key that is not 64 hex digits: " + p.key);
    if (p.label.empty()) fuzz_violated(kTarget, "an empty label");
    if (spec.kind == SweepSpec::Kind::kExperiment ? p.member.empty() : !p.member.empty()) {
      fuzz_violated(kTarget, "point " + std::to_string(i) + ": a member where it has none");
    }
  }
}

}  // namespace

int fuzz_sweep_spec(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto spec = parse_sweep_spec_text(text, kOrigin);
  if (!spec) {
    fuzz_check_message(kTarget, spec.error());
    if (!spec.error().starts_with(std::string(kOrigin) + ":")) {
      fuzz_violated(kTarget, "an error that does not name the spec: " + spec.error());
    }
    return 0;
  }
  check_spec(*spec);
  // The same text gives the same points (small sweeps: a second parse of a
  // large one costs as much as the first).
  if (spec->points.size() <= 64) {
    auto again = parse_sweep_spec_text(text, "elsewhere.toml");
    if (!again || again->points.size() != spec->points.size()) {
      fuzz_violated(kTarget, "a second parse under another name differs");
    }
    for (size_t i = 0; i < spec->points.size(); ++i) {
      if (again->points[i].key != spec->points[i].key) {
        fuzz_violated(kTarget, "point " + std::to_string(i) + "'s key changed in a second parse");
      }
    }
  }
  return 0;
}

}  // namespace zonelab
