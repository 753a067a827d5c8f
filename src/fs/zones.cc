// Data zone accounting, tokens and allocation; see zones.h.
#include "fs/zones.h"

#include <algorithm>

namespace zonelab::fs {

ZoneManager::ZoneManager(uint32_t first_zone, uint32_t zone_count, uint64_t zone_size_lbas,
                         uint64_t capacity_lbas, ZoneLimits limits)
    : first_(first_zone), limits_(limits), zone_size_lbas_(zone_size_lbas) {
  ZL_ASSERT(limits.open >= 2 && limits.active >= 2 && limits.open <= limits.active);
  ZL_ASSERT(first_zone < zone_count);
  for (uint32_t z = first_zone; z < zone_count; ++z) {
    DataZone zone;
    zone.index = z;
    zone.start_lba = uint64_t{z} * zone_size_lbas;
    zone.capacity_lbas = capacity_lbas;
    zones_.push_back(zone);
  }
}

void ZoneManager::load(uint32_t index, uint64_t wp_lbas, bool finished) {
  DataZone& z = zone(index);
  z.wp_lbas = std::min(wp_lbas, z.capacity_lbas);
  z.finished = finished || z.wp_lbas == z.capacity_lbas;
}

void ZoneManager::add_live(const Extent& blocks, uint64_t block_bytes) {
  DataZone& z = zone(blocks.zone);
  z.live_blocks += blocks.length / block_bytes;
  ZL_ASSERT(z.live_blocks <= z.wp_lbas);
}

void ZoneManager::remove_live(const Extent& blocks, uint64_t block_bytes, uint64_t seq) {
  DataZone& z = zone(blocks.zone);
  uint64_t n = blocks.length / block_bytes;
  ZL_ASSERT(z.live_blocks >= n);
  z.live_blocks -= n;
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

uint32_t ZoneManager::empty_count() const {
  return static_cast<uint32_t>(std::count_if(zones_.begin(), zones_.end(), [](const DataZone& z) {
    return z.empty() && !z.held() && !z.collecting;
  }));
}

bool ZoneManager::revoke_idle(WriterId asking, bool part_way) {
  DataZone* best = nullptr;
  for (DataZone& z : zones_) {
    if (!z.held() || z.writing || z.writer == asking || z.collecting) continue;
    if (part_way && !z.written_part_way()) continue;
    if (best == nullptr || z.room_lbas() < best->room_lbas()) best = &z;
  }
  if (best == nullptr) return false;
  best->writer = kNoWriter;
  ++revocations_;
  return true;
}

void ZoneManager::take(DataZone& z, WriterId writer, Lifetime lifetime, IoClass io_class) {
  ZL_ASSERT(!z.held() && !z.collecting && z.room_lbas() > 0);
  z.writer = writer;
  z.writer_class = io_class;
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
                                              std::span<const uint32_t> stripe) {
  ZL_ASSERT(writer != kNoWriter);
  Allocation out;
  // The log and garbage collection may use the last token of each kind.
  const bool privileged = io_class == IoClass::kWal || writer == kGcWriter;
  const uint32_t open_cap = privileged ? limits_.open : limits_.open - 1;
  const uint32_t active_cap = privileged ? limits_.active : limits_.active - 1;

  if (held_count() >= open_cap && !revoke_idle(writer, false)) return out;  // kWait
  if (held_count() >= open_cap) return out;

  const PlacementRequest request{lifetime, io_class, writer == kGcWriter, stripe};
  Placement placement = policy.place(*this, request);
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

  const uint32_t reserve = keep_empty_for_gc && writer != kGcWriter ? 1 : 0;
  if (empty_count() <= reserve) {
    out.kind = Allocation::Kind::kNoSpace;
    return out;
  }
  std::optional<uint32_t> chosen = policy.choose_empty(*this, request);
  ZL_ASSERT(chosen && "empty_count() found an empty zone");
  DataZone& z = zone(*chosen);
  ZL_ASSERT(z.empty() && !z.held() && !z.collecting);
  take(z, writer, lifetime, io_class);
  out.kind = Allocation::Kind::kZone;
  out.zone = z.index;
  out.fresh = true;
  return out;
}

std::optional<uint32_t> ZoneManager::take_any_room(WriterId writer, Lifetime lifetime,
                                                   IoClass io_class) {
  auto roomiest = [&]() -> DataZone* {
    DataZone* best = nullptr;
    for (DataZone& z : zones_) {
      if (!z.written_part_way() || z.held() || z.collecting || z.room_lbas() == 0) continue;
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
  z.writer = kNoWriter;
  z.writing = false;
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
  v.size_lbas = zone_size_lbas_;
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
