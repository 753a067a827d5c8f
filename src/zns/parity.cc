// Die-level RAID parity of a FlexZNS device and die failures: the parity of
// each stripe as data arrives, its recomputation after a crash, and the
// rebuild of a failed die's pages from their stripe. See zns_device.h and
// zone_layout.h (what a stripe is).
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "zns/zns_device.h"
#include "zonelab/assert.h"

namespace zonelab {
namespace {

void xor_into(uint8_t* dst, const uint8_t* src, size_t bytes) {
  size_t i = 0;
  for (; i + 8 <= bytes; i += 8) {
    uint64_t a = 0;
    uint64_t b = 0;
    std::memcpy(&a, dst + i, 8);
    std::memcpy(&b, src + i, 8);
    a ^= b;
    std::memcpy(dst + i, &a, 8);
  }
  for (; i < bytes; ++i) dst[i] ^= src[i];
}

}  // namespace

bool ZnsDevice::update_parity(uint32_t zone, uint64_t offset, uint32_t nlb, const uint8_t* data) {
  uint32_t slot = map_.slot_of(zone);
  ZL_ASSERT(slot != BlockMap::kUnmapped);
  const uint64_t lpp = layout_.lbas_per_page();
  const uint64_t lba_bytes = layout_.lba_size_bytes();
  const uint64_t stripe_lbas = uint64_t{layout_.flex_slot(slot).data_dies} * lpp;
  scratch_.resize(lpp * lba_bytes);
  for (uint64_t at = offset, end = offset + nlb; at < end;) {
    auto stripe = static_cast<uint32_t>(at / stripe_lbas);
    uint64_t segment_end = std::min(end, (stripe + 1) * stripe_lbas);
    // A stripe's first LBA starts its parity afresh (whatever an earlier,
    // unacknowledged write left there); later ones add to it.
    uint64_t parity_at = parity_lba(slot, stripe);
    if (at % stripe_lbas == 0) {
      std::fill(scratch_.begin(), scratch_.end(), 0);
    } else if (!backing_->read(parity_at, static_cast<uint32_t>(lpp), scratch_.data())) {
      return false;
    }
    if (data != nullptr) {
      for (uint64_t lba = at; lba < segment_end;) {
        uint64_t run = std::min(segment_end, (lba / lpp + 1) * lpp) - lba;
        xor_into(scratch_.data() + (lba % lpp) * lba_bytes, data + (lba - offset) * lba_bytes,
                 run * lba_bytes);
        lba += run;
      }
    }
    if (!backing_->write(parity_at, static_cast<uint32_t>(lpp), scratch_.data())) return false;
    at = segment_end;
  }
  return true;
}

bool ZnsDevice::recompute_tail_parity(uint32_t zone) {
  uint32_t slot = map_.slot_of(zone);
  if (slot == BlockMap::kUnmapped || !parity_stored()) return true;
  const uint64_t lpp = layout_.lbas_per_page();
  const uint64_t lba_bytes = layout_.lba_size_bytes();
  const uint64_t stripe_lbas = uint64_t{layout_.flex_slot(slot).data_dies} * lpp;
  const uint64_t data_end = table_.zone(zone).data_end;
  if (data_end % stripe_lbas == 0) return true;  // no stripe partly written
  auto stripe = static_cast<uint32_t>(data_end / stripe_lbas);
  const uint64_t start = layout_.zone_start_lba(zone);
  scratch_.assign(lpp * lba_bytes, 0);
  scratch2_.resize(lpp * lba_bytes);
  for (uint64_t lba = stripe * stripe_lbas; lba < data_end;) {
    uint64_t run = std::min(data_end, (lba / lpp + 1) * lpp) - lba;
    if (!backing_->read(start + lba, static_cast<uint32_t>(run), scratch2_.data())) return false;
    xor_into(scratch_.data() + (lba % lpp) * lba_bytes, scratch2_.data(), run * lba_bytes);
    lba += run;
  }
  return backing_->write(parity_lba(slot, stripe), static_cast<uint32_t>(lpp), scratch_.data());
}

void ZnsDevice::recovered() {
  if (!parity_stored()) return;
  for (uint32_t zone = 0; zone < layout_.zone_count(); ++zone) {
    const Zone& z = table_.zone(zone);
    if (z.data_end != 0 && z.state != ZoneState::kOffline) (void)recompute_tail_parity(zone);
  }
}

bool ZnsDevice::rebuild(uint32_t zone, uint32_t page, uint64_t from, uint64_t to, uint8_t* out,
                        uint64_t t0, uint64_t& done) {
  if (layout_.parity() == ParityPlacement::kNone) return false;
  const uint32_t slot = map_.slot_of(zone);
  const FlexSlot& s = layout_.flex_slot(slot);
  const auto ppd = static_cast<uint32_t>(config_.flash.planes_per_die);
  const uint64_t lpp = layout_.lbas_per_page();
  const uint64_t lba_bytes = layout_.lba_size_bytes();
  const uint64_t page_bytes = lpp * lba_bytes;
  const Zone& z = table_.zone(zone);
  const uint32_t stripe = page / s.data_dies;
  const uint32_t first = stripe * s.data_dies;
  // The parity: in the controller's buffer while the stripe is being
  // filled, else a copy on a live die.
  const bool parity_on_flash =
      first + s.data_dies <= z.pages_programmed || z.state == ZoneState::kFull;
  int copy = -1;
  for (uint32_t c = 0; c < s.parity.size() && copy < 0; ++c) {
    if (failed_[layout_.parity_page(slot, c, stripe).plane / ppd] == 0) copy = static_cast<int>(c);
  }
  if (copy < 0 && parity_on_flash) return false;
  // Every other page of the stripe that holds data must be readable.
  const uint32_t units = layout_.slot_units(slot);
  for (uint32_t q = first; q < first + s.data_dies; ++q) {
    if (q == page || uint64_t{q} * lpp >= z.data_end) continue;
    if (failed_[layout_.unit_plane(slot, q % units) / ppd] != 0) return false;
  }
  // The reads: the stripe's other pages on flash (those still in the page
  // buffer cost none), and the parity page once the stripe has left the
  // parity buffer for the flash.
  for (uint32_t q = first; q < first + s.data_dies; ++q) {
    if (q == page || q >= z.pages_programmed) continue;
    done = std::max(done, flash_.read(layout_.unit_plane(slot, q % units), t0, page_bytes));
    ++parity_counters_.rebuild_reads;
  }
  if (parity_on_flash) {
    FlashPage at = layout_.parity_page(slot, static_cast<uint32_t>(copy), stripe);
    done = std::max(done, flash_.read(at.plane, t0, page_bytes));
    ++parity_counters_.rebuild_reads;
  }
  ++parity_counters_.rebuilt_pages;
  if (out == nullptr || !backing_->stores_data()) return true;
  // The lost LBAs [from, to) of the page: parity XOR the same LBAs of every
  // other page of the stripe (zeros past the zone's data).
  const uint64_t start = layout_.zone_start_lba(zone);
  scratch_.resize(page_bytes);
  scratch2_.resize(page_bytes);
  if (!backing_->read(parity_lba(slot, stripe), static_cast<uint32_t>(lpp), scratch_.data())) {
    return false;
  }
  for (uint32_t q = first; q < first + s.data_dies; ++q) {
    if (q == page) continue;
    uint64_t begin = uint64_t{q} * lpp + from;
    uint64_t end = std::min(uint64_t{q} * lpp + to, z.data_end);
    if (begin >= end) continue;
    if (!backing_->read(start + begin, static_cast<uint32_t>(end - begin), scratch2_.data())) {
      return false;
    }
    xor_into(scratch_.data() + from * lba_bytes, scratch2_.data(), (end - begin) * lba_bytes);
  }
  std::memcpy(out, scratch_.data() + from * lba_bytes, (to - from) * lba_bytes);
  return true;
}

Outcome ZnsDevice::inject_die(uint32_t channel, uint32_t way, bool failed) {
  const FlashConfig& f = config_.flash;
  if (channel >= f.channels || way >= f.dies_per_channel) {
    return Error{fmt::format("die {}:{} does not exist (the flash has channels 0-{} and dies 0-{})",
                             channel, way, f.channels - 1, f.dies_per_channel - 1)};
  }
  auto flat = static_cast<uint32_t>(channel * f.dies_per_channel + way);
  if ((failed_[flat] != 0) == failed) return {};
  failed_[flat] = failed ? 1 : 0;
  if (failed) {
    ++failed_count_;
  } else {
    --failed_count_;
  }
  if (log_ != nullptr) {
    log_->die_changed(flat, failed);
    (void)log_destroying();  // the record is durable before anything reads past it
  }
  return {};
}

}  // namespace zonelab
