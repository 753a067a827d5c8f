// The ZenFS placement policy; see placement.h.
#include "fs/placement.h"

#include <limits>
#include <optional>

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

  const ZoneView* pick(const std::vector<ZoneView>& candidates, Lifetime lifetime,
                       IoClass io_class) const override {
    const ZoneView* best = nullptr;
    int best_distance = std::numeric_limits<int>::max();
    for (const ZoneView& zone : candidates) {
      // The log stays apart from table files: it dies in whole soon, they
      // live on.
      if ((zone.io_class == IoClass::kWal) != (io_class == IoClass::kWal)) continue;
      auto distance = lifetime_distance(zone.lifetime, lifetime);
      if (!distance || *distance >= best_distance) continue;
      best = &zone;
      best_distance = *distance;
    }
    return best;
  }

  bool finish_on_release(const ZoneView& zone, uint32_t finish_threshold_pct) const override {
    return zone.room_lbas * 100 < zone.capacity_lbas * finish_threshold_pct;
  }
};

}  // namespace

std::unique_ptr<PlacementPolicy> make_placement_policy(std::string_view name) {
  if (name == "zenfs") return std::make_unique<ZenFsPolicy>();
  return nullptr;
}

bool known_placement_policy(std::string_view name) {
  return make_placement_policy(name) != nullptr;
}

std::string_view placement_policy_names() { return "zenfs"; }

}  // namespace zonelab::fs
