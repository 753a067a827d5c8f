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
//
// A FlexZNS format (zns.format, zns.parity.placement; seed 001 §III) lays
// zones out differently: zone sets of several sizes, each zone a flash block
// group (FBG: one block in every plane of `dies` consecutive dies of one
// superblock, see flash/flex_layout.h), taken at the zone's first write. A
// physical zone ("slot") is then an FBG, numbered set after set; its pages
// are striped over its data dies first, then planes. Die d of the flash is
// channel d mod channels, way d / channels, so an FBG's consecutive dies
// spread over the channels. A stripe is one page of the same plane and
// block offset on every die of the FBG: zone pages [r x data dies,
// (r + 1) x data dies) form stripe r, whose parity is page r of the FBG's
// parity chunk (in-zone: the FBG's last die; separate: the parity area).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "common/divisor.h"
#include "flash/flex_layout.h"
#include "zonelab/assert.h"
#include "zonelab/config.h"
#include "zonelab/device.h"
#include "zonelab/result.h"

namespace zonelab {

struct FlashPage {
  uint32_t plane;  // flat plane index (see Flash::plane_index)
  uint32_t block;
  uint32_t page;
};

// One FBG of a FlexZNS format, as the device uses it.
struct FlexSlot {
  uint32_t set = 0;
  uint32_t superblock = 0;
  uint32_t first_die = 0;
  uint32_t dies = 0;       // dies of the FBG
  uint32_t data_dies = 0;  // of those, holding data (in-zone parity: dies - 1)
  // Where the parity of the FBG's stripes lives (none without parity; two
  // copies for a superblock-wide FBG in the parity area).
  std::vector<ParityChunk> parity;
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
  uint64_t capacity_lbas() const { return flex() ? capacity_lbas_ : zone_size_lbas_ * zone_count_; }
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

  uint32_t zone_of_lba(uint64_t lba) const {
    if (!flex()) return static_cast<uint32_t>(zone_size_divisor_.quotient(lba));
    return zonelab::zone_of_lba(sets_, lba);
  }
  // The zone page that holds zone-relative LBA `zone_lba`.
  uint32_t page_of_lba(uint64_t zone_lba) const {
    return static_cast<uint32_t>(page_divisor_.quotient(zone_lba));
  }
  uint64_t zone_start_lba(uint32_t zone) const {
    if (!flex()) return zone_size_lbas_ * zone;
    return zonelab::zone_start_lba(sets_, zone);
  }
  uint32_t set_of_zone(uint32_t zone) const { return flex() ? zone_set_of_zone(sets_, zone) : 0; }
  uint64_t zone_size_lbas(uint32_t zone) const {
    return flex() ? sets_[set_of_zone(zone)].zone_size_lbas : zone_size_lbas_;
  }
  uint64_t zone_capacity_lbas(uint32_t zone) const {
    return flex() ? sets_[set_of_zone(zone)].zone_capacity_lbas : zone_capacity_lbas_;
  }
  // The zone sets in LBA order (one when not FlexZNS).
  const std::vector<ZoneSetInfo>& sets() const { return sets_; }

  // FlexZNS: the format's plan and its FBGs (slots); null/empty otherwise.
  bool flex() const { return flex_ != nullptr; }
  const FlexLayout* flex_layout() const { return flex_.get(); }
  const FlexSlot& flex_slot(uint32_t slot) const { return slots_[slot]; }
  ParityPlacement parity() const { return flex_ ? flex_->placement : ParityPlacement::kNone; }
  // Open blocks a zone of set `set` holds while active, and the zones of the
  // set the open-block budget alone lets be active (0: no budget).
  uint32_t open_blocks_of_set(uint32_t set) const;
  uint32_t budget_zones_of_set(uint32_t set) const;
  // Flat die index (channel x dies_per_channel + way) of FlexZNS die `die`.
  uint32_t flex_die(uint32_t die) const {
    return (die % channels_) * dies_per_channel_ + die / channels_;
  }

  // Physical zones: slots a lazy mapping may choose from (every FBG under
  // FlexZNS), and the group a slot or zone belongs to (a zone takes a slot
  // of its own group: the stride group, or the zone set under FlexZNS).
  uint32_t slot_count(bool lazy) const {
    return flex() ? static_cast<uint32_t>(slots_.size()) : (lazy ? max_zones_ : zone_count_);
  }
  uint32_t group_count() const { return flex() ? static_cast<uint32_t>(sets_.size()) : groups_; }
  uint32_t group_of_slot(uint32_t slot) const { return flex() ? slots_[slot].set : slot % groups_; }
  uint32_t group_of_zone(uint32_t zone) const {
    return flex() ? set_of_zone(zone) : zone % groups_;
  }
  // The data units (planes) of a slot, its pages, and its blocks in each unit.
  uint32_t slot_units(uint32_t slot) const {
    return flex() ? slots_[slot].data_dies * planes_per_die_ : units_per_zone_;
  }
  uint32_t slot_pages(uint32_t slot) const {
    return flex() ? slot_units(slot) * pages_per_block_ : pages_per_zone_;
  }
  uint32_t slot_blocks_per_unit(uint32_t /*slot*/) const {
    return flex() ? 1 : blocks_per_zone_unit_;
  }

  // The flash behind a physical zone (a slot, see block_map.h; under direct
  // mapping zone z uses slot z). Flat plane index of unit `unit` of `slot`.
  // Every flash operation asks; without FlexZNS the plane is the slot's
  // group's first plane plus the unit's offset, both from tables.
  uint32_t unit_plane(uint32_t slot, uint32_t unit) const {
    if (flex()) return flex_unit_plane(slot, unit);
    ZL_ASSERT(slot < max_zones_ && unit < units_per_zone_);
    return group_plane_[slot % groups_] + unit_plane_offset_[unit];
  }
  // The flash page behind zone-relative page `page` of `slot`.
  FlashPage locate(uint32_t slot, uint32_t page) const;
  // Pages of a zone that unit `unit` holds when the zone's first `pages`
  // pages are programmed.
  uint32_t unit_pages(uint32_t slot, uint32_t unit, uint32_t pages) const {
    uint32_t units = slot_units(slot);
    return pages / units + (unit < pages % units ? 1u : 0u);
  }
  // First block of `slot` in each of its planes.
  uint32_t first_block(uint32_t slot) const {
    return flex() ? slots_[slot].superblock : (slot / groups_) * blocks_per_zone_unit_;
  }
  // FlexZNS parity: stripes of a slot (one parity page each), the flat
  // planes and block/page of stripe `stripe`'s parity copies, and the data
  // die (FlexZNS numbering) of zone page `page`.
  uint32_t stripes_of_slot(uint32_t /*slot*/) const { return planes_per_die_ * pages_per_block_; }
  uint32_t die_of_page(uint32_t slot, uint32_t page) const {
    return slots_[slot].first_die + page % slots_[slot].data_dies;
  }
  FlashPage parity_page(uint32_t slot, uint32_t copy, uint32_t stripe) const;
  // LBAs a backing holds: the namespace's, then (with parity) each slot's
  // parity pages, a page per stripe.
  uint64_t parity_lbas_per_slot() const {
    return parity() == ParityPlacement::kNone
               ? 0
               : uint64_t{planes_per_die_} * pages_per_block_ * lbas_per_page_;
  }
  uint64_t backing_lbas() const {
    return capacity_lbas() + parity_lbas_per_slot() * (flex() ? slots_.size() : 0);
  }

 private:
  static Result<ZoneLayout> make_flex(const Config& config);
  // The open and active limits and the checks every layout shares.
  Outcome set_limits(const Config& config);
  // Fills group_plane_ and unit_plane_offset_ (not FlexZNS).
  void plan_unit_planes();
  uint32_t flex_unit_plane(uint32_t slot, uint32_t unit) const;

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
  uint32_t channels_ = 0;
  uint64_t max_open_blocks_ = 0;
  uint64_t capacity_lbas_ = 0;
  std::vector<ZoneSetInfo> sets_;
  std::shared_ptr<const FlexLayout> flex_;
  std::vector<FlexSlot> slots_;
  // Not FlexZNS: unit u of a slot of group g is on flat plane
  // group_plane_[g] + unit_plane_offset_[u] (channels first, then dies,
  // then planes; the group picks the channels and dies).
  std::vector<uint32_t> group_plane_;
  std::vector<uint32_t> unit_plane_offset_;
  Divisor zone_size_divisor_;  // zone_size_lbas_ (not FlexZNS)
  Divisor page_divisor_;       // lbas_per_page_
};

}  // namespace zonelab
