// Zone and LBA lookups over a namespace's zone sets (zonelab/device.h).
#include "zonelab/assert.h"
#include "zonelab/device.h"

namespace zonelab {

uint32_t zone_set_of_zone(const std::vector<ZoneSetInfo>& sets, uint32_t zone) {
  ZL_ASSERT(!sets.empty());
  uint32_t set = 0;
  while (set + 1 < sets.size() && zone >= sets[set + 1].first_zone) ++set;
  return set;
}

uint32_t zone_set_of_lba(const std::vector<ZoneSetInfo>& sets, uint64_t lba) {
  ZL_ASSERT(!sets.empty());
  uint32_t set = 0;
  while (set + 1 < sets.size() && lba >= sets[set + 1].first_lba) ++set;
  return set;
}

std::vector<ZoneSetInfo> uniform_zone_sets(uint64_t size_lbas, uint64_t capacity_lbas,
                                           uint32_t count) {
  return {ZoneSetInfo{size_lbas, capacity_lbas, count, 0, 0}};
}

}  // namespace zonelab
