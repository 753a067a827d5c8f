// Where written data lives. `none` keeps nothing (metadata-only devices,
// for huge configurations and speed runs), `memory` keeps each written zone
// in RAM, `file` keeps data in the device image. The device only asks a
// backing for LBAs below a zone's data end; everything else reads as zeros,
// so a backing never has to remember what was not written.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "zonelab/device.h"

namespace zonelab {

class Backing {
 public:
  virtual ~Backing() = default;
  // False for `none`: the device then returns zeros for written LBAs too
  // and never calls read().
  virtual bool stores_data() const = 0;
  // `data` holds nlb blocks; null writes zeros. False when the data could
  // not be stored (the file backing: a full disk, a file-size limit); the
  // device then fails the command and changes nothing.
  [[nodiscard]] virtual bool write(uint64_t lba, uint32_t nlb, const uint8_t* data) = 0;
  // False when the data could not be read (the file backing: an I/O
  // error); the device then fails the command rather than answer zeros.
  [[nodiscard]] virtual bool read(uint64_t lba, uint32_t nlb, uint8_t* out) = 0;
  // Forget a range (zone reset, offline); later reads of it are not asked.
  virtual void discard(uint64_t lba, uint64_t nlb) = 0;
  // Push written data to stable storage (file backing); no-op otherwise.
  virtual bool sync() { return true; }
};

std::unique_ptr<Backing> make_none_backing();
// Memory backing allocates a zone's capacity at its first write and frees it
// when the zone is discarded.
std::unique_ptr<Backing> make_memory_backing(uint64_t lba_size_bytes, uint64_t zone_size_lbas,
                                             uint64_t zone_capacity_lbas, uint32_t zone_count);
// Zones of several sizes (`sets`, in LBA order), and `extra_lbas` after
// the zones (a FlexZNS device's parity pages), allocated `extra_unit_lbas`
// at a time.
std::unique_ptr<Backing> make_memory_backing(uint64_t lba_size_bytes, std::vector<ZoneSetInfo> sets,
                                             uint64_t extra_lbas = 0, uint64_t extra_unit_lbas = 0);

}  // namespace zonelab
