// See block_map_state.h; the byte layout is in docs/image-format.md.
#include "zns/block_map_state.h"

#include <fmt/format.h>

#include "controller/device_state.h"

namespace zonelab {
namespace {

constexpr uint64_t kSlotRecordBytes = 12;

}  // namespace

void put_block_map(ImageState& state, const BlockMapState& map) {
  std::vector<uint8_t>& body = state.sections[kSectionBlockMap];
  body.clear();
  ByteWriter writer(body);
  writer.u32s(map.zone_slots);
  writer.u32(static_cast<uint32_t>(map.slots.size()));
  for (const Slot& slot : map.slots) {
    writer.u32(slot.stale_pages);
    writer.u64(slot.released_seq);
  }
  writer.u64(map.next_released_seq);
}

void put_block_map(ImageState& state, const BlockMap& map) {
  put_block_map(state, BlockMapState{map.slots_of_zones(), map.slots(), map.next_released_seq()});
}

Result<std::optional<BlockMapState>> get_block_map(const ImageState& state) {
  auto it = state.sections.find(kSectionBlockMap);
  if (it == state.sections.end()) return std::optional<BlockMapState>();
  const std::vector<uint8_t>& body = it->second;
  ByteReader reader(body.data(), body.size());
  BlockMapState map;
  if (!reader.u32s(kImageZoneCountMax, map.zone_slots) || !reader.has(4)) {
    return Error{fmt::format("block-map section: its zones do not fit in {} bytes", body.size())};
  }
  uint32_t slots = reader.u32();
  uint64_t rest = uint64_t{slots} * kSlotRecordBytes + 8;
  if (slots > kImageZoneCountMax || reader.remaining() != rest) {
    return Error{fmt::format("block-map section: {} bytes for {} zones and {} physical zones",
                             body.size(), map.zone_slots.size(), slots)};
  }
  map.slots.resize(slots);
  for (Slot& slot : map.slots) {
    slot.stale_pages = reader.u32();
    slot.released_seq = reader.u64();
  }
  map.next_released_seq = reader.u64();
  return std::optional<BlockMapState>(std::move(map));
}

}  // namespace zonelab
