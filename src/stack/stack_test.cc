// The device stack: building from a configuration or an image, the blocking
// interface in virtual and real time, thread-safe queries, the clock and
// its timers, and closing (which saves the image).
#include "stack/stack.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <thread>
#include <vector>

#include "stack/device_factory.h"
#include "stack/stack_report.h"
#include "zns/small_flash_test_config.h"

namespace zonelab {
namespace {

Config small_config(const std::vector<std::string>& overrides = {}) {
  Config c = *preset_config("small");
  c.store.backing = "memory";
  for (const auto& o : overrides) EXPECT_TRUE(apply_override(c, o).ok()) << o;
  return c;
}

Command write_command(uint64_t slba, uint32_t nlb, uint8_t* data = nullptr) {
  Command c;
  c.opcode = Opcode::kWrite;
  c.slba = slba;
  c.nlb = nlb;
  c.data = data;
  return c;
}

class TempDir {
 public:
  TempDir() {
    path_ = std::filesystem::temp_directory_path() /
            ("zonelab-stack-test-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

TEST(Stack, VirtualSubmitWaitRunsTheSimulationToTheCompletion) {
  auto stack = Stack::make(small_config());
  ASSERT_TRUE(stack.ok()) << stack.error();
  Command c = write_command(0, 8);
  ASSERT_TRUE((*stack)->io().submit_wait(c));
  EXPECT_EQ(c.status, Status::kSuccess);
  EXPECT_GT(c.complete_ns, c.submit_ns);
  EXPECT_EQ((*stack)->sim().now_ns(), c.complete_ns);
  EXPECT_EQ((*stack)->zone(0).wp_lba, 8u);
}

TEST(Stack, AFailedCommandReturnsItsStatus) {
  auto stack = Stack::make(small_config());
  ASSERT_TRUE(stack.ok());
  Command c = write_command(5, 1);  // not at the write pointer
  ASSERT_TRUE((*stack)->io().submit_wait(c));
  EXPECT_EQ(c.status, Status::kZoneInvalidWrite);
}

TEST(Stack, TheSchedulerOptionPutsAHostQueueInFront) {
  StackOptions options;
  options.scheduler = "mq-deadline";
  auto stack = Stack::make(small_config(), options);
  ASSERT_TRUE(stack.ok());
  EXPECT_EQ((*stack)->scheduler(), "mq-deadline");
  Command c = write_command(0, 8);
  ASSERT_TRUE((*stack)->io().submit_wait(c));
  EXPECT_EQ(c.status, Status::kSuccess);
  auto plain = Stack::make(small_config());
  EXPECT_EQ((*plain)->scheduler(), "none");
}

TEST(Stack, ABadConfigurationIsRefusedWithAMessage) {
  Config c = small_config();
  c.zns.max_open = 20;
  c.zns.max_active = 10;
  auto stack = Stack::make(c);
  ASSERT_FALSE(stack.ok());
  EXPECT_FALSE(stack.error().empty());
  StackOptions bad;
  bad.scheduler = "fastest";
  EXPECT_FALSE(Stack::make(small_config(), bad).ok());
}

TEST(Stack, BothInterfacesAreBuiltBehindTheSameSeam) {
  auto zns = Stack::make(small_config());
  auto block = Stack::make(small_config({"interface=block"}));
  ASSERT_TRUE(zns.ok() && block.ok()) << block.error();
  EXPECT_EQ((*zns)->info().interface, "zns");
  EXPECT_EQ((*block)->info().interface, "block");
  nlohmann::ordered_json zns_state, block_state;
  (*zns)->inspect([&](const ModeledDevice& d) { d.describe_state(zns_state); });
  (*block)->inspect([&](const ModeledDevice& d) { d.describe_state(block_state); });
  EXPECT_TRUE(zns_state.contains("block_map"));
  EXPECT_TRUE(block_state.contains("ftl"));
  EXPECT_FALSE((*block)->inject_zone(0, ZoneState::kOffline).ok());
  EXPECT_TRUE((*zns)->inject_zone(0, ZoneState::kOffline).ok());
  EXPECT_EQ((*zns)->zone(0).state, ZoneState::kOffline);
}

TEST(Stack, VirtualTimersRunOnlyWhenPolledAndInDueOrder) {
  auto stack = Stack::make(small_config());
  ASSERT_TRUE(stack.ok());
  Clock& clock = (*stack)->clock();
  std::vector<int> ran;
  clock.add_timer(2'000'000, [&] { ran.push_back(2); });
  clock.add_timer(1'000'000, [&] { ran.push_back(1); });
  uint64_t cancelled = clock.add_timer(1'500'000, [&] { ran.push_back(99); });
  clock.cancel(cancelled);
  clock.poll();
  EXPECT_TRUE(ran.empty());  // no time has passed
  // Commands move virtual time; the timers wait for the owner's poll.
  for (uint64_t lba = 0; lba < 4096 && (*stack)->sim().now_ns() < 3'000'000; lba += 128) {
    Command c = write_command(lba, 128);
    ASSERT_TRUE((*stack)->io().submit_wait(c));
  }
  ASSERT_GE(clock.now_ns(), 3'000'000u);
  EXPECT_TRUE(ran.empty());
  clock.poll();
  EXPECT_EQ(ran, (std::vector<int>{1, 2}));
}

TEST(Stack, ATimerMayAddATimerThatIsAlreadyDue) {
  auto stack = Stack::make(small_config());
  Clock& clock = (*stack)->clock();
  int runs = 0;
  clock.add_timer(0, [&] {
    ++runs;
    clock.add_timer(0, [&] { ++runs; });
  });
  clock.poll();
  EXPECT_EQ(runs, 2);
}

TEST(Stack, AClosedStackTakesNoCommand) {
  auto stack = Stack::make(small_config());
  ASSERT_TRUE((*stack)->close().ok());
  Command c = write_command(0, 1);
  EXPECT_FALSE((*stack)->io().submit_wait(c));
  EXPECT_EQ((*stack)->zone(0).wp_lba, 0u);  // queries still answer
}

TEST(Stack, CloseSavesTheImageAndAReopenedStackContinues) {
  TempDir dir;
  std::string path = dir.file("dev.img");
  auto created = Stack::create_image(path, *preset_config("small"), false);
  ASSERT_TRUE(created.ok()) << created.error();
  EXPECT_EQ(created->backing, "file");
  {
    auto stack = Stack::open(path);
    ASSERT_TRUE(stack.ok()) << stack.error();
    std::vector<uint8_t> data(8 * 4096, 0x5a);
    Command c = write_command(0, 8, data.data());
    ASSERT_TRUE((*stack)->io().submit_wait(c));
    ASSERT_EQ(c.status, Status::kSuccess);
    // The image is locked while the stack is open.
    EXPECT_FALSE(Stack::open(path).ok());
    ASSERT_TRUE((*stack)->close().ok());
  }
  auto stack = Stack::open(path);
  ASSERT_TRUE(stack.ok()) << stack.error();
  EXPECT_EQ((*stack)->zone(0).wp_lba, 8u);
  std::vector<uint8_t> back(8 * 4096, 0);
  Command r;
  r.opcode = Opcode::kRead;
  r.nlb = 8;
  r.data = back.data();
  ASSERT_TRUE((*stack)->io().submit_wait(r));
  EXPECT_EQ(back, std::vector<uint8_t>(8 * 4096, 0x5a));
}

// A device of 4 zones of 64 LBAs in an image of about 5 MiB, cheap to copy.
Config tiny_image_config() { return small_flash_config({"store.backing=file"}); }

// What a process killed now would leave: the image file as it is, copied
// while the stack still has it open.
std::string copy_of_open_image(const std::string& path, const std::string& copy) {
  std::filesystem::copy_file(path, copy, std::filesystem::copy_options::overwrite_existing);
  return copy;
}

TEST(StackImage, AnsweredCommandsAreInTheImageBeforeItIsClosed) {
  TempDir dir;
  std::string path = dir.file("dev.img");
  ASSERT_TRUE(Stack::create_image(path, tiny_image_config(), false).ok());
  auto stack = Stack::open(path);
  ASSERT_TRUE(stack.ok()) << stack.error();
  std::vector<uint8_t> data(16 * 4096);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 13);
  Command write = write_command(0, 16, data.data());
  ASSERT_TRUE((*stack)->io().submit_wait(write));
  Command reset;
  reset.opcode = Opcode::kZoneManagementSend;
  reset.action = ZoneAction::kReset;
  reset.slba = 0;
  ASSERT_TRUE((*stack)->io().submit_wait(reset));
  Command again = write_command(0, 8, data.data() + 8 * 4096);
  ASSERT_TRUE((*stack)->io().submit_wait(again));
  std::string killed = copy_of_open_image(path, dir.file("killed.img"));

  auto reopened = Stack::open(killed);
  ASSERT_TRUE(reopened.ok()) << reopened.error();
  EXPECT_EQ((*reopened)->replayed(), 3u);
  ASSERT_EQ((*reopened)->notes().size(), 1u);
  EXPECT_EQ((*reopened)->zone(0).wp_lba, 8u);
  std::vector<uint8_t> back(8 * 4096);
  Command read;
  read.opcode = Opcode::kRead;
  read.nlb = 8;
  read.data = back.data();
  ASSERT_TRUE((*reopened)->io().submit_wait(read));
  EXPECT_TRUE(std::equal(back.begin(), back.end(), data.begin() + 8 * 4096));
  // The replay was saved: the next open has nothing to replay.
  ASSERT_TRUE((*reopened)->close().ok());
  reopened = Error{"released"};
  auto third = Stack::open(killed);
  ASSERT_TRUE(third.ok());
  EXPECT_EQ((*third)->replayed(), 0u);
  EXPECT_EQ((*third)->zone(0).wp_lba, 8u);
}

TEST(StackImage, AReadOnlyOpenReplaysInMemoryAndWritesNothing) {
  TempDir dir;
  std::string path = dir.file("dev.img");
  ASSERT_TRUE(Stack::create_image(path, tiny_image_config(), false).ok());
  auto stack = Stack::open(path);
  Command write = write_command(0, 4);
  ASSERT_TRUE((*stack)->io().submit_wait(write));
  std::string killed = copy_of_open_image(path, dir.file("killed.img"));
  auto before = std::filesystem::last_write_time(killed);
  StackOptions read_only;
  read_only.read_only = true;
  auto reader = Stack::open(killed, read_only);
  ASSERT_TRUE(reader.ok()) << reader.error();
  EXPECT_EQ((*reader)->zone(0).wp_lba, 4u);
  Command more = write_command(4, 4);
  ASSERT_TRUE((*reader)->io().submit_wait(more));  // the device takes it in memory...
  ASSERT_TRUE((*reader)->close().ok());            // ...and nothing is saved
  reader = Error{"released"};
  EXPECT_EQ(std::filesystem::last_write_time(killed), before);
  auto writer = Stack::open(killed);
  ASSERT_TRUE(writer.ok());
  EXPECT_EQ((*writer)->zone(0).wp_lba, 4u);
}

TEST(StackImage, AFullJournalBecomesACheckpointAndNothingIsLost) {
  TempDir dir;
  std::string path = dir.file("dev.img");
  ASSERT_TRUE(Stack::create_image(path, tiny_image_config(), false).ok());
  auto stack = Stack::open(path);
  // Each record takes 46 bytes of the 4 MiB journal: more than 91 000
  // commands fill it at least once. A zone of 64 LBAs is written and reset
  // over and over; the last write leaves 25 LBAs in it.
  const uint64_t commands = 100'000;
  uint64_t wp = 0;
  for (uint64_t i = 0; i < commands; ++i) {
    Command c = write_command(wp, 1);
    if (wp == 64) {
      c.opcode = Opcode::kZoneManagementSend;
      c.action = ZoneAction::kReset;
      c.slba = 0;
      c.nlb = 0;
    }
    ASSERT_TRUE((*stack)->io().submit_wait(c));
    ASSERT_EQ(c.status, Status::kSuccess) << i;
    wp = wp == 64 ? 0 : wp + 1;
  }
  std::string killed = copy_of_open_image(path, dir.file("killed.img"));
  auto reopened = Stack::open(killed);
  ASSERT_TRUE(reopened.ok()) << reopened.error();
  EXPECT_GT((*reopened)->replayed(), 0u);
  EXPECT_LT((*reopened)->replayed(), commands);  // a checkpoint holds the rest
  EXPECT_EQ((*reopened)->zone(0).wp_lba, wp);
}

TEST(StackImage, AnImageWhoseHeaderDisagreesWithItsConfigurationIsRefused) {
  TempDir dir;
  std::string path = dir.file("dev.img");
  Config memory = *preset_config("small");
  memory.store.backing = "memory";  // an image with no data region...
  ASSERT_TRUE(Stack::create_image(path, memory, false).ok());
  // ...whose configuration then claims its data is in the file.
  auto image = Image::open(path);
  ASSERT_TRUE(image.ok());
  ImageState state = (*image)->state();
  state.config.store.backing = "file";
  ASSERT_TRUE((*image)->save(state).ok());
  image = Error{"closed"};
  auto bytes_before = std::filesystem::file_size(path);
  auto stack = Stack::open(path);
  ASSERT_FALSE(stack.ok());
  EXPECT_NE(stack.error().find("data region of 0 bytes"), std::string::npos) << stack.error();
  EXPECT_EQ(std::filesystem::file_size(path), bytes_before);
}

TEST(Stack, ACorruptStateIsRefusedWithoutACrash) {
  TempDir dir;
  EXPECT_FALSE(Stack::open(dir.file("missing.img")).ok());
  std::string path = dir.file("dev.img");
  ASSERT_TRUE(Stack::create_image(path, *preset_config("small"), false).ok());
  EXPECT_FALSE(Stack::create_image(path, *preset_config("small"), false).ok());  // exists
}

TEST(Stack, DeviceInfoOfAConfigurationMatchesTheBuiltDevice) {
  for (const std::string& preset : preset_names()) {
    for (const char* interface : {"zns", "block"}) {
      SCOPED_TRACE(preset + " " + interface);
      Config c = *preset_config(preset);
      c.interface = interface;
      c.store.backing = "none";
      auto info = device_info_of(c);
      if (!info.ok()) continue;  // a preset too large for the block interface
      const FlashConfig& f = c.flash;
      uint64_t pages = f.channels * f.dies_per_channel * f.planes_per_die * f.blocks_per_plane *
                       f.pages_per_block;
      if (c.interface == "block" && pages > (1u << 20)) continue;  // an FTL map: slow to build
      auto stack = Stack::make(c);
      ASSERT_TRUE(stack.ok()) << stack.error();
      const DeviceInfo& built = (*stack)->info();
      EXPECT_EQ(info->interface, built.interface);
      EXPECT_EQ(info->zone_count, built.zone_count);
      EXPECT_EQ(info->zone_size_lbas, built.zone_size_lbas);
      EXPECT_EQ(info->zone_capacity_lbas, built.zone_capacity_lbas);
      EXPECT_EQ(info->capacity_lbas, built.capacity_lbas);
      EXPECT_EQ(info->max_open, built.max_open);
      EXPECT_EQ(info->max_active, built.max_active);
      EXPECT_EQ(info->zasl_lbas, built.zasl_lbas);
    }
  }
}

// ---------------------------------------------------------------------------
// Real time (these run under ThreadSanitizer in `make tsan` too).

StackOptions realtime_options(Timing timing = Timing::kOff) {
  StackOptions options;
  options.realtime = true;
  options.realtime_options.timing = timing;
  options.realtime_options.spin_ns = 0;
  return options;
}

TEST(StackRealtime, ManyThreadsSubmitAndWait) {
  auto stack = Stack::make(small_config(), realtime_options());
  ASSERT_TRUE(stack.ok()) << stack.error();
  constexpr int kThreads = 4;
  constexpr int kWrites = 50;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      uint64_t start = static_cast<uint64_t>(t) * (*stack)->info().zone_size_lbas;
      for (int i = 0; i < kWrites; ++i) {
        Command c = write_command(start + static_cast<uint64_t>(i) * 2, 2);
        if (!(*stack)->io().submit_wait(c) || c.status != Status::kSuccess) ++failures;
        // Queries from the same threads, while others run commands.
        if ((*stack)->zone(static_cast<uint32_t>(t)).wp_lba < start + 2) ++failures;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ((*stack)->zone(static_cast<uint32_t>(t)).wp_lba,
              static_cast<uint64_t>(t) * (*stack)->info().zone_size_lbas + 2 * kWrites);
  }
  uint64_t commands = 0;
  (*stack)->inspect([&](const ModeledDevice& d) { commands = d.lifetime().commands; });
  EXPECT_EQ(commands, static_cast<uint64_t>(kThreads * kWrites));
  EXPECT_TRUE((*stack)->close().ok());
  Command late = write_command(0, 1);
  EXPECT_FALSE((*stack)->io().submit_wait(late));
}

TEST(StackRealtime, BatchesFromManyThreadsAllComplete) {
  // Each thread writes four zones at once, a batch at a time: every command
  // completes, in order within its zone.
  auto stack = Stack::make(small_config(), realtime_options());
  ASSERT_TRUE(stack.ok()) << stack.error();
  constexpr int kThreads = 3;
  constexpr int kRounds = 20;
  const uint64_t zone_lbas = (*stack)->info().zone_size_lbas;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRounds; ++r) {
        std::vector<Command> commands;
        for (int z = 0; z < 4; ++z) {
          uint64_t start = static_cast<uint64_t>(t * 4 + z) * zone_lbas;
          commands.push_back(write_command(start + static_cast<uint64_t>(r) * 2, 2));
        }
        std::vector<Command*> batch;
        for (Command& c : commands) batch.push_back(&c);
        if (!(*stack)->io().submit_all(batch)) ++failures;
        for (const Command& c : commands) {
          if (c.status != Status::kSuccess || c.sink != nullptr) ++failures;
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  for (uint32_t z = 0; z < kThreads * 4; ++z) {
    EXPECT_EQ((*stack)->zone(z).wp_lba, z * zone_lbas + 2 * kRounds) << z;
  }
  EXPECT_TRUE((*stack)->close().ok());
  Command late = write_command(0, 1);
  Command* batch[] = {&late};
  EXPECT_FALSE((*stack)->io().submit_all(batch));
}

TEST(StackVirtual, ABatchIsInFlightTogether) {
  // Four one-page writes to zones on different units (one unit a zone)
  // take about as long as one; in turn they would take four times as long.
  auto stack = Stack::make(
      small_config({"flash.channels=4", "flash.dies_per_channel=2", "zns.channels_per_zone=1"}));
  ASSERT_TRUE(stack.ok()) << stack.error();
  const uint64_t zone_lbas = (*stack)->info().zone_size_lbas;
  Command one = write_command(0, 4);
  ASSERT_TRUE((*stack)->io().submit_wait(one));
  std::vector<Command> commands;
  for (uint64_t z = 1; z <= 4; ++z) commands.push_back(write_command(z * zone_lbas, 4));
  std::vector<Command*> batch;
  for (Command& c : commands) batch.push_back(&c);
  const uint64_t start = (*stack)->sim().now_ns();
  ASSERT_TRUE((*stack)->io().submit_all(batch));
  const uint64_t took = (*stack)->sim().now_ns() - start;
  for (const Command& c : commands) EXPECT_EQ(c.status, Status::kSuccess);
  EXPECT_LT(took, 2 * one.latency_ns())
      << took << " ns for four, " << one.latency_ns() << " ns for one";
}

TEST(StackRealtime, ModeledTimingTakesTheModeledLatencyOnTheWallClock) {
  auto stack = Stack::make(small_config(), realtime_options(Timing::kModeled));
  ASSERT_TRUE(stack.ok());
  Command c = write_command(0, 4);  // a page program: 500 us
  auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE((*stack)->io().submit_wait(c));
  auto wall = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(c.status, Status::kSuccess);
  EXPECT_GE(wall, std::chrono::nanoseconds(c.latency_ns()));
}

TEST(StackRealtime, WallClockTimersRunOnTheirOwnThread) {
  auto stack = Stack::make(small_config(), realtime_options(Timing::kModeled));
  ASSERT_TRUE(stack.ok());
  std::atomic<int> ran{0};
  std::atomic<bool> command_ok{false};
  Clock& clock = (*stack)->clock();
  uint64_t before = clock.now_ns();
  std::atomic<uint64_t> at{0};
  clock.add_timer(2'000'000, [&] {
    at = clock.now_ns();
    // A timer may run commands.
    Command c = write_command(0, 1);
    command_ok = (*stack)->io().submit_wait(c) && c.status == Status::kSuccess;
    ++ran;
  });
  uint64_t never = clock.add_timer(1'000'000'000, [&] { ran += 100; });
  clock.cancel(never);
  for (int i = 0; i < 2000 && ran.load() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(ran.load(), 1);
  EXPECT_TRUE(command_ok.load());
  EXPECT_GE(at.load(), before + 2'000'000);
  EXPECT_TRUE((*stack)->close().ok());
}

TEST(StackReport, MeanBusyAveragesABusyArrayAndIsZeroWithoutOne) {
  EXPECT_DOUBLE_EQ(mean_busy(nlohmann::ordered_json::parse("[0.25, 0.5, 0.75, 0.5]")), 0.5);
  EXPECT_DOUBLE_EQ(mean_busy(nlohmann::ordered_json::parse("[]")), 0.0);
  EXPECT_DOUBLE_EQ(mean_busy(nlohmann::ordered_json()), 0.0);
  EXPECT_DOUBLE_EQ(mean_busy(nlohmann::ordered_json::parse("{\"die\": 1}")), 0.0);
}

}  // namespace
}  // namespace zonelab
