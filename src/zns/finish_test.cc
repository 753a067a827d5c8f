// Finish as device-issued fill writes (seed 003 4.1, zns.finish.*): cost
// grows with the capacity left, falls with the granularity, pauses stretch
// it, the dynamic mode yields to host I/O, and the fill shares the flash
// timelines with host writes. Every expected time comes from the config.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "zns/zns_device.h"

namespace zonelab {
namespace {

// 4 channels x 1 die x 1 plane, 16 KiB pages, 8 pages a block: a zone is one
// block on each channel (32 pages, 512 KiB), four zones.
Config finish_config(std::initializer_list<std::string_view> extra = {}) {
  Config config = default_config();
  for (std::string_view o :
       {"flash.channels=4", "flash.dies_per_channel=1", "flash.planes_per_die=1",
        "flash.blocks_per_plane=4", "flash.pages_per_block=8", "flash.page_size=16KiB",
        "host.lba_size=4KiB", "zns.channels_per_zone=4", "zns.dies_per_zone=1",
        "zns.zone_capacity=512KiB", "zns.zone_size=512KiB", "zns.zone_count=4", "zns.max_open=0",
        "zns.max_active=0", "zns.zasl=64KiB", "zns.finish.granularity=16KiB"}) {
    EXPECT_TRUE(apply_override(config, o).ok()) << o;
  }
  for (std::string_view o : extra) EXPECT_TRUE(apply_override(config, o).ok()) << o;
  return config;
}

constexpr uint32_t kPagesPerZone = 32;
constexpr uint64_t kLbasPerPage = 4;
constexpr uint64_t kZoneLbas = kPagesPerZone * kLbasPerPage;

class Counter final : public CompletionSink {
 public:
  void on_complete(Command&) override { ++done; }
  int done = 0;
};

struct Rig {
  explicit Rig(const Config& c) : config(c) {
    device = std::move(make_zns_device(config, sim)).value();
  }
  Command cmd(Opcode op, uint64_t slba, uint32_t nlb, ZoneAction action = ZoneAction::kNone) {
    Command c;
    c.opcode = op;
    c.slba = slba;
    c.nlb = nlb;
    c.action = action;
    c.sink = &sink;
    return c;
  }
  Command run(Command c) {
    device->submit(c);
    sim.run();
    return c;
  }
  uint64_t finish_programs() const {
    return device->flash().counters().program_pages[static_cast<size_t>(FlashCause::kFinish)];
  }
  uint64_t step_ns() const {
    return config.flash.transfer_latency_ns + config.flash.program_latency_ns;
  }
  Config config;
  Simulator sim;
  Counter sink;
  std::unique_ptr<ZnsDevice> device;
};

uint64_t finish_latency(const Config& config, uint32_t pages_written) {
  Rig rig(config);
  if (pages_written > 0) {
    Command w = rig.run(rig.cmd(Opcode::kWrite, 0, pages_written * kLbasPerPage));
    EXPECT_EQ(w.status, Status::kSuccess);
  }
  Command f = rig.run(rig.cmd(Opcode::kZoneManagementSend, 0, 0, ZoneAction::kFinish));
  EXPECT_EQ(f.status, Status::kSuccess);
  EXPECT_EQ(rig.finish_programs(), pages_written == 0 ? 0u : kPagesPerZone - pages_written);
  EXPECT_EQ(rig.device->zone(0).state, ZoneState::kFull);
  return f.latency_ns();
}

TEST(Finish, PageGranularityFillsOnePageAtATime) {
  Config c = finish_config();
  uint64_t step = c.flash.transfer_latency_ns + c.flash.program_latency_ns;
  EXPECT_EQ(finish_latency(c, 1), c.host.command_overhead_ns + 31 * step);
}

TEST(Finish, LatencyGrowsWithTheCapacityLeft) {
  Config c = finish_config();
  uint64_t previous = UINT64_MAX;
  for (uint32_t written : {1u, 8u, 16u, 24u, 31u}) {
    uint64_t latency = finish_latency(c, written);
    EXPECT_LT(latency, previous) << written;
    previous = latency;
  }
}

TEST(Finish, OfAnEmptyZoneIsCheap) {
  Config c = finish_config();
  EXPECT_EQ(finish_latency(c, 0), c.host.command_overhead_ns);
}

TEST(Finish, AStripeGranularityFillsTheChannelsInParallel) {
  // 64 KiB = one page on each of the 4 channels per fill write.
  Config c = finish_config({"zns.finish.granularity=64KiB"});
  uint64_t step = c.flash.transfer_latency_ns + c.flash.program_latency_ns;
  EXPECT_EQ(finish_latency(c, 1), c.host.command_overhead_ns + 8 * step);  // ceil(31 / 4)
  EXPECT_LT(finish_latency(c, 1), finish_latency(finish_config(), 1));
}

TEST(Finish, PausesStretchTheFill) {
  Config c = finish_config({"zns.finish.pause=100us"});
  uint64_t plain = finish_latency(finish_config(), 1);
  EXPECT_EQ(finish_latency(c, 1), plain + 30 * 100'000u);  // a pause between 31 writes
}

TEST(Finish, FillLeavesTheHostDataAndReadsZerosBeyondIt) {
  Rig rig(finish_config({"store.backing=memory"}));
  std::vector<uint8_t> data(kLbasPerPage * 4096, 0xAB);
  Command w = rig.cmd(Opcode::kWrite, 0, kLbasPerPage);
  w.data = data.data();
  ASSERT_EQ(rig.run(w).status, Status::kSuccess);
  ASSERT_EQ(rig.run(rig.cmd(Opcode::kZoneManagementSend, 0, 0, ZoneAction::kFinish)).status,
            Status::kSuccess);
  std::vector<uint8_t> out(2 * kLbasPerPage * 4096, 0xFF);
  Command r = rig.cmd(Opcode::kRead, 0, 2 * kLbasPerPage);
  r.data = out.data();
  ASSERT_EQ(rig.run(r).status, Status::kSuccess);
  EXPECT_EQ(out[0], 0xAB);
  EXPECT_EQ(out[kLbasPerPage * 4096], 0x00);
}

// Mean latency of one-page host writes to zone 1, `concurrency` at a time
// (four rounds), issued right after a finish of zone 0 (one page written)
// starts. The zones share all four channels.
uint64_t write_latency_during_finish(const Config& config, bool with_finish,
                                     uint32_t concurrency = 4) {
  Rig rig(config);
  EXPECT_EQ(rig.run(rig.cmd(Opcode::kWrite, 0, kLbasPerPage)).status, Status::kSuccess);
  Command finish = rig.cmd(Opcode::kZoneManagementSend, 0, 0, ZoneAction::kFinish);
  if (with_finish) rig.device->submit(finish);
  uint64_t total = 0;
  uint64_t count = 0;
  uint64_t next_lba = kZoneLbas;
  for (int round = 0; round < 4; ++round) {
    std::vector<Command> writes;
    writes.reserve(concurrency);
    for (uint32_t i = 0; i < concurrency; ++i) {
      writes.push_back(rig.cmd(Opcode::kWrite, next_lba, kLbasPerPage));
      next_lba += kLbasPerPage;
    }
    for (auto& w : writes) rig.device->submit(w);
    int target = rig.sink.done + static_cast<int>(concurrency);
    while (rig.sink.done < target && rig.sim.step()) {
    }
    for (auto& w : writes) {
      EXPECT_EQ(w.status, Status::kSuccess);
      total += w.latency_ns();
      ++count;
    }
  }
  rig.sim.run();
  return total / count;
}

TEST(Finish, PageGranularityDoesNotDelayASingleHostWriter) {
  // One page of fill and one host write at a time use two of four channels.
  EXPECT_EQ(write_latency_during_finish(finish_config(), true, 1),
            write_latency_during_finish(finish_config(), false, 1));
}

TEST(Finish, FillInterferesWithHostWritesAndMoreAtLargerGranularity) {
  uint64_t alone = write_latency_during_finish(finish_config(), false);
  uint64_t page = write_latency_during_finish(finish_config(), true);
  uint64_t big =
      write_latency_during_finish(finish_config({"zns.finish.granularity=128KiB"}), true);
  EXPECT_GT(page, alone);
  EXPECT_GT(big, page);
}

// A host writer that keeps `depth` one-page writes in flight to zone 1
// (a new one as each completes) until `total` have been written.
class ClosedLoopWriter final : public CompletionSink {
 public:
  ClosedLoopWriter(ZnsDevice& device, uint32_t depth, uint32_t total)
      : device_(device), slots_(depth), total_(total) {}
  void start() {
    for (auto& slot : slots_) issue(slot);
  }
  void on_complete(Command& c) override {
    EXPECT_EQ(c.status, Status::kSuccess);
    latency_sum_ns += c.latency_ns();
    ++completed;
    issue(c);
  }
  uint64_t mean_latency_ns() const { return latency_sum_ns / completed; }
  uint64_t latency_sum_ns = 0;
  uint32_t completed = 0;

 private:
  void issue(Command& c) {
    if (issued_ == total_) return;
    c = Command{};
    c.opcode = Opcode::kWrite;
    c.slba = kZoneLbas + issued_++ * kLbasPerPage;
    c.nlb = kLbasPerPage;
    c.sink = this;
    device_.submit(c);
  }
  ZnsDevice& device_;
  std::vector<Command> slots_;
  uint32_t total_;
  uint32_t issued_ = 0;
};

uint64_t closed_loop_latency(const Config& config, bool with_finish, uint64_t* finish_ns) {
  Rig rig(config);
  EXPECT_EQ(rig.run(rig.cmd(Opcode::kWrite, 0, kLbasPerPage)).status, Status::kSuccess);
  ClosedLoopWriter writer(*rig.device, 4, kPagesPerZone);
  Command finish = rig.cmd(Opcode::kZoneManagementSend, 0, 0, ZoneAction::kFinish);
  writer.start();
  if (with_finish) rig.device->submit(finish);
  rig.sim.run();
  EXPECT_EQ(writer.completed, kPagesPerZone);
  if (with_finish) {
    EXPECT_EQ(finish.status, Status::kSuccess);
    if (finish_ns != nullptr) *finish_ns = finish.complete_ns;
  }
  return writer.mean_latency_ns();
}

TEST(Finish, DynamicFillYieldsToHostWrites) {
  Config eager = finish_config({"zns.finish.granularity=64KiB"});
  Config dynamic = finish_config({"zns.finish.granularity=64KiB", "zns.finish.dynamic=true"});
  uint64_t alone = closed_loop_latency(eager, false, nullptr);
  uint64_t eager_finish_ns = 0;
  uint64_t dynamic_finish_ns = 0;
  uint64_t with_eager = closed_loop_latency(eager, true, &eager_finish_ns);
  uint64_t with_dynamic = closed_loop_latency(dynamic, true, &dynamic_finish_ns);
  EXPECT_GT(with_eager, alone);
  // The dynamic fill waits while host writes are in flight; at most the one
  // fill write it had started before they arrived delays them.
  EXPECT_LT(with_dynamic, with_eager);
  // ... and the finish takes longer for it.
  EXPECT_GT(dynamic_finish_ns, eager_finish_ns);
}

TEST(Finish, ResetDuringAFillEndsTheFill) {
  Rig rig(finish_config());
  ASSERT_EQ(rig.run(rig.cmd(Opcode::kWrite, 0, kLbasPerPage)).status, Status::kSuccess);
  Command finish = rig.cmd(Opcode::kZoneManagementSend, 0, 0, ZoneAction::kFinish);
  rig.device->submit(finish);
  rig.sim.run_until(rig.sim.now_ns() + 2 * rig.step_ns());
  uint64_t programs_at_reset = rig.finish_programs();
  ASSERT_LT(programs_at_reset, kPagesPerZone - 1u);
  Command reset = rig.run(rig.cmd(Opcode::kZoneManagementSend, 0, 0, ZoneAction::kReset));
  EXPECT_EQ(reset.status, Status::kSuccess);
  EXPECT_EQ(finish.status, Status::kSuccess);
  EXPECT_EQ(rig.sink.done, 3);  // write, finish, reset all completed
  EXPECT_EQ(rig.finish_programs(), programs_at_reset);
  EXPECT_EQ(rig.device->zone(0).state, ZoneState::kEmpty);
  EXPECT_TRUE(rig.device->zones().invariants_hold());
  // The zone is usable again from its start.
  EXPECT_EQ(rig.run(rig.cmd(Opcode::kWrite, 0, kLbasPerPage)).status, Status::kSuccess);
}

TEST(Finish, GranularityMustBeAMultipleOfTheLbaSize) {
  Config c = finish_config({"zns.finish.granularity=6KiB"});
  EXPECT_FALSE(ZoneLayout::make(c).ok());
}

}  // namespace
}  // namespace zonelab
