// NVMe completion statuses that the zoned device returns, with their Status
// Code Type (SCT) and Status Code (SC) as the NVMe base and ZNS command set
// specifications define them.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace zonelab {

enum class Status : uint8_t {
  kSuccess,
  kInvalidField,
  kLbaOutOfRange,
  kZoneBoundaryError,
  kZoneIsFull,
  kZoneIsReadOnly,
  kZoneIsOffline,
  kZoneInvalidWrite,
  kTooManyActiveZones,
  kTooManyOpenZones,
  kInvalidZoneStateTransition,
  // Media and data integrity errors: the data could not be stored (the
  // image's file system is full, a file-size limit) or read back.
  kWriteFault,
  kUnrecoveredReadError,
};

inline constexpr int kStatusCount = 13;

// Contract name, e.g. "ZONE_IS_FULL".
std::string_view status_name(Status status);
std::optional<Status> status_from_name(std::string_view name);
// 0 = generic command status, 1 = command specific status.
uint8_t status_sct(Status status);
uint8_t status_sc(Status status);

}  // namespace zonelab
