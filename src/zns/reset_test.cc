// Reset erase designs (seed 003 4.2, zns.reset.erase) on the confznspp
// preset (seed 003 5.2): a full erase costs the zone's blocks per unit x
// tBERS whatever the occupancy; a partial erase only the blocks with data,
// so half as much at half occupancy. Expected times come from the config.
#include <gtest/gtest.h>

#include <memory>

#include "zns/zns_device.h"

namespace zonelab {
namespace {

class Sink final : public CompletionSink {
 public:
  void on_complete(Command&) override {}
};

// Reset latency of zone 0 after writing `fraction` of its capacity.
uint64_t reset_latency(const std::string& erase, double fraction, uint64_t* erases = nullptr) {
  Config config = *preset_config("confznspp");
  EXPECT_TRUE(apply_override(config, "store.backing=none").ok());
  EXPECT_TRUE(apply_override(config, "zns.reset.erase=" + erase).ok());
  Simulator sim;
  Sink sink;
  auto device = std::move(make_zns_device(config, sim)).value();
  const DeviceInfo& info = device->info();
  auto target = static_cast<uint64_t>(static_cast<double>(info.zone_capacity_lbas) * fraction);
  const uint64_t chunk = info.zasl_lbas;  // 512 KiB writes
  for (uint64_t lba = 0; lba < target; lba += chunk) {
    Command w;
    w.opcode = Opcode::kWrite;
    w.slba = lba;
    w.nlb = static_cast<uint32_t>(std::min(chunk, target - lba));
    w.sink = &sink;
    device->submit(w);
    sim.run();
    EXPECT_EQ(w.status, Status::kSuccess);
  }
  Command reset;
  reset.opcode = Opcode::kZoneManagementSend;
  reset.action = ZoneAction::kReset;
  reset.slba = 0;
  reset.sink = &sink;
  device->submit(reset);
  sim.run();
  EXPECT_EQ(reset.status, Status::kSuccess);
  if (erases != nullptr) {
    *erases = device->flash().counters().erases[static_cast<size_t>(FlashCause::kReset)];
  }
  return reset.latency_ns();
}

TEST(ResetErase, FullEraseCostsEveryBlockOfTheZoneWhateverTheOccupancy) {
  Config c = *preset_config("confznspp");
  auto layout = ZoneLayout::make(c);
  ASSERT_TRUE(layout.ok());
  ASSERT_EQ(layout->blocks_per_zone_unit(), 22u);  // 88 blocks over 4 units
  uint64_t expected = c.host.command_overhead_ns + 22 * c.flash.erase_latency_ns;
  uint64_t erases = 0;
  EXPECT_EQ(reset_latency("full", 0.01, &erases), expected);
  EXPECT_EQ(erases, 88u);
  EXPECT_EQ(reset_latency("full", 0.5), expected);
  EXPECT_EQ(reset_latency("full", 1.0), expected);
}

TEST(ResetErase, PartialEraseAtHalfOccupancyCostsHalfAFullOne) {
  Config c = *preset_config("confznspp");
  uint64_t erases = 0;
  uint64_t half = reset_latency("partial", 0.5, &erases);
  EXPECT_EQ(erases, 44u);
  EXPECT_EQ(half - c.host.command_overhead_ns,
            (reset_latency("full", 0.5) - c.host.command_overhead_ns) / 2);
}

TEST(ResetErase, PartialEraseGrowsWithOccupancy) {
  uint64_t previous = 0;
  for (double fraction : {0.1, 0.3, 0.6, 1.0}) {
    uint64_t latency = reset_latency("partial", fraction);
    EXPECT_GT(latency, previous) << fraction;
    previous = latency;
  }
}

struct Confznspp {
  explicit Confznspp(const std::string& mode) {
    config = *preset_config("confznspp");
    EXPECT_TRUE(apply_override(config, "store.backing=none").ok());
    EXPECT_TRUE(apply_override(config, "zns.reset.mode=" + mode).ok());
    device = std::move(make_zns_device(config, sim)).value();
  }
  Command run(Opcode op, uint64_t slba, uint64_t nlb, ZoneAction action = ZoneAction::kNone) {
    Command c;
    c.opcode = op;
    c.slba = slba;
    c.nlb = static_cast<uint32_t>(nlb);
    c.action = action;
    c.sink = &sink;
    device->submit(c);
    sim.run();
    EXPECT_EQ(c.status, Status::kSuccess);
    return c;
  }
  void fill_half(uint64_t zone_start) {
    uint64_t half = device->info().zone_capacity_lbas / 2;
    for (uint64_t lba = 0; lba < half; lba += 128) run(Opcode::kWrite, zone_start + lba, 128);
  }
  uint64_t reset_erases() const {
    return device->flash().counters().erases[static_cast<size_t>(FlashCause::kReset)];
  }
  Config config;
  Simulator sim;
  Sink sink;
  std::unique_ptr<ZnsDevice> device;
};

TEST(ResetMode, AsyncResetIsMetadataOnly) {
  Confznspp d("async");
  d.fill_half(0);
  Command reset = d.run(Opcode::kZoneManagementSend, 0, 0, ZoneAction::kReset);
  EXPECT_EQ(reset.latency_ns(), d.config.host.command_overhead_ns);
  EXPECT_EQ(d.reset_erases(), 0u);
  EXPECT_EQ(d.device->zone(0).state, ZoneState::kEmpty);
}

TEST(ResetMode, TheFirstWriteAfterAnAsyncResetPaysTheErase) {
  Confznspp d("async");
  d.fill_half(0);
  d.run(Opcode::kZoneManagementSend, 0, 0, ZoneAction::kReset);
  const Config& c = d.config;
  Command first = d.run(Opcode::kWrite, 0, 4);  // one 16 KiB page
  EXPECT_EQ(d.reset_erases(), 44u);             // 11 blocks with data on each unit
  EXPECT_EQ(first.latency_ns(), c.host.command_overhead_ns + 11 * c.flash.erase_latency_ns +
                                    c.flash.program_latency_ns);
  Command second = d.run(Opcode::kWrite, 4, 4);
  EXPECT_LT(second.latency_ns(), c.flash.erase_latency_ns);
  EXPECT_EQ(d.reset_erases(), 44u);
}

// A write to zone 1 right after a reset of zone 0; the zones share all four
// channels (confznspp zones span every unit).
uint64_t write_after_reset(const std::string& mode) {
  Confznspp d(mode);
  d.fill_half(0);
  Command reset;
  reset.opcode = Opcode::kZoneManagementSend;
  reset.action = ZoneAction::kReset;
  reset.sink = &d.sink;
  d.device->submit(reset);
  uint64_t zone1 = d.device->info().zone_size_lbas;
  return d.run(Opcode::kWrite, zone1, 4).latency_ns();
}

TEST(ResetMode, SyncResetInterferesWithWritesAsyncDoesNot) {
  Confznspp idle("sync");
  uint64_t alone = idle.run(Opcode::kWrite, idle.device->info().zone_size_lbas, 4).latency_ns();
  EXPECT_GT(write_after_reset("sync"), alone + idle.config.flash.erase_latency_ns);
  EXPECT_EQ(write_after_reset("async"), alone);
}

TEST(ResetErase, UnknownDesignNameIsRefused) {
  Config config = default_config();
  Outcome outcome = apply_override(config, "zns.reset.erase=some");
  ASSERT_FALSE(outcome.ok());
  EXPECT_NE(outcome.error().find("zns.reset.erase"), std::string::npos);
  EXPECT_FALSE(apply_override(config, "zns.reset.mode=later").ok());
}

}  // namespace
}  // namespace zonelab
