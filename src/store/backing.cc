// The `none` and `memory` backings; the `file` backing lives with the image
// (image.cc) because it shares the image's file.
#include "store/backing.h"

#include <cstring>
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
  MemoryBacking(uint64_t lba_size, uint64_t zone_size_lbas, uint64_t zone_capacity_lbas,
                uint32_t zone_count)
      : lba_size_(lba_size),
        zone_size_lbas_(zone_size_lbas),
        zone_capacity_lbas_(zone_capacity_lbas),
        zones_(zone_count) {}

  bool stores_data() const override { return true; }

  bool write(uint64_t lba, uint32_t nlb, const uint8_t* data) override {
    std::vector<uint8_t>& zone = zone_for(lba);
    uint8_t* dst = zone.data() + offset_bytes(lba);
    size_t bytes = nlb * lba_size_;
    ZL_ASSERT(offset_bytes(lba) + bytes <= zone.size());
    if (data != nullptr) {
      std::memcpy(dst, data, bytes);
    } else {
      std::memset(dst, 0, bytes);
    }
    return true;
  }

  bool read(uint64_t lba, uint32_t nlb, uint8_t* out) override {
    size_t bytes = nlb * lba_size_;
    const std::vector<uint8_t>& zone = zones_[lba / zone_size_lbas_];
    if (zone.empty()) {
      std::memset(out, 0, bytes);
      return true;
    }
    ZL_ASSERT(offset_bytes(lba) + bytes <= zone.size());
    std::memcpy(out, zone.data() + offset_bytes(lba), bytes);
    return true;
  }

  void discard(uint64_t lba, uint64_t nlb) override {
    // Discards always cover whole zones in the ZNS device.
    for (uint64_t z = lba / zone_size_lbas_; z * zone_size_lbas_ < lba + nlb; ++z) {
      std::vector<uint8_t>().swap(zones_[z]);
    }
  }

 private:
  std::vector<uint8_t>& zone_for(uint64_t lba) {
    std::vector<uint8_t>& zone = zones_[lba / zone_size_lbas_];
    if (zone.empty()) zone.assign(zone_capacity_lbas_ * lba_size_, 0);
    return zone;
  }
  size_t offset_bytes(uint64_t lba) const { return (lba % zone_size_lbas_) * lba_size_; }

  uint64_t lba_size_;
  uint64_t zone_size_lbas_;
  uint64_t zone_capacity_lbas_;
  std::vector<std::vector<uint8_t>> zones_;
};

}  // namespace

std::unique_ptr<Backing> make_none_backing() { return std::make_unique<NoneBacking>(); }

std::unique_ptr<Backing> make_memory_backing(uint64_t lba_size_bytes, uint64_t zone_size_lbas,
                                             uint64_t zone_capacity_lbas, uint32_t zone_count) {
  return std::make_unique<MemoryBacking>(lba_size_bytes, zone_size_lbas, zone_capacity_lbas,
                                         zone_count);
}

}  // namespace zonelab
