// The page-mapped FTL; see ftl.h.
#include "conv/ftl.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cassert>

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
  assert(host.ok());
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
  assert(b >= 0);
  Block& block = block_[block_index(plane, static_cast<uint32_t>(b))];
  uint32_t page = block.next_page++;
  uint64_t done = copyback ? flash_.copyback_program(plane, ready_ns, cause)
                           : flash_.program(plane, ready_ns, cause);
  auto first = static_cast<uint32_t>(
      ((static_cast<uint64_t>(plane) * blocks_ + static_cast<uint64_t>(b)) * pages_ + page) *
      lbas_per_page_);
  auto& lbas = buffers_[owner].lbas;
  assert(lbas.size() >= lbas_per_page_);
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
  assert(best >= 0 && "every plane is out of blocks despite the reserve");
  auto turn = static_cast<uint32_t>(std::max<int64_t>(best, 0));
  cursor_[stream] = (turn + 1) % plane_count_;
  return plane_order_[turn];
}

uint64_t Ftl::write(uint64_t lba, uint32_t nlb, uint32_t stream, uint64_t ready_ns) {
  assert(lba + nlb <= l2p_.size() && stream < streams_);
  uint64_t done = ready_ns;
  for (uint32_t i = 0; i < nlb; ++i) {
    unmap(lba + i);
    buffer(stream, static_cast<uint32_t>(lba + i));
    if (buffers_[stream].lbas.size() < lbas_per_page_) continue;
    uint32_t plane = next_plane(stream);
    done = std::max(done, program(stream, plane, stream, ready_ns, FlashCause::kHost));
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
    assert(block.valid == 0);
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

uint64_t Ftl::read(uint64_t lba, uint32_t nlb, uint64_t ready_ns) {
  assert(lba + nlb <= l2p_.size());
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
    done = std::max(done, flash_.read(slot_plane(v), ready_ns, run * lba_bytes_));
    i += run;
  }
  return done;
}

void Ftl::trim(uint64_t lba, uint64_t nlb) {
  assert(lba + nlb <= l2p_.size());
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

}  // namespace zonelab
