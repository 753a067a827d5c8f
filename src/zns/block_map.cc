// Zone -> physical zone mapping; see block_map.h.
#include "zns/block_map.h"

#include <fmt/format.h>

#include "zonelab/assert.h"

namespace zonelab {

BlockMap::BlockMap(const ZoneLayout& layout, bool lazy)
    : lazy_(lazy || layout.flex()),
      layout_(&layout),
      slot_of_zone_(layout.zone_count(), kUnmapped),
      slots_(layout.slot_count(lazy_)) {
  if (!lazy_) {
    for (uint32_t zone = 0; zone < layout.zone_count(); ++zone) slot_of_zone_[zone] = zone;
    return;
  }
  rebuild_free();
}

void BlockMap::rebuild_free() {
  free_.assign(layout_->group_count(), {});
  std::vector<bool> taken(slots_.size(), false);
  for (uint32_t slot : slot_of_zone_) {
    if (slot != kUnmapped) taken[slot] = true;
  }
  for (uint32_t slot = 0; slot < slots_.size(); ++slot) {
    if (!taken[slot]) free_[layout_->group_of_slot(slot)].insert(free_key(slot));
  }
}

uint32_t BlockMap::clean_free_slots() const {
  if (!lazy_) return 0;
  std::vector<bool> mapped(slots_.size(), false);
  for (uint32_t slot : slot_of_zone_) {
    if (slot != kUnmapped) mapped[slot] = true;
  }
  uint32_t clean = 0;
  for (uint32_t s = 0; s < slots_.size(); ++s) {
    if (!mapped[s] && slots_[s].stale_pages == 0) ++clean;
  }
  return clean;
}

uint32_t BlockMap::free_slots() const {
  size_t count = 0;
  for (const auto& group : free_) count += group.size();
  return static_cast<uint32_t>(count);
}

uint32_t BlockMap::map(uint32_t zone, const std::function<uint64_t(uint32_t slot)>& cost) {
  ZL_ASSERT(lazy_ && slot_of_zone_[zone] == kUnmapped);
  // A group has as many slots as zones at least, so one is always free.
  auto& pool = free_[layout_->group_of_zone(zone)];
  ZL_ASSERT(!pool.empty());
  auto chosen = pool.begin();
  if (cost) {
    uint64_t best = UINT64_MAX;
    for (auto it = pool.begin(); it != pool.end(); ++it) {
      uint64_t c = cost(std::get<2>(*it));
      if (c < best) {
        best = c;
        chosen = it;
      }
    }
  }
  uint32_t slot = std::get<2>(*chosen);
  pool.erase(chosen);
  slot_of_zone_[zone] = slot;
  return slot;
}

std::vector<uint32_t> BlockMap::free_slots_of(uint32_t zone) const {
  std::vector<uint32_t> out;
  if (!lazy_) return out;
  for (const FreeKey& key : free_[layout_->group_of_zone(zone)]) out.push_back(std::get<2>(key));
  return out;
}

void BlockMap::unmap(uint32_t zone) {
  ZL_ASSERT(lazy_);
  uint32_t slot = slot_of_zone_[zone];
  if (slot == kUnmapped) return;
  slot_of_zone_[zone] = kUnmapped;
  slots_[slot].released_seq = next_released_seq_++;
  free_[layout_->group_of_slot(slot)].insert(free_key(slot));
}

Outcome BlockMap::restore(const std::vector<uint32_t>& slot_of_zone, const std::vector<Slot>& slots,
                          uint64_t next_released_seq) {
  if (slot_of_zone.size() != slot_of_zone_.size() || slots.size() != slots_.size()) {
    return Error{fmt::format(
        "corrupt image: block mapping has {} zones and {} physical zones, the configuration "
        "{} and {}",
        slot_of_zone.size(), slots.size(), slot_of_zone_.size(), slots_.size())};
  }
  std::vector<bool> taken(slots.size(), false);
  for (uint32_t zone = 0; zone < slot_of_zone.size(); ++zone) {
    uint32_t slot = slot_of_zone[zone];
    bool fits = lazy_
                    ? slot == kUnmapped || (slot < slots.size() && layout_->group_of_slot(slot) ==
                                                                       layout_->group_of_zone(zone))
                    : slot == zone;
    if (!fits || (slot != kUnmapped && taken[slot])) {
      return Error{fmt::format("corrupt image: zone {} maps to an impossible physical zone", zone)};
    }
    if (slot != kUnmapped) taken[slot] = true;
  }
  for (uint32_t slot = 0; slot < slots.size(); ++slot) {
    if (slots[slot].stale_pages > layout_->slot_pages(slot) ||
        slots[slot].released_seq >= next_released_seq) {
      return Error{fmt::format("corrupt image: physical zone {} has an impossible state", slot)};
    }
  }
  slot_of_zone_ = slot_of_zone;
  slots_ = slots;
  next_released_seq_ = next_released_seq;
  if (lazy_) rebuild_free();
  return {};
}

}  // namespace zonelab
