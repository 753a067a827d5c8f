// The policy table, option parsing and the ZenFS policy; see placement.h.
#include "fs/placement.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <limits>

namespace zonelab::fs {
namespace {

// How far a zone's data lifetime is from a file's: 0 is a perfect match; no
// value when the zone must not take the file (its data would then live
// longer than the zone's). Unset hints match only unset hints.
std::optional<int> lifetime_distance(Lifetime zone, Lifetime file) {
  bool zone_unset = zone == Lifetime::kNotSet || zone == Lifetime::kNone;
  bool file_unset = file == Lifetime::kNotSet || file == Lifetime::kNone;
  if (zone_unset || file_unset) {
    return zone_unset && file_unset ? std::optional<int>(0) : std::nullopt;
  }
  if (zone < file) return std::nullopt;
  return static_cast<int>(zone) - static_cast<int>(file);
}

class ZenFsPolicy final : public PlacementPolicy {
 public:
  std::string_view name() const override { return "zenfs"; }
  std::string state_text() const override { return {}; }
  std::map<std::string, std::string> describe() const override { return {}; }

  Placement place(const ZoneTable& zones, const PlacementRequest& request) override {
    Placement out;
    if (auto zone = zenfs_continue_zone(zones, request)) {
      out.kind = Placement::Kind::kContinue;
      out.zone = *zone;
    }
    return out;
  }

  std::optional<uint32_t> choose_empty(const ZoneTable& zones,
                                       const PlacementRequest& /*request*/) override {
    return next_empty_zone(zones, next_empty_);
  }

  bool finish_on_release(const ZoneView& zone, uint32_t finish_threshold_pct) const override {
    return zone.room_lbas * 100 < zone.capacity_lbas * finish_threshold_pct;
  }

 private:
  uint32_t next_empty_ = 0;
};

constexpr std::array kPolicies = {
    PolicyEntry{"zenfs",
                "ZenFS (seed 000 §4.2): lifetime-matched zones, one zone per writer, "
                "garbage collection when empty zones run short",
                "(none)", &make_zenfs_policy},
    PolicyEntry{"zenfs+",
                "ZenFS+ (seed 004 §IV): independent zone groups found by the probe, table "
                "files striped over them, flush kept apart from compaction, proactive garbage "
                "collection",
                "stripe_width=16: flush and compaction files striped over up to this many zones "
                "of different IZGs, at most the groups found (1: no striping); "
                "stripe_unit=192KiB: what each zone of a stripe takes in turn; "
                "isolation=on: flush and compaction on different IZGs (Algorithms 1-2); "
                "minor_gc=on: every minor_gc_period reset all-dead zones, L0's first, without "
                "copying; minor_gc_period=10s; full_gc_trigger=10: full (greedy) collection "
                "when fewer than this percent of the data zones are empty; "
                "threshold=0: the probe's latency rise (percent) that puts two zones in one "
                "group (0: the middle of the widest gap between the rises seen); samples=512: "
                "zones the probe measures before it infers a period",
                &make_zenfs_plus_policy},
};

}  // namespace

DataLevel data_level(Lifetime lifetime, IoClass io_class) {
  switch (io_class) {
    case IoClass::kWal:
      return DataLevel::kWal;
    case IoClass::kManifest:
      return DataLevel::kManifest;
    case IoClass::kFlush:
      return DataLevel::kL0;
    default:
      break;
  }
  switch (lifetime) {
    case Lifetime::kMedium:
      return io_class == IoClass::kCompaction ? DataLevel::kL1 : DataLevel::kOther;
    case Lifetime::kLong:
      return DataLevel::kL2;
    case Lifetime::kExtreme:
      return DataLevel::kL3;
    default:
      return DataLevel::kOther;
  }
}

namespace {

constexpr std::array<const char*, kDataLevelCount> kLevelNames = {"wal", "manifest", "L0",   "L1",
                                                                  "L2",  "L3+",      "other"};

}  // namespace

FsResult<LevelMask> parse_data_levels(std::string_view text) {
  LevelMask out = 0;
  size_t at = 0;
  while (at <= text.size()) {
    size_t end = text.find(',', at);
    if (end == std::string_view::npos) end = text.size();
    std::string_view word = text.substr(at, end - at);
    at = end + 1;
    if (word.empty()) continue;
    auto it = std::find(kLevelNames.begin(), kLevelNames.end(), word);
    if (it == kLevelNames.end()) {
      return FsStatus(Code::kInvalid,
                      fmt::format("'{}' is no level (the levels: {})",
                                  std::string(word).substr(0, 64), data_levels_text(kAllLevels)));
    }
    out |= LevelMask{1} << (it - kLevelNames.begin());
  }
  return out;
}

std::string data_levels_text(LevelMask levels) {
  std::string out;
  for (size_t i = 0; i < kDataLevelCount; ++i) {
    if ((levels & (LevelMask{1} << i)) == 0) continue;
    if (!out.empty()) out += ",";
    out += kLevelNames[i];
  }
  return out;
}

uint32_t PlacementPolicy::gc_free_target(uint32_t data_zones, uint32_t gc_free_pct) const {
  uint64_t share = uint64_t{data_zones} * gc_free_pct / 100;
  return static_cast<uint32_t>(std::max<uint64_t>(2, share));
}

std::optional<uint32_t> PlacementPolicy::gc_victim(const ZoneTable& zones) const {
  // The smallest live share: live / written, compared without division.
  std::optional<ZoneView> best;
  for (uint32_t i = 0; i < zones.size(); ++i) {
    ZoneView z = zones.at(i);
    if (!z.free() || z.written_lbas == z.live_lbas) continue;
    if (!best || z.live_lbas * best->written_lbas < best->live_lbas * z.written_lbas) best = z;
  }
  if (!best) return std::nullopt;
  return best->zone;
}

const std::vector<uint32_t>& PlacementPolicy::zone_groups() const {
  static const std::vector<uint32_t> kNone;
  return kNone;
}

std::optional<uint32_t> zenfs_continue_zone(const ZoneTable& zones, const PlacementRequest& request,
                                            const std::function<bool(const ZoneView&)>& eligible) {
  std::optional<uint32_t> best;
  int best_distance = std::numeric_limits<int>::max();
  for (uint32_t i = 0; i < zones.size(); ++i) {
    ZoneView zone = zones.at(i);
    if (!zone.written_part_way() || !zone.free() || zone.room_lbas == 0) continue;
    // The log stays apart from table files: it dies in whole soon, they
    // live on.
    if ((zone.io_class == IoClass::kWal) != (request.io_class == IoClass::kWal)) continue;
    auto distance = lifetime_distance(zone.lifetime, request.lifetime);
    if (!distance || *distance >= best_distance) continue;
    if (eligible && !eligible(zone)) continue;
    best = zone.zone;
    best_distance = *distance;
  }
  return best;
}

std::optional<uint32_t> next_empty_zone(const ZoneTable& zones, uint32_t& cursor) {
  const uint32_t n = zones.size();
  for (uint32_t step = 0; step < n; ++step) {
    const uint32_t index = (cursor + step) % n;
    ZoneView z = zones.at(index);
    if (!z.empty() || !z.free()) continue;
    cursor = (index + 1) % n;
    return z.zone;
  }
  return std::nullopt;
}

FsResult<std::map<std::string, std::string>> parse_policy_options(std::string_view text) {
  std::map<std::string, std::string> out;
  size_t at = 0;
  while (at <= text.size()) {
    size_t end = text.find_first_of(",\n", at);
    if (end == std::string_view::npos) end = text.size();
    std::string_view pair = text.substr(at, end - at);
    at = end + 1;
    while (!pair.empty() && (pair.front() == ' ' || pair.front() == '\t')) pair.remove_prefix(1);
    while (!pair.empty() && (pair.back() == ' ' || pair.back() == '\t')) pair.remove_suffix(1);
    if (pair.empty()) continue;
    size_t eq = pair.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      return FsStatus(Code::kInvalid,
                      fmt::format("policy option '{}' is not key=value",
                                  pair.substr(0, std::min<size_t>(pair.size(), 64))));
    }
    std::string key(pair.substr(0, eq));
    if (!out.emplace(key, std::string(pair.substr(eq + 1))).second) {
      return FsStatus(Code::kInvalid, fmt::format("policy option {} given twice", key));
    }
  }
  return out;
}

FsResult<std::unique_ptr<PlacementPolicy>> make_zenfs_policy(std::string_view text,
                                                             const PolicyContext& /*context*/) {
  auto options = parse_policy_options(text);
  if (!options) return options.status();
  if (!options->empty()) {
    return FsStatus(Code::kInvalid,
                    fmt::format("policy zenfs takes no options (got {})", options->begin()->first));
  }
  return std::unique_ptr<PlacementPolicy>(std::make_unique<ZenFsPolicy>());
}

std::span<const PolicyEntry> placement_policies() { return kPolicies; }

const PolicyEntry* find_placement_policy(std::string_view name) {
  for (const PolicyEntry& entry : kPolicies) {
    if (entry.name == name) return &entry;
  }
  return nullptr;
}

FsResult<std::unique_ptr<PlacementPolicy>> make_placement_policy(std::string_view name,
                                                                 std::string_view text,
                                                                 const PolicyContext& context) {
  const PolicyEntry* entry = find_placement_policy(name);
  if (entry == nullptr) {
    return FsStatus(Code::kInvalid, fmt::format("unknown placement policy '{}' (known: {})", name,
                                                placement_policy_names()));
  }
  return entry->make(text, context);
}

bool known_placement_policy(std::string_view name) {
  return find_placement_policy(name) != nullptr;
}

std::string placement_policy_names() {
  std::string out;
  for (const PolicyEntry& entry : kPolicies) {
    if (!out.empty()) out += ", ";
    out += entry.name;
  }
  return out;
}

}  // namespace zonelab::fs
