// The page-mapped FTL; see ftl.h.
#include "conv/ftl.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>

#include "zonelab/assert.h"

namespace zonelab {
namespace {

// Blocks each plane keeps besides host data: an open block per stream, one
// for GC, and the watermark (at least one, so GC always has a block to move
// into).
uint64_t reserved_blocks_per_plane(const Config& c) {
  return c.block.streams + 1 + c.block.gc_watermark;
}

// The L2P and P2L maps take 4 bytes per LBA each; bound them.
constexpr uint64_t kMaxSlots = 1ULL << 28;

}  // namespace

Result<uint64_t> Ftl::host_lbas(const Config& c) {
  const FlashConfig& f = c.flash;
  uint64_t lba = c.host.lba_size_bytes;
  if (lba == 0 || !std::has_single_bit(lba) || f.page_size_bytes % lba != 0) {
    return Error{fmt::format("flash.page_size ({}) must be a multiple of host.lba_size ({})",
                             f.page_size_bytes, lba)};
  }
  uint64_t planes = f.channels * f.dies_per_channel * f.planes_per_die;
  uint64_t lbas_per_block = f.pages_per_block * (f.page_size_bytes / lba);
  uint64_t slots = planes * f.blocks_per_plane * lbas_per_block;
  if (slots > kMaxSlots) {
    return Error{fmt::format(
        "the block interface maps at most {} logical blocks; this flash holds {} (use a smaller "
        "flash or a larger host.lba_size)",
        kMaxSlots, slots)};
  }
  uint64_t reserve = reserved_blocks_per_plane(c);
  uint64_t host = slots * 10'000 / (10'000 + c.block.overprovisioning_bp);
  if (f.blocks_per_plane <= reserve ||
      host > planes * (f.blocks_per_plane - reserve) * lbas_per_block) {
    return Error{fmt::format(
        "block.overprovisioning ({:.2f}%) leaves too little spare flash: each plane needs {} "
        "blocks for open blocks, GC and the watermark",
        static_cast<double>(c.block.overprovisioning_bp) / 100.0, reserve)};
  }
  return host;
}

Ftl::Ftl(const Config& c, Flash& flash)
    : flash_(flash),
      lbas_per_page_(static_cast<uint32_t>(c.flash.page_size_bytes / c.host.lba_size_bytes)),
      pages_(static_cast<uint32_t>(c.flash.pages_per_block)),
      blocks_(static_cast<uint32_t>(c.flash.blocks_per_plane)),
      plane_count_(flash.planes()),
      streams_(static_cast<uint32_t>(c.block.streams)),
      watermark_(static_cast<uint32_t>(c.block.gc_watermark)),
      cost_benefit_(c.block.gc == "cost-benefit"),
      lba_bytes_(c.host.lba_size_bytes) {
  auto host = host_lbas(c);
  ZL_ASSERT(host.ok());
  l2p_.assign(*host, kUnmapped);
  p2l_.assign(static_cast<size_t>(plane_count_) * blocks_ * pages_ * lbas_per_page_, kUnmapped);
  block_.resize(static_cast<size_t>(plane_count_) * blocks_);
  planes_.resize(plane_count_);
  for (Plane& plane : planes_) {
    for (uint32_t b = 0; b < blocks_; ++b) plane.free.push_back(b);
    plane.open.assign(streams_ + 1, -1);
  }
  buffers_.resize(streams_ + plane_count_);
  cursor_.assign(streams_, 0);
  // Channels first, then dies, then planes: consecutive pages use different
  // channels, as a ZNS stripe does.
  auto channels = static_cast<uint32_t>(c.flash.channels);
  auto dies = static_cast<uint32_t>(c.flash.dies_per_channel);
  for (uint32_t k = 0; k < plane_count_; ++k) {
    plane_order_.push_back(
        flash.plane_index(k % channels, k / channels % dies, k / channels / dies));
  }
}

void Ftl::unmap(uint64_t lba) {
  uint32_t v = l2p_[lba];
  if (v == kUnmapped) return;
  if (v >= kBuffered) {
    auto& lbas = buffers_[v - kBuffered].lbas;
    lbas.erase(std::find(lbas.begin(), lbas.end(), static_cast<uint32_t>(lba)));
    if (v - kBuffered < streams_) ++host_unbuffered_lbas_;
  } else {
    p2l_[v] = kUnmapped;
    --block_[slot_block(v)].valid;
    --valid_total_;
  }
  l2p_[lba] = kUnmapped;
}

void Ftl::buffer(uint32_t owner, uint32_t lba) {
  buffers_[owner].lbas.push_back(lba);
  l2p_[lba] = kBuffered + owner;
}

int64_t Ftl::open_block(uint32_t plane, uint32_t opener) {
  Plane& p = planes_[plane];
  if (p.open[opener] >= 0) return p.open[opener];
  if (p.free.empty()) return -1;
  uint32_t b = p.free.front();
  p.free.pop_front();
  Block& block = block_[block_index(plane, b)];
  block = Block{BlockState::kOpen, 0, 0, 0};
  p.open[opener] = b;
  return b;
}

uint64_t Ftl::program(uint32_t owner, uint32_t plane, uint32_t opener, uint64_t ready_ns,
                      FlashCause cause) {
  bool copyback = cause == FlashCause::kGc;
  int64_t b = open_block(plane, opener);
  ZL_ASSERT(b >= 0);
  Block& block = block_[block_index(plane, static_cast<uint32_t>(b))];
  uint32_t page = block.next_page++;
  uint64_t done = copyback ? flash_.copyback_program(plane, ready_ns, cause)
                           : flash_.program(plane, ready_ns, cause);
  auto first = static_cast<uint32_t>(
      ((static_cast<uint64_t>(plane) * blocks_ + static_cast<uint64_t>(b)) * pages_ + page) *
      lbas_per_page_);
  auto& lbas = buffers_[owner].lbas;
  ZL_ASSERT(lbas.size() >= lbas_per_page_);
  for (uint32_t j = 0; j < lbas_per_page_; ++j) {
    l2p_[lbas[j]] = first + j;
    p2l_[first + j] = lbas[j];
  }
  lbas.erase(lbas.begin(), lbas.begin() + lbas_per_page_);
  block.valid += lbas_per_page_;
  valid_total_ += lbas_per_page_;
  block.last_write_ns = ready_ns;
  if (block.next_page == pages_) {
    block.state = BlockState::kFull;
    planes_[plane].open[opener] = -1;
  }
  return done;
}

// Dynamic allocation: the plane that is free soonest (ties: the next in
// turn after the last one used), so host writes flow around a plane that GC
// keeps busy. A plane without a free block is passed over.
uint32_t Ftl::next_plane(uint32_t stream) {
  int64_t best = -1;
  uint64_t best_free_at = UINT64_MAX;
  for (uint32_t k = 0; k < plane_count_; ++k) {
    uint32_t turn = (cursor_[stream] + k) % plane_count_;
    uint32_t plane = plane_order_[turn];
    uint64_t free_at = flash_.plane_free_at_ns(plane);
    if (free_at >= best_free_at) continue;
    if (open_block(plane, stream) < 0) {
      ++counters_.skipped_planes;
      continue;
    }
    best = turn;
    best_free_at = free_at;
  }
  ZL_ASSERT(best >= 0 && "every plane is out of blocks despite the reserve");
  auto turn = static_cast<uint32_t>(std::max<int64_t>(best, 0));
  cursor_[stream] = (turn + 1) % plane_count_;
  return plane_order_[turn];
}

uint64_t Ftl::host_buffered_lbas() const {
  uint64_t lbas = 0;
  for (uint32_t stream = 0; stream < streams_; ++stream) lbas += buffers_[stream].lbas.size();
  return lbas;
}

uint64_t Ftl::write(uint64_t lba, uint32_t nlb, uint32_t stream, uint64_t ready_ns,
                    Programs* programs) {
  ZL_ASSERT(lba + nlb <= l2p_.size() && stream < streams_);
  uint64_t done = ready_ns;
  for (uint32_t i = 0; i < nlb; ++i) {
    unmap(lba + i);
    buffer(stream, static_cast<uint32_t>(lba + i));
    if (buffers_[stream].lbas.size() < lbas_per_page_) continue;
    uint32_t plane = next_plane(stream);
    uint64_t programmed = program(stream, plane, stream, ready_ns, FlashCause::kHost);
    done = std::max(done, programmed);
    if (programs != nullptr) {
      programs->emplace_back(l2p_[lba + i] / lbas_per_page_, programmed);
    }
    if (planes_[plane].free.size() < watermark_) collect(plane, ready_ns);
  }
  return done;
}

int64_t Ftl::pick_victim(uint32_t plane, uint64_t now_ns) const {
  const uint32_t capacity = pages_ * lbas_per_page_;
  int64_t best = -1;
  double best_score = -1;
  for (uint32_t b = 0; b < blocks_; ++b) {
    const Block& block = block_[block_index(plane, b)];
    if (block.state != BlockState::kFull || block.valid == capacity) continue;
    double score = 0;
    if (cost_benefit_) {
      double u = static_cast<double>(block.valid) / capacity;
      double age = static_cast<double>(now_ns - std::min(now_ns, block.last_write_ns)) + 1.0;
      score = u == 0 ? 1e300 : (1 - u) / (2 * u) * age;
    } else {
      score = static_cast<double>(capacity - block.valid);
    }
    if (score > best_score) {
      best_score = score;
      best = b;
    }
  }
  return best;
}

uint64_t Ftl::collect(uint32_t plane, uint64_t ready_ns) {
  const uint32_t gc_owner = streams_ + plane;
  uint64_t done = ready_ns;
  for (uint32_t round = 0; round < blocks_ && planes_[plane].free.size() <= watermark_; ++round) {
    int64_t victim = pick_victim(plane, ready_ns);
    if (victim < 0) break;
    auto vb = static_cast<uint32_t>(victim);
    ++counters_.gc_runs;
    uint64_t read_done = ready_ns;
    uint64_t first = (static_cast<uint64_t>(plane) * blocks_ + vb) * pages_ * lbas_per_page_;
    for (uint32_t page = 0; page < pages_; ++page) {
      uint32_t moved = 0;
      for (uint32_t j = 0; j < lbas_per_page_; ++j) {
        auto slot = static_cast<uint32_t>(first + page * lbas_per_page_ + j);
        uint32_t lba = p2l_[slot];
        if (lba == kUnmapped) continue;
        unmap(lba);
        buffer(gc_owner, lba);
        ++moved;
      }
      if (moved == 0) continue;
      counters_.gc_moved_lbas += moved;
      read_done = std::max(read_done, flash_.copyback_read(plane, ready_ns));
    }
    Block& block = block_[block_index(plane, vb)];
    ZL_ASSERT(block.valid == 0);
    done = std::max(done, flash_.erase(plane, vb, read_done, FlashCause::kGc));
    block.state = BlockState::kFree;
    planes_[plane].free.push_back(vb);
    // The moved data goes into the plane's GC block, page by page.
    while (buffers_[gc_owner].lbas.size() >= lbas_per_page_) {
      done = std::max(done, program(gc_owner, plane, streams_, read_done, FlashCause::kGc));
    }
  }
  return done;
}

uint64_t Ftl::read(uint64_t lba, uint32_t nlb, uint64_t ready_ns, const BufferedPage& buffered) {
  ZL_ASSERT(lba + nlb <= l2p_.size());
  uint64_t done = ready_ns;
  for (uint32_t i = 0; i < nlb;) {
    uint32_t v = l2p_[lba + i];
    if (v >= kBuffered) {  // unmapped reads zeros; buffered data is in the controller
      ++i;
      continue;
    }
    // LBAs that follow in the same flash page share one read.
    uint32_t page = v / lbas_per_page_;
    uint32_t run = 1;
    while (i + run < nlb && l2p_[lba + i + run] < kBuffered &&
           l2p_[lba + i + run] / lbas_per_page_ == page) {
      ++run;
    }
    if (!buffered || !buffered(page)) {
      done = std::max(done, flash_.read(slot_plane(v), ready_ns, run * lba_bytes_));
    }
    i += run;
  }
  return done;
}

void Ftl::trim(uint64_t lba, uint64_t nlb) {
  ZL_ASSERT(lba + nlb <= l2p_.size());
  for (uint64_t i = 0; i < nlb; ++i) {
    if (l2p_[lba + i] == kUnmapped) continue;
    unmap(lba + i);
    ++counters_.trimmed_lbas;
  }
}

bool Ftl::consistent() const {
  std::vector<uint32_t> valid(block_.size(), 0);
  uint64_t total = 0;
  for (uint64_t lba = 0; lba < l2p_.size(); ++lba) {
    uint32_t v = l2p_[lba];
    if (v == kUnmapped) continue;
    if (v >= kBuffered) {
      const auto& lbas = buffers_[v - kBuffered].lbas;
      if (std::count(lbas.begin(), lbas.end(), static_cast<uint32_t>(lba)) != 1) return false;
      continue;
    }
    if (p2l_[v] != lba) return false;
    ++valid[slot_block(v)];
    ++total;
  }
  for (uint32_t slot = 0; slot < p2l_.size(); ++slot) {
    if (p2l_[slot] != kUnmapped && l2p_[p2l_[slot]] != slot) return false;
  }
  for (size_t b = 0; b < block_.size(); ++b) {
    if (block_[b].valid != valid[b]) return false;
  }
  return total == valid_total_;
}

void Ftl::export_state(FtlState& out) const {
  out.l2p = l2p_;
  out.blocks.clear();
  out.blocks.reserve(block_.size());
  for (const Block& b : block_) {
    out.blocks.push_back({static_cast<uint8_t>(b.state), b.next_page, b.valid, b.last_write_ns});
  }
  out.planes.clear();
  for (const Plane& p : planes_) {
    FtlPlaneState plane;
    plane.free.assign(p.free.begin(), p.free.end());
    for (int64_t b : p.open) {
      plane.open.push_back(b < 0 ? FtlPlaneState::kNone : static_cast<uint32_t>(b));
    }
    out.planes.push_back(std::move(plane));
  }
  out.buffers.clear();
  for (const Buffer& buffer : buffers_) out.buffers.push_back(buffer.lbas);
  out.cursors = cursor_;
  out.gc_runs = counters_.gc_runs;
  out.gc_moved_lbas = counters_.gc_moved_lbas;
  out.trimmed_lbas = counters_.trimmed_lbas;
  out.skipped_planes = counters_.skipped_planes;
}

// Shapes, block states and the free and open lists: every free block is
// listed free once, every open block is one opener's, a full block neither.
Outcome Ftl::check_blocks(const FtlState& in) const {
  if (in.l2p.size() != l2p_.size() || in.blocks.size() != block_.size() ||
      in.planes.size() != plane_count_ || in.buffers.size() != buffers_.size() ||
      in.cursors.size() != cursor_.size()) {
    return Error{fmt::format(
        "{} LBAs, {} blocks, {} planes, {} buffers, {} streams stored; the configuration has {}, "
        "{}, {}, {}, {}",
        in.l2p.size(), in.blocks.size(), in.planes.size(), in.buffers.size(), in.cursors.size(),
        l2p_.size(), block_.size(), plane_count_, buffers_.size(), cursor_.size())};
  }
  const uint32_t capacity = pages_ * lbas_per_page_;
  for (size_t b = 0; b < in.blocks.size(); ++b) {
    const FtlBlockState& block = in.blocks[b];
    auto state = static_cast<BlockState>(block.state);
    bool pages_ok = state == BlockState::kFree ? block.next_page <= pages_ && block.valid_lbas == 0
                    : state == BlockState::kOpen ? block.next_page < pages_
                    : state == BlockState::kFull ? block.next_page == pages_
                                                 : false;
    if (!pages_ok || block.valid_lbas > capacity ||
        block.valid_lbas > block.next_page * lbas_per_page_) {
      return Error{fmt::format("block {} has an impossible state", b)};
    }
  }
  std::vector<uint8_t> listed(block_.size(), 0);
  for (uint32_t p = 0; p < plane_count_; ++p) {
    const FtlPlaneState& plane = in.planes[p];
    if (plane.open.size() != streams_ + 1) {
      return Error{fmt::format("plane {} has {} open-block entries (expected {})", p,
                               plane.open.size(), streams_ + 1)};
    }
    auto list = [&](uint32_t b, BlockState want) -> bool {
      if (b >= blocks_) return false;
      uint32_t index = block_index(p, b);
      if (listed[index]++ != 0) return false;
      return static_cast<BlockState>(in.blocks[index].state) == want;
    };
    for (uint32_t b : plane.free) {
      if (!list(b, BlockState::kFree)) {
        return Error{fmt::format("plane {}: free block {} is not a free block", p, b)};
      }
    }
    for (uint32_t b : plane.open) {
      if (b != FtlPlaneState::kNone && !list(b, BlockState::kOpen)) {
        return Error{fmt::format("plane {}: open block {} is not an open block", p, b)};
      }
    }
  }
  for (size_t b = 0; b < block_.size(); ++b) {
    bool should_list = static_cast<BlockState>(in.blocks[b].state) != BlockState::kFull;
    if ((listed[b] != 0) != should_list) {
      return Error{fmt::format("block {} is {} the free and open lists", b,
                               should_list ? "missing from" : "wrongly in")};
    }
  }
  for (uint32_t cursor : in.cursors) {
    if (cursor >= plane_count_) return Error{fmt::format("stream cursor {} is no plane", cursor)};
  }
  return {};
}

// The map, its reverse and the buffers: every mapped slot lies in a written
// page of a block in use, and each buffered LBA is in its buffer.
Outcome Ftl::restore_maps(const FtlState& in) {
  std::vector<uint32_t> p2l(p2l_.size(), kUnmapped);
  uint64_t valid_total = 0;
  for (uint64_t lba = 0; lba < in.l2p.size(); ++lba) {
    uint32_t v = in.l2p[lba];
    if (v == kUnmapped) continue;
    if (v >= kBuffered) {
      if (v - kBuffered >= buffers_.size()) {
        return Error{
            fmt::format("LBA {} is in buffer {}, which does not exist", lba, v - kBuffered)};
      }
      continue;
    }
    if (v >= p2l.size() || p2l[v] != kUnmapped) {
      return Error{fmt::format("LBA {} maps to slot {}, out of range or taken", lba, v)};
    }
    const FtlBlockState& block = in.blocks[slot_block(v)];
    uint32_t page = v / lbas_per_page_ % pages_;
    if (static_cast<BlockState>(block.state) == BlockState::kFree || page >= block.next_page) {
      return Error{fmt::format("LBA {} maps to unwritten slot {}", lba, v)};
    }
    p2l[v] = static_cast<uint32_t>(lba);
    ++valid_total;
  }
  for (size_t owner = 0; owner < in.buffers.size(); ++owner) {
    const auto& lbas = in.buffers[owner];
    if (lbas.size() >= lbas_per_page_) {
      return Error{fmt::format("buffer {} holds {} LBAs, a full page", owner, lbas.size())};
    }
    for (uint32_t lba : lbas) {
      if (lba >= in.l2p.size() || in.l2p[lba] != kBuffered + owner) {
        return Error{
            fmt::format("buffer {} holds LBA {}, which the map puts elsewhere", owner, lba)};
      }
    }
  }
  l2p_ = in.l2p;
  p2l_ = std::move(p2l);
  valid_total_ = valid_total;
  for (size_t b = 0; b < block_.size(); ++b) {
    const FtlBlockState& block = in.blocks[b];
    block_[b] = Block{static_cast<BlockState>(block.state), block.next_page, block.valid_lbas,
                      block.last_write_ns};
  }
  for (uint32_t p = 0; p < plane_count_; ++p) {
    planes_[p].free.assign(in.planes[p].free.begin(), in.planes[p].free.end());
    for (size_t k = 0; k < planes_[p].open.size(); ++k) {
      uint32_t b = in.planes[p].open[k];
      planes_[p].open[k] = b == FtlPlaneState::kNone ? -1 : static_cast<int64_t>(b);
    }
  }
  for (size_t owner = 0; owner < buffers_.size(); ++owner) buffers_[owner].lbas = in.buffers[owner];
  cursor_ = in.cursors;
  counters_ = FtlCounters{in.gc_runs, in.gc_moved_lbas, in.trimmed_lbas, in.skipped_planes};
  return {};
}

Outcome Ftl::import_state(const FtlState& in) {
  Outcome checked = check_blocks(in);
  if (!checked) return Error{"corrupt image: ftl: " + checked.error()};
  // Restored over a copy, so a refused state leaves this FTL as it was.
  Ftl restored(*this);
  checked = restored.restore_maps(in);
  if (!checked) return Error{"corrupt image: ftl: " + checked.error()};
  if (!restored.consistent()) {
    return Error{"corrupt image: ftl: the map, buffers and valid counts disagree"};
  }
  l2p_ = std::move(restored.l2p_);
  p2l_ = std::move(restored.p2l_);
  block_ = std::move(restored.block_);
  planes_ = std::move(restored.planes_);
  buffers_ = std::move(restored.buffers_);
  cursor_ = std::move(restored.cursor_);
  valid_total_ = restored.valid_total_;
  counters_ = restored.counters_;
  return {};
}

}  // namespace zonelab
