// Block mapping (seed 003 4.3, zns.mapping.*) and preemptive reset (seed 003
// 4.2, zns.reset.preemptive). A small flash keeps the cases quick: 2
// channels x 1 die x 1 plane, 8 blocks of 4 pages of 16 KiB per plane, and
// zones of 2 blocks per unit (4 physical zones). Expected times come from
// the configuration.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "controller/device_state.h"
#include "store/image.h"
#include "zns/block_map_state.h"
#include "zns/small_flash_test_config.h"
#include "zns/zns_device.h"

namespace zonelab {
namespace {

class Sink final : public CompletionSink {
 public:
  void on_complete(Command&) override {}
};

Config small_flash(const std::vector<std::string>& overrides = {}) {
  return small_flash_config(overrides);
}

struct Rig {
  explicit Rig(const Config& c) : config(c) {
    auto made = make_zns_device(config, sim);
    EXPECT_TRUE(made.ok()) << (made.ok() ? "" : made.error());
    device = std::move(made).value();
  }
  // Runs one command to completion and returns its latency.
  uint64_t run(Opcode opcode, uint64_t slba, uint32_t nlb, ZoneAction action = ZoneAction::kNone) {
    Command c;
    c.opcode = opcode;
    c.action = action;
    c.slba = slba;
    c.nlb = nlb;
    c.sink = &sink;
    device->submit(c);
    sim.run();
    EXPECT_EQ(c.status, Status::kSuccess);
    return c.latency_ns();
  }
  uint64_t zone_lbas() const { return device->info().zone_capacity_lbas; }
  uint32_t lbas_per_page() const { return device->layout().lbas_per_page(); }
  uint64_t write_page(uint32_t zone, uint64_t page) {
    return run(Opcode::kWrite, zone * device->info().zone_size_lbas + page * lbas_per_page(),
               lbas_per_page());
  }
  void fill(uint32_t zone) {
    run(Opcode::kWrite, zone * device->info().zone_size_lbas, static_cast<uint32_t>(zone_lbas()));
  }
  uint64_t reset(uint32_t zone) {
    return run(Opcode::kZoneManagementSend, zone * device->info().zone_size_lbas, 0,
               ZoneAction::kReset);
  }
  uint64_t erases() const {
    return device->flash().counters().erases[static_cast<size_t>(FlashCause::kReset)];
  }
  // Erase count of every block of physical zone `slot` (all units).
  std::vector<uint32_t> slot_wear(uint32_t slot) const {
    const ZoneLayout& l = device->layout();
    std::vector<uint32_t> wear;
    for (uint32_t unit = 0; unit < l.units_per_zone(); ++unit) {
      for (uint32_t b = 0; b < l.blocks_per_zone_unit(); ++b) {
        wear.push_back(
            device->flash().erase_count(l.unit_plane(slot, unit), l.first_block(slot) + b));
      }
    }
    return wear;
  }

  Config config;
  Simulator sim;
  Sink sink;
  std::unique_ptr<ZnsDevice> device;
};

TEST(BlockMapping, GeometryOfTheSmallFlash) {
  Rig rig(small_flash());
  EXPECT_EQ(rig.device->layout().blocks_per_zone_unit(), 2u);
  EXPECT_EQ(rig.device->layout().units_per_zone(), 2u);
  EXPECT_EQ(rig.device->info().zone_count, 4u);
  EXPECT_EQ(rig.device->block_map().slot_count(), 4u);
}

TEST(BlockMapping, DirectMappingKeepsAZoneOnItsBlocks) {
  Rig rig(small_flash());
  for (int round = 0; round < 3; ++round) {
    EXPECT_EQ(rig.device->block_map().slot_of(0), 0u);
    rig.fill(0);
    rig.reset(0);
  }
  for (uint32_t wear : rig.slot_wear(0)) EXPECT_EQ(wear, 3u);
  for (uint32_t slot = 1; slot < 4; ++slot) {
    for (uint32_t wear : rig.slot_wear(slot)) EXPECT_EQ(wear, 0u);
  }
}

TEST(BlockMapping, DirectPageWriteSeesTransferAndProgram) {
  Config c = small_flash();
  Rig rig(c);
  uint64_t expected =
      c.host.command_overhead_ns + c.flash.transfer_latency_ns + c.flash.program_latency_ns;
  // The link moves 16 KiB in a few ns on the small preset; allow for it.
  uint64_t latency = rig.write_page(0, 0);
  EXPECT_GE(latency, expected);
  EXPECT_LT(latency, expected + 20'000);
}

TEST(BlockMapping, LazyZoneHasNoBlocksUntilItsFirstWrite) {
  Rig rig(small_flash({"zns.mapping.blocks=lazy"}));
  const BlockMap& map = rig.device->block_map();
  EXPECT_EQ(map.slot_of(2), BlockMap::kUnmapped);
  rig.run(Opcode::kZoneManagementSend, 2 * rig.device->info().zone_size_lbas, 0, ZoneAction::kOpen);
  EXPECT_EQ(map.slot_of(2), BlockMap::kUnmapped);  // opening maps nothing
  rig.write_page(2, 0);
  EXPECT_EQ(map.slot_of(2), 0u);  // the first free physical zone
  EXPECT_EQ(map.free_slots(), 3u);
  rig.reset(2);
  EXPECT_EQ(map.slot_of(2), BlockMap::kUnmapped);
  EXPECT_EQ(map.free_slots(), 4u);
}

// Seed 003 5.2 "repeat zone": one zone filled again and again. Lazy mapping
// with asynchronous reset: while free blocks remain, the first write costs
// what any write costs; once every physical zone holds old data, the first
// write erases the zone's blocks first (blocks per unit x tBERS). Wear
// spreads over every block.
TEST(BlockMapping, LazyRepeatZoneMovesTheEraseToTheFirstWriteOnceBlocksRunOut) {
  Config c = small_flash({"zns.mapping.blocks=lazy", "zns.reset.mode=async"});
  Rig rig(c);
  uint64_t plain =
      c.host.command_overhead_ns + c.flash.transfer_latency_ns + c.flash.program_latency_ns;
  std::vector<uint64_t> first_writes;
  for (int round = 0; round < 8; ++round) {
    first_writes.push_back(rig.write_page(0, 0));
    rig.run(Opcode::kWrite, rig.lbas_per_page(),
            static_cast<uint32_t>(rig.zone_lbas() - rig.lbas_per_page()));
    EXPECT_EQ(rig.reset(0), c.host.command_overhead_ns);  // metadata only
  }
  for (int round = 0; round < 4; ++round) {
    EXPECT_LT(first_writes[round], plain + 20'000) << round;
  }
  // The page crosses the channel while its plane erases.
  uint64_t erase_then_program =
      c.host.command_overhead_ns + 2 * c.flash.erase_latency_ns + c.flash.program_latency_ns;
  for (int round = 4; round < 8; ++round) EXPECT_EQ(first_writes[round], erase_then_program);
  for (uint32_t slot = 0; slot < 4; ++slot) {
    for (uint32_t wear : rig.slot_wear(slot)) EXPECT_EQ(wear, 1u) << slot;
  }
}

// Seed 003 5.2 "sequential fill" twice: direct mapping with synchronous
// reset pays the erase in the reset and the refill's first writes are
// plain; lazy mapping with asynchronous reset pays it in the first write.
TEST(BlockMapping, SequentialFillTwiceDirectVersusLazy) {
  auto second_fill_first_write = [](const Config& c, uint64_t* reset_latency) {
    Rig rig(c);
    for (uint32_t zone = 0; zone < 4; ++zone) rig.fill(zone);
    for (uint32_t zone = 0; zone < 4; ++zone) *reset_latency = rig.reset(zone);
    uint64_t worst = 0;
    for (uint32_t zone = 0; zone < 4; ++zone) worst = std::max(worst, rig.write_page(zone, 0));
    return worst;
  };
  Config direct = small_flash();
  Config lazy = small_flash({"zns.mapping.blocks=lazy", "zns.reset.mode=async"});
  uint64_t plain = direct.host.command_overhead_ns + direct.flash.transfer_latency_ns +
                   direct.flash.program_latency_ns;
  uint64_t direct_reset = 0;
  uint64_t lazy_reset = 0;
  EXPECT_LT(second_fill_first_write(direct, &direct_reset), plain + 20'000);
  EXPECT_EQ(direct_reset, direct.host.command_overhead_ns + 2 * direct.flash.erase_latency_ns);
  EXPECT_EQ(second_fill_first_write(lazy, &lazy_reset), lazy.host.command_overhead_ns +
                                                            2 * lazy.flash.erase_latency_ns +
                                                            lazy.flash.program_latency_ns);
  EXPECT_EQ(lazy_reset, lazy.host.command_overhead_ns);
}

// erase_on = block: a reused block is erased at the first write to it, so
// the zone's first write pays one erase, not the zone's; the total is the
// same once the zone is written through.
TEST(BlockMapping, EraseOnBlockSpreadsTheErasesOverTheZonesWrites) {
  Config c = small_flash(
      {"zns.mapping.blocks=lazy", "zns.reset.mode=async", "zns.mapping.erase_on=block"});
  Rig rig(c);
  for (uint32_t zone = 0; zone < 4; ++zone) rig.fill(zone);
  rig.reset(0);
  rig.reset(1);
  uint64_t before = rig.erases();
  uint64_t plain =
      c.host.command_overhead_ns + c.flash.transfer_latency_ns + c.flash.program_latency_ns;
  uint64_t first = rig.write_page(0, 0);
  EXPECT_GE(first, plain + c.flash.erase_latency_ns);
  EXPECT_LT(first, plain + c.flash.erase_latency_ns + 20'000);
  EXPECT_EQ(rig.erases() - before, 1u);    // unit 0's first block only
  uint64_t second = rig.write_page(0, 1);  // unit 1's first block
  EXPECT_GE(second, plain + c.flash.erase_latency_ns);
  EXPECT_LT(rig.write_page(0, 2), plain + 20'000);  // both first blocks are erased now
  rig.run(Opcode::kWrite, 3 * rig.lbas_per_page(),
          static_cast<uint32_t>(rig.zone_lbas() - 3 * rig.lbas_per_page()));
  EXPECT_EQ(rig.erases() - before, 4u);  // 2 blocks x 2 units, as a zone erase would
}

TEST(BlockMapping, AsyncResetOnDirectMappingCanAlsoEraseByBlock) {
  Config c = small_flash({"zns.reset.mode=async", "zns.mapping.erase_on=block"});
  Rig rig(c);
  rig.fill(0);
  rig.reset(0);
  uint64_t before = rig.erases();
  rig.write_page(0, 0);
  EXPECT_EQ(rig.erases() - before, 1u);
}

// Preemptive reset: alone, its rounds of one erase per plane take as long as
// a reset that erases at once; against a closed-loop writer it waits for the
// writer's I/O to drain between erases, so the writer never waits behind a
// whole zone's erases and the reset takes longer.
struct ResetUnderLoad {
  uint64_t reset_latency = 0;
  uint64_t worst_write = 0;
};

ResetUnderLoad reset_under_writer(const Config& c) {
  Rig rig(c);
  rig.fill(0);
  struct Writer final : CompletionSink {
    Rig* rig = nullptr;
    Command command;
    uint64_t worst = 0;
    uint64_t next_page = 0;
    bool stop = false;
    void issue() {
      command = Command{};
      command.opcode = Opcode::kWrite;
      command.slba = rig->device->info().zone_size_lbas + next_page * rig->lbas_per_page();
      command.nlb = rig->lbas_per_page();
      command.sink = this;
      ++next_page;
      rig->device->submit(command);
    }
    void on_complete(Command& done) override {
      EXPECT_EQ(done.status, Status::kSuccess);
      worst = std::max(worst, done.latency_ns());
      if (!stop && next_page < 16) issue();
    }
  } writer;
  writer.rig = &rig;
  struct Resetter final : CompletionSink {
    Writer* writer = nullptr;
    void on_complete(Command&) override { writer->stop = true; }
  } resetter;
  resetter.writer = &writer;
  writer.issue();
  Command reset;
  reset.opcode = Opcode::kZoneManagementSend;
  reset.action = ZoneAction::kReset;
  reset.slba = 0;
  reset.sink = &resetter;
  rig.device->submit(reset);
  rig.sim.run();
  EXPECT_EQ(reset.status, Status::kSuccess);
  return {reset.latency_ns(), writer.worst};
}

TEST(PreemptiveReset, AloneItTakesAsLongAsAResetThatErasesAtOnce) {
  Config plain = small_flash({"zns.reset.erase=full"});
  Config preemptive = small_flash({"zns.reset.erase=full", "zns.reset.preemptive=true"});
  Rig a(plain);
  Rig b(preemptive);
  a.fill(0);
  b.fill(0);
  uint64_t expected = plain.host.command_overhead_ns + 2 * plain.flash.erase_latency_ns;
  EXPECT_EQ(a.reset(0), expected);
  EXPECT_EQ(b.reset(0), expected);
  EXPECT_EQ(a.erases(), b.erases());
}

TEST(PreemptiveReset, YieldsToHostWritesBetweenErases) {
  Config c = small_flash({"zns.reset.erase=full"});
  ResetUnderLoad at_once = reset_under_writer(c);
  ASSERT_TRUE(apply_override(c, "zns.reset.preemptive=true").ok());
  ResetUnderLoad preempted = reset_under_writer(c);
  // At once: a write queued behind more than one erase of its plane.
  EXPECT_GT(at_once.worst_write, c.flash.erase_latency_ns + 2 * c.flash.program_latency_ns);
  // Preemptive: at most one erase ahead of any write.
  EXPECT_LT(preempted.worst_write, c.flash.erase_latency_ns + 2 * c.flash.program_latency_ns);
  EXPECT_GT(preempted.reset_latency, at_once.reset_latency);
}

TEST(PreemptiveReset, AFirstWriteCompletesTheErasesStillWaiting) {
  Config c = small_flash({"zns.reset.erase=full", "zns.reset.preemptive=true"});
  Rig rig(c);
  rig.fill(0);
  // A write to another zone keeps host I/O in flight, so the reset's erases
  // wait; then a write to the reset zone needs its blocks erased.
  Command other;
  other.opcode = Opcode::kWrite;
  other.slba = rig.device->info().zone_size_lbas;
  other.nlb = rig.lbas_per_page();
  other.sink = &rig.sink;
  Command reset;
  reset.opcode = Opcode::kZoneManagementSend;
  reset.action = ZoneAction::kReset;
  reset.slba = 0;
  reset.sink = &rig.sink;
  Command first;
  first.opcode = Opcode::kWrite;
  first.slba = 0;
  first.nlb = rig.lbas_per_page();
  first.sink = &rig.sink;
  rig.device->submit(other);
  rig.device->submit(reset);
  rig.device->submit(first);
  rig.sim.run();
  EXPECT_EQ(reset.status, Status::kSuccess);
  EXPECT_EQ(first.status, Status::kSuccess);
  EXPECT_EQ(rig.erases(), 4u);
  EXPECT_GE(first.latency_ns(), 2 * c.flash.erase_latency_ns + c.flash.program_latency_ns);
  EXPECT_LE(reset.complete_ns, first.complete_ns);
}

TEST(BlockMapping, LazyMappingSurvivesTheImage) {
  Config c = small_flash({"zns.mapping.blocks=lazy", "zns.reset.mode=async"});
  Rig rig(c);
  rig.fill(0);
  rig.fill(1);
  rig.reset(0);
  rig.write_page(2, 0);
  ImageState state;
  rig.device->export_state(state);
  auto bytes = Image::encode(state, 0);
  ASSERT_TRUE(bytes.ok());
  auto decoded = Image::decode(*bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.error();
  EXPECT_EQ(decoded->sections.at(kSectionBlockMap), state.sections.at(kSectionBlockMap));
  Rig copy(c);
  ASSERT_TRUE(copy.device->import_state(*decoded).ok());
  for (uint32_t zone = 0; zone < 4; ++zone) {
    EXPECT_EQ(copy.device->block_map().slot_of(zone), rig.device->block_map().slot_of(zone));
  }
  EXPECT_EQ(copy.device->block_map().free_slots(), rig.device->block_map().free_slots());
  // The copy takes the same physical zone next, and erases it the same way.
  EXPECT_EQ(copy.write_page(3, 0), rig.write_page(3, 0));
  EXPECT_EQ(copy.device->block_map().slot_of(3), rig.device->block_map().slot_of(3));
}

TEST(BlockMapping, ImpossibleMappingsAreCorruptImages) {
  Config c = small_flash({"zns.mapping.blocks=lazy"});
  Rig rig(c);
  rig.fill(0);
  rig.fill(1);
  ImageState good;
  rig.device->export_state(good);
  auto refused = [&](ImageState state) {
    Rig fresh(c);
    auto outcome = fresh.device->import_state(state);
    return !outcome.ok() && outcome.error().find("corrupt image") != std::string::npos;
  };
  // `good` with its block map changed by `edit`.
  auto with_map = [](const ImageState& state, const std::function<void(BlockMapState&)>& edit) {
    ImageState changed = state;
    BlockMapState map = **get_block_map(changed);
    edit(map);
    put_block_map(changed, map);
    return changed;
  };
  EXPECT_TRUE(refused(with_map(good, [](auto& m) { m.zone_slots[1] = m.zone_slots[0]; })));
  EXPECT_TRUE(refused(with_map(good, [](auto& m) { m.zone_slots[0] = 9; })));
  EXPECT_TRUE(refused(with_map(good, [](auto& m) { m.zone_slots[0] = BlockMap::kUnmapped; })));
  EXPECT_TRUE(refused(with_map(good, [](auto& m) { m.slots[3].stale_pages = 1000; })));
  ImageState missing = good;
  missing.sections.erase(kSectionBlockMap);
  EXPECT_TRUE(refused(missing));  // lazy mapping needs its map
  Rig direct(small_flash());
  ImageState identity;
  direct.device->export_state(identity);
  ImageState moved =
      with_map(identity, [](auto& m) { std::swap(m.zone_slots[0], m.zone_slots[1]); });
  EXPECT_FALSE(direct.device->import_state(moved).ok());  // direct is the identity
}

TEST(BlockMapping, AnFtlSectionInAZnsImageIsCorrupt) {
  Rig rig(small_flash());
  ImageState state;
  rig.device->export_state(state);
  state.sections[7] = {0, 0, 0, 0};
  Rig copy(small_flash());
  Outcome imported = copy.device->import_state(state);
  ASSERT_FALSE(imported.ok());
  EXPECT_NE(imported.error().find("ftl section in a ZNS image"), std::string::npos);
}

// Images stored before the block map kept an asynchronous reset's old pages
// in the empty zone's programmed-page count; they load as stale pages.
TEST(BlockMapping, ImagesWithoutABlockMapKeepTheirPendingErase) {
  Config c = small_flash({"zns.reset.mode=async"});
  Rig rig(c);
  rig.fill(0);
  rig.reset(0);
  ImageState state;
  rig.device->export_state(state);
  ASSERT_EQ((*get_block_map(state))->slots[0].stale_pages, 16u);
  state.sections.erase(kSectionBlockMap);
  std::vector<ZoneRecord> zones = *get_zone_records(state);
  zones[0].pages_programmed = 16;
  put_zone_records(state, zones);
  Rig copy(c);
  ASSERT_TRUE(copy.device->import_state(state).ok());
  EXPECT_EQ(copy.device->block_map().slot(0).stale_pages, 16u);
  EXPECT_EQ(copy.device->zones().zone(0).pages_programmed, 0u);
  uint64_t before = copy.erases();
  copy.write_page(0, 0);
  EXPECT_EQ(copy.erases() - before, 4u);
}

}  // namespace
}  // namespace zonelab
