// The conventional SSD: host capacity after over-provisioning, the zoned view
// (seed 000 §5.1: reset = trim of the range), data through trim, and the
// timing a host write sees on an idle device.
#include "conv/conv_device.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <functional>
#include <random>
#include <vector>

#include "controller/device_state.h"
#include "flash/flash_state.h"
#include "stack/device_factory.h"
#include "workload/runner.h"

namespace zonelab {
namespace {

class Sink final : public CompletionSink {
 public:
  void on_complete(Command&) override {}
};

Config block_config(const std::vector<std::string>& overrides = {}) {
  Config c = *preset_config("small");
  EXPECT_TRUE(apply_override(c, "interface=block").ok());
  EXPECT_TRUE(apply_override(c, "store.backing=memory").ok());
  for (const auto& kv : overrides) EXPECT_TRUE(apply_override(c, kv).ok()) << kv;
  return c;
}

struct Rig {
  explicit Rig(const Config& config) {
    auto made = make_conv_device(config, sim);
    EXPECT_TRUE(made.ok()) << (made.ok() ? "" : made.error());
    device = std::move(made).value();
  }
  Command run(Opcode op, uint64_t slba, uint32_t nlb, uint8_t* data = nullptr,
              ZoneAction action = ZoneAction::kNone) {
    Command c;
    c.opcode = op;
    c.slba = slba;
    c.nlb = nlb;
    c.data = data;
    c.action = action;
    c.sink = &sink;
    device->submit(c);
    sim.run();
    return c;
  }
  Simulator sim;
  Sink sink;
  std::unique_ptr<ConvDevice> device;
};

TEST(ConvDevice, HostCapacityIsWholeZonesOfTheOverprovisionedFlash) {
  for (const char* op : {"7%", "28%"}) {
    Config c = block_config({std::string("block.overprovisioning=") + op});
    Rig rig(c);
    auto host = Ftl::host_lbas(c);
    ASSERT_TRUE(host.ok());
    const DeviceInfo& info = rig.device->info();
    EXPECT_EQ(info.interface, "block");
    EXPECT_EQ(info.zone_capacity_lbas, c.zns.zone_capacity_bytes / c.host.lba_size_bytes);
    EXPECT_EQ(info.zone_count, *host / info.zone_capacity_lbas);
    EXPECT_EQ(info.capacity_lbas, info.zone_count * info.zone_capacity_lbas);
  }
  // More over-provisioning, fewer zones.
  Rig seven(block_config({"block.overprovisioning=7%"}));
  Rig twenty_eight(block_config({"block.overprovisioning=28%"}));
  EXPECT_GT(seven.device->info().zone_count, twenty_eight.device->info().zone_count);
}

TEST(ConvDevice, ZonedViewFollowsWritesAndResetTrimsTheRange) {
  Rig rig(block_config());
  uint64_t cap = rig.device->info().zone_capacity_lbas;
  EXPECT_EQ(rig.device->zone(1).state, ZoneState::kEmpty);
  ASSERT_EQ(rig.run(Opcode::kWrite, cap, 8).status, Status::kSuccess);
  EXPECT_EQ(rig.device->zone(1).wp_lba, cap + 8);
  EXPECT_EQ(rig.device->zone(1).state, ZoneState::kImplicitlyOpened);
  // Not enforced: a write away from the pointer succeeds and moves it on.
  ASSERT_EQ(rig.run(Opcode::kWrite, cap + 100, 4).status, Status::kSuccess);
  EXPECT_EQ(rig.device->zone(1).wp_lba, cap + 104);
  EXPECT_NE(rig.device->ftl().where(cap), Ftl::kUnmapped);
  ASSERT_EQ(rig.run(Opcode::kZoneManagementSend, cap, 0, nullptr, ZoneAction::kReset).status,
            Status::kSuccess);
  EXPECT_EQ(rig.device->zone(1).state, ZoneState::kEmpty);
  EXPECT_EQ(rig.device->ftl().where(cap), Ftl::kUnmapped);
  EXPECT_EQ(rig.device->ftl().where(cap + 100), Ftl::kUnmapped);
  ASSERT_EQ(rig.run(Opcode::kZoneManagementSend, cap, 0, nullptr, ZoneAction::kFinish).status,
            Status::kSuccess);
  EXPECT_EQ(rig.device->zone(1).state, ZoneState::kFull);
  EXPECT_TRUE(rig.device->ftl().consistent());
}

TEST(ConvDevice, AResetThatKeepsLeavesTheDataValidUntilWrittenAgain) {
  // block.zone_reset = keep: a host that never discards. The reset empties
  // the zone for the host; the FTL still holds its data, which garbage
  // collection would copy, until the LBAs are written again.
  Config config = block_config();
  config.block.zone_reset = "keep";
  Rig rig(config);
  uint64_t cap = rig.device->info().zone_capacity_lbas;
  ASSERT_EQ(rig.run(Opcode::kWrite, cap, 8).status, Status::kSuccess);
  uint32_t before = rig.device->ftl().where(cap);
  ASSERT_EQ(rig.run(Opcode::kZoneManagementSend, cap, 0, nullptr, ZoneAction::kReset).status,
            Status::kSuccess);
  EXPECT_EQ(rig.device->zone(1).state, ZoneState::kEmpty);
  EXPECT_EQ(rig.device->ftl().where(cap), before);
  EXPECT_EQ(rig.device->counters().deallocated_bytes, 0u);
  ASSERT_EQ(rig.run(Opcode::kWrite, cap, 8).status, Status::kSuccess);
  EXPECT_NE(rig.device->ftl().where(cap), before);  // the rewrite makes the old page stale
  EXPECT_TRUE(rig.device->ftl().consistent());
}

TEST(ConvDevice, DataSurvivesAPartialTrimAndTrimmedBlocksReadZeros) {
  Rig rig(block_config());
  uint64_t lba_bytes = rig.device->info().lba_size_bytes;
  std::vector<uint8_t> data(16 * lba_bytes);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 7 + 1);
  ASSERT_EQ(rig.run(Opcode::kWrite, 40, 16, data.data()).status, Status::kSuccess);
  ASSERT_EQ(rig.run(Opcode::kDeallocate, 44, 4).status, Status::kSuccess);
  std::vector<uint8_t> back(16 * lba_bytes, 0xAA);
  ASSERT_EQ(rig.run(Opcode::kRead, 40, 16, back.data()).status, Status::kSuccess);
  for (uint64_t i = 0; i < 16; ++i) {
    bool trimmed = i >= 4 && i < 8;
    for (uint64_t b = 0; b < lba_bytes; ++b) {
      uint8_t want = trimmed ? 0 : data[i * lba_bytes + b];
      ASSERT_EQ(back[i * lba_bytes + b], want) << "lba " << 40 + i;
    }
  }
  EXPECT_EQ(rig.device->counters().deallocated_bytes, 4 * lba_bytes);
}

TEST(ConvDevice, BadCommandsAreRefused) {
  Rig rig(block_config());
  uint64_t cap = rig.device->info().capacity_lbas;
  EXPECT_EQ(rig.run(Opcode::kAppend, 0, 1).status, Status::kInvalidField);
  EXPECT_EQ(rig.run(Opcode::kWrite, cap, 1).status, Status::kLbaOutOfRange);
  EXPECT_EQ(rig.run(Opcode::kRead, cap - 1, 2).status, Status::kLbaOutOfRange);
  EXPECT_EQ(rig.run(Opcode::kWrite, 0, 0).status, Status::kInvalidField);
  EXPECT_EQ(rig.run(Opcode::kZoneManagementSend, 1, 0, nullptr, ZoneAction::kReset).status,
            Status::kInvalidField);
  EXPECT_EQ(rig.run(Opcode::kZoneManagementSend, 0, 0, nullptr, ZoneAction::kOffline).status,
            Status::kInvalidField);
}

TEST(ConvDevice, StreamsKeepTheirDataInTheirOwnBlocks) {
  Rig rig(block_config({"block.streams=2", "block.overprovisioning=28%"}));
  auto write = [&](uint64_t lba, uint16_t stream) {
    Command c;
    c.opcode = Opcode::kWrite;
    c.slba = lba;
    c.nlb = 4;  // one 16 KiB page
    c.stream = stream;
    c.sink = &rig.sink;
    rig.device->submit(c);
    rig.sim.run();
    return c.status;
  };
  ASSERT_EQ(write(0, 0), Status::kSuccess);
  ASSERT_EQ(write(1000, 1), Status::kSuccess);
  EXPECT_EQ(write(2000, 2), Status::kInvalidField);
  const Ftl& ftl = rig.device->ftl();
  uint64_t pages_per_block = rig.device->config().flash.pages_per_block;
  // Both went to the first plane in turn, each into its stream's own block.
  uint64_t block_a = ftl.where(0) / ftl.lbas_per_page() / pages_per_block;
  uint64_t block_b = ftl.where(1000) / ftl.lbas_per_page() / pages_per_block;
  EXPECT_NE(block_a, block_b);
}

TEST(ConvDevice, ZnsDeviceRefusesDeallocate) {
  Config c = *preset_config("small");
  ASSERT_TRUE(apply_override(c, "store.backing=none").ok());
  Simulator sim;
  auto device = std::move(make_device(c, sim)).value();
  Sink sink;
  Command trim;
  trim.opcode = Opcode::kDeallocate;
  trim.nlb = 1;
  trim.sink = &sink;
  device->submit(trim);
  sim.run();
  EXPECT_EQ(trim.status, Status::kInvalidField);
}

TEST(ConvDevice, AnIdlePageWriteSeesOverheadLinkTransferAndProgram) {
  Config c = block_config();
  Rig rig(c);
  auto lpp = static_cast<uint32_t>(c.flash.page_size_bytes / c.host.lba_size_bytes);
  Command w = rig.run(Opcode::kWrite, 0, lpp);
  uint64_t link = link_time_ns(c.flash.page_size_bytes, c.host.link_bandwidth_bytes_per_s);
  EXPECT_EQ(w.latency_ns(), c.host.command_overhead_ns + link + c.flash.transfer_latency_ns +
                                c.flash.program_latency_ns);
}

TEST(ConvDevice, OneJobRunsOnBothInterfaces) {
  JobSpec job;
  job.kind = JobKind::kWrite;
  job.block_size_bytes = 64 << 10;
  job.numjobs = 2;
  job.zones = std::pair<uint32_t, uint32_t>{0, 7};
  job.size_percent = 200;
  for (const char* interface : {"zns", "block"}) {
    Config c = *preset_config("small");
    ASSERT_TRUE(apply_override(c, std::string("interface=") + interface).ok());
    ASSERT_TRUE(apply_override(c, "store.backing=none").ok());
    Simulator sim;
    auto device = make_device(c, sim);
    ASSERT_TRUE(device.ok()) << device.error();
    ASSERT_TRUE(check_jobs({job}, (*device)->info()).ok());
    RunResult run = run_jobs(**device, sim, {job}, 1);
    ASSERT_EQ(run.jobs.size(), 1u);
    EXPECT_EQ(run.jobs[0].errors, 0u) << interface << ": " << run.jobs[0].first_error;
    EXPECT_EQ(run.jobs[0].bytes,
              2 * 8 * (*device)->info().zone_capacity_lbas * (*device)->info().lba_size_bytes)
        << interface;
    EXPECT_GT(run.jobs[0].resets, 0u) << interface;
  }
}

// --- Device images ---------------------------------------------------------

Config tiny_block(const std::string& gc) {
  return block_config({"store.backing=none", "flash.channels=2", "flash.dies_per_channel=1",
                       "flash.planes_per_die=2", "flash.blocks_per_plane=64",
                       "flash.pages_per_block=8", "flash.page_size=16KiB", "host.lba_size=4KiB",
                       "zns.zone_capacity=128KiB", "block.overprovisioning=7%",
                       "block.gc_watermark=2", "block.gc=" + gc});
}

// Random writes and zone resets; returns each command's status and latency.
std::vector<uint64_t> random_commands(Rig& rig, uint64_t seed, int count) {
  std::mt19937_64 rng(seed);
  const DeviceInfo& info = rig.device->info();
  std::vector<uint64_t> out;
  for (int i = 0; i < count; ++i) {
    Command c;
    if (rng() % 10 == 0) {
      uint64_t zone = rng() % info.zone_count;
      c = rig.run(Opcode::kZoneManagementSend, zone * info.zone_size_lbas, 0, nullptr,
                  ZoneAction::kReset);
    } else {
      uint64_t lba = rng() % (info.capacity_lbas - 16);
      c = rig.run(Opcode::kWrite, lba, static_cast<uint32_t>(1 + rng() % 16));
    }
    out.push_back(static_cast<uint64_t>(c.status));
    out.push_back(c.latency_ns());
  }
  return out;
}

// A device saved into an image and loaded into a new device (a new process)
// goes on exactly as the original: the same latencies, the same state.
void expect_image_round_trip_continues(const std::string& gc) {
  Config c = tiny_block(gc);
  Rig rig(c);
  random_commands(rig, 1, 3000);
  ASSERT_GT(rig.device->ftl().counters().gc_runs, 0u);
  ImageState saved;
  rig.device->export_state(saved);
  auto decoded = Image::decode(Image::encode(saved, 0).value());
  ASSERT_TRUE(decoded.ok()) << decoded.error();
  ASSERT_TRUE(get_ftl(*decoded).ok());
  EXPECT_EQ(*get_ftl(*decoded), *get_ftl(saved));
  EXPECT_EQ(*get_zone_records(*decoded), *get_zone_records(saved));

  Rig copy(c);
  Outcome imported = copy.device->import_state(*decoded);
  ASSERT_TRUE(imported.ok()) << imported.error();
  EXPECT_EQ(copy.sim.now_ns(), rig.sim.now_ns());
  for (uint32_t z = 0; z < rig.device->info().zone_count; ++z) {
    EXPECT_EQ(copy.device->zone(z).wp_lba, rig.device->zone(z).wp_lba);
  }
  EXPECT_EQ(random_commands(copy, 2, 2000), random_commands(rig, 2, 2000));
  ImageState want;
  ImageState got;
  rig.device->export_state(want);
  copy.device->export_state(got);
  EXPECT_EQ(got.sections, want.sections);  // FTL, zones, erase counts, lifetime
}

TEST(ConvDeviceImage, RoundTripContinuesAsOneRunGreedy) {
  expect_image_round_trip_continues("greedy");
}

TEST(ConvDeviceImage, RoundTripContinuesAsOneRunCostBenefit) {
  expect_image_round_trip_continues("cost-benefit");
}

// The image's slot is sized when it is created, with every block free and
// every page buffer empty; full-but-one buffers on every stream must still
// fit a later save.
TEST(ConvDeviceImage, FullPageBuffersFitTheSlotCreateSized) {
  Config c = block_config({"store.backing=none", "flash.channels=1", "flash.dies_per_channel=1",
                           "flash.planes_per_die=1", "flash.blocks_per_plane=64",
                           "flash.pages_per_block=4", "flash.page_size=256KiB", "host.lba_size=512",
                           "zns.zone_capacity=256KiB", "block.overprovisioning=50%",
                           "block.gc_watermark=2", "block.streams=16"});
  Rig rig(c);
  ImageState empty;
  rig.device->export_state(empty);
  std::string dir = ::testing::TempDir() + "/zonelab-conv-XXXXXX";
  ASSERT_NE(::mkdtemp(dir.data()), nullptr);
  std::string path = dir + "/blk.zl";
  auto created = Image::create(path, empty, 0, false);
  ASSERT_TRUE(created.ok()) << created.error();
  std::unique_ptr<Image> image = std::move(created).value();
  uint32_t lbas_per_page = 512;
  for (uint16_t stream = 0; stream < 16; ++stream) {
    Command cmd;
    cmd.opcode = Opcode::kWrite;
    cmd.slba = stream * 1000u;
    cmd.nlb = lbas_per_page - 1;
    cmd.stream = stream;
    cmd.sink = &rig.sink;
    rig.device->submit(cmd);
    rig.sim.run();
    ASSERT_EQ(cmd.status, Status::kSuccess);
  }
  ImageState full;
  rig.device->export_state(full);
  Outcome saved = image->save(full);
  EXPECT_TRUE(saved.ok()) << saved.error();
  image.reset();
  std::filesystem::remove_all(dir);
}

TEST(ConvDeviceImage, ImportRefusesAnImpossibleZonedView) {
  Config c = tiny_block("greedy");
  Rig rig(c);
  random_commands(rig, 3, 200);
  ImageState good;
  rig.device->export_state(good);
  uint64_t cap = rig.device->info().zone_capacity_lbas;
  auto zones = [](const std::function<void(std::vector<ZoneRecord>&)>& edit) {
    return [edit](ImageState& s) {
      std::vector<ZoneRecord> records = *get_zone_records(s);
      edit(records);
      put_zone_records(s, records);
    };
  };
  auto ftl = [](const std::function<void(FtlState&)>& edit) {
    return [edit](ImageState& s) {
      FtlState state = *get_ftl(s);
      edit(state);
      put_ftl(s, state);
    };
  };
  std::vector<std::function<void(ImageState&)>> mutations = {
      zones([&](auto& z) { z[0].wp = cap + 1; }),
      zones([](auto& z) { z[0].state = static_cast<uint8_t>(ZoneState::kClosed); }),
      zones([](auto& z) { z[1].data_end = 1; }),
      zones([](auto& z) { z.pop_back(); }),
      [](ImageState& s) {
        std::vector<uint32_t> counts = *get_erase_counts(s);
        counts.pop_back();
        put_erase_counts(s, counts);
      },
      [](ImageState& s) { s.sections.erase(kSectionFtl); },
      [](ImageState& s) { s.sections[6] = {1, 0, 0, 0, 0, 0, 0, 0}; },  // a ZNS block map
      ftl([](FtlState& f) { f.plane_free_at_ns.pop_back(); }),
      ftl([](FtlState& f) { f.channel_free_at_ns[0] = UINT64_MAX; }),
      ftl([](FtlState& f) { f.clock_ns = UINT64_MAX; }),
      ftl([](FtlState& f) { f.l2p[0] = 0x0FFFFFFF; }),
      [](ImageState& s) { s.sections.erase(kSectionLifetime); },
  };
  for (size_t i = 0; i < mutations.size(); ++i) {
    ImageState bad = good;
    mutations[i](bad);
    Rig fresh(c);
    Outcome imported = fresh.device->import_state(bad);
    ASSERT_FALSE(imported.ok()) << i;
    EXPECT_EQ(imported.error().rfind("corrupt image", 0), 0u) << imported.error();
    EXPECT_EQ(fresh.sim.now_ns(), 0u) << i;
    EXPECT_EQ(fresh.device->ftl().valid_lbas(), 0u) << i;
  }
  Rig fresh(c);
  EXPECT_TRUE(fresh.device->import_state(good).ok());
}

// What decodes must encode again: buffers that could outgrow any slot make a
// state that could be loaded but never saved.
TEST(ConvDeviceImage, ImportRefusesBuffersThatCouldOutgrowAnySlot) {
  Config c = block_config({"store.backing=none", "flash.channels=1", "flash.dies_per_channel=1",
                           "flash.planes_per_die=1", "flash.blocks_per_plane=16",
                           "flash.pages_per_block=4", "flash.page_size=1MiB", "host.lba_size=512",
                           "zns.zone_capacity=1MiB", "block.overprovisioning=50%"});
  Rig rig(c);
  ImageState state;
  rig.device->export_state(state);
  FtlState ftl = *get_ftl(state);
  ftl.buffers.resize(140'000);  // 140000 x 2047 LBAs of room x 4 bytes > 1 GiB
  put_ftl(state, ftl);
  Rig fresh(c);
  Outcome imported = fresh.device->import_state(state);
  ASSERT_FALSE(imported.ok());
  EXPECT_NE(imported.error().find("could outgrow a slot"), std::string::npos) << imported.error();
}

// The production drive's front end on the block interface
// (controller/front_end.h), each feature alone.

// Submits every command at once, then runs the device until all complete.
void run_together(Rig& rig, std::vector<Command>& commands) {
  for (Command& c : commands) {
    c.sink = &rig.sink;
    rig.device->submit(c);
  }
  rig.sim.run();
}

Command write_of(uint64_t slba, uint32_t nlb) {
  Command c;
  c.opcode = Opcode::kWrite;
  c.slba = slba;
  c.nlb = nlb;
  return c;
}

TEST(ConvDrive, AWriteCompletesOnceItsDataIsInTheBuffer) {
  Config c = block_config({"buffer.size=1MiB"});
  Rig rig(c);
  auto lpp = static_cast<uint32_t>(c.flash.page_size_bytes / c.host.lba_size_bytes);
  Command w = rig.run(Opcode::kWrite, 0, lpp);
  ASSERT_EQ(w.status, Status::kSuccess);
  uint64_t link = link_time_ns(c.flash.page_size_bytes, c.host.link_bandwidth_bytes_per_s);
  EXPECT_EQ(w.latency_ns(), c.host.command_overhead_ns + link);
  // The page is programmed all the same, and leaves the buffer then.
  EXPECT_EQ(rig.device->flash().counters().program_pages[static_cast<size_t>(FlashCause::kHost)],
            1u);
  EXPECT_EQ(rig.device->write_buffer().counters().admitted_bytes, c.flash.page_size_bytes);
  EXPECT_EQ(rig.device->write_buffer().counters().waits, 0u);
}

TEST(ConvDrive, AFullBufferMakesWritesWaitForPrograms) {
  // Two pages of buffer, sixteen page writes at once: the buffer fills and
  // later writes wait for programs to end; none is lost or reordered.
  Config c = block_config({"buffer.size=32KiB"});
  Rig rig(c);
  auto lpp = static_cast<uint32_t>(c.flash.page_size_bytes / c.host.lba_size_bytes);
  std::vector<Command> writes;
  for (uint32_t i = 0; i < 16; ++i) writes.push_back(write_of(uint64_t{i} * lpp, lpp));
  run_together(rig, writes);
  const WriteBuffer::Counters& k = rig.device->write_buffer().counters();
  EXPECT_GT(k.waits, 0u);
  EXPECT_GT(k.wait_ns, 0u);
  EXPECT_LE(k.peak_bytes, 32u * 1024);
  EXPECT_EQ(k.overcommits, 0u);
  for (const Command& w : writes) EXPECT_EQ(w.status, Status::kSuccess);
  // The last write waited for at least one program.
  EXPECT_GE(writes.back().latency_ns(), c.flash.program_latency_ns);
  EXPECT_LT(writes.front().latency_ns(), c.flash.program_latency_ns);
}

TEST(ConvDrive, AReadOfAPageStillBeingProgrammedComesFromTheBuffer) {
  Config c = block_config({"buffer.size=1MiB"});
  Rig rig(c);
  auto lpp = static_cast<uint32_t>(c.flash.page_size_bytes / c.host.lba_size_bytes);
  std::vector<Command> both{write_of(0, lpp), Command{}};
  both[1].opcode = Opcode::kRead;
  both[1].slba = 0;
  both[1].nlb = 1;
  run_together(rig, both);
  EXPECT_EQ(rig.device->write_buffer().counters().read_hits, 1u);
  EXPECT_LT(both[1].latency_ns(), c.flash.read_latency_ns);
  // Once programmed, the page is read from flash.
  rig.sim.advance_to(rig.sim.now_ns() + 2 * c.flash.program_latency_ns);
  Command later = rig.run(Opcode::kRead, 0, 1);
  EXPECT_EQ(rig.device->write_buffer().counters().read_hits, 1u);
  EXPECT_GE(later.latency_ns(), c.flash.read_latency_ns);
}

TEST(ConvDrive, RewrittenAndTrimmedDataLeavesTheBufferUnprogrammed) {
  // A buffer of one page. Half a page waits in the stream's page buffer; a
  // rewrite of it and a trim of it must give its space back, or the writes
  // after it would find the buffer overcommitted.
  Config c = block_config({"buffer.size=16KiB"});
  Rig rig(c);
  auto lpp = static_cast<uint32_t>(c.flash.page_size_bytes / c.host.lba_size_bytes);
  uint32_t half = lpp / 2;
  ASSERT_EQ(rig.run(Opcode::kWrite, 0, half).status, Status::kSuccess);
  ASSERT_EQ(rig.run(Opcode::kWrite, 0, half).status, Status::kSuccess);       // rewritten
  ASSERT_EQ(rig.run(Opcode::kDeallocate, 0, half).status, Status::kSuccess);  // trimmed
  ASSERT_EQ(rig.run(Opcode::kWrite, 100, half).status, Status::kSuccess);
  ASSERT_EQ(rig.run(Opcode::kWrite, 200, half).status, Status::kSuccess);  // fills the page
  const WriteBuffer::Counters& k = rig.device->write_buffer().counters();
  EXPECT_EQ(k.overcommits, 0u);
  EXPECT_EQ(k.waits, 0u);
  EXPECT_EQ(k.peak_bytes, c.flash.page_size_bytes);
}

TEST(ConvDrive, FirmwareCoresServeOneCommandAtATimeEach) {
  Config c = block_config({"controller.cores=1", "controller.write=10us"});
  Rig rig(c);
  std::vector<Command> writes{write_of(0, 1), write_of(8, 1)};
  run_together(rig, writes);
  EXPECT_EQ(writes[1].complete_ns - writes[0].complete_ns, 10000u);
  nlohmann::ordered_json state;
  rig.device->describe_state(state);
  EXPECT_EQ(state["drive"]["firmware_busy_ns"], 20000u);
}

TEST(ConvDrive, ATrimOfMappedDataIsBookkeepingOnTheMappingTable) {
  // controller.unmap per GiB of the data that leaves the table.
  Config c = block_config({"controller.unmap=1s"});
  Rig rig(c);
  uint64_t mib_lbas = (1 << 20) / c.host.lba_size_bytes;
  ASSERT_EQ(rig.run(Opcode::kWrite, 0, static_cast<uint32_t>(mib_lbas)).status, Status::kSuccess);
  Command trim = rig.run(Opcode::kDeallocate, 0, static_cast<uint32_t>(mib_lbas));
  ASSERT_EQ(trim.status, Status::kSuccess);
  EXPECT_GE(trim.latency_ns(), 976000u);  // 1 s / 1,024
  EXPECT_LT(trim.latency_ns(), 990000u);
  EXPECT_EQ(rig.device->drive_counters().unmap_ns, 976563u);
  // Nothing mapped, nothing to do.
  Command again = rig.run(Opcode::kDeallocate, 0, static_cast<uint32_t>(mib_lbas));
  EXPECT_EQ(again.latency_ns(), c.host.command_overhead_ns);
}

TEST(ConvDrive, ReadsQueueByDieWithReadDispatchDie) {
  Config arrival = block_config({"controller.cores=4", "controller.read=1us"});
  Config by_die =
      block_config({"controller.cores=4", "controller.read=1us", "controller.read_dispatch=die"});
  uint64_t last[2] = {0, 0};
  uint64_t queued[2] = {0, 0};
  for (int k = 0; k < 2; ++k) {
    Rig rig(k == 0 ? arrival : by_die);
    auto lpp = static_cast<uint32_t>(by_die.flash.page_size_bytes / by_die.host.lba_size_bytes);
    ASSERT_EQ(rig.run(Opcode::kWrite, 0, lpp).status, Status::kSuccess);
    // Four reads of the one page, one die.
    std::vector<Command> reads(4);
    for (Command& r : reads) {
      r.opcode = Opcode::kRead;
      r.slba = 0;
      r.nlb = 1;
    }
    run_together(rig, reads);
    for (const Command& r : reads) EXPECT_EQ(r.status, Status::kSuccess);
    last[k] = reads.back().complete_ns - reads.back().submit_ns;
    queued[k] = rig.device->drive_counters().die_queued_reads;
  }
  EXPECT_EQ(queued[0], 0u);
  EXPECT_EQ(queued[1], 3u);
  EXPECT_GT(last[1], last[0]);
}

TEST(ConvDrive, TheSameRunGivesTheSameTimesWithEveryFeatureOn) {
  auto run = [] {
    Config c = block_config({"buffer.size=64KiB", "controller.cores=2", "controller.write=3us",
                             "controller.read=2us", "controller.map_update=1us",
                             "controller.unmap=100ms", "flash.suspend.program=true",
                             "flash.suspend.latency=20us", "controller.read_dispatch=die"});
    Rig rig(c);
    std::mt19937_64 rng(7);
    std::vector<Command> commands(400);
    for (Command& cmd : commands) {
      cmd.slba = rng() % 4096;
      cmd.nlb = 1 + static_cast<uint32_t>(rng() % 8);
      uint64_t pick = rng() % 10;
      cmd.opcode = pick < 6 ? Opcode::kWrite : pick < 9 ? Opcode::kRead : Opcode::kDeallocate;
    }
    run_together(rig, commands);
    std::vector<uint64_t> times;
    for (const Command& cmd : commands) {
      EXPECT_EQ(cmd.status, Status::kSuccess);
      times.push_back(cmd.complete_ns);
    }
    EXPECT_TRUE(rig.device->ftl().consistent());
    return times;
  };
  EXPECT_EQ(run(), run());
}

}  // namespace
}  // namespace zonelab
