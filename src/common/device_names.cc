// The names of the device seam's enumerations (zonelab/device.h): opcodes,
// zone states and zone actions as the contract and the CLI spell them, and
// which zone states hold the open and active resources NVMe counts.
#include <array>

#include "zonelab/device.h"

namespace zonelab {

namespace {

constexpr std::array<std::string_view, kZoneStateCount> kStateNames{
    "empty", "implicitly-opened", "explicitly-opened", "closed", "full", "read-only", "offline"};

constexpr std::array<std::string_view, 6> kActionNames{"none", "close", "finish",
                                                       "open", "reset", "offline"};

constexpr std::array<std::string_view, kOpcodeCount> kOpcodeNames{
    "read", "write", "append", "zone-management-send", "deallocate", "flush"};

}  // namespace

std::string_view opcode_name(Opcode opcode) { return kOpcodeNames[static_cast<size_t>(opcode)]; }

std::string_view zone_state_name(ZoneState state) {
  return kStateNames[static_cast<size_t>(state)];
}

std::optional<ZoneState> zone_state_from_name(std::string_view name) {
  for (size_t i = 0; i < kStateNames.size(); ++i) {
    if (kStateNames[i] == name) return static_cast<ZoneState>(i);
  }
  return std::nullopt;
}

std::string_view zone_action_name(ZoneAction action) {
  return kActionNames[static_cast<size_t>(action)];
}

std::optional<ZoneAction> zone_action_from_name(std::string_view name) {
  for (size_t i = 1; i < kActionNames.size(); ++i) {
    if (kActionNames[i] == name) return static_cast<ZoneAction>(i);
  }
  return std::nullopt;
}

bool zone_is_open(ZoneState state) {
  return state == ZoneState::kImplicitlyOpened || state == ZoneState::kExplicitlyOpened;
}

bool zone_is_active(ZoneState state) { return zone_is_open(state) || state == ZoneState::kClosed; }

}  // namespace zonelab
