// Where zones live: the LBA layout of the namespace (zone size, capacity,
// count) and the zone -> parallel-unit mapping of seed 002 (SU, MU, FU).
//
// A zone spans `channels_per_zone` channels x `dies_per_zone` dies and all
// planes of those dies; these are its units. The units of the device form
// groups; zone z belongs to group z mod groups (stride addressing, so
// neighbouring zones land on different units), and within its group takes
// the next `blocks_per_zone_unit` blocks of every plane. A zone's pages are
// striped across its units: page p goes to unit p mod units, channels
// first, then dies, then planes, so a sequential write fans out over every
// channel of the zone before it reuses one.
#pragma once

#include <cstdint>

#include "zonelab/config.h"
#include "zonelab/result.h"

namespace zonelab {

struct FlashPage {
  uint32_t plane;  // flat plane index (see Flash::plane_index)
  uint32_t block;
  uint32_t page;
};

class ZoneLayout {
 public:
  // Checks the configuration as a whole (stripe alignment, limits, fit).
  static Result<ZoneLayout> make(const Config& config);

  uint64_t lba_size_bytes() const { return lba_size_bytes_; }
  uint32_t lbas_per_page() const { return lbas_per_page_; }
  uint64_t page_size_bytes() const { return page_size_bytes_; }
  uint32_t zone_count() const { return zone_count_; }
  uint64_t zone_size_lbas() const { return zone_size_lbas_; }
  uint64_t zone_capacity_lbas() const { return zone_capacity_lbas_; }
  uint64_t capacity_lbas() const { return zone_size_lbas_ * zone_count_; }
  uint64_t zasl_lbas() const { return zasl_lbas_; }
  // The active and open limits (0: none): the configuration's, bounded by
  // the open-block budget.
  uint32_t max_active() const { return max_active_; }
  uint32_t max_open() const { return max_open_; }
  // Flash blocks a zone keeps open while active: one in each of its planes.
  uint32_t open_blocks_per_zone() const { return units_per_zone_; }
  uint32_t units_per_zone() const { return units_per_zone_; }
  uint32_t pages_per_zone() const { return pages_per_zone_; }
  uint32_t pages_per_zone_unit() const { return pages_per_zone_unit_; }
  uint32_t blocks_per_zone_unit() const { return blocks_per_zone_unit_; }
  uint32_t groups() const { return groups_; }
  uint32_t max_zones() const { return max_zones_; }
  uint64_t stripe_bytes() const { return stripe_bytes_; }

  uint32_t zone_of_lba(uint64_t lba) const { return static_cast<uint32_t>(lba / zone_size_lbas_); }
  uint64_t zone_start_lba(uint32_t zone) const { return zone_size_lbas_ * zone; }

  // The flash behind a physical zone (a slot, see block_map.h; under direct
  // mapping zone z uses slot z). Flat plane index of unit `unit` of `slot`.
  uint32_t unit_plane(uint32_t slot, uint32_t unit) const;
  // The flash page behind zone-relative page `page` of `slot`.
  FlashPage locate(uint32_t slot, uint32_t page) const;
  // Pages of a zone that unit `unit` holds when the zone's first `pages`
  // pages are programmed.
  uint32_t unit_pages(uint32_t unit, uint32_t pages) const {
    return pages / units_per_zone_ + (unit < pages % units_per_zone_ ? 1u : 0u);
  }
  // First block of `slot` in each of its planes.
  uint32_t first_block(uint32_t slot) const { return (slot / groups_) * blocks_per_zone_unit_; }

 private:
  uint64_t lba_size_bytes_ = 0;
  uint32_t lbas_per_page_ = 0;
  uint64_t page_size_bytes_ = 0;
  uint32_t zone_count_ = 0;
  uint64_t zone_size_lbas_ = 0;
  uint64_t zone_capacity_lbas_ = 0;
  uint64_t zasl_lbas_ = 0;
  uint64_t stripe_bytes_ = 0;
  uint32_t dies_per_channel_ = 0;
  uint32_t planes_per_die_ = 0;
  uint32_t pages_per_block_ = 0;
  uint32_t channels_per_zone_ = 0;
  uint32_t dies_per_zone_ = 0;
  uint32_t units_per_zone_ = 0;
  uint32_t channel_groups_ = 0;
  uint32_t groups_ = 0;
  uint32_t pages_per_zone_ = 0;
  uint32_t pages_per_zone_unit_ = 0;
  uint32_t blocks_per_zone_unit_ = 0;
  uint32_t max_zones_ = 0;
  uint32_t max_active_ = 0;
  uint32_t max_open_ = 0;
};

}  // namespace zonelab
