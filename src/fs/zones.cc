// Data zone accounting, tokens and allocation; see zones.h.
#include "fs/zones.h"

#include <algorithm>
#include <functional>

namespace zonelab::fs {

ZoneManager::ZoneManager(uint32_t first_zone, const std::vector<ZoneSetInfo>& sets,
                         ZoneLimits limits)
    : first_(first_zone), limits_(limits) {
  ZL_ASSERT(limits.open >= 2 && limits.active >= 2 && limits.open <= limits.active);
  for (uint32_t s = 0; s < sets.size(); ++s) {
    const ZoneSetInfo& set = sets[s];
    const size_t before = zones_.size();
    for (uint32_t z = std::max(first_zone, set.first_zone); z < set.first_zone + set.zone_count;
         ++z) {
      DataZone zone;
      zone.index = z;
      zone.set = s;
      zone.start_lba = set.start_of(z);
      zone.size_lbas = set.zone_size_lbas;
      zone.capacity_lbas = set.zone_capacity_lbas;
      zones_.push_back(zone);
    }
    set_zones_.push_back(static_cast<uint32_t>(zones_.size() - before));
    set_capacity_.push_back(set.zone_capacity_lbas);
  }
  set_live_.assign(set_zones_.size(), 0);
  ZL_ASSERT(!zones_.empty() && zones_.front().index == first_zone);
}

void ZoneManager::load(uint32_t index, uint64_t wp_lbas, bool finished) {
  DataZone& z = zone(index);
  z.wp_lbas = std::min(wp_lbas, z.capacity_lbas);
  z.finished = finished || z.wp_lbas == z.capacity_lbas;
}

void ZoneManager::add_live(const Extent& blocks, uint64_t block_bytes) {
  DataZone& z = zone(blocks.zone);
  z.live_blocks += blocks.length / block_bytes;
  set_live_[z.set] += blocks.length / block_bytes;
  ZL_ASSERT(z.live_blocks <= z.wp_lbas);
}

void ZoneManager::remove_live(const Extent& blocks, uint64_t block_bytes, uint64_t seq) {
  DataZone& z = zone(blocks.zone);
  uint64_t n = blocks.length / block_bytes;
  ZL_ASSERT(z.live_blocks >= n);
  z.live_blocks -= n;
  set_live_[z.set] -= n;
  z.freed_seq = std::max(z.freed_seq, seq);
}

bool ZoneManager::busy_elsewhere(WriterId writer) const {
  return std::any_of(zones_.begin(), zones_.end(), [&](const DataZone& z) {
    return (z.held() && z.writing && z.writer != writer) || z.collecting ||
           (z.live_blocks == 0 && !z.empty() && z.readers > 0);
  });
}

uint32_t ZoneManager::held_count() const {
  return static_cast<uint32_t>(
      std::count_if(zones_.begin(), zones_.end(), [](const DataZone& z) { return z.held(); }));
}

uint32_t ZoneManager::active_count() const {
  return static_cast<uint32_t>(
      std::count_if(zones_.begin(), zones_.end(), [](const DataZone& z) { return z.active(); }));
}

uint32_t ZoneManager::empty_count(SetMask sets) const {
  return static_cast<uint32_t>(std::count_if(zones_.begin(), zones_.end(), [&](const DataZone& z) {
    return z.empty() && !z.held() && !z.collecting && (sets & set_bit(z.set)) != 0;
  }));
}

double ZoneManager::live_share(SetMask sets) const {
  uint64_t live = 0;
  uint64_t capacity = 0;
  for (uint32_t s = 0; s < set_count(); ++s) {
    if ((sets & set_bit(s)) == 0) continue;
    live += set_live_[s];
    capacity += uint64_t{set_zones_[s]} * set_capacity_[s];
  }
  return capacity == 0 ? 0.0 : static_cast<double>(live) / static_cast<double>(capacity);
}

SetZoneTable::SetZoneTable(const ZoneManager& zones, SetMask sets) : zones_(zones) {
  for (uint32_t s = 0; s < zones.set_count(); ++s) {
    if (zones.zones_in_set(s) != 0 && (sets & set_bit(s)) == 0) every_zone_ = false;
  }
  if (every_zone_) return;
  for (uint32_t i = 0; i < zones.count(); ++i) {
    if ((sets & set_bit(zones.zones()[i].set)) != 0) indexes_.push_back(i);
  }
}

uint32_t SetZoneTable::size() const {
  return every_zone_ ? zones_.size() : static_cast<uint32_t>(indexes_.size());
}

ZoneView SetZoneTable::at(uint32_t index) const {
  return zones_.at(every_zone_ ? index : indexes_[index]);
}

bool ZoneManager::revoke_idle(WriterId asking, bool part_way) {
  DataZone* best = nullptr;
  for (DataZone& z : zones_) {
    if (!z.held() || z.writing || z.writer == asking || z.collecting) continue;
    if (part_way && !z.written_part_way()) continue;
    if (best == nullptr || z.room_lbas() < best->room_lbas()) best = &z;
  }
  if (best == nullptr) return false;
  set_writer(*best, kNoWriter, IoClass::kOther);
  ++revocations_;
  return true;
}

void ZoneManager::change(DataZone& z, const std::function<void()>& fn) {
  const uint32_t g = z.index < groups_.size() ? groups_[z.index] : kNoGroup;
  auto flush_writing = [&] { return z.held() && z.writer_class == IoClass::kFlush && z.writing; };
  const bool before = flush_writing();
  fn();
  const bool after = flush_writing();
  if (g == kNoGroup || before == after) return;
  if (flush_writing_.size() <= g) flush_writing_.resize(g + 1, 0);
  if (after) {
    ++flush_writing_[g];
  } else {
    --flush_writing_[g];
  }
}

void ZoneManager::set_writer(DataZone& z, WriterId writer, IoClass io_class) {
  change(z, [&] {
    z.writer = writer;
    z.writer_class = io_class;
  });
}

void ZoneManager::set_writing(uint32_t zone, bool writing) {
  DataZone& z = this->zone(zone);
  change(z, [&] { z.writing = writing; });
}

uint32_t ZoneManager::flush_writing_in_group_of(uint32_t zone) const {
  const uint32_t g = zone < groups_.size() ? groups_[zone] : kNoGroup;
  return g != kNoGroup && g < flush_writing_.size() ? flush_writing_[g] : 0;
}

void ZoneManager::take(DataZone& z, WriterId writer, Lifetime lifetime, IoClass io_class) {
  ZL_ASSERT(!z.held() && !z.collecting && z.room_lbas() > 0);
  set_writer(z, writer, io_class);
  if (z.empty()) {
    z.lifetime = lifetime;
    z.io_class = io_class;
  } else {
    z.lifetime = std::max(z.lifetime, lifetime);
  }
}

ZoneManager::Allocation ZoneManager::allocate(PlacementPolicy& policy, Lifetime lifetime,
                                              IoClass io_class, WriterId writer,
                                              bool keep_empty_for_gc,
                                              std::span<const uint32_t> stripe, SetMask sets) {
  ZL_ASSERT(writer != kNoWriter);
  Allocation out;
  // The log and garbage collection may use the last token of each kind.
  const bool privileged = io_class == IoClass::kWal || writer == kGcWriter;
  const uint32_t open_cap = privileged ? limits_.open : limits_.open - 1;
  const uint32_t active_cap = privileged ? limits_.active : limits_.active - 1;

  if (held_count() >= open_cap && !revoke_idle(writer, false)) return out;  // kWait
  if (held_count() >= open_cap) return out;

  const PlacementRequest request{lifetime, io_class, writer == kGcWriter, stripe};
  // On a namespace of zone sets the policy sees the writer's sets only.
  Placement placement = policy.place(SetZoneTable(*this, sets), request);
  if (placement.kind == Placement::Kind::kContinue) {
    DataZone& z = zone(placement.zone);
    ZL_ASSERT(z.written_part_way() && !z.held() && !z.collecting && z.room_lbas() > 0);
    take(z, writer, lifetime, io_class);
    out.kind = Allocation::Kind::kZone;
    out.zone = placement.zone;
    return out;
  }

  // A new zone takes an active token.
  if (active_count() >= active_cap) {
    // Free one: finish the fullest zone written part way that nobody
    // holds -- or take one back from an idle writer first.
    auto fullest = [&]() -> DataZone* {
      DataZone* best = nullptr;
      for (DataZone& z : zones_) {
        if (!z.written_part_way() || z.held() || z.collecting) continue;
        if (best == nullptr || z.room_lbas() < best->room_lbas()) best = &z;
      }
      return best;
    };
    DataZone* victim = fullest();
    if (victim == nullptr && revoke_idle(writer, true)) victim = fullest();
    if (victim == nullptr) return out;  // kWait: every active zone is being written
    victim->collecting = true;          // the caller's while it finishes it
    out.kind = Allocation::Kind::kFinish;
    out.zone = victim->index;
    return out;
  }

  // Each set keeps its last empty zone for garbage collection.
  const uint32_t reserve = keep_empty_for_gc && writer != kGcWriter ? 1 : 0;
  SetMask open_sets = 0;
  for (uint32_t s = 0; s < set_count(); ++s) {
    if ((sets & set_bit(s)) != 0 && empty_count(set_bit(s)) > reserve) open_sets |= set_bit(s);
  }
  if (open_sets == 0) {
    out.kind = Allocation::Kind::kNoSpace;
    return out;
  }
  std::optional<uint32_t> chosen = policy.choose_empty(SetZoneTable(*this, open_sets), request);
  ZL_ASSERT(chosen && "empty_count() found an empty zone");
  DataZone& z = zone(*chosen);
  ZL_ASSERT(z.empty() && !z.held() && !z.collecting && (open_sets & set_bit(z.set)) != 0);
  take(z, writer, lifetime, io_class);
  out.kind = Allocation::Kind::kZone;
  out.zone = z.index;
  out.fresh = true;
  return out;
}

std::optional<uint32_t> ZoneManager::take_any_room(WriterId writer, Lifetime lifetime,
                                                   IoClass io_class, SetMask sets) {
  auto roomiest = [&]() -> DataZone* {
    DataZone* best = nullptr;
    for (DataZone& z : zones_) {
      if (!z.written_part_way() || z.held() || z.collecting || z.room_lbas() == 0) continue;
      if ((sets & set_bit(z.set)) == 0) continue;
      if (best == nullptr || z.room_lbas() > best->room_lbas()) best = &z;
    }
    return best;
  };
  // It needs an open token like any zone a writer holds.
  if (held_count() >= limits_.open && !revoke_idle(writer, false)) return std::nullopt;
  DataZone* z = roomiest();
  if (z == nullptr && revoke_idle(writer, true)) z = roomiest();
  if (z == nullptr) return std::nullopt;
  take(*z, writer, lifetime, io_class);
  z->lifetime = std::max(z->lifetime, lifetime);
  return z->index;
}

void ZoneManager::release(uint32_t index, bool finish) {
  DataZone& z = zone(index);
  set_writer(z, kNoWriter, IoClass::kOther);
  set_writing(index, false);
  if (finish) z.finished = true;
}

void ZoneManager::mark_reset(uint32_t index) {
  DataZone& z = zone(index);
  ZL_ASSERT(z.live_blocks == 0);
  ZL_ASSERT(!z.held());
  ZL_ASSERT(z.readers == 0);
  z.wp_lbas = 0;
  z.finished = false;
  z.collecting = false;
  z.lifetime = Lifetime::kNotSet;
  z.io_class = IoClass::kOther;
}

std::vector<uint32_t> ZoneManager::resettable(uint64_t durable_seq) const {
  std::vector<uint32_t> out;
  for (const DataZone& z : zones_) {
    if (z.live_blocks == 0 && !z.held() && !z.collecting && z.readers == 0 && !z.empty() &&
        z.freed_seq <= durable_seq) {
      out.push_back(z.index);
    }
  }
  return out;
}

ZoneView ZoneManager::view(const DataZone& z) const {
  ZoneView v;
  v.zone = z.index;
  v.set = z.set;
  v.size_lbas = z.size_lbas;
  v.capacity_lbas = z.capacity_lbas;
  v.written_lbas = z.wp_lbas;
  v.room_lbas = z.room_lbas();
  v.live_lbas = z.live_blocks;
  v.lifetime = z.lifetime;
  v.io_class = z.io_class;
  v.group = z.index < groups_.size() ? groups_[z.index] : kNoGroup;
  v.held = z.held();
  v.writer_class = z.writer_class;
  v.readers = z.readers;
  v.collecting = z.collecting;
  v.finished = z.finished;
  return v;
}

}  // namespace zonelab::fs
