// The zone state machine and resource limits; see zone_table.h.
#include "zns/zone_table.h"

#include <array>

#include "zonelab/assert.h"

namespace zonelab {

ZoneTable::ZoneTable(uint32_t zone_count, uint64_t capacity_lbas, uint32_t max_open,
                     uint32_t max_active)
    : zones_(zone_count),
      capacity_lbas_(capacity_lbas),
      max_open_(max_open),
      max_active_(max_active) {
  ZL_ASSERT(zone_count > 0 && capacity_lbas > 0);
}

ZoneTable::ZoneTable(const std::vector<ZoneSetInfo>& sets, uint32_t max_open, uint32_t max_active)
    : ZoneTable(sets.back().first_zone + sets.back().zone_count, sets.front().zone_capacity_lbas,
                max_open, max_active) {
  sets_ = sets;
  uniform_ = sets_.size() <= 1;
}

uint64_t ZoneTable::set_capacity_lbas(uint32_t index) const {
  return sets_[zone_set_of_zone(sets_, index)].zone_capacity_lbas;
}

Status ZoneTable::check_write(uint32_t index, uint64_t offset, uint64_t nlb) const {
  const Zone& z = zones_[index];
  switch (z.state) {
    case ZoneState::kFull:
      return Status::kZoneIsFull;
    case ZoneState::kReadOnly:
      return Status::kZoneIsReadOnly;
    case ZoneState::kOffline:
      return Status::kZoneIsOffline;
    default:
      break;
  }
  if (offset != z.wp) return Status::kZoneInvalidWrite;
  if (offset + nlb > capacity_lbas(index)) return Status::kZoneBoundaryError;
  return Status::kSuccess;
}

// Takes an open resource (and an active one when the zone is empty). When
// the open limit is reached, the oldest implicitly opened zone is closed to
// make room; the active limit is checked first so that a failed request
// closes nothing.
Status ZoneTable::take_open_resource(uint32_t index, bool needs_active) {
  (void)index;
  if (needs_active && max_active_ != 0 && active_count_ + 1 > max_active_) {
    return Status::kTooManyActiveZones;
  }
  if (max_open_ != 0 && open_count_ + 1 > max_open_) {
    if (implicitly_opened_.empty()) return Status::kTooManyOpenZones;
    close_implicitly(implicitly_opened_.begin()->second);
  }
  if (needs_active) ++active_count_;
  ++open_count_;
  return Status::kSuccess;
}

void ZoneTable::close_implicitly(uint32_t index) {
  ZL_ASSERT(zones_[index].state == ZoneState::kImplicitlyOpened);
  set_state(index, ZoneState::kClosed);
  --open_count_;
  ++implicit_closes_;
}

Status ZoneTable::open_for_write(uint32_t index) {
  ZoneState state = zones_[index].state;
  if (zone_is_open(state)) return Status::kSuccess;
  ZL_ASSERT(state == ZoneState::kEmpty || state == ZoneState::kClosed);
  Status status = take_open_resource(index, state == ZoneState::kEmpty);
  if (status != Status::kSuccess) return status;
  set_state(index, ZoneState::kImplicitlyOpened);
  return Status::kSuccess;
}

void ZoneTable::advance(uint32_t index, uint64_t nlb) {
  Zone& z = zones_[index];
  ZL_ASSERT(zone_is_open(z.state));
  const uint64_t capacity = capacity_lbas(index);
  ZL_ASSERT(z.wp + nlb <= capacity);
  z.wp += nlb;
  z.data_end = z.wp;
  if (z.wp == capacity) {
    release(index);
    set_state(index, ZoneState::kFull);
  }
}

Status ZoneTable::open(uint32_t index) {
  ZoneState state = zones_[index].state;
  switch (state) {
    case ZoneState::kEmpty:
    case ZoneState::kClosed: {
      Status status = take_open_resource(index, state == ZoneState::kEmpty);
      if (status != Status::kSuccess) return status;
      set_state(index, ZoneState::kExplicitlyOpened);
      return Status::kSuccess;
    }
    case ZoneState::kImplicitlyOpened:
      set_state(index, ZoneState::kExplicitlyOpened);
      return Status::kSuccess;
    case ZoneState::kExplicitlyOpened:
      return Status::kSuccess;
    default:
      return Status::kInvalidZoneStateTransition;
  }
}

Status ZoneTable::close(uint32_t index) {
  switch (zones_[index].state) {
    case ZoneState::kImplicitlyOpened:
    case ZoneState::kExplicitlyOpened:
      --open_count_;
      set_state(index, ZoneState::kClosed);
      return Status::kSuccess;
    case ZoneState::kClosed:
      return Status::kSuccess;
    default:
      return Status::kInvalidZoneStateTransition;
  }
}

Status ZoneTable::finish(uint32_t index) {
  Zone& z = zones_[index];
  switch (z.state) {
    case ZoneState::kEmpty:
    case ZoneState::kImplicitlyOpened:
    case ZoneState::kExplicitlyOpened:
    case ZoneState::kClosed:
      release(index);
      z.wp = capacity_lbas(index);
      set_state(index, ZoneState::kFull);
      return Status::kSuccess;
    case ZoneState::kFull:
      return Status::kSuccess;
    default:
      return Status::kInvalidZoneStateTransition;
  }
}

Status ZoneTable::reset(uint32_t index) {
  Zone& z = zones_[index];
  switch (z.state) {
    case ZoneState::kImplicitlyOpened:
    case ZoneState::kExplicitlyOpened:
    case ZoneState::kClosed:
    case ZoneState::kFull:
      release(index);
      z.wp = 0;
      z.data_end = 0;
      set_state(index, ZoneState::kEmpty);
      return Status::kSuccess;
    case ZoneState::kEmpty:
      return Status::kSuccess;
    default:
      return Status::kInvalidZoneStateTransition;
  }
}

Status ZoneTable::offline(uint32_t index) {
  switch (zones_[index].state) {
    case ZoneState::kReadOnly:
      set_state(index, ZoneState::kOffline);
      zones_[index].wp = 0;
      zones_[index].data_end = 0;
      return Status::kSuccess;
    case ZoneState::kOffline:
      return Status::kSuccess;
    default:
      return Status::kInvalidZoneStateTransition;
  }
}

std::vector<uint32_t> ZoneTable::select_all_targets(ZoneAction action) const {
  std::vector<uint32_t> out;
  for (uint32_t i = 0; i < zones_.size(); ++i) {
    ZoneState s = zones_[i].state;
    bool selected = false;
    switch (action) {
      case ZoneAction::kOpen:
        selected = s == ZoneState::kClosed;
        break;
      case ZoneAction::kClose:
        selected = zone_is_open(s);
        break;
      case ZoneAction::kFinish:
        selected = zone_is_active(s);
        break;
      case ZoneAction::kReset:
        selected = zone_is_active(s) || s == ZoneState::kFull;
        break;
      case ZoneAction::kOffline:
        selected = s == ZoneState::kReadOnly;
        break;
      case ZoneAction::kNone:
        break;
    }
    if (selected) out.push_back(i);
  }
  return out;
}

Status ZoneTable::open_all(const std::vector<uint32_t>& closed_zones) {
  if (max_open_ != 0) {
    uint32_t explicitly_opened = open_count_ - static_cast<uint32_t>(implicitly_opened_.size());
    if (explicitly_opened + closed_zones.size() > max_open_) return Status::kTooManyOpenZones;
  }
  for (uint32_t index : closed_zones) {
    Status status = open(index);
    ZL_ASSERT(status == Status::kSuccess);
    (void)status;
  }
  return Status::kSuccess;
}

void ZoneTable::inject(uint32_t index, ZoneState state) {
  ZL_ASSERT(state == ZoneState::kReadOnly || state == ZoneState::kOffline);
  release(index);
  set_state(index, state);
  if (state == ZoneState::kOffline) {
    zones_[index].wp = 0;
    zones_[index].data_end = 0;
  }
}

void ZoneTable::release(uint32_t index) {
  ZoneState state = zones_[index].state;
  if (zone_is_open(state)) --open_count_;
  if (zone_is_active(state)) --active_count_;
}

void ZoneTable::set_state(uint32_t index, ZoneState state) {
  Zone& z = zones_[index];
  if (z.state == ZoneState::kImplicitlyOpened) implicitly_opened_.erase({z.open_seq, index});
  z.state = state;
  z.open_seq = 0;
  if (state == ZoneState::kImplicitlyOpened) {
    z.open_seq = next_open_seq_++;
    implicitly_opened_.insert({z.open_seq, index});
  }
}

void ZoneTable::recount() {
  open_count_ = 0;
  active_count_ = 0;
  implicitly_opened_.clear();
  for (uint32_t i = 0; i < zones_.size(); ++i) {
    const Zone& z = zones_[i];
    if (zone_is_open(z.state)) ++open_count_;
    if (zone_is_active(z.state)) ++active_count_;
    if (z.state == ZoneState::kImplicitlyOpened) implicitly_opened_.insert({z.open_seq, i});
    if (z.open_seq >= next_open_seq_) next_open_seq_ = z.open_seq + 1;
  }
}

bool ZoneTable::invariants_hold() const {
  uint32_t open = 0;
  uint32_t active = 0;
  size_t implicit = 0;
  for (uint32_t index = 0; index < zones_.size(); ++index) {
    const Zone& z = zones_[index];
    const uint64_t capacity = capacity_lbas(index);
    if (zone_is_open(z.state)) ++open;
    if (zone_is_active(z.state)) ++active;
    if (z.state == ZoneState::kImplicitlyOpened) ++implicit;
    if (z.wp > capacity || z.data_end > z.wp) return false;
    if (z.state == ZoneState::kEmpty && z.wp != 0) return false;
    if (z.state == ZoneState::kFull && z.wp != capacity) return false;
  }
  if (open != open_count_ || active != active_count_ || implicit != implicitly_opened_.size()) {
    return false;
  }
  if (max_open_ != 0 && open > max_open_) return false;
  if (max_active_ != 0 && active > max_active_) return false;
  return true;
}

}  // namespace zonelab
