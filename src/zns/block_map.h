// Which blocks hold a zone: the zone -> physical zone mapping of seed 003
// section 4.3.
//
// A physical zone ("slot") is the set of blocks one zone occupies:
// `blocks_per_zone_unit` consecutive blocks in every plane of one group's
// units (see zone_layout.h). Slot s lies in group s mod groups at block
// (s / groups) x blocks_per_zone_unit, so under direct mapping zone z always
// uses slot z.
//
// Under lazy mapping a zone holds no slot until its first write, and a
// reset gives the slot back. A zone takes a free slot of its own group, so
// its channels and dies (its parallelism) stay those of direct mapping and
// only its blocks change: one holding no old data if there is any, else the
// one given back longest ago (oldest first spreads the wear).
//
// Under FlexZNS (zone_layout.h) the slots are the format's FBGs, a zone
// takes a free FBG of its own zone set, always at its first write, and the
// device picks which by a cost (the least-loaded dies, seed 001 §III-C).
//
// Each slot remembers how many of its pages still hold old data that must
// be erased before they are programmed again (`stale_pages`, counted in
// zone page order; pages are written in that order, so they are the slot's
// first pages).
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <tuple>
#include <vector>

#include "zns/zone_layout.h"
#include "zonelab/result.h"

namespace zonelab {

struct Slot {
  uint32_t stale_pages = 0;
  uint64_t released_seq = 0;  // when it was last given back (0: never)
};

class BlockMap {
 public:
  static constexpr uint32_t kUnmapped = UINT32_MAX;

  BlockMap(const ZoneLayout& layout, bool lazy);

  bool lazy() const { return lazy_; }
  uint32_t slot_count() const { return static_cast<uint32_t>(slots_.size()); }
  uint32_t slot_of(uint32_t zone) const { return slot_of_zone_[zone]; }
  const Slot& slot(uint32_t index) const { return slots_[index]; }
  Slot& mutable_slot(uint32_t index) { return slots_[index]; }
  uint32_t free_slots() const;
  // Lazy mapping: the free slots that hold no old data (0 under direct).
  uint32_t clean_free_slots() const;
  uint64_t next_released_seq() const { return next_released_seq_; }

  // Lazy mapping: gives an unmapped zone a free slot of its group -- the
  // first in the pool's order, or with `cost`, the cheapest (ties: the
  // pool's order).
  uint32_t map(uint32_t zone, const std::function<uint64_t(uint32_t slot)>& cost = {});
  // Free slots of a zone's group, in the order they would be taken.
  std::vector<uint32_t> free_slots_of(uint32_t zone) const;
  // Lazy mapping: the zone's slot goes back to the free pool (a zone without
  // one keeps none). Set the slot's stale pages before.
  void unmap(uint32_t zone);

  // Image restore: the slot of every zone (kUnmapped for none) and every
  // slot's state. Checks that the mapping is one a device could reach.
  Outcome restore(const std::vector<uint32_t>& slot_of_zone, const std::vector<Slot>& slots,
                  uint64_t next_released_seq);
  const std::vector<uint32_t>& slots_of_zones() const { return slot_of_zone_; }
  const std::vector<Slot>& slots() const { return slots_; }

 private:
  // Free slots of a group in the order they are taken: no old data first,
  // then given back longest ago, then by index.
  using FreeKey = std::tuple<bool, uint64_t, uint32_t>;
  FreeKey free_key(uint32_t slot) const {
    return {slots_[slot].stale_pages != 0, slots_[slot].released_seq, slot};
  }
  void rebuild_free();

  bool lazy_;
  const ZoneLayout* layout_;
  std::vector<uint32_t> slot_of_zone_;
  std::vector<Slot> slots_;
  std::vector<std::set<FreeKey>> free_;  // per group; lazy only
  uint64_t next_released_seq_ = 1;
};

}  // namespace zonelab
