// All zones of a namespace and the rules between them: the zone state
// machine of the NVMe ZNS command set, the write pointer, and the open and
// active resource limits (MOR/MAR), with implicit close of the oldest
// implicitly opened zone when the open limit is reached.
//
// Resource accounting exactly as NVMe defines it: implicitly opened,
// explicitly opened and closed zones are active; the two opened states hold
// an open resource; finish and reset free what the zone held. Every method
// that returns a Status changes nothing when it fails.
//
// Where the NVMe text leaves a choice, zonelab does what QEMU's ZNS
// emulation does; docs/device-model.md lists each such choice.
#pragma once

#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "zonelab/device.h"

namespace zonelab {

struct Zone {
  ZoneState state = ZoneState::kEmpty;
  uint64_t wp = 0;                // write pointer, zone-relative LBAs
  uint64_t data_end = 0;          // end of host data, zone-relative LBAs (<= wp)
  uint32_t pages_programmed = 0;  // zone pages that hold data on flash
  uint64_t open_seq = 0;          // when it was implicitly opened (ordering)
};

class ZoneTable {
 public:
  ZoneTable(uint32_t zone_count, uint64_t capacity_lbas, uint32_t max_open, uint32_t max_active);
  // Zones of several sizes: each zone's capacity is its set's.
  ZoneTable(const std::vector<ZoneSetInfo>& sets, uint32_t max_open, uint32_t max_active);

  uint32_t zone_count() const { return static_cast<uint32_t>(zones_.size()); }
  // The first set's zone capacity (every zone's, with one set).
  uint64_t capacity_lbas() const { return capacity_lbas_; }
  // Zone `index`'s capacity. Every write asks: one set (every format but
  // FlexZNS's) answers from one member, several look the zone's set up.
  uint64_t capacity_lbas(uint32_t index) const {
    return uniform_ ? capacity_lbas_ : set_capacity_lbas(index);
  }
  const Zone& zone(uint32_t index) const { return zones_[index]; }
  Zone& mutable_zone(uint32_t index) { return zones_[index]; }
  uint32_t open_count() const { return open_count_; }
  uint32_t active_count() const { return active_count_; }
  uint32_t max_open() const { return max_open_; }
  uint32_t max_active() const { return max_active_; }
  uint64_t implicit_closes() const { return implicit_closes_; }

  // A write of `nlb` blocks at zone-relative `offset`: state, write pointer
  // and capacity checks only (no resources).
  Status check_write(uint32_t index, uint64_t offset, uint64_t nlb) const;
  // Brings a zone into an opened state for a write: empty and closed zones
  // open implicitly (taking resources, closing the oldest implicitly opened
  // zone if the open limit is reached). Opened zones are left as they are.
  Status open_for_write(uint32_t index);
  // Moves the write pointer after a write; a zone that reaches its capacity
  // becomes full and frees its resources.
  void advance(uint32_t index, uint64_t nlb);

  // Zone Management Send actions on one zone.
  Status open(uint32_t index);
  Status close(uint32_t index);
  Status finish(uint32_t index);
  Status reset(uint32_t index);
  Status offline(uint32_t index);

  // Select All: the zones an action applies to (a snapshot, in zone order).
  std::vector<uint32_t> select_all_targets(ZoneAction action) const;
  // Open with Select All: every closed zone, or none if the open limit
  // cannot take them all even after closing implicitly opened zones.
  Status open_all(const std::vector<uint32_t>& closed_zones);

  // Test hook: a media failure makes a zone read-only or offline.
  void inject(uint32_t index, ZoneState state);

  // Image restore: puts a zone back as it was saved, then recount().
  void restore(uint32_t index, const Zone& zone) { zones_[index] = zone; }
  void recount();
  uint64_t next_open_seq() const { return next_open_seq_; }
  void set_next_open_seq(uint64_t seq) { next_open_seq_ = seq; }

  // Resource counts match the states; true when consistent.
  bool invariants_hold() const;

 private:
  Status take_open_resource(uint32_t index, bool needs_active);
  void release(uint32_t index);
  void set_state(uint32_t index, ZoneState state);
  void close_implicitly(uint32_t index);
  uint64_t set_capacity_lbas(uint32_t index) const;

  std::vector<Zone> zones_;
  std::vector<ZoneSetInfo> sets_;  // empty or one: every zone has capacity_lbas_
  uint64_t capacity_lbas_;
  bool uniform_ = true;  // sets_.size() <= 1
  uint32_t max_open_;
  uint32_t max_active_;
  uint32_t open_count_ = 0;
  uint32_t active_count_ = 0;
  uint64_t next_open_seq_ = 1;
  uint64_t implicit_closes_ = 0;
  std::set<std::pair<uint64_t, uint32_t>> implicitly_opened_;  // (open_seq, zone)
};

}  // namespace zonelab
