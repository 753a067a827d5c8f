// ZNS conformance of the device model, through the Device seam only: build a
// device with make_zns_device, submit Commands, run the simulator, look at
// Command.status / result_lba / complete_ns and the zone descriptors.
//
// The rules come from the NVMe ZNS command set; where it leaves a choice the
// expected value is QEMU's (hw/nvme/ctrl.c, nvme_zrm_* and the I/O checks).
// Timing expectations are derived from the configuration, never hard-coded.
#include "zns/zns_device.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <optional>
#include <ostream>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "zns/zone_transitions_test_table.h"
#include "zonelab/config.h"

namespace zonelab {
namespace {

using S = ZoneState;
using St = Status;
using namespace transitions;  // NOLINT: the shared transition table

// The test device: 2 channels x 2 dies x 1 plane, single-unit (SU) zones of
// 3 flash pages = 12 LBAs of capacity in a 16-LBA zone, 8 zones, MOR 2,
// MAR 3, ZASL 4 LBAs, data kept in memory.
constexpr std::string_view kTestDevice[] = {
    "flash.channels=2",         "flash.dies_per_channel=2", "flash.planes_per_die=1",
    "flash.blocks_per_plane=8", "flash.pages_per_block=4",  "flash.page_size=16KiB",
    "host.lba_size=4KiB",       "host.queue_depth=64",      "zns.channels_per_zone=1",
    "zns.dies_per_zone=1",      "zns.zone_capacity=48KiB",  "zns.zone_size=64KiB",
    "zns.zone_count=8",         "zns.max_open=2",           "zns.max_active=3",
    "zns.zasl=16KiB",           "store.backing=memory",
};
constexpr uint64_t kCap = 12;
constexpr uint64_t kZoneSize = 16;
constexpr uint32_t kZones = 8;
constexpr uint64_t kNamespace = kZoneSize * kZones;
constexpr uint32_t kZasl = 4;
constexpr uint32_t kLbasPerPage = 4;
constexpr uint64_t kLbaBytes = 4096;

Config test_config(std::initializer_list<std::string_view> extra = {}) {
  Config config = default_config();
  for (std::string_view assignment : kTestDevice) {
    Outcome outcome = apply_override(config, assignment);
    EXPECT_TRUE(outcome.ok()) << outcome.error();
  }
  for (std::string_view assignment : extra) {
    Outcome outcome = apply_override(config, assignment);
    EXPECT_TRUE(outcome.ok()) << outcome.error();
  }
  return config;
}

Command io(Opcode opcode, uint64_t slba, uint32_t nlb, uint8_t* data = nullptr) {
  Command c;
  c.opcode = opcode;
  c.slba = slba;
  c.nlb = nlb;
  c.data = data;
  return c;
}

Command zone_send(ZoneAction action, uint64_t slba, bool select_all = false) {
  Command c;
  c.opcode = Opcode::kZoneManagementSend;
  c.action = action;
  c.slba = slba;
  c.select_all = select_all;
  return c;
}

// Bytes that are never zero, different for every (seed, byte).
std::vector<uint8_t> pattern(uint32_t seed, uint64_t nlb) {
  std::vector<uint8_t> out(nlb * kLbaBytes);
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = static_cast<uint8_t>((i * 7 + seed * 13) % 251 + 1);
  }
  return out;
}

bool all_zero(const uint8_t* data, size_t bytes) {
  for (size_t i = 0; i < bytes; ++i) {
    if (data[i] != 0) return false;
  }
  return true;
}

struct Snapshot {
  std::vector<std::pair<ZoneState, uint64_t>> zones;  // state, reported wp
  uint32_t open = 0;
  uint32_t active = 0;
  uint64_t implicit_closes = 0;
  uint64_t flash_programs = 0;
  uint64_t flash_erases = 0;
  bool operator==(const Snapshot&) const = default;
};

void PrintTo(const Snapshot& s, std::ostream* os) {
  for (size_t z = 0; z < s.zones.size(); ++z) {
    *os << "\n  zone " << z << ": " << zone_state_name(s.zones[z].first) << " wp "
        << s.zones[z].second;
  }
  *os << "\n  open " << s.open << " active " << s.active << " implicit closes " << s.implicit_closes
      << " programs " << s.flash_programs << " erases " << s.flash_erases;
}

// One device on its own simulator, with helpers that run a command to its
// completion and return the status.
class Drive final : public CompletionSink {
 public:
  explicit Drive(const Config& device_config = test_config()) : config(device_config) {
    auto made = make_zns_device(config, sim);
    if (!made.ok()) {
      ADD_FAILURE() << made.error();
      std::abort();
    }
    dev = std::move(made).value();
  }

  void on_complete(Command& command) override {
    EXPECT_EQ(sim.now_ns(), command.complete_ns);
    completed.push_back(&command);
  }

  void submit(Command& command) {
    command.sink = this;
    dev->submit(command);
  }
  Status exec(Command& command) {
    submit(command);
    sim.run();
    return command.status;
  }
  Status exec(Command&& command) { return exec(command); }

  Status write(uint64_t slba, uint32_t nlb, uint8_t* data = nullptr) {
    return exec(io(Opcode::kWrite, slba, nlb, data));
  }
  // Writes at the zone's write pointer.
  Status write_zone(uint32_t zone, uint32_t nlb) { return write(wp(zone), nlb); }
  Status append(uint32_t zone, uint32_t nlb, uint64_t* alba = nullptr, uint8_t* data = nullptr) {
    Command c = io(Opcode::kAppend, start(zone), nlb, data);
    Status s = exec(c);
    if (alba != nullptr) *alba = c.result_lba;
    return s;
  }
  Status read(uint64_t slba, uint32_t nlb, uint8_t* out = nullptr) {
    return exec(io(Opcode::kRead, slba, nlb, out));
  }
  Status manage(ZoneAction action, uint32_t zone) { return exec(zone_send(action, start(zone))); }
  Status manage_all(ZoneAction action) { return exec(zone_send(action, 0, true)); }

  ZoneState state(uint32_t zone) const { return dev->zone(zone).state; }
  uint64_t wp(uint32_t zone) const { return dev->zone(zone).wp_lba; }
  uint64_t start(uint32_t zone) const { return dev->zone(zone).start_lba; }
  uint32_t open_count() const { return dev->zones().open_count(); }
  uint32_t active_count() const { return dev->zones().active_count(); }

  // Brings an empty zone into `state` with ordinary commands (and the
  // media-failure hook for read-only and offline).
  void put(uint32_t zone, ZoneState target) {
    ASSERT_EQ(state(zone), S::kEmpty);
    switch (target) {
      case S::kEmpty:
        break;
      case S::kImplicitlyOpened:
        ASSERT_EQ(write_zone(zone, 1), St::kSuccess);
        break;
      case S::kExplicitlyOpened:
        ASSERT_EQ(manage(ZoneAction::kOpen, zone), St::kSuccess);
        break;
      case S::kClosed:
        ASSERT_EQ(write_zone(zone, 1), St::kSuccess);
        ASSERT_EQ(manage(ZoneAction::kClose, zone), St::kSuccess);
        break;
      case S::kFull:
        ASSERT_EQ(write_zone(zone, kCap), St::kSuccess);
        break;
      case S::kReadOnly:
        ASSERT_EQ(write_zone(zone, 1), St::kSuccess);
        dev->inject(zone, S::kReadOnly);
        break;
      case S::kOffline:
        dev->inject(zone, S::kOffline);
        break;
    }
    ASSERT_EQ(state(zone), target);
  }

  Snapshot snapshot() const {
    Snapshot s;
    for (uint32_t z = 0; z < dev->info().zone_count; ++z) s.zones.push_back({state(z), wp(z)});
    s.open = open_count();
    s.active = active_count();
    s.implicit_closes = dev->zones().implicit_closes();
    for (uint64_t n : dev->flash().counters().program_pages) s.flash_programs += n;
    for (uint64_t n : dev->flash().counters().erases) s.flash_erases += n;
    return s;
  }

  Config config;
  Simulator sim;
  std::unique_ptr<ZnsDevice> dev;
  std::vector<Command*> completed;
};

// ---------------------------------------------------------------------------
// The device as the host sees it

TEST(ZnsDevice, InfoDescribesTheConfiguredNamespace) {
  Drive d;
  const DeviceInfo& info = d.dev->info();
  EXPECT_EQ(info.interface, "zns");
  EXPECT_EQ(info.lba_size_bytes, kLbaBytes);
  EXPECT_EQ(info.zone_size_lbas, kZoneSize);
  EXPECT_EQ(info.zone_capacity_lbas, kCap);
  EXPECT_EQ(info.zone_count, kZones);
  EXPECT_EQ(info.capacity_lbas, kNamespace);
  EXPECT_EQ(info.max_open, 2u);
  EXPECT_EQ(info.max_active, 3u);
  EXPECT_EQ(info.zasl_lbas, kZasl);
}

TEST(ZnsDevice, ZonesStartEmptyWithTheWritePointerAtTheZoneStart) {
  Drive d;
  for (uint32_t z = 0; z < kZones; ++z) {
    ZoneDescriptor zd = d.dev->zone(z);
    EXPECT_EQ(zd.zone, z);
    EXPECT_EQ(zd.start_lba, z * kZoneSize);
    EXPECT_EQ(zd.capacity_lbas, kCap);
    EXPECT_EQ(zd.wp_lba, zd.start_lba);
    EXPECT_EQ(zd.state, S::kEmpty);
  }
}

TEST(ZnsDevice, AnInvalidConfigurationMakesNoDevice) {
  Simulator sim;
  Config config = test_config({"zns.max_open=4"});  // above max_active = 3
  auto made = make_zns_device(config, sim);
  ASSERT_FALSE(made.ok());
  EXPECT_NE(made.error().find("zns.max_open"), std::string::npos) << made.error();
}

TEST(ZnsDevice, FileBackingNeedsAnImage) {
  Simulator sim;
  auto made = make_zns_device(test_config({"store.backing=file"}), sim);
  ASSERT_FALSE(made.ok());
  EXPECT_NE(made.error().find("store.backing"), std::string::npos) << made.error();
}

TEST(ZnsDevice, CompletionIsDeliveredAtTheModeledTime) {
  Drive d;
  Command c = io(Opcode::kWrite, 0, 1);
  d.submit(c);
  EXPECT_TRUE(d.completed.empty());
  d.sim.run();
  ASSERT_EQ(d.completed.size(), 1u);
  EXPECT_EQ(d.completed[0], &c);
  EXPECT_EQ(c.submit_ns, 0u);
  EXPECT_GT(c.complete_ns, 0u);
}

// ---------------------------------------------------------------------------
// Every state x every Zone Management Send action, as the host sees it.
// Full zones report wp = zone start + zone size (as Linux does).

std::string row_name(ZoneAction action, ZoneState from) {
  return std::string(zone_action_name(action)) + " from " + std::string(zone_state_name(from));
}

TEST(ZnsDevice, TransitionTableCoversEveryStateAndAction) {
  EXPECT_EQ(std::size(kTransitions), static_cast<size_t>(kZoneStateCount) * 5);
}

TEST(ZnsDevice, ZoneManagementSendFromEveryState) {
  for (const TransitionRow& row : kTransitions) {
    SCOPED_TRACE(row_name(row.action, row.from));
    Drive d;
    d.put(3, row.from);
    uint64_t wp_before = d.wp(3);
    EXPECT_EQ(d.manage(row.action, 3), row.status);
    EXPECT_EQ(d.state(3), row.to);
    uint64_t wp_expected = row.wp == Wp::kSame        ? wp_before
                           : row.wp == Wp::kZoneStart ? d.start(3)
                                                      : d.start(3) + kZoneSize;
    EXPECT_EQ(d.wp(3), wp_expected);
    EXPECT_EQ(d.open_count(), zone_is_open(row.to) ? 1u : 0u);
    EXPECT_EQ(d.active_count(), zone_is_active(row.to) ? 1u : 0u);
    EXPECT_TRUE(d.dev->zones().invariants_hold());
    for (uint32_t z = 0; z < kZones; ++z) {
      if (z != 3) {
        EXPECT_EQ(d.state(z), S::kEmpty) << "zone " << z;
      }
    }
  }
}

TEST(ZnsDevice, ClosingAnOpenedZoneWithNothingWrittenLeavesItClosedNotEmpty) {
  Drive d;
  ASSERT_EQ(d.manage(kOpen, 1), kOk);
  ASSERT_EQ(d.manage(kClose, 1), kOk);
  EXPECT_EQ(d.state(1), S::kClosed);  // QEMU nvme_zrm_close; the zone stays active
  EXPECT_EQ(d.wp(1), d.start(1));
  EXPECT_EQ(d.active_count(), 1u);
}

TEST(ZnsDevice, WriteAtTheWritePointerFromEveryState) {
  for (const WriteRow& row : kWrites) {
    SCOPED_TRACE(zone_state_name(row.from));
    Drive d;
    d.put(2, row.from);
    uint64_t wp = row.from == S::kFull ? d.start(2) + kCap : d.wp(2);
    uint64_t reported = d.wp(2);
    EXPECT_EQ(d.write(wp, 1), row.status);
    EXPECT_EQ(d.state(2), row.to);
    EXPECT_EQ(d.wp(2), row.status == kOk ? reported + 1 : reported);
  }
}

TEST(ZnsDevice, AppendFromEveryState) {
  for (const WriteRow& row : kWrites) {
    SCOPED_TRACE(zone_state_name(row.from));
    Drive d;
    d.put(2, row.from);
    uint64_t reported = d.wp(2);
    uint64_t alba = 0;
    EXPECT_EQ(d.append(2, 1, &alba), row.status);
    EXPECT_EQ(d.state(2), row.to);
    if (row.status == kOk) {
      EXPECT_EQ(alba, reported);
      EXPECT_EQ(d.wp(2), reported + 1);
    } else {
      EXPECT_EQ(d.wp(2), reported);
    }
  }
}

TEST(ZnsDevice, ReadFromEveryState) {
  for (ZoneState from : {S::kEmpty, S::kImplicitlyOpened, S::kExplicitlyOpened, S::kClosed,
                         S::kFull, S::kReadOnly, S::kOffline}) {
    SCOPED_TRACE(zone_state_name(from));
    Drive d;
    d.put(2, from);
    Status expected = from == S::kOffline ? St::kZoneIsOffline : kOk;
    EXPECT_EQ(d.read(d.start(2), 4), expected);
    EXPECT_EQ(d.state(2), from);  // reads never change a zone
  }
}

TEST(ZnsDevice, WritingTheLastBlockOfCapacityMakesTheZoneFull) {
  Drive d;
  ASSERT_EQ(d.write_zone(1, kCap - 1), kOk);
  EXPECT_EQ(d.state(1), S::kImplicitlyOpened);
  ASSERT_EQ(d.write_zone(1, 1), kOk);
  EXPECT_EQ(d.state(1), S::kFull);
  EXPECT_EQ(d.wp(1), d.start(1) + kZoneSize);
  EXPECT_EQ(d.open_count(), 0u);
  EXPECT_EQ(d.active_count(), 0u);
}

TEST(ZnsDevice, ExplicitlyOpenedZoneWrittenToCapacityBecomesFull) {
  Drive d;
  ASSERT_EQ(d.manage(kOpen, 1), kOk);
  ASSERT_EQ(d.write_zone(1, kCap), kOk);
  EXPECT_EQ(d.state(1), S::kFull);
  EXPECT_EQ(d.open_count(), 0u);
}

// ---------------------------------------------------------------------------
// Every status of the contract, each produced by a rule; a failed command
// changes nothing (zones, counts, flash) and completes after the overhead.

TEST(ZnsDevice, StatusCodesAreTheNvmeCodes) {
  struct Row {
    Status status;
    const char* name;
    uint8_t sct;
    uint8_t sc;
  };
  // clang-format off
  const Row rows[] = {
      {St::kSuccess,                    "SUCCESS",                       0, 0x00},
      {St::kInvalidField,               "INVALID_FIELD",                 0, 0x02},
      {St::kLbaOutOfRange,              "LBA_OUT_OF_RANGE",              0, 0x80},
      {St::kZoneBoundaryError,          "ZONE_BOUNDARY_ERROR",           1, 0xB8},
      {St::kZoneIsFull,                 "ZONE_IS_FULL",                  1, 0xB9},
      {St::kZoneIsReadOnly,             "ZONE_IS_READ_ONLY",             1, 0xBA},
      {St::kZoneIsOffline,              "ZONE_IS_OFFLINE",               1, 0xBB},
      {St::kZoneInvalidWrite,           "ZONE_INVALID_WRITE",            1, 0xBC},
      {St::kTooManyActiveZones,         "TOO_MANY_ACTIVE_ZONES",         1, 0xBD},
      {St::kTooManyOpenZones,           "TOO_MANY_OPEN_ZONES",           1, 0xBE},
      {St::kInvalidZoneStateTransition, "INVALID_ZONE_STATE_TRANSITION", 1, 0xBF},
      {St::kWriteFault,                 "WRITE_FAULT",                   2, 0x80},
      {St::kUnrecoveredReadError,       "UNRECOVERED_READ_ERROR",        2, 0x81},
  };
  // clang-format on
  EXPECT_EQ(std::size(rows), static_cast<size_t>(kStatusCount));
  for (const Row& row : rows) {
    SCOPED_TRACE(row.name);
    EXPECT_EQ(status_name(row.status), row.name);
    EXPECT_EQ(status_from_name(row.name), row.status);
    EXPECT_EQ(status_sct(row.status), row.sct);
    EXPECT_EQ(status_sc(row.status), row.sc);
  }
  EXPECT_EQ(status_from_name("ZONE_FULL"), std::nullopt);
}

struct StatusCase {
  const char* rule;
  std::function<void(Drive&)> setup;
  std::function<Command(Drive&)> command;
  Status status;
};

void nothing(Drive&) {}

// Zones 0 and 1 implicitly opened and zone 2 closed: MOR and MAR both used up.
void open_and_active_full(Drive& d) {
  d.put(2, S::kClosed);
  d.put(0, S::kImplicitlyOpened);
  d.put(1, S::kImplicitlyOpened);
}

void two_explicitly_opened(Drive& d) {
  d.put(0, S::kExplicitlyOpened);
  d.put(1, S::kExplicitlyOpened);
}

Command write_at(uint64_t lba, uint32_t nlb) { return io(Opcode::kWrite, lba, nlb); }
Command read_at(uint64_t lba, uint32_t nlb) { return io(Opcode::kRead, lba, nlb); }
Command append_at(uint64_t lba, uint32_t nlb) { return io(Opcode::kAppend, lba, nlb); }

const std::vector<StatusCase>& status_cases() {
  // clang-format off
  static const std::vector<StatusCase> kCases = {
      {"write at the write pointer", nothing,
       [](Drive&) { return write_at(0, 1); }, St::kSuccess},
      {"write of zero blocks", nothing,
       [](Drive&) { return write_at(0, 0); }, St::kInvalidField},
      {"append of zero blocks", nothing,
       [](Drive&) { return append_at(0, 0); }, St::kInvalidField},
      {"read of zero blocks", nothing,
       [](Drive&) { return read_at(0, 0); }, St::kInvalidField},
      {"zone management slba not a zone start", nothing,
       [](Drive& d) { return zone_send(kOpen, d.start(1) + 1); }, St::kInvalidField},
      {"zone management action none", nothing,
       [](Drive&) { return zone_send(ZoneAction::kNone, 0); }, St::kInvalidField},
      {"zone management action none with select all", nothing,
       [](Drive&) { return zone_send(ZoneAction::kNone, 0, true); }, St::kInvalidField},
      {"append slba not a zone start", nothing,
       [](Drive& d) { return append_at(d.start(1) + 1, 1); }, St::kInvalidField},
      {"append slba at the write pointer but not the zone start", [](Drive& d) { d.put(1, S::kImplicitlyOpened); },
       [](Drive& d) { return append_at(d.wp(1), 1); }, St::kInvalidField},
      {"append larger than ZASL", nothing,
       [](Drive& d) { return append_at(d.start(1), kZasl + 1); }, St::kInvalidField},
      {"write starting beyond the namespace", nothing,
       [](Drive&) { return write_at(kNamespace, 1); }, St::kLbaOutOfRange},
      {"write running past the namespace end", nothing,
       [](Drive&) { return write_at(kNamespace - 1, 2); }, St::kLbaOutOfRange},
      {"read starting beyond the namespace", nothing,
       [](Drive&) { return read_at(kNamespace + 7, 1); }, St::kLbaOutOfRange},
      {"read running past the namespace end", nothing,
       [](Drive&) { return read_at(kNamespace - 2, 3); }, St::kLbaOutOfRange},
      {"append beyond the namespace", nothing,
       [](Drive&) { return append_at(kNamespace, 1); }, St::kLbaOutOfRange},
      {"zone management beyond the namespace", nothing,
       [](Drive&) { return zone_send(kReset, kNamespace); }, St::kLbaOutOfRange},
      {"write past the zone capacity", nothing,
       [](Drive&) { return write_at(0, kCap + 1); }, St::kZoneBoundaryError},
      {"write past the zone capacity from the write pointer", [](Drive& d) { d.put(1, S::kImplicitlyOpened); },
       [](Drive& d) { return write_at(d.wp(1), kCap); }, St::kZoneBoundaryError},
      {"append crossing the zone capacity", [](Drive& d) { ASSERT_EQ(d.write_zone(1, kCap - 2), kOk); },
       [](Drive& d) { return append_at(d.start(1), 3); }, St::kZoneBoundaryError},
      {"read crossing into the next zone", nothing,
       [](Drive& d) { return read_at(d.start(2) - 1, 2); }, St::kZoneBoundaryError},
      {"write to a full zone", [](Drive& d) { d.put(1, S::kFull); },
       [](Drive& d) { return write_at(d.start(1) + kCap, 1); }, St::kZoneIsFull},
      {"write to a full zone at its old write pointer", [](Drive& d) { ASSERT_EQ(d.write_zone(1, 3), kOk); ASSERT_EQ(d.manage(kFinish, 1), kOk); },
       [](Drive& d) { return write_at(d.start(1) + 3, 1); }, St::kZoneIsFull},
      {"append to a full zone", [](Drive& d) { d.put(1, S::kFull); },
       [](Drive& d) { return append_at(d.start(1), 1); }, St::kZoneIsFull},
      {"write to a read-only zone", [](Drive& d) { d.put(1, S::kReadOnly); },
       [](Drive& d) { return write_at(d.wp(1), 1); }, St::kZoneIsReadOnly},
      {"append to a read-only zone", [](Drive& d) { d.put(1, S::kReadOnly); },
       [](Drive& d) { return append_at(d.start(1), 1); }, St::kZoneIsReadOnly},
      {"write to an offline zone", [](Drive& d) { d.put(1, S::kOffline); },
       [](Drive& d) { return write_at(d.start(1), 1); }, St::kZoneIsOffline},
      {"append to an offline zone", [](Drive& d) { d.put(1, S::kOffline); },
       [](Drive& d) { return append_at(d.start(1), 1); }, St::kZoneIsOffline},
      {"read of an offline zone", [](Drive& d) { d.put(1, S::kOffline); },
       [](Drive& d) { return read_at(d.start(1), 1); }, St::kZoneIsOffline},
      {"write ahead of the write pointer", [](Drive& d) { d.put(1, S::kImplicitlyOpened); },
       [](Drive& d) { return write_at(d.wp(1) + 1, 1); }, St::kZoneInvalidWrite},
      {"write behind the write pointer", [](Drive& d) { ASSERT_EQ(d.write_zone(1, 4), kOk); },
       [](Drive& d) { return write_at(d.start(1) + 2, 1); }, St::kZoneInvalidWrite},
      {"write to an empty zone not at its start", nothing,
       [](Drive& d) { return write_at(d.start(1) + 4, 1); }, St::kZoneInvalidWrite},
      {"write between capacity and zone size", nothing,
       [](Drive& d) { return write_at(d.start(1) + kCap, 1); }, St::kZoneInvalidWrite},
      {"write opening a fourth active zone", open_and_active_full,
       [](Drive& d) { return write_at(d.start(3), 1); }, St::kTooManyActiveZones},
      {"append opening a fourth active zone", open_and_active_full,
       [](Drive& d) { return append_at(d.start(3), 1); }, St::kTooManyActiveZones},
      {"open of a fourth active zone", open_and_active_full,
       [](Drive& d) { return zone_send(kOpen, d.start(3)); }, St::kTooManyActiveZones},
      {"write to a third zone when both open zones are explicit", two_explicitly_opened,
       [](Drive& d) { return write_at(d.start(2), 1); }, St::kTooManyOpenZones},
      {"append to a third zone when both open zones are explicit", two_explicitly_opened,
       [](Drive& d) { return append_at(d.start(2), 1); }, St::kTooManyOpenZones},
      {"open of a third zone when both open zones are explicit", two_explicitly_opened,
       [](Drive& d) { return zone_send(kOpen, d.start(2)); }, St::kTooManyOpenZones},
      {"write to a closed zone when both open zones are explicit", [](Drive& d) { d.put(2, S::kClosed); two_explicitly_opened(d); },
       [](Drive& d) { return write_at(d.wp(2), 1); }, St::kTooManyOpenZones},
      {"open of a full zone", [](Drive& d) { d.put(1, S::kFull); },
       [](Drive& d) { return zone_send(kOpen, d.start(1)); }, St::kInvalidZoneStateTransition},
      {"close of an empty zone", nothing,
       [](Drive& d) { return zone_send(kClose, d.start(1)); }, St::kInvalidZoneStateTransition},
      {"finish of a read-only zone", [](Drive& d) { d.put(1, S::kReadOnly); },
       [](Drive& d) { return zone_send(kFinish, d.start(1)); }, St::kInvalidZoneStateTransition},
      {"reset of an offline zone", [](Drive& d) { d.put(1, S::kOffline); },
       [](Drive& d) { return zone_send(kReset, d.start(1)); }, St::kInvalidZoneStateTransition},
      {"offline of a closed zone", [](Drive& d) { d.put(1, S::kClosed); },
       [](Drive& d) { return zone_send(kOffline, d.start(1)); }, St::kInvalidZoneStateTransition},
  };
  // clang-format on
  return kCases;
}

// The zone-rule statuses of the contract; the media errors after them come
// from a backing that fails (below).
constexpr int kRuleStatusCount = static_cast<int>(Status::kWriteFault);

TEST(ZnsDevice, EveryContractStatusIsProducedByARule) {
  std::vector<bool> seen(kStatusCount, false);
  for (const StatusCase& c : status_cases()) seen[static_cast<size_t>(c.status)] = true;
  for (int i = 0; i < kRuleStatusCount; ++i) {
    EXPECT_TRUE(seen[i]) << status_name(static_cast<Status>(i)) << " has no case";
  }
}

// A backing whose writes or reads fail, as a file backing's do on a full disk
// or an I/O error.
class FailingBacking final : public Backing {
 public:
  bool fail_writes = false;
  bool fail_reads = false;
  bool stores_data() const override { return true; }
  bool write(uint64_t, uint32_t, const uint8_t*) override { return !fail_writes; }
  bool read(uint64_t, uint32_t nlb, uint8_t* out) override {
    std::memset(out, 0x77, nlb * 4096);
    return !fail_reads;
  }
  void discard(uint64_t, uint64_t) override {}
};

class QuietSink final : public CompletionSink {
 public:
  void on_complete(Command&) override {}
};

TEST(ZnsDevice, AWriteTheBackingCannotStoreIsAWriteFaultThatChangesNothing) {
  Simulator sim;
  auto owned = std::make_unique<FailingBacking>();
  FailingBacking* backing = owned.get();
  Config c = test_config();
  auto dev = make_zns_device(c, sim, std::move(owned)).value();
  QuietSink d;
  backing->fail_writes = true;
  Command write = io(Opcode::kWrite, 0, 8);
  write.sink = &d;
  dev->submit(write);
  sim.run();
  EXPECT_EQ(write.status, St::kWriteFault);
  EXPECT_EQ(dev->zone(0).state, S::kEmpty);
  EXPECT_EQ(dev->zone(0).wp_lba, 0u);
  EXPECT_EQ(dev->zones().open_count(), 0u);
  Command append = io(Opcode::kAppend, 0, 1);
  append.sink = &d;
  dev->submit(append);
  sim.run();
  EXPECT_EQ(append.status, St::kWriteFault);
  EXPECT_EQ(dev->zone(0).wp_lba, 0u);
  backing->fail_writes = false;
  dev->submit(write);
  sim.run();
  EXPECT_EQ(write.status, St::kSuccess);
  EXPECT_EQ(dev->zone(0).wp_lba, 8u);
}

TEST(ZnsDevice, AReadTheBackingCannotReadIsAnUnrecoveredReadError) {
  Simulator sim;
  auto owned = std::make_unique<FailingBacking>();
  FailingBacking* backing = owned.get();
  auto dev = make_zns_device(test_config(), sim, std::move(owned)).value();
  QuietSink d;
  Command write = io(Opcode::kWrite, 0, 8);
  write.sink = &d;
  dev->submit(write);
  sim.run();
  ASSERT_EQ(write.status, St::kSuccess);
  backing->fail_reads = true;
  std::vector<uint8_t> out(8 * 4096);
  Command read = io(Opcode::kRead, 0, 8, out.data());
  read.sink = &d;
  dev->submit(read);
  sim.run();
  EXPECT_EQ(read.status, St::kUnrecoveredReadError);
}

TEST(ZnsDevice, EachRuleAnswersItsStatus) {
  for (const StatusCase& c : status_cases()) {
    SCOPED_TRACE(c.rule);
    Drive d;
    c.setup(d);
    Command command = c.command(d);
    EXPECT_EQ(d.exec(command), c.status)
        << "got " << status_name(command.status) << ", want " << status_name(c.status);
  }
}

TEST(ZnsDevice, FailedCommandsChangeNothingAndCompleteAfterTheOverhead) {
  for (const StatusCase& c : status_cases()) {
    if (c.status == St::kSuccess) continue;
    SCOPED_TRACE(c.rule);
    Drive d;
    c.setup(d);
    Snapshot before = d.snapshot();
    Command command = c.command(d);
    d.submit(command);
    d.sim.run();
    ASSERT_EQ(command.status, c.status);
    EXPECT_EQ(d.snapshot(), before);
    EXPECT_EQ(command.latency_ns(), d.config.host.command_overhead_ns);
    EXPECT_EQ(command.result_lba, 0u);
    EXPECT_TRUE(d.dev->zones().invariants_hold());
  }
}

TEST(ZnsDevice, FailedWriteLeavesTheDataInPlace) {
  Drive d;
  std::vector<uint8_t> data = pattern(1, 4);
  ASSERT_EQ(d.write(d.start(1), 4, data.data()), kOk);
  std::vector<uint8_t> other = pattern(2, 4);
  EXPECT_EQ(d.write(d.start(1) + 1, 4, other.data()), St::kZoneInvalidWrite);
  d.dev->inject(1, S::kReadOnly);
  EXPECT_EQ(d.write(d.start(1) + 4, 4, other.data()), St::kZoneIsReadOnly);
  std::vector<uint8_t> back(8 * kLbaBytes, 0xAA);
  ASSERT_EQ(d.read(d.start(1), 8, back.data()), kOk);
  EXPECT_TRUE(std::equal(data.begin(), data.end(), back.begin()));
  EXPECT_TRUE(all_zero(back.data() + data.size(), back.size() - data.size()));
}

TEST(ZnsDevice, StatusCountersCountEveryCompletion) {
  Drive d;
  ASSERT_EQ(d.write_zone(0, 1), kOk);
  ASSERT_EQ(d.write(d.start(0) + 5, 1), St::kZoneInvalidWrite);
  ASSERT_EQ(d.read(0, 1), kOk);
  const HostCounters& n = d.dev->counters();
  EXPECT_EQ(n.statuses[static_cast<size_t>(St::kSuccess)], 2u);
  EXPECT_EQ(n.statuses[static_cast<size_t>(St::kZoneInvalidWrite)], 1u);
  EXPECT_EQ(n.commands[static_cast<size_t>(Opcode::kWrite)], 2u);
  EXPECT_EQ(n.commands[static_cast<size_t>(Opcode::kRead)], 1u);
}

// ---------------------------------------------------------------------------
// Open and active resources (MOR 2, MAR 3 on the test device)

TEST(ZnsDevice, ClosedZonesCountAsActiveButNotOpen) {
  Drive d;
  d.put(0, S::kClosed);
  d.put(1, S::kClosed);
  d.put(2, S::kClosed);
  EXPECT_EQ(d.open_count(), 0u);
  EXPECT_EQ(d.active_count(), 3u);
  EXPECT_EQ(d.write_zone(3, 1), St::kTooManyActiveZones);
  EXPECT_EQ(d.write_zone(0, 1), kOk);  // a closed zone reopens within MAR
  EXPECT_EQ(d.manage(kOpen, 1), kOk);
  EXPECT_EQ(d.open_count(), 2u);
  EXPECT_EQ(d.active_count(), 3u);
}

TEST(ZnsDevice, FinishAndResetFreeTheResourcesOfTheZone) {
  for (ZoneAction action : {kFinish, kReset}) {
    SCOPED_TRACE(zone_action_name(action));
    Drive d;
    open_and_active_full(d);
    ASSERT_EQ(d.write_zone(3, 1), St::kTooManyActiveZones);
    ASSERT_EQ(d.manage(action, 2), kOk);  // the closed zone: an active resource
    EXPECT_EQ(d.active_count(), 2u);
    EXPECT_EQ(d.write_zone(3, 1), kOk);  // now fits, closing zone 0 for room
    EXPECT_EQ(d.state(0), S::kClosed);
    ASSERT_EQ(d.manage(action, 1), kOk);  // an open resource
    EXPECT_EQ(d.open_count(), 1u);
    EXPECT_EQ(d.active_count(), 2u);
  }
}

TEST(ZnsDevice, WriteAtTheOpenLimitImplicitlyClosesTheOldestImplicitlyOpenedZone) {
  Drive d;
  d.put(1, S::kImplicitlyOpened);
  d.put(0, S::kImplicitlyOpened);
  ASSERT_EQ(d.write_zone(2, 1), kOk);
  EXPECT_EQ(d.state(1), S::kClosed);  // opened first, though its number is higher
  EXPECT_EQ(d.state(0), S::kImplicitlyOpened);
  EXPECT_EQ(d.state(2), S::kImplicitlyOpened);
  EXPECT_EQ(d.dev->zones().implicit_closes(), 1u);
  EXPECT_EQ(d.open_count(), 2u);
  EXPECT_EQ(d.active_count(), 3u);
}

TEST(ZnsDevice, AppendAtTheOpenLimitImplicitlyClosesTheOldestImplicitlyOpenedZone) {
  Drive d;
  d.put(0, S::kImplicitlyOpened);
  d.put(1, S::kImplicitlyOpened);
  ASSERT_EQ(d.append(2, 1), kOk);
  EXPECT_EQ(d.state(0), S::kClosed);
  EXPECT_EQ(d.state(2), S::kImplicitlyOpened);
}

TEST(ZnsDevice, ExplicitOpenAtTheOpenLimitImplicitlyClosesTheOldestImplicitlyOpenedZone) {
  Drive d;
  d.put(0, S::kImplicitlyOpened);
  d.put(1, S::kImplicitlyOpened);
  ASSERT_EQ(d.manage(kOpen, 2), kOk);
  EXPECT_EQ(d.state(0), S::kClosed);
  EXPECT_EQ(d.state(1), S::kImplicitlyOpened);
  EXPECT_EQ(d.state(2), S::kExplicitlyOpened);
}

TEST(ZnsDevice, ImplicitlyClosedZoneKeepsItsWritePointerAndCanBeWrittenAgain) {
  Drive d;
  ASSERT_EQ(d.write_zone(0, 5), kOk);
  d.put(1, S::kImplicitlyOpened);
  ASSERT_EQ(d.write_zone(2, 1), kOk);
  ASSERT_EQ(d.state(0), S::kClosed);
  EXPECT_EQ(d.wp(0), d.start(0) + 5);
  EXPECT_EQ(d.write_zone(0, 1), kOk);  // closes zone 1 in turn
  EXPECT_EQ(d.wp(0), d.start(0) + 6);
  EXPECT_EQ(d.state(1), S::kClosed);
}

TEST(ZnsDevice, ExplicitlyOpenedZonesAreNeverImplicitlyClosed) {
  Drive d;
  d.put(0, S::kExplicitlyOpened);
  d.put(1, S::kImplicitlyOpened);
  ASSERT_EQ(d.write_zone(2, 1), kOk);  // room comes from zone 1, the only implicit one
  EXPECT_EQ(d.state(0), S::kExplicitlyOpened);
  EXPECT_EQ(d.state(1), S::kClosed);
  ASSERT_EQ(d.manage(kOpen, 2), kOk);  // both open zones explicit now
  EXPECT_EQ(d.write_zone(1, 1), St::kTooManyOpenZones);
  EXPECT_EQ(d.state(0), S::kExplicitlyOpened);
  EXPECT_EQ(d.state(2), S::kExplicitlyOpened);
}

TEST(ZnsDevice, TooManyActiveZonesIsCheckedBeforeAnyImplicitClose) {
  Drive d;
  open_and_active_full(d);
  Snapshot before = d.snapshot();
  EXPECT_EQ(d.write_zone(3, 1), St::kTooManyActiveZones);
  EXPECT_EQ(d.manage(kOpen, 3), St::kTooManyActiveZones);
  EXPECT_EQ(d.snapshot(), before);  // zone 0 was not closed to make room
  EXPECT_EQ(d.dev->zones().implicit_closes(), 0u);
}

// ---------------------------------------------------------------------------
// Select All

TEST(ZnsDevice, OpenAllOpensOnlyClosedZones) {
  Drive d;
  d.put(0, S::kClosed);
  d.put(2, S::kFull);
  d.put(3, S::kReadOnly);
  d.put(1, S::kImplicitlyOpened);
  ASSERT_EQ(d.manage_all(kOpen), kOk);
  EXPECT_EQ(d.state(0), S::kExplicitlyOpened);
  EXPECT_EQ(d.state(1), S::kImplicitlyOpened);
  EXPECT_EQ(d.state(2), S::kFull);
  EXPECT_EQ(d.state(3), S::kReadOnly);
  for (uint32_t z = 4; z < kZones; ++z) EXPECT_EQ(d.state(z), S::kEmpty);
  EXPECT_EQ(d.open_count(), 2u);
}

TEST(ZnsDevice, OpenAllClosesImplicitlyOpenedZonesToMakeRoom) {
  Drive d;
  d.put(0, S::kClosed);
  d.put(1, S::kClosed);
  d.put(2, S::kImplicitlyOpened);
  ASSERT_EQ(d.manage_all(kOpen), kOk);
  EXPECT_EQ(d.state(0), S::kExplicitlyOpened);
  EXPECT_EQ(d.state(1), S::kExplicitlyOpened);
  EXPECT_EQ(d.state(2), S::kClosed);
}

TEST(ZnsDevice, OpenAllThatDoesNotFitFailsAndChangesNothing) {
  Drive d;
  d.put(1, S::kClosed);
  d.put(2, S::kClosed);
  d.put(0, S::kExplicitlyOpened);
  Snapshot before = d.snapshot();
  EXPECT_EQ(d.manage_all(kOpen), St::kTooManyOpenZones);
  EXPECT_EQ(d.snapshot(), before);
}

TEST(ZnsDevice, CloseAllClosesOpenedZones) {
  Drive d;
  d.put(3, S::kFull);
  d.put(4, S::kReadOnly);
  d.put(2, S::kClosed);
  d.put(1, S::kExplicitlyOpened);
  d.put(0, S::kImplicitlyOpened);
  ASSERT_EQ(d.manage_all(kClose), kOk);
  EXPECT_EQ(d.state(0), S::kClosed);
  EXPECT_EQ(d.state(1), S::kClosed);
  EXPECT_EQ(d.state(2), S::kClosed);
  EXPECT_EQ(d.state(3), S::kFull);
  EXPECT_EQ(d.state(4), S::kReadOnly);
  EXPECT_EQ(d.state(5), S::kEmpty);
  EXPECT_EQ(d.open_count(), 0u);
  EXPECT_EQ(d.active_count(), 3u);
}

TEST(ZnsDevice, FinishAllFinishesOpenedAndClosedZonesButNotEmptyOnes) {
  Drive d;
  d.put(4, S::kFull);
  d.put(5, S::kReadOnly);
  d.put(6, S::kOffline);
  d.put(2, S::kClosed);
  d.put(1, S::kExplicitlyOpened);
  d.put(0, S::kImplicitlyOpened);
  uint64_t ro_wp = d.wp(5);
  ASSERT_EQ(d.manage_all(kFinish), kOk);
  for (uint32_t z : {0u, 1u, 2u, 4u}) {
    EXPECT_EQ(d.state(z), S::kFull) << "zone " << z;
    EXPECT_EQ(d.wp(z), d.start(z) + kZoneSize) << "zone " << z;
  }
  EXPECT_EQ(d.state(3), S::kEmpty);
  EXPECT_EQ(d.state(7), S::kEmpty);
  EXPECT_EQ(d.state(5), S::kReadOnly);
  EXPECT_EQ(d.wp(5), ro_wp);
  EXPECT_EQ(d.state(6), S::kOffline);
  EXPECT_EQ(d.open_count(), 0u);
  EXPECT_EQ(d.active_count(), 0u);
}

TEST(ZnsDevice, ResetAllResetsOpenedClosedAndFullZones) {
  Drive d;
  d.put(3, S::kFull);
  d.put(4, S::kReadOnly);
  d.put(5, S::kOffline);
  d.put(2, S::kClosed);
  d.put(1, S::kExplicitlyOpened);
  d.put(0, S::kImplicitlyOpened);
  uint64_t ro_wp = d.wp(4);
  ASSERT_EQ(d.manage_all(kReset), kOk);
  for (uint32_t z : {0u, 1u, 2u, 3u, 6u, 7u}) {
    EXPECT_EQ(d.state(z), S::kEmpty) << "zone " << z;
    EXPECT_EQ(d.wp(z), d.start(z)) << "zone " << z;
  }
  EXPECT_EQ(d.state(4), S::kReadOnly);
  EXPECT_EQ(d.wp(4), ro_wp);
  EXPECT_EQ(d.state(5), S::kOffline);
  EXPECT_EQ(d.open_count(), 0u);
  EXPECT_EQ(d.active_count(), 0u);
}

TEST(ZnsDevice, OfflineAllOfflinesReadOnlyZonesOnly) {
  Drive d;
  d.put(0, S::kReadOnly);
  d.put(1, S::kReadOnly);
  d.put(2, S::kFull);
  d.put(3, S::kClosed);
  d.put(4, S::kImplicitlyOpened);
  ASSERT_EQ(d.manage_all(kOffline), kOk);
  EXPECT_EQ(d.state(0), S::kOffline);
  EXPECT_EQ(d.state(1), S::kOffline);
  EXPECT_EQ(d.wp(0), d.start(0));
  EXPECT_EQ(d.state(2), S::kFull);
  EXPECT_EQ(d.state(3), S::kClosed);
  EXPECT_EQ(d.state(4), S::kImplicitlyOpened);
  EXPECT_EQ(d.state(5), S::kEmpty);
}

TEST(ZnsDevice, SelectAllWithNoZoneToActOnSucceeds) {
  for (ZoneAction action : {kOpen, kClose, kFinish, kReset, kOffline}) {
    SCOPED_TRACE(zone_action_name(action));
    Drive d;
    Snapshot before = d.snapshot();
    EXPECT_EQ(d.manage_all(action), kOk);
    EXPECT_EQ(d.snapshot(), before);
  }
}

TEST(ZnsDevice, SelectAllIgnoresTheStartingLba) {
  Drive d;
  d.put(2, S::kImplicitlyOpened);
  EXPECT_EQ(d.exec(zone_send(kClose, kNamespace + 100, true)), kOk);
  EXPECT_EQ(d.state(2), S::kClosed);
  EXPECT_EQ(d.exec(zone_send(kFinish, 3, true)), kOk);
  EXPECT_EQ(d.state(2), S::kFull);
}

// ---------------------------------------------------------------------------
// Zone Append

TEST(ZnsDevice, AppendReturnsTheWritePointerAtExecutionAsTheAlba) {
  Drive d;
  ASSERT_EQ(d.write_zone(1, 3), kOk);
  uint64_t alba = 0;
  ASSERT_EQ(d.append(1, 2, &alba), kOk);
  EXPECT_EQ(alba, d.start(1) + 3);
  ASSERT_EQ(d.append(1, 1, &alba), kOk);
  EXPECT_EQ(alba, d.start(1) + 5);
  EXPECT_EQ(d.wp(1), d.start(1) + 6);
}

TEST(ZnsDevice, AppendsQueuedTogetherGetConsecutiveNonOverlappingAlbas) {
  Drive d;
  const uint32_t sizes[] = {2, 1, 3, 4};
  std::vector<std::vector<uint8_t>> data;
  std::vector<Command> appends;
  for (uint32_t i = 0; i < 4; ++i) data.push_back(pattern(10 + i, sizes[i]));
  for (uint32_t i = 0; i < 4; ++i) {
    appends.push_back(io(Opcode::kAppend, d.start(5), sizes[i], data[i].data()));
  }
  for (Command& c : appends) d.submit(c);  // all in flight at once
  EXPECT_EQ(d.dev->inflight(), 4u);
  d.sim.run();
  uint64_t next = d.start(5);
  for (uint32_t i = 0; i < 4; ++i) {
    SCOPED_TRACE(i);
    ASSERT_EQ(appends[i].status, kOk);
    EXPECT_EQ(appends[i].result_lba, next);
    next += sizes[i];
  }
  EXPECT_EQ(d.wp(5), next);
  for (uint32_t i = 0; i < 4; ++i) {  // each append's data is at its own ALBA
    std::vector<uint8_t> back(sizes[i] * kLbaBytes);
    ASSERT_EQ(d.read(appends[i].result_lba, sizes[i], back.data()), kOk);
    EXPECT_EQ(back, data[i]) << "append " << i;
  }
}

TEST(ZnsDevice, QueuedAppendsThatOverflowTheZoneFailOnlyFromTheOverflowingOne) {
  Drive d;
  std::vector<Command> appends(4, io(Opcode::kAppend, d.start(0), kZasl));
  for (Command& c : appends) d.submit(c);
  d.sim.run();
  EXPECT_EQ(appends[0].status, kOk);
  EXPECT_EQ(appends[1].status, kOk);
  EXPECT_EQ(appends[2].status, kOk);  // fills the 12-LBA capacity
  EXPECT_EQ(appends[3].status, St::kZoneIsFull);
  EXPECT_EQ(d.state(0), S::kFull);
}

TEST(ZnsDevice, AppendOfExactlyZaslIsAccepted) {
  Drive d;
  uint64_t alba = 0;
  EXPECT_EQ(d.append(4, kZasl, &alba), kOk);
  EXPECT_EQ(alba, d.start(4));
}

TEST(ZnsDevice, AppendThatFillsTheCapacityMakesTheZoneFull) {
  Drive d;
  ASSERT_EQ(d.write_zone(1, kCap - 3), kOk);
  uint64_t alba = 0;
  ASSERT_EQ(d.append(1, 3, &alba), kOk);
  EXPECT_EQ(alba, d.start(1) + kCap - 3);
  EXPECT_EQ(d.state(1), S::kFull);
}

// ---------------------------------------------------------------------------
// Reads

TEST(ZnsDevice, WrittenDataReadsBackIdentical) {
  Drive d;
  std::vector<uint8_t> data = pattern(3, 7);
  ASSERT_EQ(d.write(d.start(2), 7, data.data()), kOk);
  std::vector<uint8_t> back(data.size());
  ASSERT_EQ(d.read(d.start(2), 7, back.data()), kOk);
  EXPECT_EQ(back, data);
  std::vector<uint8_t> middle(2 * kLbaBytes);  // an unaligned slice
  ASSERT_EQ(d.read(d.start(2) + 3, 2, middle.data()), kOk);
  EXPECT_TRUE(std::equal(middle.begin(), middle.end(), data.begin() + 3 * kLbaBytes));
}

TEST(ZnsDevice, UnwrittenLbasBeyondTheWritePointerReadAsZeros) {
  Drive d;
  ASSERT_EQ(d.write_zone(2, 2), kOk);
  std::vector<uint8_t> back(4 * kLbaBytes, 0xAA);
  ASSERT_EQ(d.read(d.start(2) + 4, 4, back.data()), kOk);
  EXPECT_TRUE(all_zero(back.data(), back.size()));
  std::fill(back.begin(), back.end(), 0xAA);
  ASSERT_EQ(d.read(d.start(6), 4, back.data()), kOk);  // an empty zone
  EXPECT_TRUE(all_zero(back.data(), back.size()));
}

TEST(ZnsDevice, LbasBetweenCapacityAndZoneSizeReadAsZeros) {
  Drive d;
  std::vector<uint8_t> data = pattern(4, kCap);
  ASSERT_EQ(d.write(d.start(1), kCap, data.data()), kOk);
  std::vector<uint8_t> back((kZoneSize - kCap) * kLbaBytes, 0xAA);
  ASSERT_EQ(d.read(d.start(1) + kCap, kZoneSize - kCap, back.data()), kOk);
  EXPECT_TRUE(all_zero(back.data(), back.size()));
}

TEST(ZnsDevice, AReadOfAWholeZoneSpanIsOneZoneAndSucceeds) {
  Drive d;
  std::vector<uint8_t> data = pattern(5, kCap);
  ASSERT_EQ(d.write(d.start(7), kCap, data.data()), kOk);
  std::vector<uint8_t> back(kZoneSize * kLbaBytes, 0xAA);
  ASSERT_EQ(d.read(d.start(7), kZoneSize, back.data()), kOk);  // the last zone, up to the end
  EXPECT_TRUE(std::equal(data.begin(), data.end(), back.begin()));
  EXPECT_TRUE(all_zero(back.data() + data.size(), back.size() - data.size()));
}

TEST(ZnsDevice, AReadStraddlingTheWritePointerReturnsDataThenZeros) {
  Drive d;
  std::vector<uint8_t> data = pattern(6, 5);
  ASSERT_EQ(d.write(d.start(3), 5, data.data()), kOk);
  std::vector<uint8_t> back(6 * kLbaBytes, 0xAA);
  ASSERT_EQ(d.read(d.start(3) + 3, 6, back.data()), kOk);
  size_t stored = 2 * kLbaBytes;
  EXPECT_TRUE(std::equal(back.begin(), back.begin() + stored, data.begin() + 3 * kLbaBytes));
  EXPECT_TRUE(all_zero(back.data() + stored, back.size() - stored));
}

TEST(ZnsDevice, AFinishedZoneReadsZerosBeyondTheDataTheHostWrote) {
  Drive d;
  std::vector<uint8_t> data = pattern(7, 5);
  ASSERT_EQ(d.write(d.start(1), 5, data.data()), kOk);
  ASSERT_EQ(d.manage(kFinish, 1), kOk);
  std::vector<uint8_t> back(kCap * kLbaBytes, 0xAA);
  ASSERT_EQ(d.read(d.start(1), kCap, back.data()), kOk);
  EXPECT_TRUE(std::equal(data.begin(), data.end(), back.begin()));
  EXPECT_TRUE(all_zero(back.data() + data.size(), back.size() - data.size()));
}

TEST(ZnsDevice, AResetZoneReadsZerosAndTakesNewData) {
  Drive d;
  std::vector<uint8_t> first = pattern(8, 4);
  ASSERT_EQ(d.write(d.start(1), 4, first.data()), kOk);
  ASSERT_EQ(d.manage(kReset, 1), kOk);
  std::vector<uint8_t> back(4 * kLbaBytes, 0xAA);
  ASSERT_EQ(d.read(d.start(1), 4, back.data()), kOk);
  EXPECT_TRUE(all_zero(back.data(), back.size()));
  std::vector<uint8_t> second = pattern(9, 2);
  ASSERT_EQ(d.write(d.start(1), 2, second.data()), kOk);
  ASSERT_EQ(d.read(d.start(1), 4, back.data()), kOk);
  EXPECT_TRUE(std::equal(second.begin(), second.end(), back.begin()));
  EXPECT_TRUE(all_zero(back.data() + second.size(), back.size() - second.size()));
}

TEST(ZnsDevice, AReadOnlyZoneIsStillReadable) {
  Drive d;
  std::vector<uint8_t> data = pattern(11, 6);
  ASSERT_EQ(d.write(d.start(4), 6, data.data()), kOk);
  d.dev->inject(4, S::kReadOnly);
  std::vector<uint8_t> back(data.size());
  ASSERT_EQ(d.read(d.start(4), 6, back.data()), kOk);
  EXPECT_EQ(back, data);
}

TEST(ZnsDevice, AnOfflineZoneIsNotReadable) {
  Drive d;
  ASSERT_EQ(d.write_zone(4, 6), kOk);
  d.dev->inject(4, S::kReadOnly);
  ASSERT_EQ(d.manage(kOffline, 4), kOk);
  EXPECT_EQ(d.read(d.start(4), 1), St::kZoneIsOffline);
  EXPECT_EQ(d.read(d.start(4) + 10, 6), St::kZoneIsOffline);  // unwritten LBAs too
}

TEST(ZnsDevice, AReadOfAnOfflineZoneCrossingIntoTheNextReportsTheOfflineZone) {
  // QEMU (nvme_check_zone_read) checks the zone state before the read
  // boundary, so this read fails with Zone Is Offline.
  Drive d;
  d.put(4, S::kOffline);
  EXPECT_EQ(d.read(d.start(5) - 1, 2), St::kZoneIsOffline);
}

TEST(ZnsDevice, WithoutADataBackingWrittenDataReadsAsZeros) {
  Drive d(test_config({"store.backing=none"}));
  std::vector<uint8_t> data = pattern(12, 4);
  ASSERT_EQ(d.write(d.start(0), 4, data.data()), kOk);
  std::vector<uint8_t> back(data.size(), 0xAA);
  ASSERT_EQ(d.read(d.start(0), 4, back.data()), kOk);
  EXPECT_TRUE(all_zero(back.data(), back.size()));
}

// ---------------------------------------------------------------------------
// Timing, from the configuration

uint64_t link_ns(const Config& c, uint64_t bytes) {
  uint64_t bw = c.host.link_bandwidth_bytes_per_s;
  return (bytes * 1'000'000'000ULL + bw - 1) / bw;
}

uint64_t page_bytes(const Config& c) { return c.flash.page_size_bytes; }

TEST(ZnsDeviceTiming, SinglePageWriteOnAnIdleDevice) {
  Drive d;
  const Config& c = d.config;
  Command w = io(Opcode::kWrite, d.start(0), kLbasPerPage);
  ASSERT_EQ(d.exec(w), kOk);
  EXPECT_EQ(w.latency_ns(), c.host.command_overhead_ns + link_ns(c, page_bytes(c)) +
                                c.flash.transfer_latency_ns + c.flash.program_latency_ns);
}

TEST(ZnsDeviceTiming, APartialPageWriteCompletesInThePageBuffer) {
  Drive d;
  const Config& c = d.config;
  Command w = io(Opcode::kWrite, d.start(0), 1);
  ASSERT_EQ(d.exec(w), kOk);
  EXPECT_EQ(w.latency_ns(), c.host.command_overhead_ns + link_ns(c, kLbaBytes));
  // The write that completes the page pays for programming it.
  Command rest = io(Opcode::kWrite, d.start(0) + 1, kLbasPerPage - 1);
  ASSERT_EQ(d.exec(rest), kOk);
  EXPECT_EQ(rest.latency_ns(), c.host.command_overhead_ns +
                                   link_ns(c, (kLbasPerPage - 1) * kLbaBytes) +
                                   c.flash.transfer_latency_ns + c.flash.program_latency_ns);
}

TEST(ZnsDeviceTiming, SinglePageReadOfProgrammedData) {
  Drive d;
  const Config& c = d.config;
  ASSERT_EQ(d.write_zone(0, kLbasPerPage), kOk);
  Command r = io(Opcode::kRead, d.start(0), kLbasPerPage);
  ASSERT_EQ(d.exec(r), kOk);
  EXPECT_EQ(r.latency_ns(), c.host.command_overhead_ns + c.flash.read_latency_ns +
                                c.flash.transfer_latency_ns + link_ns(c, page_bytes(c)));
}

TEST(ZnsDeviceTiming, ReadsOfUnwrittenOrBufferedDataTouchNoFlash) {
  Drive d;
  const Config& c = d.config;
  ASSERT_EQ(d.write_zone(0, 1), kOk);  // stays in the page buffer
  Command buffered = io(Opcode::kRead, d.start(0), 1);
  ASSERT_EQ(d.exec(buffered), kOk);
  EXPECT_EQ(buffered.latency_ns(), c.host.command_overhead_ns + link_ns(c, kLbaBytes));
  Command unwritten = io(Opcode::kRead, d.start(3), kLbasPerPage);
  ASSERT_EQ(d.exec(unwritten), kOk);
  EXPECT_EQ(unwritten.latency_ns(), c.host.command_overhead_ns + link_ns(c, page_bytes(c)));
  EXPECT_EQ(d.dev->flash().counters().read_pages, 0u);
}

TEST(ZnsDeviceTiming, TheFinishPaddingOfAZoneIsNotReadFromFlash) {
  Drive d;
  const Config& c = d.config;
  ASSERT_EQ(d.write_zone(0, 5), kOk);    // page 0 and one LBA of page 1
  ASSERT_EQ(d.manage(kFinish, 0), kOk);  // pads and programs page 1
  uint64_t reads = d.dev->flash().counters().read_pages;
  Command padding = io(Opcode::kRead, d.start(0) + 5, 3);  // the rest of page 1
  ASSERT_EQ(d.exec(padding), kOk);
  EXPECT_EQ(padding.latency_ns(), c.host.command_overhead_ns + link_ns(c, 3 * kLbaBytes));
  EXPECT_EQ(d.dev->flash().counters().read_pages, reads);
}

// 2 channels x 1 die x 2 planes = 4 units per zone (channels first), 2 pages
// per block, 3 blocks per unit: two zones of 24 pages.
Config striped_config() {
  return test_config({"flash.dies_per_channel=1", "flash.planes_per_die=2",
                      "flash.pages_per_block=2", "zns.channels_per_zone=2",
                      "zns.zone_capacity=384KiB", "zns.zone_size=0", "zns.zone_count=2",
                      "zns.max_open=0", "zns.max_active=0"});
}

TEST(ZnsDeviceTiming, PagesOnOnePlaneAreSensedOneAfterAnother) {
  Drive d;  // single-unit zones: every page of a zone is on one plane
  const Config& c = d.config;
  ASSERT_EQ(d.write_zone(0, kCap), kOk);
  Command r = io(Opcode::kRead, d.start(0), kCap);
  ASSERT_EQ(d.exec(r), kOk);
  uint64_t pages = kCap / kLbasPerPage;
  EXPECT_EQ(r.latency_ns(), c.host.command_overhead_ns + pages * c.flash.read_latency_ns +
                                c.flash.transfer_latency_ns + link_ns(c, kCap * kLbaBytes));
}

TEST(ZnsDeviceTiming, PagesOnDifferentPlanesAreSensedTogetherAndShareTheirChannel) {
  Drive d(striped_config());
  const Config& c = d.config;
  ASSERT_EQ(d.write_zone(0, 4 * kLbasPerPage), kOk);  // one page on each unit
  Command r = io(Opcode::kRead, d.start(0), 4 * kLbasPerPage);
  ASSERT_EQ(d.exec(r), kOk);
  // Two planes per channel: both transfers of a channel follow one tR.
  EXPECT_EQ(r.latency_ns(), c.host.command_overhead_ns + c.flash.read_latency_ns +
                                2 * c.flash.transfer_latency_ns + link_ns(c, 4 * page_bytes(c)));
}

TEST(ZnsDeviceTiming, AStripeWriteProgramsEveryUnitInParallel) {
  Drive d(striped_config());
  const Config& c = d.config;
  Command w = io(Opcode::kWrite, d.start(0), 4 * kLbasPerPage);
  ASSERT_EQ(d.exec(w), kOk);
  EXPECT_EQ(w.latency_ns(), c.host.command_overhead_ns + link_ns(c, 4 * page_bytes(c)) +
                                2 * c.flash.transfer_latency_ns + c.flash.program_latency_ns);
}

TEST(ZnsDeviceTiming, WritesToZonesOnDisjointUnitsDoNotDelayEachOther) {
  Drive d;
  const Config& c = d.config;
  const ZoneLayout& l = d.dev->layout();
  ASSERT_NE(l.unit_plane(0, 0), l.unit_plane(1, 0));
  ASSERT_NE(d.dev->flash().channel_of_plane(l.unit_plane(0, 0)),
            d.dev->flash().channel_of_plane(l.unit_plane(1, 0)));
  Command a = io(Opcode::kWrite, d.start(0), kLbasPerPage);
  Command b = io(Opcode::kWrite, d.start(1), kLbasPerPage);
  d.submit(a);
  d.submit(b);
  d.sim.run();
  uint64_t alone = c.host.command_overhead_ns + link_ns(c, page_bytes(c)) +
                   c.flash.transfer_latency_ns + c.flash.program_latency_ns;
  EXPECT_EQ(a.latency_ns(), alone);
  // Only the host link is shared: b's data arrives one page transfer later.
  EXPECT_EQ(b.latency_ns(), alone + link_ns(c, page_bytes(c)));
}

TEST(ZnsDeviceTiming, WritesToZonesSharingAUnitQueueOnIt) {
  Drive d;
  const Config& c = d.config;
  const ZoneLayout& l = d.dev->layout();
  uint32_t other = l.groups();  // the next zone in zone 0's group
  ASSERT_EQ(l.unit_plane(0, 0), l.unit_plane(other, 0));
  Command a = io(Opcode::kWrite, d.start(0), kLbasPerPage);
  Command b = io(Opcode::kWrite, d.start(other), kLbasPerPage);
  d.submit(a);
  d.submit(b);
  d.sim.run();
  EXPECT_GE(b.complete_ns, a.complete_ns + c.flash.program_latency_ns);
}

TEST(ZnsDeviceTiming, ResetErasesTheWrittenBlocksOnAllPlanesInParallel) {
  Config config = striped_config();
  const uint64_t erase = config.flash.erase_latency_ns;
  const uint64_t overhead = config.host.command_overhead_ns;
  struct Row {
    uint32_t pages_written;
    uint64_t erases_per_plane_max;  // ceil(pages on the busiest unit / 2)
    uint64_t erases_total;
  };
  const Row rows[] = {
      {24, 3, 12},  // the whole zone: 6 pages = 3 blocks on each unit
      {9, 2, 5},    // unit 0 has pages 0, 4, 8 (2 blocks); units 1-3 two pages each
      {4, 1, 4},    // one page per unit
      {1, 1, 1},    // one page on unit 0
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(testing::Message() << row.pages_written << " pages written");
    Drive d(config);
    ASSERT_EQ(d.dev->layout().units_per_zone(), 4u);
    ASSERT_EQ(d.write_zone(0, row.pages_written * kLbasPerPage), kOk);
    Command reset = zone_send(kReset, d.start(0));
    ASSERT_EQ(d.exec(reset), kOk);
    EXPECT_EQ(reset.latency_ns(), overhead + erase * row.erases_per_plane_max);
    const FlashCounters& n = d.dev->flash().counters();
    EXPECT_EQ(n.erases[static_cast<size_t>(FlashCause::kReset)], row.erases_total);
  }
}

TEST(ZnsDeviceTiming, ResetErasesTheZonesOwnBlocksOnce) {
  Config config = striped_config();
  Drive d(config);
  ASSERT_EQ(d.write_zone(1, 24 * kLbasPerPage), kOk);
  ASSERT_EQ(d.manage(kReset, 1), kOk);
  const ZoneLayout& l = d.dev->layout();
  const Flash& f = d.dev->flash();
  for (uint32_t unit = 0; unit < l.units_per_zone(); ++unit) {
    uint32_t plane = l.unit_plane(1, unit);
    for (uint32_t b = 0; b < f.blocks_per_plane(); ++b) {
      bool owned = b >= l.first_block(1) && b < l.first_block(1) + l.blocks_per_zone_unit();
      EXPECT_EQ(f.erase_count(plane, b), owned ? 1u : 0u) << "plane " << plane << " block " << b;
    }
  }
}

TEST(ZnsDeviceTiming, ResetOfAnEmptyZoneOrOfBufferedDataErasesNothing) {
  Drive d;
  Command empty = zone_send(kReset, d.start(0));
  ASSERT_EQ(d.exec(empty), kOk);
  EXPECT_EQ(empty.latency_ns(), d.config.host.command_overhead_ns);
  ASSERT_EQ(d.write_zone(1, 1), kOk);
  Command buffered = zone_send(kReset, d.start(1));
  ASSERT_EQ(d.exec(buffered), kOk);
  EXPECT_EQ(buffered.latency_ns(), d.config.host.command_overhead_ns);
  EXPECT_EQ(d.snapshot().flash_erases, 0u);
}

TEST(ZnsDeviceTiming, FinishWithoutFillProgramsThePartlyFilledPage) {
  Drive d(test_config({"zns.finish.granularity=0"}));
  const Config& c = d.config;
  ASSERT_EQ(d.write_zone(0, 1), kOk);
  Command finish = zone_send(kFinish, d.start(0));
  ASSERT_EQ(d.exec(finish), kOk);
  EXPECT_EQ(finish.latency_ns(),
            c.host.command_overhead_ns + c.flash.transfer_latency_ns + c.flash.program_latency_ns);
  EXPECT_EQ(d.dev->flash().counters().program_pages[static_cast<size_t>(FlashCause::kFinish)], 1u);
}

TEST(ZnsDeviceTiming, SubmissionsBeyondTheQueueDepthWaitForASlot) {
  Drive d(test_config({"host.queue_depth=1"}));
  const Config& c = d.config;
  Command a = io(Opcode::kWrite, d.start(0), kLbasPerPage);
  Command b = io(Opcode::kWrite, d.start(1), kLbasPerPage);  // disjoint units
  d.submit(a);
  d.submit(b);
  EXPECT_EQ(d.dev->inflight(), 1u);
  EXPECT_EQ(d.dev->queued(), 1u);
  d.sim.run();
  uint64_t alone = c.host.command_overhead_ns + link_ns(c, page_bytes(c)) +
                   c.flash.transfer_latency_ns + c.flash.program_latency_ns;
  EXPECT_EQ(a.latency_ns(), alone);
  EXPECT_EQ(b.submit_ns, 0u);
  EXPECT_EQ(b.latency_ns(), 2 * alone);  // waited for a, then ran on idle resources
  EXPECT_EQ(d.dev->queued(), 0u);
  EXPECT_EQ(d.dev->inflight(), 0u);
}

TEST(ZnsDeviceTiming, QueuedCommandsRunInSubmissionOrder) {
  Drive d(test_config({"host.queue_depth=1"}));
  std::vector<Command> writes(6, io(Opcode::kWrite, 0, 2));
  for (uint32_t i = 0; i < writes.size(); ++i) writes[i].slba = d.start(0) + 2 * i;
  for (Command& w : writes) d.submit(w);
  d.sim.run();
  for (uint32_t i = 0; i < writes.size(); ++i) {
    EXPECT_EQ(writes[i].status, kOk) << i;
    if (i > 0) {
      EXPECT_GT(writes[i].complete_ns, writes[i - 1].complete_ns);
    }
    ASSERT_EQ(d.completed[i], &writes[i]);
  }
  EXPECT_EQ(d.state(0), S::kFull);
}

std::vector<uint64_t> run_mixed_sequence() {
  Drive d;
  std::vector<Command> commands;
  commands.reserve(64);
  for (uint32_t z = 0; z < 2; ++z) {
    for (uint32_t i = 0; i < 3; ++i) {
      commands.push_back(io(Opcode::kWrite, z * kZoneSize + 4 * i, 4));
    }
  }
  for (uint32_t i = 0; i < 3; ++i) commands.push_back(io(Opcode::kAppend, 4 * kZoneSize, 3));
  commands.push_back(io(Opcode::kRead, 0, 8));
  commands.push_back(io(Opcode::kRead, kZoneSize, 12));
  commands.push_back(zone_send(kFinish, 4 * kZoneSize));
  commands.push_back(zone_send(kReset, 0));
  commands.push_back(io(Opcode::kWrite, 0, 1));
  for (Command& c : commands) d.submit(c);
  d.sim.run();
  std::vector<uint64_t> out;
  for (const Command& c : commands) {
    out.push_back(c.complete_ns);
    out.push_back(static_cast<uint64_t>(c.status));
    out.push_back(c.result_lba);
  }
  return out;
}

TEST(ZnsDeviceTiming, TheSameCommandSequenceGivesTheSameCompletionTimes) {
  std::vector<uint64_t> first = run_mixed_sequence();
  std::vector<uint64_t> second = run_mixed_sequence();
  EXPECT_EQ(first, second);
  std::vector<uint64_t> times;
  for (size_t i = 0; i < first.size(); i += 3) times.push_back(first[i]);
  std::sort(times.begin(), times.end());
  EXPECT_GT(std::unique(times.begin(), times.end()) - times.begin(), 5);  // not trivial
}

// ---------------------------------------------------------------------------
// Model check: 2000 random commands against a reference model of the NVMe
// rules written from the specification, compared after every command.

class ReferenceModel {
 public:
  ReferenceModel(uint32_t zones, uint32_t max_open, uint32_t max_active)
      : zones_(zones), max_open_(max_open), max_active_(max_active) {}

  Status write(uint64_t slba, uint32_t nlb) {
    if (Status s = range(slba, nlb); s != kOk) return s;
    uint32_t z = zone_of(slba);
    return write_in_zone(z, slba - z * kZoneSize, nlb);
  }

  Status append(uint64_t slba, uint32_t nlb, uint64_t& alba) {
    if (Status s = range(slba, nlb); s != kOk) return s;
    uint32_t z = zone_of(slba);
    if (slba != z * kZoneSize || nlb > kZasl) return St::kInvalidField;
    uint64_t wp = zones_[z].wp;
    Status s = write_in_zone(z, wp, nlb);
    if (s == kOk) alba = z * kZoneSize + wp;
    return s;
  }

  Status read(uint64_t slba, uint32_t nlb) const {
    if (Status s = range(slba, nlb); s != kOk) return s;
    uint32_t z = zone_of(slba);
    if (zones_[z].state == S::kOffline) return St::kZoneIsOffline;
    if (slba + nlb > (z + 1) * kZoneSize) return St::kZoneBoundaryError;
    return kOk;
  }

  Status manage(ZoneAction action, uint64_t slba) {
    if (action == ZoneAction::kNone) return St::kInvalidField;
    if (slba >= zones_.size() * kZoneSize) return St::kLbaOutOfRange;
    if (slba % kZoneSize != 0) return St::kInvalidField;
    return act(action, zone_of(slba));
  }

  Status manage_all(ZoneAction action) {
    std::vector<uint32_t> targets;
    for (uint32_t z = 0; z < zones_.size(); ++z) {
      ZoneState s = zones_[z].state;
      bool opened = s == S::kImplicitlyOpened || s == S::kExplicitlyOpened;
      bool selected = (action == kOpen && s == S::kClosed) || (action == kClose && opened) ||
                      (action == kFinish && (opened || s == S::kClosed)) ||
                      (action == kReset && (opened || s == S::kClosed || s == S::kFull)) ||
                      (action == kOffline && s == S::kReadOnly);
      if (selected) targets.push_back(z);
    }
    if (action == ZoneAction::kNone) return St::kInvalidField;
    if (action == kOpen && max_open_ != 0 &&
        count(S::kExplicitlyOpened) + targets.size() > max_open_) {
      return St::kTooManyOpenZones;
    }
    for (uint32_t z : targets) {
      Status s = act(action, z);
      EXPECT_EQ(s, kOk);
    }
    return kOk;
  }

  void inject(uint32_t z, ZoneState state) {
    zones_[z].state = state;
    if (state == S::kOffline) zones_[z].wp = 0;
  }

  ZoneState state(uint32_t z) const { return zones_[z].state; }
  uint64_t wp(uint32_t z) const { return zones_[z].wp; }
  uint64_t reported_wp(uint32_t z) const {
    return z * kZoneSize + (zones_[z].state == S::kFull ? kZoneSize : zones_[z].wp);
  }
  uint32_t open_count() const { return count(S::kImplicitlyOpened) + count(S::kExplicitlyOpened); }
  uint32_t active_count() const { return open_count() + count(S::kClosed); }

 private:
  struct ModelZone {
    ZoneState state = S::kEmpty;
    uint64_t wp = 0;
    uint64_t opened_at = 0;  // when it last became implicitly opened
  };

  static uint32_t zone_of(uint64_t lba) { return static_cast<uint32_t>(lba / kZoneSize); }

  Status range(uint64_t slba, uint32_t nlb) const {
    if (nlb == 0) return St::kInvalidField;
    if (slba + nlb > zones_.size() * kZoneSize) return St::kLbaOutOfRange;
    return kOk;
  }

  uint32_t count(ZoneState state) const {
    uint32_t n = 0;
    for (const ModelZone& z : zones_) n += z.state == state ? 1 : 0;
    return n;
  }

  // Empty or closed zone -> an opened state, within MAR then MOR.
  Status open_zone(uint32_t z, ZoneState target) {
    bool needs_active = zones_[z].state == S::kEmpty;
    if (needs_active && max_active_ != 0 && active_count() + 1 > max_active_) {
      return St::kTooManyActiveZones;
    }
    if (max_open_ != 0 && open_count() + 1 > max_open_) {
      int oldest = -1;
      for (uint32_t i = 0; i < zones_.size(); ++i) {
        if (zones_[i].state != S::kImplicitlyOpened) continue;
        if (oldest < 0 || zones_[i].opened_at < zones_[oldest].opened_at) {
          oldest = static_cast<int>(i);
        }
      }
      if (oldest < 0) return St::kTooManyOpenZones;
      zones_[oldest].state = S::kClosed;
    }
    zones_[z].state = target;
    zones_[z].opened_at = ++clock_;
    return kOk;
  }

  Status write_in_zone(uint32_t z, uint64_t offset, uint32_t nlb) {
    ModelZone& zone = zones_[z];
    if (zone.state == S::kFull) return St::kZoneIsFull;
    if (zone.state == S::kReadOnly) return St::kZoneIsReadOnly;
    if (zone.state == S::kOffline) return St::kZoneIsOffline;
    if (offset != zone.wp) return St::kZoneInvalidWrite;
    if (offset + nlb > kCap) return St::kZoneBoundaryError;
    if (zone.state == S::kEmpty || zone.state == S::kClosed) {
      if (Status s = open_zone(z, S::kImplicitlyOpened); s != kOk) return s;
    }
    zone.wp += nlb;
    if (zone.wp == kCap) zone.state = S::kFull;
    return kOk;
  }

  Status act(ZoneAction action, uint32_t z) {
    ModelZone& zone = zones_[z];
    const ZoneState s = zone.state;
    const bool opened = s == S::kImplicitlyOpened || s == S::kExplicitlyOpened;
    switch (action) {
      case ZoneAction::kOpen:
        if (s == S::kEmpty || s == S::kClosed) return open_zone(z, S::kExplicitlyOpened);
        if (opened) {
          zone.state = S::kExplicitlyOpened;
          return kOk;
        }
        return kBad;
      case ZoneAction::kClose:
        if (opened) zone.state = S::kClosed;
        return opened || s == S::kClosed ? kOk : kBad;
      case ZoneAction::kFinish:
        if (s == S::kReadOnly || s == S::kOffline) return kBad;
        zone.state = S::kFull;
        zone.wp = kCap;
        return kOk;
      case ZoneAction::kReset:
        if (s == S::kReadOnly || s == S::kOffline) return kBad;
        zone.state = S::kEmpty;
        zone.wp = 0;
        return kOk;
      case ZoneAction::kOffline:
        if (s != S::kReadOnly && s != S::kOffline) return kBad;
        zone.state = S::kOffline;
        zone.wp = 0;
        return kOk;
      case ZoneAction::kNone:
        break;
    }
    return St::kInvalidField;
  }

  std::vector<ModelZone> zones_;
  uint32_t max_open_;
  uint32_t max_active_;
  uint64_t clock_ = 0;
};

TEST(ZnsDeviceModelCheck, TwoThousandRandomCommandsMatchTheReferenceModel) {
  constexpr int kSegments = 4;  // a fresh device every 500 commands
  constexpr int kCommandsPerSegment = 500;
  std::mt19937_64 rng(20240611);
  std::vector<int> statuses_seen(kStatusCount, 0);
  auto pick = [&rng](uint64_t n) { return rng() % n; };
  for (int segment = 0; segment < kSegments; ++segment) {
    Drive d(test_config({"store.backing=none"}));
    ReferenceModel model(kZones, 2, 3);
    for (int step = 0; step < kCommandsPerSegment; ++step) {
      auto zone = static_cast<uint32_t>(pick(kZones));
      uint64_t start = zone * kZoneSize;
      uint64_t roll = pick(100);
      Command c;
      Status expected = kOk;
      uint64_t alba = 0;
      if (roll < 35) {  // write: mostly at the write pointer
        uint64_t offset = model.wp(zone);
        uint64_t how = pick(10);
        if (how == 0) offset += 1;
        if (how == 1) offset = pick(kZoneSize);
        auto nlb = static_cast<uint32_t>(pick(6) + (how == 2 ? 0 : 1));
        c = io(Opcode::kWrite, start + offset, nlb);
        expected = model.write(c.slba, c.nlb);
      } else if (roll < 50) {  // append: 0..5 blocks (ZASL is 4), rarely misaimed
        uint64_t slba = pick(12) == 0 ? start + 1 : start;
        c = io(Opcode::kAppend, slba, static_cast<uint32_t>(pick(6)));
        expected = model.append(c.slba, c.nlb, alba);
      } else if (roll < 62) {  // read, sometimes crossing into the next zone
        uint64_t slba = start + pick(kZoneSize);
        auto nlb = static_cast<uint32_t>(1 + pick(8));
        // The boundary-vs-offline order is checked on its own above.
        if (model.state(zone) == S::kOffline && slba + nlb > start + kZoneSize) {
          nlb = static_cast<uint32_t>(start + kZoneSize - slba);
        }
        c = io(Opcode::kRead, slba, nlb);
        expected = model.read(c.slba, c.nlb);
      } else if (roll < 92) {  // one zone
        auto action = static_cast<ZoneAction>(1 + pick(5));
        uint64_t slba = pick(20) == 0 ? start + 1 + pick(kZoneSize - 1) : start;
        c = zone_send(action, slba);
        expected = model.manage(action, slba);
      } else if (roll < 99) {  // select all
        auto action = static_cast<ZoneAction>(1 + pick(5));
        c = zone_send(action, 0, true);
        expected = model.manage_all(action);
      } else {  // the media fails under a zone
        ZoneState failure = pick(2) == 0 ? S::kReadOnly : S::kOffline;
        d.dev->inject(zone, failure);
        model.inject(zone, failure);
        c = io(Opcode::kRead, start, 1);
        expected = model.read(c.slba, c.nlb);
      }
      SCOPED_TRACE(testing::Message()
                   << "segment " << segment << " step " << step << " opcode "
                   << static_cast<int>(c.opcode) << " action " << zone_action_name(c.action)
                   << " all " << c.select_all << " slba " << c.slba << " nlb " << c.nlb);
      ASSERT_EQ(d.exec(c), expected)
          << status_name(c.status) << " vs model " << status_name(expected);
      ++statuses_seen[static_cast<size_t>(c.status)];
      if (c.opcode == Opcode::kAppend && c.status == kOk) {
        ASSERT_EQ(c.result_lba, alba);
      }
      for (uint32_t z = 0; z < kZones; ++z) {
        ASSERT_EQ(d.state(z), model.state(z)) << "zone " << z;
        ASSERT_EQ(d.wp(z), model.reported_wp(z)) << "zone " << z;
      }
      ASSERT_EQ(d.open_count(), model.open_count());
      ASSERT_EQ(d.active_count(), model.active_count());
      ASSERT_TRUE(d.dev->zones().invariants_hold());
    }
  }
  for (int i = 0; i < kRuleStatusCount; ++i) {
    EXPECT_GT(statuses_seen[i], 0)
        << "the random run never produced " << status_name(static_cast<Status>(i));
  }
}

}  // namespace
}  // namespace zonelab
