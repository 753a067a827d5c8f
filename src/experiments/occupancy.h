// Zone management latency at a chosen zone occupancy (seed 003 §2.1 and
// §5.2): a fresh device, zone 0 written sequentially up to a number of
// flash pages, then one finish or reset of zone 0. The device is driven one
// command at a time in virtual time, so the measured command has the flash
// to itself and its latency is the management cost alone.
#pragma once

#include <cstdint>

#include "zonelab/config.h"
#include "zonelab/device.h"
#include "zonelab/result.h"

namespace zonelab {

struct OccupancyPoint {
  uint64_t pages_written = 0;
  uint64_t zone_capacity_pages = 0;
  uint64_t latency_ns = 0;            // of the finish or reset
  uint64_t finish_program_pages = 0;  // fill programs the finish caused
  uint64_t reset_erases = 0;          // blocks the reset erased
};

// `action` is kFinish or kReset; `pages_written` at most the zone capacity
// in pages. Errors: a configuration that makes no device, a zone capacity
// that is not whole pages, or a command the device refused.
Result<OccupancyPoint> measure_at_occupancy(const Config& config, ZoneAction action,
                                            uint64_t pages_written);

// Pages of zone capacity under `config` (0 if it makes no device layout).
uint64_t zone_capacity_pages(const Config& config);

}  // namespace zonelab
