// The zone state machine as tables: every zone state x every Zone
// Management Send action, and a write from every state, with the NVMe status
// and the state and write pointer that follow (NVMe ZNS; QEMU where NVMe is
// silent). Shared by the zone table's tests and the device's tests, which
// check the same rules at two layers.
#pragma once

#include "zonelab/device.h"
#include "zonelab/status.h"

namespace zonelab::transitions {

using S = ZoneState;

// Where the write pointer is after the action: unchanged, at the zone start,
// or at the end (the zone table keeps capacity; a report shows start + size).
enum class Wp { kSame, kZoneStart, kFull };

struct TransitionRow {
  ZoneState from;
  ZoneAction action;
  Status status;
  ZoneState to;
  Wp wp;
};

constexpr Status kOk = Status::kSuccess;
constexpr Status kBad = Status::kInvalidZoneStateTransition;
constexpr ZoneAction kOpen = ZoneAction::kOpen;
constexpr ZoneAction kClose = ZoneAction::kClose;
constexpr ZoneAction kFinish = ZoneAction::kFinish;
constexpr ZoneAction kReset = ZoneAction::kReset;
constexpr ZoneAction kOffline = ZoneAction::kOffline;

// clang-format off
inline const TransitionRow kTransitions[] = {
    // from                 action    status  to                     wp
    {S::kEmpty,            kOpen,    kOk,  S::kExplicitlyOpened, Wp::kSame},
    {S::kImplicitlyOpened, kOpen,    kOk,  S::kExplicitlyOpened, Wp::kSame},
    {S::kExplicitlyOpened, kOpen,    kOk,  S::kExplicitlyOpened, Wp::kSame},
    {S::kClosed,           kOpen,    kOk,  S::kExplicitlyOpened, Wp::kSame},
    {S::kFull,             kOpen,    kBad, S::kFull,             Wp::kSame},
    {S::kReadOnly,         kOpen,    kBad, S::kReadOnly,         Wp::kSame},
    {S::kOffline,          kOpen,    kBad, S::kOffline,          Wp::kSame},

    {S::kEmpty,            kClose,   kBad, S::kEmpty,            Wp::kSame},
    {S::kImplicitlyOpened, kClose,   kOk,  S::kClosed,           Wp::kSame},
    {S::kExplicitlyOpened, kClose,   kOk,  S::kClosed,           Wp::kSame},  // nothing written
    {S::kClosed,           kClose,   kOk,  S::kClosed,           Wp::kSame},
    {S::kFull,             kClose,   kBad, S::kFull,             Wp::kSame},
    {S::kReadOnly,         kClose,   kBad, S::kReadOnly,         Wp::kSame},
    {S::kOffline,          kClose,   kBad, S::kOffline,          Wp::kSame},

    {S::kEmpty,            kFinish,  kOk,  S::kFull,             Wp::kFull},
    {S::kImplicitlyOpened, kFinish,  kOk,  S::kFull,             Wp::kFull},
    {S::kExplicitlyOpened, kFinish,  kOk,  S::kFull,             Wp::kFull},
    {S::kClosed,           kFinish,  kOk,  S::kFull,             Wp::kFull},
    {S::kFull,             kFinish,  kOk,  S::kFull,             Wp::kFull},
    {S::kReadOnly,         kFinish,  kBad, S::kReadOnly,         Wp::kSame},
    {S::kOffline,          kFinish,  kBad, S::kOffline,          Wp::kSame},

    {S::kEmpty,            kReset,   kOk,  S::kEmpty,            Wp::kZoneStart},
    {S::kImplicitlyOpened, kReset,   kOk,  S::kEmpty,            Wp::kZoneStart},
    {S::kExplicitlyOpened, kReset,   kOk,  S::kEmpty,            Wp::kZoneStart},
    {S::kClosed,           kReset,   kOk,  S::kEmpty,            Wp::kZoneStart},
    {S::kFull,             kReset,   kOk,  S::kEmpty,            Wp::kZoneStart},
    {S::kReadOnly,         kReset,   kBad, S::kReadOnly,         Wp::kSame},
    {S::kOffline,          kReset,   kBad, S::kOffline,          Wp::kSame},

    {S::kEmpty,            kOffline, kBad, S::kEmpty,            Wp::kSame},
    {S::kImplicitlyOpened, kOffline, kBad, S::kImplicitlyOpened, Wp::kSame},
    {S::kExplicitlyOpened, kOffline, kBad, S::kExplicitlyOpened, Wp::kSame},
    {S::kClosed,           kOffline, kBad, S::kClosed,           Wp::kSame},
    {S::kFull,             kOffline, kBad, S::kFull,             Wp::kSame},
    {S::kReadOnly,         kOffline, kOk,  S::kOffline,          Wp::kZoneStart},
    {S::kOffline,          kOffline, kOk,  S::kOffline,          Wp::kZoneStart},
};
// clang-format on

// A write at the write pointer from every state.
struct WriteRow {
  ZoneState from;
  Status status;
  ZoneState to;
};

// clang-format off
inline const WriteRow kWrites[] = {
    {S::kEmpty,            kOk,                        S::kImplicitlyOpened},
    {S::kImplicitlyOpened, kOk,                        S::kImplicitlyOpened},
    {S::kExplicitlyOpened, kOk,                        S::kExplicitlyOpened},
    {S::kClosed,           kOk,                        S::kImplicitlyOpened},
    {S::kFull,             Status::kZoneIsFull,        S::kFull},
    {S::kReadOnly,         Status::kZoneIsReadOnly,    S::kReadOnly},
    {S::kOffline,          Status::kZoneIsOffline,     S::kOffline},
};
// clang-format on

}  // namespace zonelab::transitions
