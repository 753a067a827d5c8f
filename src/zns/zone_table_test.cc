// The zone state machine and the open/active resource limits of ZoneTable,
// written as the NVMe ZNS transition tables read: one row per (state,
// action), then the MOR/MAR rules one case each. Where NVMe leaves a choice
// the expected value is what QEMU's ZNS emulation does (hw/nvme/ctrl.c).
#include "zns/zone_table.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <iterator>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "zns/zone_transitions_test_table.h"

namespace zonelab {
namespace {

constexpr uint64_t kCap = 12;  // zone capacity in LBAs

using S = ZoneState;
using St = Status;
using namespace transitions;  // NOLINT: the shared transition table

constexpr ZoneState kAllStates[] = {
    S::kEmpty, S::kImplicitlyOpened, S::kExplicitlyOpened, S::kClosed,
    S::kFull,  S::kReadOnly,         S::kOffline};

// Writes `nlb` blocks at the write pointer the way the device does.
Status write(ZoneTable& t, uint32_t zone, uint64_t nlb) {
  Status s = t.check_write(zone, t.zone(zone).wp, nlb);
  if (s != St::kSuccess) return s;
  s = t.open_for_write(zone);
  if (s != St::kSuccess) return s;
  t.advance(zone, nlb);
  return St::kSuccess;
}

// Brings an empty zone into `state` through the table's own operations.
void put(ZoneTable& t, uint32_t zone, ZoneState state) {
  ASSERT_EQ(t.zone(zone).state, S::kEmpty);
  switch (state) {
    case S::kEmpty:
      break;
    case S::kImplicitlyOpened:
      ASSERT_EQ(write(t, zone, 1), St::kSuccess);
      break;
    case S::kExplicitlyOpened:
      ASSERT_EQ(t.open(zone), St::kSuccess);
      break;
    case S::kClosed:
      ASSERT_EQ(write(t, zone, 1), St::kSuccess);
      ASSERT_EQ(t.close(zone), St::kSuccess);
      break;
    case S::kFull:
      ASSERT_EQ(write(t, zone, kCap), St::kSuccess);
      break;
    case S::kReadOnly:
      ASSERT_EQ(write(t, zone, 1), St::kSuccess);
      t.inject(zone, S::kReadOnly);
      break;
    case S::kOffline:
      t.inject(zone, S::kOffline);
      break;
  }
  ASSERT_EQ(t.zone(zone).state, state);
}

uint32_t expected_open(ZoneState s) { return zone_is_open(s) ? 1 : 0; }
uint32_t expected_active(ZoneState s) { return zone_is_active(s) ? 1 : 0; }

// ---------------------------------------------------------------------------
// States and resources

TEST(ZoneTable, StartsWithEveryZoneEmptyAndNoResourcesHeld) {
  ZoneTable t(8, kCap, 2, 3);
  EXPECT_EQ(t.zone_count(), 8u);
  EXPECT_EQ(t.capacity_lbas(), kCap);
  for (uint32_t z = 0; z < 8; ++z) {
    EXPECT_EQ(t.zone(z).state, S::kEmpty);
    EXPECT_EQ(t.zone(z).wp, 0u);
  }
  EXPECT_EQ(t.open_count(), 0u);
  EXPECT_EQ(t.active_count(), 0u);
  EXPECT_TRUE(t.invariants_hold());
}

TEST(ZoneTable, OpenedStatesHoldOpenAndActiveClosedHoldsOnlyActive) {
  struct Row {
    ZoneState state;
    bool open;
    bool active;
  };
  const Row rows[] = {
      {S::kEmpty, false, false},          {S::kImplicitlyOpened, true, true},
      {S::kExplicitlyOpened, true, true}, {S::kClosed, false, true},
      {S::kFull, false, false},           {S::kReadOnly, false, false},
      {S::kOffline, false, false},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(zone_state_name(row.state));
    EXPECT_EQ(zone_is_open(row.state), row.open);
    EXPECT_EQ(zone_is_active(row.state), row.active);
    ZoneTable t(4, kCap, 0, 0);
    put(t, 1, row.state);
    EXPECT_EQ(t.open_count(), row.open ? 1u : 0u);
    EXPECT_EQ(t.active_count(), row.active ? 1u : 0u);
    EXPECT_TRUE(t.invariants_hold());
  }
}

TEST(ZoneTable, StateAndActionNamesAreTheContractNames) {
  const char* names[] = {
      "empty", "implicitly-opened", "explicitly-opened", "closed", "full", "read-only", "offline"};
  for (int i = 0; i < kZoneStateCount; ++i) {
    auto state = static_cast<ZoneState>(i);
    EXPECT_EQ(zone_state_name(state), names[i]);
    EXPECT_EQ(zone_state_from_name(names[i]), state);
  }
  EXPECT_EQ(zone_state_from_name("opened"), std::nullopt);
  const std::pair<ZoneAction, const char*> actions[] = {{ZoneAction::kClose, "close"},
                                                        {ZoneAction::kFinish, "finish"},
                                                        {ZoneAction::kOpen, "open"},
                                                        {ZoneAction::kReset, "reset"},
                                                        {ZoneAction::kOffline, "offline"}};
  for (auto [action, name] : actions) {
    EXPECT_EQ(zone_action_name(action), name);
    EXPECT_EQ(zone_action_from_name(name), action);
  }
  EXPECT_EQ(zone_action_from_name("none"), std::nullopt);
  EXPECT_EQ(zone_action_from_name("erase"), std::nullopt);
}

TEST(ZoneTable, NvmeZoneSendActionValues) {
  EXPECT_EQ(static_cast<int>(ZoneAction::kClose), 1);
  EXPECT_EQ(static_cast<int>(ZoneAction::kFinish), 2);
  EXPECT_EQ(static_cast<int>(ZoneAction::kOpen), 3);
  EXPECT_EQ(static_cast<int>(ZoneAction::kReset), 4);
  EXPECT_EQ(static_cast<int>(ZoneAction::kOffline), 5);
}

// ---------------------------------------------------------------------------
// The transition table: every state x every Zone Management Send action.

Status apply(ZoneTable& t, uint32_t zone, ZoneAction action) {
  switch (action) {
    case ZoneAction::kOpen:
      return t.open(zone);
    case ZoneAction::kClose:
      return t.close(zone);
    case ZoneAction::kFinish:
      return t.finish(zone);
    case ZoneAction::kReset:
      return t.reset(zone);
    case ZoneAction::kOffline:
      return t.offline(zone);
    case ZoneAction::kNone:
      break;
  }
  ADD_FAILURE() << "no such action";
  return St::kInvalidField;
}

TEST(ZoneTable, TransitionTableCoversEveryStateAndAction) {
  EXPECT_EQ(std::size(kTransitions), static_cast<size_t>(kZoneStateCount) * 5);
}

TEST(ZoneTable, EveryStateUnderEveryAction) {
  for (const TransitionRow& row : kTransitions) {
    SCOPED_TRACE(std::string(zone_action_name(row.action)) + " from " +
                 std::string(zone_state_name(row.from)));
    ZoneTable t(4, kCap, 0, 0);
    put(t, 2, row.from);
    uint64_t wp_before = t.zone(2).wp;
    EXPECT_EQ(apply(t, 2, row.action), row.status);
    EXPECT_EQ(t.zone(2).state, row.to);
    uint64_t wp_expected = row.wp == Wp::kSame ? wp_before : row.wp == Wp::kZoneStart ? 0 : kCap;
    EXPECT_EQ(t.zone(2).wp, wp_expected);
    EXPECT_EQ(t.open_count(), expected_open(row.to));
    EXPECT_EQ(t.active_count(), expected_active(row.to));
    EXPECT_TRUE(t.invariants_hold());
    for (uint32_t other : {0u, 1u, 3u}) EXPECT_EQ(t.zone(other).state, S::kEmpty);
  }
}

TEST(ZoneTable, ResetClearsTheDataEnd) {
  ZoneTable t(2, kCap, 0, 0);
  ASSERT_EQ(write(t, 0, 5), kOk);
  EXPECT_EQ(t.zone(0).data_end, 5u);
  ASSERT_EQ(t.reset(0), kOk);
  EXPECT_EQ(t.zone(0).data_end, 0u);
}

TEST(ZoneTable, FinishKeepsTheDataEndWhereTheHostStopped) {
  ZoneTable t(2, kCap, 0, 0);
  ASSERT_EQ(write(t, 0, 5), kOk);
  ASSERT_EQ(t.finish(0), kOk);
  EXPECT_EQ(t.zone(0).wp, kCap);
  EXPECT_EQ(t.zone(0).data_end, 5u);
}

// ---------------------------------------------------------------------------
// Writes

TEST(ZoneTable, WriteAtTheWritePointerFromEveryState) {
  for (const WriteRow& row : kWrites) {
    SCOPED_TRACE(zone_state_name(row.from));
    ZoneTable t(4, kCap, 0, 0);
    put(t, 1, row.from);
    uint64_t wp = t.zone(1).wp;
    EXPECT_EQ(write(t, 1, 1), row.status);
    EXPECT_EQ(t.zone(1).state, row.to);
    EXPECT_EQ(t.zone(1).wp, row.status == kOk ? wp + 1 : wp);
    EXPECT_TRUE(t.invariants_hold());
  }
}

TEST(ZoneTable, WriteChecksStateThenWritePointerThenCapacity) {
  ZoneTable t(4, kCap, 0, 0);
  put(t, 0, S::kFull);
  EXPECT_EQ(t.check_write(0, 3, kCap + 5), St::kZoneIsFull);  // state wins
  put(t, 1, S::kImplicitlyOpened);
  EXPECT_EQ(t.check_write(1, 0, kCap + 5), St::kZoneInvalidWrite);  // then the wp
  EXPECT_EQ(t.check_write(1, 1, kCap), St::kZoneBoundaryError);     // then capacity
  EXPECT_EQ(t.check_write(1, 1, kCap - 1), kOk);                    // exactly fills
}

TEST(ZoneTable, WriteAheadOfOrBehindTheWritePointerIsAnInvalidWrite) {
  ZoneTable t(2, kCap, 0, 0);
  ASSERT_EQ(write(t, 0, 4), kOk);
  EXPECT_EQ(t.check_write(0, 3, 1), St::kZoneInvalidWrite);
  EXPECT_EQ(t.check_write(0, 5, 1), St::kZoneInvalidWrite);
  EXPECT_EQ(t.check_write(0, 4, 1), kOk);
}

TEST(ZoneTable, ReachingCapacityMakesTheZoneFullAndFreesItsResources) {
  ZoneTable t(2, kCap, 2, 2);
  ASSERT_EQ(write(t, 0, kCap - 1), kOk);
  EXPECT_EQ(t.zone(0).state, S::kImplicitlyOpened);
  EXPECT_EQ(t.active_count(), 1u);
  ASSERT_EQ(write(t, 0, 1), kOk);
  EXPECT_EQ(t.zone(0).state, S::kFull);
  EXPECT_EQ(t.zone(0).wp, kCap);
  EXPECT_EQ(t.open_count(), 0u);
  EXPECT_EQ(t.active_count(), 0u);
}

TEST(ZoneTable, ExplicitlyOpenedZoneStaysExplicitlyOpenedWhenWritten) {
  ZoneTable t(2, kCap, 1, 1);
  ASSERT_EQ(t.open(0), kOk);
  ASSERT_EQ(write(t, 0, 3), kOk);
  EXPECT_EQ(t.zone(0).state, S::kExplicitlyOpened);
  EXPECT_EQ(t.open_count(), 1u);
}

// ---------------------------------------------------------------------------
// Open and active resource limits (MOR/MAR)

TEST(ZoneTable, ClosedZonesCountAsActiveButNotOpen) {
  ZoneTable t(4, kCap, 2, 3);
  put(t, 0, S::kClosed);
  put(t, 1, S::kClosed);
  EXPECT_EQ(t.open_count(), 0u);
  EXPECT_EQ(t.active_count(), 2u);
}

TEST(ZoneTable, FinishAndResetFreeOpenAndActiveResources) {
  for (ZoneAction action : {kFinish, kReset}) {
    SCOPED_TRACE(zone_action_name(action));
    ZoneTable t(4, kCap, 2, 3);
    put(t, 2, S::kClosed);
    put(t, 0, S::kImplicitlyOpened);
    put(t, 1, S::kExplicitlyOpened);
    EXPECT_EQ(t.open_count(), 2u);
    EXPECT_EQ(t.active_count(), 3u);
    for (uint32_t z = 0; z < 3; ++z) ASSERT_EQ(apply(t, z, action), kOk);
    EXPECT_EQ(t.open_count(), 0u);
    EXPECT_EQ(t.active_count(), 0u);
  }
}

TEST(ZoneTable, CloseFreesTheOpenResourceButKeepsTheActiveOne) {
  ZoneTable t(4, kCap, 2, 3);
  put(t, 0, S::kImplicitlyOpened);
  ASSERT_EQ(t.close(0), kOk);
  EXPECT_EQ(t.open_count(), 0u);
  EXPECT_EQ(t.active_count(), 1u);
}

TEST(ZoneTable, ReopeningAClosedZoneTakesNoNewActiveResource) {
  ZoneTable t(4, kCap, 2, 2);
  put(t, 0, S::kClosed);
  put(t, 1, S::kClosed);
  ASSERT_EQ(t.active_count(), 2u);
  EXPECT_EQ(write(t, 0, 1), kOk);  // at the active limit, but the zone already holds one
  EXPECT_EQ(t.open(1), kOk);
  EXPECT_EQ(t.active_count(), 2u);
  EXPECT_EQ(t.open_count(), 2u);
}

TEST(ZoneTable, WriteAtTheOpenLimitImplicitlyClosesTheOldestImplicitlyOpenedZone) {
  ZoneTable t(8, kCap, 2, 0);
  put(t, 0, S::kImplicitlyOpened);
  put(t, 1, S::kImplicitlyOpened);
  ASSERT_EQ(write(t, 2, 1), kOk);
  EXPECT_EQ(t.zone(0).state, S::kClosed);
  EXPECT_EQ(t.zone(1).state, S::kImplicitlyOpened);
  EXPECT_EQ(t.zone(2).state, S::kImplicitlyOpened);
  EXPECT_EQ(t.implicit_closes(), 1u);
  EXPECT_EQ(t.open_count(), 2u);
  EXPECT_EQ(t.active_count(), 3u);
  ASSERT_EQ(write(t, 3, 1), kOk);
  EXPECT_EQ(t.zone(1).state, S::kClosed);
  EXPECT_EQ(t.implicit_closes(), 2u);
}

TEST(ZoneTable, ExplicitOpenAtTheOpenLimitImplicitlyClosesTheOldestImplicitlyOpenedZone) {
  ZoneTable t(8, kCap, 2, 0);
  put(t, 0, S::kImplicitlyOpened);
  put(t, 1, S::kImplicitlyOpened);
  ASSERT_EQ(t.open(2), kOk);
  EXPECT_EQ(t.zone(0).state, S::kClosed);
  EXPECT_EQ(t.zone(1).state, S::kImplicitlyOpened);
  EXPECT_EQ(t.zone(2).state, S::kExplicitlyOpened);
}

TEST(ZoneTable, OldestMeansFirstOpenedNotLowestZoneNorLastWritten) {
  ZoneTable t(8, kCap, 2, 0);
  ASSERT_EQ(write(t, 5, 1), kOk);
  ASSERT_EQ(write(t, 1, 1), kOk);
  ASSERT_EQ(write(t, 5, 1), kOk);  // writing again does not make zone 5 younger
  ASSERT_EQ(write(t, 3, 1), kOk);
  EXPECT_EQ(t.zone(5).state, S::kClosed);
  EXPECT_EQ(t.zone(1).state, S::kImplicitlyOpened);
}

TEST(ZoneTable, AZoneReopenedAfterAnImplicitCloseIsTheYoungest) {
  ZoneTable t(8, kCap, 2, 0);
  ASSERT_EQ(write(t, 0, 1), kOk);
  ASSERT_EQ(write(t, 1, 1), kOk);
  ASSERT_EQ(write(t, 2, 1), kOk);  // closes 0
  ASSERT_EQ(write(t, 0, 1), kOk);  // closes 1, zone 0 is now the youngest
  ASSERT_EQ(write(t, 3, 1), kOk);  // closes 2
  EXPECT_EQ(t.zone(0).state, S::kImplicitlyOpened);
  EXPECT_EQ(t.zone(1).state, S::kClosed);
  EXPECT_EQ(t.zone(2).state, S::kClosed);
  EXPECT_EQ(t.zone(3).state, S::kImplicitlyOpened);
}

TEST(ZoneTable, ExplicitlyOpenedZonesAreNeverImplicitlyClosed) {
  ZoneTable t(8, kCap, 2, 0);
  ASSERT_EQ(t.open(0), kOk);
  put(t, 1, S::kImplicitlyOpened);
  ASSERT_EQ(write(t, 2, 1), kOk);  // closes 1, not the older explicit 0
  EXPECT_EQ(t.zone(0).state, S::kExplicitlyOpened);
  EXPECT_EQ(t.zone(1).state, S::kClosed);
}

TEST(ZoneTable, ImplicitlyOpenedZoneOpenedExplicitlyIsNoLongerACandidate) {
  ZoneTable t(8, kCap, 2, 0);
  put(t, 0, S::kImplicitlyOpened);
  put(t, 1, S::kImplicitlyOpened);
  ASSERT_EQ(t.open(0), kOk);  // no new resource
  EXPECT_EQ(t.open_count(), 2u);
  ASSERT_EQ(write(t, 2, 1), kOk);
  EXPECT_EQ(t.zone(0).state, S::kExplicitlyOpened);
  EXPECT_EQ(t.zone(1).state, S::kClosed);
}

TEST(ZoneTable, TooManyOpenZonesWhenEveryOpenZoneWasOpenedExplicitly) {
  ZoneTable t(8, kCap, 2, 0);
  ASSERT_EQ(t.open(0), kOk);
  ASSERT_EQ(t.open(1), kOk);
  EXPECT_EQ(write(t, 2, 1), St::kTooManyOpenZones);
  EXPECT_EQ(t.open(3), St::kTooManyOpenZones);
  EXPECT_EQ(t.zone(2).state, S::kEmpty);
  EXPECT_EQ(t.zone(3).state, S::kEmpty);
  EXPECT_EQ(t.open_count(), 2u);
  EXPECT_EQ(t.active_count(), 2u);
}

TEST(ZoneTable, TooManyOpenZonesAlsoForAClosedZone) {
  ZoneTable t(8, kCap, 1, 0);
  put(t, 0, S::kClosed);
  ASSERT_EQ(t.open(1), kOk);
  EXPECT_EQ(write(t, 0, 1), St::kTooManyOpenZones);
  EXPECT_EQ(t.open(0), St::kTooManyOpenZones);
  EXPECT_EQ(t.zone(0).state, S::kClosed);
  EXPECT_EQ(t.zone(0).wp, 1u);
}

TEST(ZoneTable, TooManyActiveZonesIsCheckedBeforeAnyImplicitClose) {
  ZoneTable t(8, kCap, 2, 3);
  put(t, 2, S::kClosed);
  put(t, 0, S::kImplicitlyOpened);
  put(t, 1, S::kImplicitlyOpened);
  ASSERT_EQ(t.active_count(), 3u);
  EXPECT_EQ(write(t, 3, 1), St::kTooManyActiveZones);
  EXPECT_EQ(t.open(3), St::kTooManyActiveZones);
  EXPECT_EQ(t.zone(0).state, S::kImplicitlyOpened);  // not closed to make room
  EXPECT_EQ(t.zone(1).state, S::kImplicitlyOpened);
  EXPECT_EQ(t.zone(3).state, S::kEmpty);
  EXPECT_EQ(t.implicit_closes(), 0u);
  EXPECT_EQ(t.open_count(), 2u);
  EXPECT_EQ(t.active_count(), 3u);
  // The closed zone needs only an open resource, so it may displace zone 0.
  EXPECT_EQ(write(t, 2, 1), kOk);
  EXPECT_EQ(t.zone(0).state, S::kClosed);
}

TEST(ZoneTable, TooManyActiveZonesIsReportedEvenWhenTheOpenLimitIsAlsoReached) {
  ZoneTable t(8, kCap, 2, 2);
  ASSERT_EQ(t.open(0), kOk);
  ASSERT_EQ(t.open(1), kOk);
  EXPECT_EQ(write(t, 2, 1), St::kTooManyActiveZones);
}

TEST(ZoneTable, ZeroLimitsMeanNoLimit) {
  ZoneTable t(8, kCap, 0, 0);
  for (uint32_t z = 0; z < 4; ++z) ASSERT_EQ(t.open(z), kOk);
  for (uint32_t z = 4; z < 8; ++z) ASSERT_EQ(write(t, z, 1), kOk);
  EXPECT_EQ(t.open_count(), 8u);
  EXPECT_EQ(t.active_count(), 8u);
  EXPECT_EQ(t.implicit_closes(), 0u);
}

TEST(ZoneTable, FailedCommandsChangeNothing) {
  ZoneTable t(8, kCap, 2, 3);
  put(t, 3, S::kFull);
  put(t, 4, S::kReadOnly);
  put(t, 5, S::kOffline);
  put(t, 2, S::kClosed);
  put(t, 0, S::kExplicitlyOpened);
  put(t, 1, S::kImplicitlyOpened);
  ASSERT_EQ(t.active_count(), 3u);
  auto snapshot = [&t] {
    std::vector<std::pair<ZoneState, uint64_t>> out;
    for (uint32_t z = 0; z < t.zone_count(); ++z) out.push_back({t.zone(z).state, t.zone(z).wp});
    return std::tuple(out, t.open_count(), t.active_count(), t.implicit_closes());
  };
  auto before = snapshot();
  EXPECT_EQ(write(t, 6, 1), St::kTooManyActiveZones);
  EXPECT_EQ(t.open(6), St::kTooManyActiveZones);
  EXPECT_EQ(write(t, 3, 1), St::kZoneIsFull);
  EXPECT_EQ(write(t, 4, 1), St::kZoneIsReadOnly);
  EXPECT_EQ(write(t, 5, 1), St::kZoneIsOffline);
  EXPECT_EQ(t.check_write(1, 0, 1), St::kZoneInvalidWrite);
  EXPECT_EQ(t.check_write(1, 1, kCap), St::kZoneBoundaryError);
  EXPECT_EQ(t.close(7), kBad);
  EXPECT_EQ(t.open(3), kBad);
  EXPECT_EQ(t.finish(4), kBad);
  EXPECT_EQ(t.reset(5), kBad);
  EXPECT_EQ(t.offline(2), kBad);
  EXPECT_EQ(snapshot(), before);
  EXPECT_TRUE(t.invariants_hold());
}

// ---------------------------------------------------------------------------
// Select All

TEST(ZoneTable, SelectAllTargetsPerAction) {
  // Zone i starts in kAllStates[i]; no limits so every state can coexist.
  ZoneTable t(kZoneStateCount, kCap, 0, 0);
  for (uint32_t z = 0; z < kZoneStateCount; ++z) put(t, z, kAllStates[z]);
  using V = std::vector<uint32_t>;
  const uint32_t io = 1, eo = 2, closed = 3, full = 4, ro = 5;
  EXPECT_EQ(t.select_all_targets(kOpen), (V{closed}));
  EXPECT_EQ(t.select_all_targets(kClose), (V{io, eo}));
  EXPECT_EQ(t.select_all_targets(kFinish), (V{io, eo, closed}));  // not empty zones
  EXPECT_EQ(t.select_all_targets(kReset), (V{io, eo, closed, full}));
  EXPECT_EQ(t.select_all_targets(kOffline), (V{ro}));
  EXPECT_EQ(t.select_all_targets(ZoneAction::kNone), V{});
}

TEST(ZoneTable, OpenAllOpensEveryClosedZoneClosingImplicitlyOpenedOnesForRoom) {
  ZoneTable t(8, kCap, 2, 0);
  put(t, 0, S::kClosed);
  put(t, 1, S::kClosed);
  put(t, 2, S::kImplicitlyOpened);
  put(t, 3, S::kImplicitlyOpened);
  EXPECT_EQ(t.open_all(t.select_all_targets(kOpen)), kOk);
  EXPECT_EQ(t.zone(0).state, S::kExplicitlyOpened);
  EXPECT_EQ(t.zone(1).state, S::kExplicitlyOpened);
  EXPECT_EQ(t.zone(2).state, S::kClosed);
  EXPECT_EQ(t.zone(3).state, S::kClosed);
  EXPECT_EQ(t.open_count(), 2u);
  EXPECT_TRUE(t.invariants_hold());
}

TEST(ZoneTable, OpenAllThatCannotFitFailsAndOpensNothing) {
  ZoneTable t(8, kCap, 2, 0);
  put(t, 0, S::kExplicitlyOpened);
  put(t, 1, S::kClosed);
  put(t, 2, S::kClosed);
  put(t, 3, S::kImplicitlyOpened);
  EXPECT_EQ(t.open_all(t.select_all_targets(kOpen)), St::kTooManyOpenZones);
  EXPECT_EQ(t.zone(1).state, S::kClosed);
  EXPECT_EQ(t.zone(2).state, S::kClosed);
  EXPECT_EQ(t.zone(3).state, S::kImplicitlyOpened);
  EXPECT_EQ(t.implicit_closes(), 0u);
  EXPECT_EQ(t.open_count(), 2u);
}

TEST(ZoneTable, OpenAllWithNoClosedZonesSucceedsAndChangesNothing) {
  ZoneTable t(4, kCap, 1, 0);
  put(t, 0, S::kImplicitlyOpened);
  EXPECT_EQ(t.open_all(t.select_all_targets(kOpen)), kOk);
  EXPECT_EQ(t.zone(0).state, S::kImplicitlyOpened);
}

// ---------------------------------------------------------------------------
// Media failures, restore and invariants

TEST(ZoneTable, InjectReadOnlyKeepsDataAndFreesResources) {
  ZoneTable t(4, kCap, 2, 3);
  ASSERT_EQ(write(t, 0, 5), kOk);
  t.inject(0, S::kReadOnly);
  EXPECT_EQ(t.zone(0).state, S::kReadOnly);
  EXPECT_EQ(t.zone(0).wp, 5u);
  EXPECT_EQ(t.zone(0).data_end, 5u);
  EXPECT_EQ(t.open_count(), 0u);
  EXPECT_EQ(t.active_count(), 0u);
  EXPECT_TRUE(t.invariants_hold());
}

TEST(ZoneTable, InjectOfflineLosesDataAndFreesResources) {
  for (ZoneState from : kAllStates) {
    SCOPED_TRACE(zone_state_name(from));
    ZoneTable t(4, kCap, 2, 3);
    put(t, 0, from);
    t.inject(0, S::kOffline);
    EXPECT_EQ(t.zone(0).state, S::kOffline);
    EXPECT_EQ(t.zone(0).wp, 0u);
    EXPECT_EQ(t.zone(0).data_end, 0u);
    EXPECT_EQ(t.open_count(), 0u);
    EXPECT_EQ(t.active_count(), 0u);
    EXPECT_TRUE(t.invariants_hold());
  }
}

TEST(ZoneTable, AnInjectedImplicitlyOpenedZoneIsNoLongerAnImplicitCloseCandidate) {
  ZoneTable t(8, kCap, 2, 0);
  put(t, 0, S::kImplicitlyOpened);
  put(t, 1, S::kImplicitlyOpened);
  t.inject(0, S::kReadOnly);
  ASSERT_EQ(write(t, 2, 1), kOk);  // room without a close
  ASSERT_EQ(write(t, 3, 1), kOk);  // closes 1
  EXPECT_EQ(t.zone(0).state, S::kReadOnly);
  EXPECT_EQ(t.zone(1).state, S::kClosed);
  EXPECT_TRUE(t.invariants_hold());
}

TEST(ZoneTable, RecountRebuildsResourcesAndImplicitOrderAfterRestore) {
  ZoneTable t(4, kCap, 2, 3);
  t.restore(0, Zone{S::kImplicitlyOpened, 2, 2, 0, 7});
  t.restore(1, Zone{S::kImplicitlyOpened, 3, 3, 0, 5});  // older
  t.restore(2, Zone{S::kClosed, 1, 1, 0, 0});
  t.recount();
  EXPECT_EQ(t.open_count(), 2u);
  EXPECT_EQ(t.active_count(), 3u);
  EXPECT_GT(t.next_open_seq(), 7u);
  EXPECT_TRUE(t.invariants_hold());
  ASSERT_EQ(write(t, 2, 1), kOk);  // closed zone 2 takes the open resource of the oldest
  EXPECT_EQ(t.zone(1).state, S::kClosed);
  EXPECT_EQ(t.zone(0).state, S::kImplicitlyOpened);
}

TEST(ZoneTable, InvariantsFailOnStaleCountsOrImpossibleWritePointers) {
  {
    ZoneTable t(4, kCap, 0, 0);
    t.restore(0, Zone{S::kClosed, 1, 1, 0, 0});  // no recount
    EXPECT_FALSE(t.invariants_hold());
    t.recount();
    EXPECT_TRUE(t.invariants_hold());
  }
  const Zone bad[] = {
      Zone{S::kEmpty, 3, 0, 0, 0},          // empty with a write pointer
      Zone{S::kFull, kCap - 1, 0, 0, 0},    // full short of capacity
      Zone{S::kClosed, kCap + 1, 0, 0, 0},  // beyond capacity
      Zone{S::kClosed, 2, 3, 0, 0},         // data beyond the write pointer
  };
  for (const Zone& z : bad) {
    ZoneTable t(4, kCap, 0, 0);
    t.restore(1, z);
    t.recount();
    EXPECT_FALSE(t.invariants_hold()) << zone_state_name(z.state) << " wp " << z.wp;
  }
  {
    ZoneTable t(4, kCap, 1, 0);  // two open zones over a limit of one
    t.restore(0, Zone{S::kExplicitlyOpened, 0, 0, 0, 0});
    t.restore(1, Zone{S::kExplicitlyOpened, 0, 0, 0, 0});
    t.recount();
    EXPECT_FALSE(t.invariants_hold());
  }
}

// Random operations straight on the table; the device-level model check in
// zns_device_test.cc compares every state, this one checks the invariants
// after every step over a wider mix of limits.
TEST(ZoneTable, InvariantsHoldAfterEveryStepOfRandomOperations) {
  const std::pair<uint32_t, uint32_t> limits[] = {{2, 3}, {1, 1}, {3, 3}, {0, 4}, {0, 0}};
  for (auto [max_open, max_active] : limits) {
    SCOPED_TRACE(testing::Message() << "max_open " << max_open << " max_active " << max_active);
    std::mt19937_64 rng(max_open * 31 + max_active);
    ZoneTable t(8, kCap, max_open, max_active);
    for (int step = 0; step < 1000; ++step) {
      auto zone = static_cast<uint32_t>(rng() % 8);
      switch (rng() % 8) {
        case 0:
        case 1:
        case 2:
          (void)write(t, zone, 1 + rng() % 5);
          break;
        case 3:
          (void)t.open(zone);
          break;
        case 4:
          (void)t.close(zone);
          break;
        case 5:
          (void)t.finish(zone);
          break;
        case 6:
          (void)t.reset(zone);
          break;
        default:
          if (rng() % 16 == 0) {
            t.inject(zone, rng() % 2 ? S::kReadOnly : S::kOffline);
          } else {
            (void)t.open_all(t.select_all_targets(kOpen));
          }
          break;
      }
      ASSERT_TRUE(t.invariants_hold()) << "step " << step;
    }
  }
}

}  // namespace
}  // namespace zonelab
