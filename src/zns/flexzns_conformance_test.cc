// The zone rules on a FlexZNS device, zone set by zone set: the shared
// transition tables (every state x every Zone Management Send action, a
// write and an append from every state), reads from every state, the
// capacity, the boundaries and the open/active limits, on a zone of each set
// of a two-set format, for each parity placement. The same tables the
// uniform device's conformance tests use (zns_device_test.cc).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "zns/zns_device.h"
#include "zns/zone_transitions_test_table.h"

namespace zonelab {
namespace {

using S = ZoneState;
using namespace transitions;  // NOLINT: the shared transition table

// 4 channels x 2 dies x 2 planes, 16 blocks of 64 x 4 KiB pages: 512 KiB
// chunks, 4 MiB superblocks; zones of 1 MiB (2 dies) and 4 MiB (every die).
Config flex_config(const std::string& parity) {
  Config c = *preset_config("small");
  for (const std::string& kv : std::vector<std::string>{
           "flash.channels=4", "flash.dies_per_channel=2", "flash.planes_per_die=2",
           "flash.blocks_per_plane=16", "flash.pages_per_block=64", "flash.page_size=4KiB",
           "host.lba_size=4KiB", "zns.max_open=2", "zns.max_active=3", "zns.zasl=16KiB",
           "store.backing=memory", "zns.format=1MiB:6,4MiB:4", "zns.parity.placement=" + parity}) {
    EXPECT_TRUE(apply_override(c, kv).ok()) << kv;
  }
  return c;
}

class Drive final : public CompletionSink {
 public:
  explicit Drive(const std::string& parity) {
    dev = std::move(make_zns_device(flex_config(parity), sim)).value();
  }
  void on_complete(Command&) override {}
  Status exec(Command c) {
    c.sink = this;
    dev->submit(c);
    sim.run();
    last = c;
    return c.status;
  }
  Status io(Opcode op, uint64_t slba, uint32_t nlb) {
    Command c;
    c.opcode = op;
    c.slba = slba;
    c.nlb = nlb;
    return exec(c);
  }
  Status manage(ZoneAction action, uint32_t zone) {
    Command c;
    c.opcode = Opcode::kZoneManagementSend;
    c.action = action;
    c.slba = start(zone);
    return exec(c);
  }
  uint64_t start(uint32_t zone) const { return dev->zone(zone).start_lba; }
  uint64_t wp(uint32_t zone) const { return dev->zone(zone).wp_lba; }
  uint64_t cap(uint32_t zone) const { return dev->zone(zone).capacity_lbas; }
  uint64_t size(uint32_t zone) const { return dev->layout().zone_size_lbas(zone); }
  S state(uint32_t zone) const { return dev->zone(zone).state; }

  void put(uint32_t zone, S target) {
    switch (target) {
      case S::kEmpty:
        break;
      case S::kImplicitlyOpened:
        ASSERT_EQ(io(Opcode::kWrite, wp(zone), 1), kOk);
        break;
      case S::kExplicitlyOpened:
        ASSERT_EQ(manage(kOpen, zone), kOk);
        break;
      case S::kClosed:
        ASSERT_EQ(io(Opcode::kWrite, wp(zone), 1), kOk);
        ASSERT_EQ(manage(kClose, zone), kOk);
        break;
      case S::kFull:
        for (uint64_t done = 0; done < cap(zone); done += 4) {
          ASSERT_EQ(io(Opcode::kWrite, wp(zone), 4), kOk);
        }
        break;
      case S::kReadOnly:
        ASSERT_EQ(io(Opcode::kWrite, wp(zone), 1), kOk);
        dev->inject(zone, S::kReadOnly);
        break;
      case S::kOffline:
        dev->inject(zone, S::kOffline);
        break;
    }
    ASSERT_EQ(state(zone), target);
  }

  Simulator sim;
  std::unique_ptr<ZnsDevice> dev;
  Command last;
};

const std::vector<std::string> kPlacements = {"none", "in-zone", "separate"};

// A zone in the middle of each set.
std::vector<uint32_t> zones_of_each_set(const ZnsDevice& dev) {
  std::vector<uint32_t> zones;
  for (const ZoneSetInfo& set : dev.info().zone_sets) zones.push_back(set.first_zone + 1);
  return zones;
}

TEST(FlexZnsConformance, ZoneManagementSendFromEveryStateInEverySet) {
  for (const std::string& parity : kPlacements) {
    for (uint32_t zone : zones_of_each_set(*Drive(parity).dev)) {
      for (const TransitionRow& row : kTransitions) {
        SCOPED_TRACE(parity + " zone " + std::to_string(zone) + " " +
                     std::string(zone_state_name(row.from)) + " " +
                     std::string(zone_action_name(row.action)));
        Drive d(parity);
        d.put(zone, row.from);
        uint64_t before = d.wp(zone);
        EXPECT_EQ(d.manage(row.action, zone), row.status);
        EXPECT_EQ(d.state(zone), row.to);
        uint64_t want = row.wp == Wp::kSame        ? before
                        : row.wp == Wp::kZoneStart ? d.start(zone)
                                                   : d.start(zone) + d.size(zone);
        EXPECT_EQ(d.wp(zone), want);
        EXPECT_EQ(d.dev->zones().open_count(), zone_is_open(row.to) ? 1u : 0u);
        EXPECT_EQ(d.dev->zones().active_count(), zone_is_active(row.to) ? 1u : 0u);
        EXPECT_TRUE(d.dev->zones().invariants_hold());
      }
    }
  }
}

TEST(FlexZnsConformance, WriteAppendAndReadFromEveryStateInEverySet) {
  for (const std::string& parity : kPlacements) {
    for (uint32_t zone : zones_of_each_set(*Drive(parity).dev)) {
      for (const WriteRow& row : kWrites) {
        SCOPED_TRACE(parity + " zone " + std::to_string(zone) + " " +
                     std::string(zone_state_name(row.from)));
        {
          Drive d(parity);
          d.put(zone, row.from);
          uint64_t reported = d.wp(zone);
          uint64_t at = row.from == S::kFull ? d.start(zone) + d.cap(zone) - 1 : reported;
          EXPECT_EQ(d.io(Opcode::kWrite, at, 1), row.status);
          EXPECT_EQ(d.state(zone), row.to);
          EXPECT_EQ(d.wp(zone), row.status == kOk ? reported + 1 : reported);
        }
        {
          Drive d(parity);
          d.put(zone, row.from);
          uint64_t reported = d.wp(zone);
          EXPECT_EQ(d.io(Opcode::kAppend, d.start(zone), 1), row.status);
          EXPECT_EQ(d.state(zone), row.to);
          if (row.status == kOk) {
            EXPECT_EQ(d.last.result_lba, reported);
          }
        }
        {
          Drive d(parity);
          d.put(zone, row.from);
          EXPECT_EQ(d.io(Opcode::kRead, d.start(zone), 4),
                    row.from == S::kOffline ? Status::kZoneIsOffline : kOk);
          EXPECT_EQ(d.state(zone), row.from);
        }
      }
    }
  }
}

TEST(FlexZnsConformance, CapacityBoundariesAndLimitsHoldInEverySet) {
  for (const std::string& parity : kPlacements) {
    SCOPED_TRACE(parity);
    Drive d(parity);
    const DeviceInfo& info = d.dev->info();
    for (uint32_t zone : zones_of_each_set(*d.dev)) {
      SCOPED_TRACE(zone);
      // Reads do not cross a zone; writes past the capacity are refused.
      EXPECT_EQ(d.io(Opcode::kRead, d.start(zone) + d.size(zone) - 1, 2),
                Status::kZoneBoundaryError);
      EXPECT_EQ(d.io(Opcode::kWrite, d.start(zone), static_cast<uint32_t>(d.cap(zone) + 1)),
                Status::kZoneBoundaryError);
      EXPECT_EQ(d.io(Opcode::kWrite, d.start(zone) + 1, 1), Status::kZoneInvalidWrite);
      // An append names the zone by its start, at most ZASL.
      EXPECT_EQ(d.io(Opcode::kAppend, d.start(zone) + 1, 1), Status::kInvalidField);
      EXPECT_EQ(d.io(Opcode::kAppend, d.start(zone), static_cast<uint32_t>(info.zasl_lbas + 1)),
                Status::kInvalidField);
      EXPECT_EQ(d.manage(kReset, zone), kOk);
    }
    // MAR 3 over zones of both sets: the fourth zone opened is refused.
    std::vector<uint32_t> zones = {0, 1, info.zone_sets[1].first_zone,
                                   info.zone_sets[1].first_zone + 1};
    for (size_t i = 0; i < 3; ++i) ASSERT_EQ(d.io(Opcode::kWrite, d.wp(zones[i]), 1), kOk);
    EXPECT_EQ(d.io(Opcode::kWrite, d.wp(zones[3]), 1), Status::kTooManyActiveZones);
    EXPECT_EQ(d.dev->zones().open_count(), 2u);  // MOR 2: the oldest was closed
    EXPECT_EQ(d.state(zones[0]), S::kClosed);
    // Past the namespace.
    EXPECT_EQ(d.io(Opcode::kRead, info.capacity_lbas, 1), Status::kLbaOutOfRange);
  }
}

}  // namespace
}  // namespace zonelab
