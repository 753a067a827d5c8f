// The ZNS device's part of a device image: its zone table (zone records and
// the next open sequence), the flash's erase counts, the lifetime counters,
// and the block mapping (section 6, docs/image-format.md), encoded and
// checked here.
#include <fmt/format.h>

#include "controller/device_state.h"
#include "flash/flash_state.h"
#include "zns/block_map_state.h"
#include "zns/zns_device.h"

namespace zonelab {
namespace {

constexpr uint32_t kSectionFtl = 7;  // the conventional device's (refused here)
// The failed dies (zonelab inject --die): count u32, then each die u32
// (channel x dies_per_channel + way), ascending. Absent: none failed.
constexpr uint32_t kSectionFailedDies = 9;
// A volatile write cache's Flush marks: count u32, then each zone u32 and
// its durable end u64 (zone-relative LBAs), ascending zones, for the zones
// whose mark is not 0. Absent: none (or no volatile cache).
constexpr uint32_t kSectionFlushed = 10;

}  // namespace

void ZnsDevice::export_state(ImageState& state) const {
  state.config = config_;
  std::vector<ZoneRecord> zones(table_.zone_count());
  for (uint32_t i = 0; i < table_.zone_count(); ++i) {
    const Zone& z = table_.zone(i);
    zones[i] =
        ZoneRecord{static_cast<uint8_t>(z.state), z.wp, z.data_end, z.pages_programmed, z.open_seq};
  }
  put_zone_records(state, zones);
  put_next_open_seq(state, table_.next_open_seq());
  put_erase_counts(state, flash_.erase_counts());
  put_lifetime(state, lifetime());
  put_block_map(state, map_);
  if (failed_count_ != 0) {
    std::vector<uint8_t>& body = state.sections[kSectionFailedDies];
    body.clear();
    ByteWriter writer(body);
    writer.u32(failed_count_);
    for (uint32_t die = 0; die < failed_.size(); ++die) {
      if (failed_[die] != 0) writer.u32(die);
    }
  } else {
    state.sections.erase(kSectionFailedDies);
  }
  uint32_t marks = 0;
  for (uint64_t mark : flushed_lbas_) marks += mark != 0 ? 1 : 0;
  if (marks != 0) {
    std::vector<uint8_t>& body = state.sections[kSectionFlushed];
    body.clear();
    ByteWriter writer(body);
    writer.u32(marks);
    for (uint32_t zone = 0; zone < flushed_lbas_.size(); ++zone) {
      if (flushed_lbas_[zone] == 0) continue;
      writer.u32(zone);
      writer.u64(flushed_lbas_[zone]);
    }
  } else {
    state.sections.erase(kSectionFlushed);
  }
}

Outcome ZnsDevice::import_state(const ImageState& state) {
  if (state.sections.count(kSectionFtl) != 0) {
    return Error{"corrupt image: an ftl section in a ZNS image"};
  }
  auto zones_read = get_zone_records(state);
  if (!zones_read) return Error{"corrupt image: " + zones_read.error()};
  auto next_open_seq = get_next_open_seq(state);
  if (!next_open_seq) return Error{"corrupt image: " + next_open_seq.error()};
  auto erase_counts = get_erase_counts(state);
  if (!erase_counts) return Error{"corrupt image: " + erase_counts.error()};
  auto lifetime = get_lifetime(state);
  if (!lifetime) return Error{"corrupt image: " + lifetime.error()};
  auto stored_map = get_block_map(state);
  if (!stored_map) return Error{"corrupt image: " + stored_map.error()};
  std::vector<ZoneRecord> zones = std::move(zones_read).value();
  if (zones.size() != layout_.zone_count()) {
    return Error{fmt::format("corrupt image: {} zones stored, configuration has {}", zones.size(),
                             layout_.zone_count())};
  }
  if (erase_counts->size() != flash_.erase_counts().size()) {
    return Error{"corrupt image: erase counts do not match the flash geometry"};
  }
  std::vector<uint8_t> failed(flash_.dies(), 0);
  uint32_t failed_count = 0;
  if (auto it = state.sections.find(kSectionFailedDies); it != state.sections.end()) {
    ByteReader reader(it->second.data(), it->second.size());
    uint32_t count = reader.has(4) ? reader.u32() : UINT32_MAX;
    if (count > failed.size() || reader.remaining() != uint64_t{count} * 4) {
      return Error{"corrupt image: the failed-dies section does not hold its dies"};
    }
    for (uint32_t i = 0; i < count; ++i) {
      uint32_t die = reader.u32();
      if (die >= failed.size() || failed[die] != 0) {
        return Error{fmt::format("corrupt image: failed die {} of {}", die, failed.size())};
      }
      failed[die] = 1;
    }
    failed_count = count;
  }
  std::vector<uint64_t> flushed(front_.volatile_cache() ? layout_.zone_count() : 0, 0);
  if (auto it = state.sections.find(kSectionFlushed); it != state.sections.end()) {
    ByteReader reader(it->second.data(), it->second.size());
    uint32_t count = reader.has(4) ? reader.u32() : UINT32_MAX;
    if (!front_.volatile_cache() || count > flushed.size() ||
        reader.remaining() != uint64_t{count} * 12) {
      return Error{"corrupt image: the flush-marks section does not fit the device"};
    }
    for (uint32_t i = 0; i < count; ++i) {
      uint32_t zone = reader.u32();
      uint64_t mark = reader.u64();
      if (zone >= flushed.size() || mark == 0 || mark > zones[zone].data_end ||
          flushed[zone] != 0) {
        return Error{fmt::format("corrupt image: flush mark of zone {}", zone)};
      }
      flushed[zone] = mark;
    }
  }
  ZoneTable table(layout_.sets(), table_.max_open(), table_.max_active());
  BlockMap map(layout_, map_.lazy());
  if (!stored_map->has_value()) {
    // Stored before the block mapping was: direct, and an empty zone's
    // programmed pages are the old data an asynchronous reset left.
    if (map.lazy()) return Error{"corrupt image: lazy block mapping without its block map"};
    std::vector<Slot> slots(map.slot_count());
    for (uint32_t i = 0; i < zones.size(); ++i) {
      if (zones[i].data_end == 0) {
        slots[i].stale_pages = std::exchange(zones[i].pages_programmed, 0);
      }
    }
    Outcome restored = map.restore(map.slots_of_zones(), slots, 1);
    if (!restored) return restored;
  } else {
    const BlockMapState& stored = **stored_map;
    Outcome restored = map.restore(stored.zone_slots, stored.slots, stored.next_released_seq);
    if (!restored) return restored;
  }
  for (uint32_t i = 0; i < zones.size(); ++i) {
    const ZoneRecord& s = zones[i];
    const uint64_t cap = layout_.zone_capacity_lbas(i);
    const uint32_t slot = map.slot_of(i);
    bool holds_pages = s.data_end != 0 || s.pages_programmed != 0;
    if (s.state >= kZoneStateCount || s.wp > cap || s.data_end > s.wp ||
        (slot != BlockMap::kUnmapped && s.pages_programmed > layout_.slot_pages(slot)) ||
        (holds_pages && map.slot_of(i) == BlockMap::kUnmapped)) {
      return Error{fmt::format("corrupt image: zone {} has an impossible state", i)};
    }
    table.restore(
        i, Zone{static_cast<ZoneState>(s.state), s.wp, s.data_end, s.pages_programmed, s.open_seq});
  }
  table.set_next_open_seq(*next_open_seq);
  table.recount();
  if (!table.invariants_hold()) {
    return Error{"corrupt image: zone states break the open/active limits or write pointers"};
  }
  table_ = std::move(table);
  map_ = std::move(map);
  failed_ = std::move(failed);
  failed_count_ = failed_count;
  flushed_lbas_ = std::move(flushed);
  if (front_.buffer().enabled()) {
    // Partly written pages wait in the buffer for the rest of their data.
    for (uint32_t zone = 0; zone < layout_.zone_count(); ++zone) {
      front_.buffer().hold(partial_page_bytes(zone));
    }
  }
  flash_.erase_counts() = std::move(erase_counts).value();
  lifetime_write_bytes_ = lifetime->host_write_bytes;
  lifetime_read_bytes_ = lifetime->host_read_bytes;
  lifetime_commands_ = lifetime->commands;
  return {};
}

}  // namespace zonelab
