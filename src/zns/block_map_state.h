// The block mapping's part of a device image (section 6,
// docs/image-format.md): each zone's physical zone and each physical zone's
// stale pages and release order. Absent in images made before it was
// stored, which are direct-mapped.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "store/image.h"
#include "zns/block_map.h"
#include "zonelab/result.h"

namespace zonelab {

inline constexpr uint32_t kSectionBlockMap = 6;

struct BlockMapState {
  std::vector<uint32_t> zone_slots;  // each zone's physical zone (kUnmapped: none)
  std::vector<Slot> slots;
  uint64_t next_released_seq = 1;
};

void put_block_map(ImageState& state, const BlockMapState& map);
void put_block_map(ImageState& state, const BlockMap& map);
// Nothing when the section is absent; refuses counts that disagree with
// the section's length or pass the limits. BlockMap::restore checks the
// mapping against the device's layout.
Result<std::optional<BlockMapState>> get_block_map(const ImageState& state);

}  // namespace zonelab
