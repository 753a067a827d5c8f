// The `none` and `memory` backings; the `file` backing lives with the image
// (image.cc) because it shares the image's file.
#include "store/backing.h"

#include <cstring>
#include <utility>
#include <vector>

#include "zonelab/assert.h"

namespace zonelab {
namespace {

class NoneBacking final : public Backing {
 public:
  bool stores_data() const override { return false; }
  bool write(uint64_t, uint32_t, const uint8_t*) override { return true; }
  // Stored nothing, so there is nothing to read: the device fills zeros
  // itself when stores_data() is false and never calls this.
  bool read(uint64_t, uint32_t, uint8_t*) override {
    ZL_ASSERT(false && "none backing read");
    return false;
  }
  void discard(uint64_t, uint64_t) override {}
};

class MemoryBacking final : public Backing {
 public:
  MemoryBacking(uint64_t lba_size, std::vector<ZoneSetInfo> sets, uint64_t extra_lbas,
                uint64_t extra_unit_lbas)
      : lba_size_(lba_size),
        sets_(std::move(sets)),
        zone_count_(sets_.back().first_zone + sets_.back().zone_count),
        capacity_lbas_(sets_.back().first_lba +
                       sets_.back().zone_size_lbas * sets_.back().zone_count),
        extra_unit_lbas_(extra_unit_lbas == 0 ? 1 : extra_unit_lbas),
        zones_(zone_count_),
        extra_((extra_lbas + extra_unit_lbas_ - 1) / extra_unit_lbas_) {}

  bool stores_data() const override { return true; }

  bool write(uint64_t lba, uint32_t nlb, const uint8_t* data) override {
    auto [buffer, offset] = locate(lba, true);
    size_t bytes = nlb * lba_size_;
    ZL_ASSERT(offset + bytes <= buffer->size());
    if (data != nullptr) {
      std::memcpy(buffer->data() + offset, data, bytes);
    } else {
      std::memset(buffer->data() + offset, 0, bytes);
    }
    return true;
  }

  bool read(uint64_t lba, uint32_t nlb, uint8_t* out) override {
    size_t bytes = nlb * lba_size_;
    auto [buffer, offset] = locate(lba, false);
    if (buffer->empty()) {
      std::memset(out, 0, bytes);
      return true;
    }
    ZL_ASSERT(offset + bytes <= buffer->size());
    std::memcpy(out, buffer->data() + offset, bytes);
    return true;
  }

  void discard(uint64_t lba, uint64_t nlb) override {
    // Discards cover whole zones, or whole units of the region after them.
    for (uint64_t at = lba; at < lba + nlb;) {
      if (at >= capacity_lbas_) {
        uint64_t unit = (at - capacity_lbas_) / extra_unit_lbas_;
        if (unit >= extra_.size()) return;
        std::vector<uint8_t>().swap(extra_[unit]);
        at = capacity_lbas_ + (unit + 1) * extra_unit_lbas_;
        continue;
      }
      const ZoneSetInfo& set = sets_[zone_set_of_lba(sets_, at)];
      uint32_t zone = set.zone_of(at);
      uint64_t zone_end = set.start_of(zone + 1);
      uint64_t start = set.start_of(zone);
      if (at == start) {
        std::vector<uint8_t>().swap(zones_[zone]);
      } else if (!zones_[zone].empty()) {
        // The tail of a zone (a power cut's loss): zeros from `at` on.
        uint64_t from = (at - start) * lba_size_;
        uint64_t to = std::min<uint64_t>((std::min(lba + nlb, zone_end) - start) * lba_size_,
                                         zones_[zone].size());
        if (from < to) std::memset(zones_[zone].data() + from, 0, to - from);
      }
      at = zone_end;
    }
  }

 private:
  // The buffer holding `lba` and the byte offset in it; allocated when
  // `allocate` (a zone's capacity, or one unit of the region after the
  // zones).
  std::pair<std::vector<uint8_t>*, size_t> locate(uint64_t lba, bool allocate) {
    if (lba >= capacity_lbas_) {
      uint64_t unit = (lba - capacity_lbas_) / extra_unit_lbas_;
      ZL_ASSERT(unit < extra_.size());
      std::vector<uint8_t>& buffer = extra_[unit];
      if (allocate && buffer.empty()) buffer.assign(extra_unit_lbas_ * lba_size_, 0);
      return {&buffer, ((lba - capacity_lbas_) % extra_unit_lbas_) * lba_size_};
    }
    const ZoneSetInfo& set = sets_[sets_.size() == 1 ? 0 : zone_set_of_lba(sets_, lba)];
    uint32_t zone = set.zone_of(lba);
    std::vector<uint8_t>& buffer = zones_[zone];
    if (allocate && buffer.empty()) buffer.assign(set.zone_capacity_lbas * lba_size_, 0);
    return {&buffer, (lba - set.start_of(zone)) * lba_size_};
  }

  uint64_t lba_size_;
  std::vector<ZoneSetInfo> sets_;
  uint32_t zone_count_;
  uint64_t capacity_lbas_;
  uint64_t extra_unit_lbas_;
  std::vector<std::vector<uint8_t>> zones_;
  std::vector<std::vector<uint8_t>> extra_;
};

}  // namespace

std::unique_ptr<Backing> make_none_backing() { return std::make_unique<NoneBacking>(); }

std::unique_ptr<Backing> make_memory_backing(uint64_t lba_size_bytes, uint64_t zone_size_lbas,
                                             uint64_t zone_capacity_lbas, uint32_t zone_count) {
  return make_memory_backing(lba_size_bytes,
                             uniform_zone_sets(zone_size_lbas, zone_capacity_lbas, zone_count));
}

std::unique_ptr<Backing> make_memory_backing(uint64_t lba_size_bytes, std::vector<ZoneSetInfo> sets,
                                             uint64_t extra_lbas, uint64_t extra_unit_lbas) {
  ZL_ASSERT(!sets.empty());
  return std::make_unique<MemoryBacking>(lba_size_bytes, std::move(sets), extra_lbas,
                                         extra_unit_lbas);
}

}  // namespace zonelab
