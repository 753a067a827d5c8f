// The sections of a device image that both modeled devices keep (the ZNS
// device's zone table, the conventional device's zoned view, what the host
// interface counted), each encoded here, beside the interface they belong
// to. Section types are listed in docs/image-format.md; every decoder
// checks every count against the bytes that are there and its limit.
#pragma once

#include <cstdint>
#include <vector>

#include "controller/modeled_device.h"
#include "store/image.h"
#include "zonelab/result.h"

namespace zonelab {

inline constexpr uint32_t kSectionZones = 2;
inline constexpr uint32_t kSectionNextOpenSeq = 3;
inline constexpr uint32_t kSectionLifetime = 5;
inline constexpr uint64_t kImageZoneCountMax = 1ULL << 24;

// One zone as an image keeps it (the ZNS zone table's Zone; the
// conventional device keeps state and write pointer only).
struct ZoneRecord {
  uint8_t state = 0;  // ZoneState value
  uint64_t wp = 0;
  uint64_t data_end = 0;
  uint32_t pages_programmed = 0;
  uint64_t open_seq = 0;

  bool operator==(const ZoneRecord&) const = default;
};

void put_zone_records(ImageState& state, const std::vector<ZoneRecord>& zones);
// Refuses a section that is missing, cut short or padded, over the limit, or
// holds a record no device could have (a state that is none, data beyond
// the write pointer).
Result<std::vector<ZoneRecord>> get_zone_records(const ImageState& state);

void put_next_open_seq(ImageState& state, uint64_t next_open_seq);
Result<uint64_t> get_next_open_seq(const ImageState& state);

void put_lifetime(ImageState& state, const LifetimeCounters& lifetime);
Result<LifetimeCounters> get_lifetime(const ImageState& state);

// The body of a section that must be there ("zones section is missing").
Result<const std::vector<uint8_t>*> required_section(const ImageState& state, uint32_t type,
                                                     const char* name);

}  // namespace zonelab
