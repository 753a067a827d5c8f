// The latency of a zone's first write under direct and lazy block mapping
// (seed 003 §5.2, "Erasures in lazy mapping"). A fresh device is filled
// zone by zone, one command at a time in virtual time, with a reset between
// the fills of a zone, and the first write of every fill is timed:
//
// - sequential fill: every zone in order, then every zone is reset, then
//   every zone in order again;
// - repeat zone: zone 0 filled, reset, filled again, and so on.
//
// Every fill writes the zone's first and last `sample_pages` flash pages
// with one-page writes (the first of them is the zone's first write) and
// the pages between with ZASL-sized writes, which keeps a fill of a large
// zone cheap to simulate; the one-page writes after the first are the
// sample of the zone's other writes. Each command runs alone on an idle
// device, so its latency is its own cost.
#pragma once

#include <cstdint>
#include <vector>

#include "zonelab/config.h"
#include "zonelab/result.h"

namespace zonelab {

enum class FillWorkload : uint8_t { kSequentialFill, kRepeatZone };

struct FirstWriteSpec {
  FillWorkload workload = FillWorkload::kSequentialFill;
  uint32_t fills = 0;          // 0: twice the physical zones (sequential: twice the zones)
  uint32_t sample_pages = 64;  // one-page writes at each end of a fill
};

struct ZoneFill {
  uint32_t fill = 0;  // 1-based
  uint32_t zone = 0;
  // Lazy mapping: physical zones free and holding no old data, before the
  // first write (direct mapping: 0).
  uint32_t clean_free_physical_zones = 0;
  uint32_t physical_zone = 0;  // the zone's blocks after the first write
  uint64_t first_write_ns = 0;
  uint64_t first_write_erases = 0;  // blocks the first write erased
  uint64_t other_writes = 0;        // sampled one-page writes after the first
  uint64_t other_p95_ns = 0;        // their P95 (nearest rank)
  uint64_t reset_ns = 0;            // the reset that emptied the zone for this fill; 0: none
  uint32_t erase_min = 0;           // least and most erased block of the device after the fill
  uint32_t erase_max = 0;
};

struct FirstWriteRun {
  uint32_t zones = 0;
  uint32_t physical_zones = 0;
  uint64_t page_bytes = 0;
  uint64_t bulk_write_bytes = 0;  // the writes between the samples
  std::vector<ZoneFill> fills;
  std::vector<uint64_t> other_write_ns;  // every sampled one-page write after a first write
  uint64_t erases = 0;                   // blocks erased over the run
  uint64_t virtual_time_ns = 0;
};

// Errors: a configuration that makes no device, a zone capacity that is not
// whole pages or holds fewer than 2 x sample_pages pages, or a command the
// device refused.
Result<FirstWriteRun> measure_first_writes(const Config& config, const FirstWriteSpec& spec);

// The nearest-rank percentile (0 < p <= 100) of the values; 0 when empty.
uint64_t nearest_rank_percentile(std::vector<uint64_t> values, double p);

}  // namespace zonelab
