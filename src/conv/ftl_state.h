// The FTL's part of a block-interface device image (section 7,
// docs/image-format.md): the logical-to-physical map, the blocks, the
// planes' free lists and open blocks, the partial page buffers, the stream
// cursors, the counters, and the device clock with when each plane and
// channel is next free, so that work in flight at a save (GC after a write)
// and the ages GC compares continue in the next process as in one run. The
// reverse map and the valid totals are derived on import.
#pragma once

#include <cstdint>
#include <vector>

#include "store/image.h"
#include "zonelab/result.h"

namespace zonelab {

inline constexpr uint32_t kSectionFtl = 7;
// An FTL's logical blocks and its flash slots (ftl.h maps at most 2^28).
inline constexpr uint64_t kImageFtlLbasMax = 1ULL << 28;
inline constexpr uint64_t kImageFtlBlocksMax = 1ULL << 26;

struct FtlBlockState {
  uint8_t state = 0;  // 0 free, 1 open, 2 full
  uint32_t next_page = 0;
  uint32_t valid_lbas = 0;
  uint64_t last_write_ns = 0;

  bool operator==(const FtlBlockState&) const = default;
};

// One plane's free blocks (in allocation order) and open block per opener
// (the streams, then GC; kNone: none).
struct FtlPlaneState {
  static constexpr uint32_t kNone = 0xFFFFFFFFu;
  std::vector<uint32_t> free;
  std::vector<uint32_t> open;

  bool operator==(const FtlPlaneState&) const = default;
};

struct FtlState {
  std::vector<uint32_t> l2p;
  std::vector<FtlBlockState> blocks;
  std::vector<FtlPlaneState> planes;
  std::vector<std::vector<uint32_t>> buffers;  // the streams', then one per plane for GC
  std::vector<uint32_t> cursors;               // each stream's next plane in turn
  uint64_t gc_runs = 0;
  uint64_t gc_moved_lbas = 0;
  uint64_t trimmed_lbas = 0;
  uint64_t skipped_planes = 0;
  uint64_t clock_ns = 0;
  std::vector<uint64_t> plane_free_at_ns;
  std::vector<uint64_t> channel_free_at_ns;

  bool operator==(const FtlState&) const = default;
};

void put_ftl(ImageState& state, const FtlState& ftl);
// The section's shape only: counts against the bytes and the limits; the
// FTL checks the contents against its geometry when it imports them.
Result<FtlState> get_ftl(const ImageState& state);
// How many bytes the section may still grow by: each page buffer holds at
// most one LBA less than a page, so a later save of the same FTL never
// needs more than the created image's slot plus this.
uint64_t ftl_growth_bytes(const FtlState& ftl, uint64_t lbas_per_page);

}  // namespace zonelab
