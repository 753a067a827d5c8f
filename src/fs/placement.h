// Where a file's data goes: the placement policy, an object behind an
// interface so that a second policy (ZenFS+) can take the same decisions
// differently.
//
// "zenfs" (seed 000 §4.2, "Data Zone Selection" and "Writeable Capacity in
// Data Zones"): a file continues a zone only if the zone's data lives at
// least as long as the file's (so the file does not prolong the zone's
// life); the closest lifetime wins; otherwise it takes an empty zone. The
// write-ahead log never shares a zone with table files. A zone a writer
// lets go with less than the finish threshold of its capacity left is
// finished, so its active resource goes back to the pool.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "fs/metadata.h"

namespace zonelab::fs {

// What a policy sees of a data zone.
struct ZoneView {
  uint32_t zone = 0;
  uint64_t capacity_lbas = 0;
  uint64_t room_lbas = 0;                 // blocks it can still take
  Lifetime lifetime = Lifetime::kNotSet;  // the longest lifetime of data in it
  IoClass io_class = IoClass::kOther;     // of the writes that started it
};

class PlacementPolicy {
 public:
  virtual ~PlacementPolicy() = default;
  virtual std::string_view name() const = 0;
  // Among zones that are written part way, have room and no writer, the one
  // a file of this lifetime and class should continue; null: take an empty
  // zone.
  virtual const ZoneView* pick(const std::vector<ZoneView>& candidates, Lifetime lifetime,
                               IoClass io_class) const = 0;
  // When a writer lets go of a zone with data in it: finish it now? (Frees
  // its active resource; the room left is lost.)
  virtual bool finish_on_release(const ZoneView& zone, uint32_t finish_threshold_pct) const = 0;
};

// Null for an unknown name.
std::unique_ptr<PlacementPolicy> make_placement_policy(std::string_view name);
bool known_placement_policy(std::string_view name);
// The names make_placement_policy knows, for messages ("zenfs").
std::string_view placement_policy_names();

}  // namespace zonelab::fs
