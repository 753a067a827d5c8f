// FlexZNS's zoned layout (seed 001 §III-B, §III-C): zone sets of several
// sizes, each zone a flash block group (FBG) inside a superblock, and the
// die-level RAID parity of every FBG, either inside the zone (the baseline
// of Table I: N-1 data chunks and one parity chunk, so capacity < size) or
// in a separate parity area (FlexZNS: capacity = size).
//
// A superblock is one block of every plane at the same offset on every die.
// One die's part of it is a *chunk* (planes x block bytes), the unit of an
// FBG's width and the size of a parity chunk. A zone of S bytes is an FBG of
// S / chunk dies, consecutive dies of one superblock; the zones of one set
// fill superblocks of their own (the data area, set after set, in the order
// given). A set bound to some dies (§IV-D) lays its FBGs on those dies
// only and shares superblocks with sets bound to other dies; each set
// begins at the first superblock free on all its dies. The parity area follows the data area:
// parity superblocks whose chunks hold the parity of FBGs, mapped once, at format time, by
// Algorithm 1 (FBGs by width, widest first, each chunk on a die outside its
// FBG, packed into the parity superblocks already begun; superblock-wide
// FBGs last, two copies on two different dies).
//
// This is the plan alone, computed from the geometry; which FBG a zone
// takes at its first write (the least-loaded dies) is the device's choice.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "zonelab/config.h"
#include "zonelab/result.h"

namespace zonelab {

enum class ParityPlacement : uint8_t {
  kNone,      // no parity (today's device)
  kInZone,    // one chunk of every FBG holds its parity (Table I)
  kSeparate,  // FlexZNS: the parity area
};
const char* parity_placement_name(ParityPlacement placement);
Result<ParityPlacement> parse_parity_placement(std::string_view text);

struct ZoneSetSpec {
  uint64_t zone_bytes = 0;
  uint32_t count = 0;
  // dies > 0: the set's FBGs lie on dies [first_die, first_die + dies) only
  // (§IV-D: a tenant on its own dies); 0: on every die.
  uint32_t first_die = 0;
  uint32_t dies = 0;
};

struct FlexGeometry {
  uint32_t dies = 0;
  uint64_t chunk_bytes = 0;  // one die's part of a superblock
  uint32_t superblocks = 0;
  uint64_t superblock_bytes() const { return uint64_t{dies} * chunk_bytes; }
  uint64_t flash_bytes() const { return superblock_bytes() * superblocks; }
};
// The flash of a configuration as superblocks: a die's chunk is a block of
// each of its planes; there are as many superblocks as blocks in a plane.
FlexGeometry flex_geometry(const FlashConfig& flash);

struct Fbg {
  uint32_t superblock = 0;
  uint32_t first_die = 0;
  uint32_t dies = 0;
  bool holds(uint32_t die) const { return die >= first_die && die < first_die + dies; }
};

// Where one parity chunk lives: a superblock of the parity area and a die.
struct ParityChunk {
  uint32_t superblock = 0;
  uint32_t die = 0;
};

struct ZoneSetLayout {
  uint64_t zone_bytes = 0;
  uint64_t capacity_bytes = 0;  // what the host may write to a zone
  uint32_t count = 0;
  uint32_t dies_per_fbg = 0;
  // The dies the set's FBGs lie on: every die unless the format binds it.
  uint32_t first_die = 0;
  uint32_t dies = 0;
  bool bound = false;  // the format named its dies
  uint32_t first_superblock = 0;
  uint32_t superblocks = 0;
  std::vector<Fbg> fbgs;  // `count` of them
  // kSeparate: each FBG's parity chunks (two for a superblock-wide FBG).
  std::vector<std::vector<ParityChunk>> parity;
};

struct FlexLayout {
  ParityPlacement placement = ParityPlacement::kNone;
  FlexGeometry geometry;
  std::vector<ZoneSetLayout> sets;
  uint32_t data_superblocks = 0;
  uint32_t parity_superblocks = 0;  // kSeparate: the parity area
  uint64_t parity_chunks = 0;       // chunks holding parity (either placement)
  uint64_t zone_bytes() const;      // the sum of the sets' zone sizes
  uint64_t capacity_bytes() const;  // what the host may write
  uint64_t parity_bytes() const { return parity_chunks * geometry.chunk_bytes; }
  // The share of the flash that holds parity.
  double parity_share() const;
};

// Plans a format; refuses, with one line naming the value, a zone size that
// is not a power of two, not a whole number of chunks or wider than a
// superblock, a count of 0, an in-zone parity zone of one die, dies that
// do not exist, sets bound to dies that overlap, and a format that does not
// fit (saying how much flash it lacks).
Result<FlexLayout> plan_flex_layout(const FlexGeometry& geometry, std::span<const ZoneSetSpec> sets,
                                    ParityPlacement placement);

}  // namespace zonelab
