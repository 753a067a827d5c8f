// The flash translation layer of a conventional (block-interface) SSD, seed
// 000 §2.1: a page-mapped FTL over the same flash model as the ZNS device.
//
// The mapping unit is one logical block (LBA). Writes gather in a page
// buffer per write stream; a full buffer is programmed to the next page of
// the stream's open block on the plane that is free soonest (dynamic
// allocation; ties go round the planes channels first, then dies, then
// planes, as a ZNS stripe), so writes spread over every plane and flow
// around a plane busy with GC. A rewritten or trimmed LBA leaves an invalid
// slot behind.
//
// Garbage collection is per plane: when a plane has fewer free blocks than
// block.gc_watermark, it picks victims among its full blocks — the fewest
// valid LBAs (greedy) or the best (1 - u) / 2u x age (cost-benefit) — reads
// their valid pages, programs them into the plane's GC block (copyback: the
// plane works, the channel does not) and erases the victim, until it has one block more than the
// watermark. GC reads, programs and erases go on the same channel and plane timelines as host I/O:
// host pages go to other planes while they can, and wait once GC keeps every plane busy (foreground
// GC: throughput drops). Programs and erases are counted by cause (host, gc), so write
// amplification reads off the flash counters.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <utility>
#include <vector>

#include "conv/ftl_state.h"
#include "flash/flash.h"
#include "zonelab/config.h"
#include "zonelab/result.h"

namespace zonelab {

struct FtlCounters {
  uint64_t gc_runs = 0;         // victims collected
  uint64_t gc_moved_lbas = 0;   // valid LBAs copied by GC
  uint64_t trimmed_lbas = 0;    // LBAs a trim unmapped
  uint64_t skipped_planes = 0;  // times a full plane was passed over
};

class Ftl {
 public:
  // Checks the block.* keys against the flash: the host capacity after
  // over-provisioning must leave each plane its open blocks and watermark.
  static Result<uint64_t> host_lbas(const Config& config);

  Ftl(const Config& config, Flash& flash);

  uint64_t lba_count() const { return l2p_.size(); }
  uint32_t lbas_per_page() const { return lbas_per_page_; }

  // Each returns when the flash work it needs is done (`ready_ns` when none).
  // A write completes when the pages it filled are programmed; a tail that
  // does not fill a page waits in the stream's buffer. `programs`, if given,
  // receives each host page the write programmed (flash page, program end).
  using Programs = std::vector<std::pair<uint32_t, uint64_t>>;
  uint64_t write(uint64_t lba, uint32_t nlb, uint32_t stream, uint64_t ready_ns,
                 Programs* programs = nullptr);
  // `buffered`, if given, says which flash pages are still in a drive's
  // write buffer (their programs have not ended): those are not read.
  using BufferedPage = std::function<bool(uint32_t page)>;
  uint64_t read(uint64_t lba, uint32_t nlb, uint64_t ready_ns,
                const BufferedPage& buffered = nullptr);
  void trim(uint64_t lba, uint64_t nlb);

  // LBAs waiting in the streams' page buffers for their page to fill.
  uint64_t host_buffered_lbas() const;
  // LBAs that left a stream's page buffer unprogrammed, rewritten or
  // trimmed, since the FTL was made (never cleared).
  uint64_t host_unbuffered_lbas() const { return host_unbuffered_lbas_; }
  // The plane a flash slot (where()) is on.
  uint32_t slot_plane(uint32_t slot) const { return slot / lbas_per_page_ / pages_ / blocks_; }

  const FtlCounters& counters() const { return counters_; }
  void reset_stats() { counters_ = FtlCounters{}; }
  uint64_t valid_lbas() const { return valid_total_; }
  uint32_t free_blocks(uint32_t plane) const {
    return static_cast<uint32_t>(planes_[plane].free.size());
  }

  // Where an LBA lives: a flash slot (page x lbas_per_page + offset), or
  // kUnmapped, or buffered (>= kBuffered) — for tests.
  static constexpr uint32_t kUnmapped = 0xFFFFFFFFu;
  static constexpr uint32_t kBuffered = 0xF0000000u;
  uint32_t where(uint64_t lba) const { return l2p_[lba]; }
  // Every mapping agrees with its reverse and with the valid counts.
  bool consistent() const;

  // The whole mapping state, for a device image. import_state checks every
  // index, state and count against this FTL's geometry and refuses (changing
  // nothing) what the FTL could never have been in.
  void export_state(FtlState& out) const;
  Outcome import_state(const FtlState& in);

 private:
  enum class BlockState : uint8_t { kFree, kOpen, kFull };
  struct Block {
    BlockState state = BlockState::kFree;
    uint32_t next_page = 0;
    uint32_t valid = 0;
    uint64_t last_write_ns = 0;
  };
  struct Plane {
    std::deque<uint32_t> free;
    std::vector<int64_t> open;  // per stream, then GC's; -1: none
  };
  // A page of LBAs waiting to be programmed: one per stream, one per plane
  // for GC.
  struct Buffer {
    std::vector<uint32_t> lbas;
  };

  uint32_t block_index(uint32_t plane, uint32_t block) const { return plane * blocks_ + block; }
  uint32_t slot_block(uint32_t slot) const { return slot / lbas_per_page_ / pages_; }
  void unmap(uint64_t lba);
  void buffer(uint32_t owner, uint32_t lba);
  // Programs buffer `owner` into the next page of `plane`'s block for
  // `opener` (a stream, or the GC slot); returns when the program ends.
  uint64_t program(uint32_t owner, uint32_t plane, uint32_t opener, uint64_t ready_ns,
                   FlashCause cause);
  // The open block of `opener` on `plane` with a page left, opening a free
  // one if needed; -1 if the plane has no free block.
  int64_t open_block(uint32_t plane, uint32_t opener);
  uint64_t collect(uint32_t plane, uint64_t ready_ns);
  Outcome check_blocks(const FtlState& in) const;
  Outcome restore_maps(const FtlState& in);
  int64_t pick_victim(uint32_t plane, uint64_t now_ns) const;
  uint32_t next_plane(uint32_t stream);

  Flash& flash_;
  uint32_t lbas_per_page_;
  uint32_t pages_;
  uint32_t blocks_;
  uint32_t plane_count_;
  uint32_t streams_;
  uint32_t watermark_;
  bool cost_benefit_;
  uint64_t lba_bytes_;
  std::vector<uint32_t> l2p_;
  std::vector<uint32_t> p2l_;  // per flash slot: the LBA it holds, or kUnmapped
  std::vector<Block> block_;
  std::vector<Plane> planes_;
  std::vector<Buffer> buffers_;   // streams, then one per plane for GC
  std::vector<uint32_t> cursor_;  // per stream: the next plane in turn
  std::vector<uint32_t> plane_order_;
  uint64_t valid_total_ = 0;
  uint64_t host_unbuffered_lbas_ = 0;
  FtlCounters counters_;
};

}  // namespace zonelab
