// A power cut on a drive whose write-back buffer is a volatile write cache
// (buffer.power_loss_protection = off): what each zone keeps, and the cut
// itself. See zns_device.h and docs/device-model.md, "A production drive".
#include <fmt/format.h>

#include <algorithm>

#include "zns/zns_device.h"
#include "zonelab/assert.h"

namespace zonelab {

// Keeps a zone's first `durable_lbas` of data. The write pointer comes back
// to the end of what is kept; a zone that keeps nothing is empty (its
// programmed pages are old data its next first write erases), one that
// keeps some is closed -- or full, when closing it would break the active
// limit.
void ZnsDevice::lose(uint32_t zone, uint64_t durable_lbas, bool keep_data) {
  Zone z = table_.zone(zone);
  ZL_ASSERT(durable_lbas < z.data_end);
  uint64_t lost = z.data_end - durable_lbas;
  ++front_.counters().lost_zones;
  front_.counters().lost_bytes += lost * layout_.lba_size_bytes();
  const uint64_t flushed = flushed_lbas_[zone];
  uint64_t partial = partial_page_bytes(zone);  // with a fill's data
  cancel_fill(zone);
  forget_buffered(zone, partial);
  flushed_lbas_[zone] = std::min(flushed, durable_lbas);
  uint32_t slot = map_.slot_of(zone);
  if (durable_lbas == 0) {
    if (slot != BlockMap::kUnmapped) {
      Slot& s = map_.mutable_slot(slot);
      s.stale_pages = std::max(s.stale_pages, z.pages_programmed);
      if (map_.lazy()) map_.unmap(zone);
    }
    z = Zone{};
  } else {
    bool was_active = zone_is_active(z.state);
    // Pages past the kept ones are old data now: the zone programs them
    // again when it is rewritten, and their blocks are erased first.
    auto kept_pages = static_cast<uint32_t>(
        std::min<uint64_t>(z.pages_programmed, durable_lbas / layout_.lbas_per_page()));
    if (slot != BlockMap::kUnmapped && kept_pages < z.pages_programmed) {
      Slot& s = map_.mutable_slot(slot);
      s.stale_pages = std::max(s.stale_pages, z.pages_programmed);
    }
    z.pages_programmed = kept_pages;
    z.wp = durable_lbas;
    z.data_end = durable_lbas;
    z.state = ZoneState::kClosed;
    if (!was_active && table_.max_active() != 0 && table_.active_count() >= table_.max_active()) {
      z.state = ZoneState::kFull;
      z.wp = layout_.zone_capacity_lbas(zone);
    }
  }
  table_.restore(zone, z);
  table_.recount();
  // The record of the loss is durable before the data goes; if it cannot
  // be, the data stays (above the write pointer, where nothing reads it).
  if (!keep_data && log_destroying())
    backing_->discard(layout_.zone_start_lba(zone) + durable_lbas, lost);
}

uint32_t ZnsDevice::power_loss(bool keep_data) {
  if (!front_.volatile_cache()) return 0;
  ++front_.counters().power_losses;
  const uint64_t now = sim_.now_ns();
  const uint64_t lpp = layout_.lbas_per_page();
  uint32_t zones = 0;
  for (uint32_t zone = 0; zone < layout_.zone_count(); ++zone) {
    const Zone& z = table_.zone(zone);
    if (z.data_end == 0 || z.state == ZoneState::kOffline || z.state == ZoneState::kReadOnly) {
      continue;
    }
    // On flash: the pages before the first whose program has not ended.
    uint64_t on_flash = uint64_t{z.pages_programmed} * lpp;
    for (const Draining& d : draining_[zone]) {
      if (d.end_ns > now) {
        on_flash = std::min(on_flash, uint64_t{d.page} * lpp);
        break;
      }
    }
    uint64_t durable = std::min(z.data_end, std::max(flushed_lbas_[zone], on_flash));
    if (durable >= z.data_end) continue;
    if (log_ != nullptr && !keep_data) log_->lost(zone, durable);
    lose(zone, durable, keep_data);
    ++zones;
  }
  return zones;
}

Outcome ZnsDevice::replay_loss(uint32_t zone, uint64_t durable_lbas) {
  if (!front_.volatile_cache()) {
    return Error{"corrupt image: a power-loss record on a device with no volatile write cache"};
  }
  if (zone >= layout_.zone_count() || durable_lbas >= table_.zone(zone).data_end) {
    return Error{
        fmt::format("corrupt image: a power-loss record of zone {} does not fit it", zone)};
  }
  lose(zone, durable_lbas);
  return {};
}

}  // namespace zonelab
