// FlexZNS's layout plan; see flex_layout.h (seed 001 §III-B, §III-C,
// Algorithm 1).
#include "flash/flex_layout.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "common/units.h"
#include "zonelab/config.h"

namespace zonelab {
namespace {

bool power_of_two(uint64_t x) { return x != 0 && (x & (x - 1)) == 0; }

// The parity area as Algorithm 1 fills it: parity superblocks in the order
// they were begun, each with one chunk a die.
class ParityArea {
 public:
  ParityArea(uint32_t dies, uint32_t first_superblock)
      : dies_(dies), first_superblock_(first_superblock) {}

  // A free chunk on a die outside `fbg`, from the parity superblocks begun
  // and not yet full; a new parity superblock when none has one. The search
  // starts at the die after the FBG's last, so FBGs side by side in a data
  // superblock spread their parity over the others' dies and pack a parity
  // superblock full.
  ParityChunk take_outside(const Fbg& fbg) {
    for (;;) {
      for (uint32_t s : open_) {
        for (uint32_t k = 0; k < dies_; ++k) {
          uint32_t die = (fbg.first_die + fbg.dies + k) % dies_;
          if (!fbg.holds(die) && !used_[s][die]) return take(s, die);
        }
      }
      begin_superblock();
    }
  }

  // A set bound to dies keeps its parity on them (§IV-D): a free chunk on
  // a die of [first, first + dies) outside `fbg`, from the parity
  // superblocks begun or a new one.
  ParityChunk take_outside_within(const Fbg& fbg, uint32_t first, uint32_t dies) {
    for (;;) {
      for (uint32_t s : open_) {
        for (uint32_t k = 0; k < dies; ++k) {
          uint32_t die = first + (fbg.first_die - first + fbg.dies + k) % dies;
          if (!fbg.holds(die) && !used_[s][die]) return take(s, die);
        }
      }
      begin_superblock();
    }
  }

  // A free chunk on a die other than `not_die` (kNoDie: any), from the
  // parity superblocks begun or a new one.
  static constexpr uint32_t kNoDie = UINT32_MAX;
  ParityChunk take_any(uint32_t not_die) {
    for (;;) {
      for (uint32_t s : open_) {
        for (uint32_t k = 0; k < dies_; ++k) {
          uint32_t die = (cursor_ + k) % dies_;
          if (die != not_die && !used_[s][die]) {
            cursor_ = (die + 1) % dies_;
            return take(s, die);
          }
        }
      }
      begin_superblock();
    }
  }

  uint32_t superblocks() const { return static_cast<uint32_t>(used_.size()); }

 private:
  void begin_superblock() {
    used_.emplace_back(dies_, false);
    free_.push_back(dies_);
    open_.push_back(static_cast<uint32_t>(used_.size() - 1));
  }
  ParityChunk take(uint32_t s, uint32_t die) {
    used_[s][die] = true;
    if (--free_[s] == 0) open_.erase(std::find(open_.begin(), open_.end(), s));
    return {first_superblock_ + s, die};
  }

  uint32_t dies_;
  uint32_t first_superblock_;
  uint32_t cursor_ = 0;
  std::vector<std::vector<bool>> used_;
  std::vector<uint32_t> free_;
  std::vector<uint32_t> open_;  // begun and not full, in the order begun
};

}  // namespace

const char* parity_placement_name(ParityPlacement placement) {
  switch (placement) {
    case ParityPlacement::kNone:
      return "none";
    case ParityPlacement::kInZone:
      return "in-zone";
    case ParityPlacement::kSeparate:
      return "separate";
  }
  return "?";
}

Result<ParityPlacement> parse_parity_placement(std::string_view text) {
  for (ParityPlacement p :
       {ParityPlacement::kNone, ParityPlacement::kInZone, ParityPlacement::kSeparate}) {
    if (text == parity_placement_name(p)) return p;
  }
  return Error{fmt::format("parity placement '{}': none, in-zone or separate", one_line(text))};
}

FlexGeometry flex_geometry(const FlashConfig& flash) {
  return {static_cast<uint32_t>(flash.channels * flash.dies_per_channel),
          flash.planes_per_die * flash.pages_per_block * flash.page_size_bytes,
          static_cast<uint32_t>(flash.blocks_per_plane)};
}

uint64_t FlexLayout::zone_bytes() const {
  uint64_t total = 0;
  for (const ZoneSetLayout& s : sets) total += s.zone_bytes * s.count;
  return total;
}

uint64_t FlexLayout::capacity_bytes() const {
  uint64_t total = 0;
  for (const ZoneSetLayout& s : sets) total += s.capacity_bytes * s.count;
  return total;
}

double FlexLayout::parity_share() const {
  const uint64_t flash = geometry.flash_bytes();
  return flash == 0 ? 0.0 : static_cast<double>(parity_bytes()) / static_cast<double>(flash);
}

Result<FlexLayout> plan_flex_layout(const FlexGeometry& geometry, std::span<const ZoneSetSpec> sets,
                                    ParityPlacement placement) {
  if (geometry.dies == 0 || geometry.chunk_bytes == 0 || geometry.superblocks == 0) {
    return Error{"a flash without dies, blocks or superblocks has no layout"};
  }
  if (sets.empty()) return Error{"a format needs at least one zone set"};
  if (placement == ParityPlacement::kSeparate && geometry.dies < 2) {
    return Error{"separate parity needs a die besides the data's: this flash has one"};
  }
  const uint64_t superblock = geometry.superblock_bytes();
  FlexLayout layout;
  layout.placement = placement;
  layout.geometry = geometry;
  uint64_t data_superblocks = 0;
  // The superblocks each die's part of the data area has used so far.
  std::vector<uint64_t> used_rows(geometry.dies, 0);
  for (size_t i = 0; i < sets.size(); ++i) {
    const ZoneSetSpec& spec = sets[i];
    const std::string size = format_size(spec.zone_bytes);
    if (spec.count == 0) return Error{fmt::format("zone set {}: a count of 0 zones", size)};
    if (!power_of_two(spec.zone_bytes)) {
      return Error{fmt::format("zone size {}: not a power of two", size)};
    }
    if (spec.zone_bytes % geometry.chunk_bytes != 0) {
      return Error{
          fmt::format("zone size {}: not a multiple of a flash block group's unit, {} (a block of "
                      "every plane of one die)",
                      size, format_size(geometry.chunk_bytes))};
    }
    if (spec.zone_bytes > superblock) {
      return Error{fmt::format("zone size {}: larger than a superblock, {} ({} dies of {})", size,
                               format_size(superblock), geometry.dies,
                               format_size(geometry.chunk_bytes))};
    }
    ZoneSetLayout set;
    set.zone_bytes = spec.zone_bytes;
    set.count = spec.count;
    set.dies_per_fbg = static_cast<uint32_t>(spec.zone_bytes / geometry.chunk_bytes);
    set.bound = spec.dies != 0;
    set.first_die = set.bound ? spec.first_die : 0;
    set.dies = set.bound ? spec.dies : geometry.dies;
    const std::string range =
        fmt::format("dies {}-{}", set.first_die, uint64_t{set.first_die} + set.dies - 1);
    if (set.bound && uint64_t{set.first_die} + set.dies > geometry.dies) {
      return Error{fmt::format("zone set {} ({}): {}, the flash has dies 0-{}", i, size, range,
                               geometry.dies - 1)};
    }
    if (set.bound) {
      for (size_t j = 0; j < i; ++j) {
        const ZoneSetSpec& other = sets[j];
        if (other.dies != 0 && set.first_die < uint64_t{other.first_die} + other.dies &&
            other.first_die < uint64_t{set.first_die} + set.dies) {
          return Error{fmt::format("zone set {} ({}): {} overlap zone set {}'s dies {}", i, size,
                                   range, j, die_range_text(other.first_die, other.dies))};
        }
      }
    }
    if (set.dies_per_fbg > set.dies) {
      return Error{fmt::format("zone size {}: {} dies wide, wider than its {}", size,
                               set.dies_per_fbg, range)};
    }
    if (set.dies % set.dies_per_fbg != 0) {
      return Error{fmt::format("zone size {}: {} dies, which do not split the {} dies evenly", size,
                               set.dies_per_fbg, set.dies)};
    }
    set.capacity_bytes = spec.zone_bytes;
    if (placement == ParityPlacement::kInZone) {
      if (set.dies_per_fbg < 2) {
        return Error{fmt::format(
            "zone size {}: one die, no room for in-zone parity (a stripe needs 2 dies)", size)};
      }
      set.capacity_bytes -= geometry.chunk_bytes;
    }
    const uint32_t per_superblock = set.dies / set.dies_per_fbg;
    const auto first = used_rows.begin() + set.first_die;
    const uint64_t first_row = *std::max_element(first, first + set.dies);
    set.first_superblock = static_cast<uint32_t>(std::min<uint64_t>(first_row, UINT32_MAX));
    const uint64_t needed = (uint64_t{spec.count} + per_superblock - 1) / per_superblock;
    std::fill(first, first + set.dies, first_row + needed);
    data_superblocks = std::max(data_superblocks, first_row + needed);
    if (data_superblocks <= geometry.superblocks) {
      set.superblocks = static_cast<uint32_t>(needed);
      set.fbgs.reserve(spec.count);
      for (uint32_t k = 0; k < spec.count; ++k) {
        set.fbgs.push_back({set.first_superblock + k / per_superblock,
                            set.first_die + (k % per_superblock) * set.dies_per_fbg,
                            set.dies_per_fbg});
      }
    }
    layout.sets.push_back(std::move(set));
  }

  // Parity chunks: in-zone, one an FBG; separate, as Algorithm 1 maps them.
  uint64_t chunks = 0;
  for (const ZoneSetLayout& set : layout.sets) {
    const bool whole = uint64_t{set.dies_per_fbg} == geometry.dies;
    chunks += uint64_t{set.count} * (placement == ParityPlacement::kNone                ? 0
                                     : placement == ParityPlacement::kSeparate && whole ? 2
                                                                                        : 1);
  }
  layout.parity_chunks = chunks;
  const uint64_t parity_superblocks =
      placement == ParityPlacement::kSeparate ? (chunks + geometry.dies - 1) / geometry.dies : 0;
  if (data_superblocks + parity_superblocks > geometry.superblocks) {
    const uint64_t short_bytes =
        (data_superblocks + parity_superblocks - geometry.superblocks) * superblock;
    return Error{fmt::format(
        "the format does not fit: {} of data ({} superblocks) and {} of parity ({} superblocks) "
        "need {} superblocks of {}; the flash has {}: {} short",
        format_size(layout.zone_bytes()), data_superblocks,
        format_size(chunks * geometry.chunk_bytes), parity_superblocks,
        data_superblocks + parity_superblocks, format_size(superblock), geometry.superblocks,
        format_size(short_bytes))};
  }
  layout.data_superblocks = static_cast<uint32_t>(data_superblocks);
  if (placement != ParityPlacement::kSeparate) return layout;

  ParityArea area(geometry.dies, layout.data_superblocks);
  for (ZoneSetLayout& set : layout.sets) set.parity.assign(set.count, {});
  // The FBGs narrower than a superblock, widest first (a wide FBG leaves
  // fewer dies for its parity); sets of one width in the order given.
  std::vector<size_t> order(layout.sets.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return layout.sets[a].dies_per_fbg > layout.sets[b].dies_per_fbg;
  });
  for (size_t i : order) {
    ZoneSetLayout& set = layout.sets[i];
    if (set.dies_per_fbg == geometry.dies) continue;
    for (uint32_t k = 0; k < set.count; ++k) {
      set.parity[k].push_back(set.bound && set.dies_per_fbg < set.dies
                                  ? area.take_outside_within(set.fbgs[k], set.first_die, set.dies)
                                  : area.take_outside(set.fbgs[k]));
    }
  }
  // Superblock-wide FBGs: two copies on two different dies.
  for (size_t i : order) {
    ZoneSetLayout& set = layout.sets[i];
    if (set.dies_per_fbg != geometry.dies) continue;
    for (uint32_t k = 0; k < set.count; ++k) {
      ParityChunk first = area.take_any(ParityArea::kNoDie);
      ParityChunk second = area.take_any(first.die);
      set.parity[k] = {first, second};
    }
  }
  layout.parity_superblocks = area.superblocks();
  if (layout.data_superblocks + layout.parity_superblocks > geometry.superblocks) {
    // Packing left holes the count above did not foresee.
    return Error{fmt::format(
        "the format does not fit: its parity takes {} superblocks after {} of data; the flash "
        "has {}: {} short",
        layout.parity_superblocks, layout.data_superblocks, geometry.superblocks,
        format_size(
            uint64_t{layout.data_superblocks + layout.parity_superblocks - geometry.superblocks} *
            superblock))};
  }
  return layout;
}

}  // namespace zonelab
