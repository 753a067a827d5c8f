// Status names and NVMe codes. Generic statuses (SCT 0) and the media
// errors (SCT 2) come from the NVMe base specification; the zone statuses
// (SCT 1, 0xB8-0xBF) from the ZNS command set specification.
#include "zonelab/status.h"

#include <array>

namespace zonelab {
namespace {

struct StatusInfo {
  std::string_view name;
  uint8_t sct;
  uint8_t sc;
};

constexpr std::array<StatusInfo, kStatusCount> kStatusTable{{
    {"SUCCESS", 0x0, 0x00},
    {"INVALID_FIELD", 0x0, 0x02},
    {"LBA_OUT_OF_RANGE", 0x0, 0x80},
    {"ZONE_BOUNDARY_ERROR", 0x1, 0xB8},
    {"ZONE_IS_FULL", 0x1, 0xB9},
    {"ZONE_IS_READ_ONLY", 0x1, 0xBA},
    {"ZONE_IS_OFFLINE", 0x1, 0xBB},
    {"ZONE_INVALID_WRITE", 0x1, 0xBC},
    {"TOO_MANY_ACTIVE_ZONES", 0x1, 0xBD},
    {"TOO_MANY_OPEN_ZONES", 0x1, 0xBE},
    {"INVALID_ZONE_STATE_TRANSITION", 0x1, 0xBF},
    {"WRITE_FAULT", 0x2, 0x80},
    {"UNRECOVERED_READ_ERROR", 0x2, 0x81},
}};

const StatusInfo& info(Status status) { return kStatusTable[static_cast<size_t>(status)]; }

}  // namespace

std::string_view status_name(Status status) { return info(status).name; }
uint8_t status_sct(Status status) { return info(status).sct; }
uint8_t status_sc(Status status) { return info(status).sc; }

std::optional<Status> status_from_name(std::string_view name) {
  for (size_t i = 0; i < kStatusTable.size(); ++i) {
    if (kStatusTable[i].name == name) return static_cast<Status>(i);
  }
  return std::nullopt;
}

}  // namespace zonelab
