// The real-time driver: ordering, completeness, timing off, shutdown with
// commands in flight, concurrent submitters and the time scale. The machine
// is noisy, so no test asserts tight timing: only what the design guarantees
// (nothing is delivered before its modeled time) and generous upper bounds.
#include "sim/realtime.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace zonelab {
namespace {

using std::chrono::milliseconds;

constexpr uint64_t kUs = 1'000;
constexpr uint64_t kMs = 1'000'000;
constexpr uint64_t kS = 1'000'000'000;

// A device whose every command takes `slba` ns of virtual time (or the
// default latency when slba is 0) and succeeds.
class FakeDevice final : public Device, public EventHandler {
 public:
  FakeDevice(Simulator& sim, uint64_t latency_ns) : sim_(sim), latency_ns_(latency_ns) {
    info_.interface = "fake";
    info_.lba_size_bytes = 4096;
  }
  void submit(Command& command) override {
    command.submit_ns = sim_.now_ns();
    command.complete_ns = command.submit_ns + (command.slba != 0 ? command.slba : latency_ns_);
    sim_.schedule_at(command.complete_ns, this, reinterpret_cast<uint64_t>(&command));
  }
  void on_event(uint64_t tag) override {
    Command& command = *reinterpret_cast<Command*>(tag);
    command.status = Status::kSuccess;
    command.sink->on_complete(command);
  }
  const DeviceInfo& info() const override { return info_; }
  ZoneDescriptor zone(uint32_t) const override { return {}; }

 private:
  Simulator& sim_;
  uint64_t latency_ns_;
  DeviceInfo info_;
};

// Counts completions (any thread) and remembers their order.
class Collector final : public CompletionSink {
 public:
  void on_complete(Command& command) override {
    std::lock_guard lock(mutex_);
    order_.push_back(command.user_tag);
  }
  std::vector<uint64_t> order() const {
    std::lock_guard lock(mutex_);
    return order_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<uint64_t> order_;
};

struct Rig {
  explicit Rig(uint64_t latency_ns, RealtimeOptions options = {})
      : device(sim, latency_ns), driver(std::make_unique<RealtimeDriver>(device, sim, options)) {}
  Simulator sim;
  FakeDevice device;
  std::unique_ptr<RealtimeDriver> driver;
};

double wall_ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

TEST(RealtimeOptions, TimeScaleMustBePositiveAndFinite) {
  RealtimeOptions options;
  EXPECT_TRUE(check_realtime_options(options).ok());
  for (double bad : {0.0, -1.0, 1e-9, 1e9, std::nan("")}) {
    options.time_scale = bad;
    EXPECT_FALSE(check_realtime_options(options).ok()) << bad;
  }
  options.time_scale = 2.5;
  options.max_outstanding = 0;
  EXPECT_FALSE(check_realtime_options(options).ok());
  options.max_outstanding = 1;
  options.standby_threads = kMaxStandbyThreads;
  EXPECT_TRUE(check_realtime_options(options).ok());
  options.standby_threads = kMaxStandbyThreads + 1;
  EXPECT_FALSE(check_realtime_options(options).ok());
}

TEST(RealtimeOptions, TimingNamesRoundTrip) {
  EXPECT_EQ(timing_from_name("modeled"), Timing::kModeled);
  EXPECT_EQ(timing_from_name("off"), Timing::kOff);
  EXPECT_EQ(timing_from_name("on"), std::nullopt);
  EXPECT_EQ(timing_name(Timing::kOff), "off");
}

TEST(RealtimeDriver, ClockMappingFollowsTheTimeScale) {
  Simulator sim;
  FakeDevice device(sim, kUs);
  RealtimeOptions options;
  options.time_scale = 4.0;
  RealtimeDriver driver(device, sim, options);
  int64_t origin = driver.wall_of(0);
  EXPECT_EQ(driver.wall_of(1000) - origin, 4000);
  EXPECT_EQ(driver.virtual_of(origin + 4000), 1000u);
  EXPECT_EQ(driver.virtual_of(origin - 5), 0u);  // before the origin: the origin
}

// The tests below run with the main loop thread alone and with standby loop
// threads (which share the device under its lock).
class RealtimeLoops : public ::testing::TestWithParam<uint32_t> {
 protected:
  static RealtimeOptions loops() {
    RealtimeOptions options;
    options.standby_threads = GetParam();
    return options;
  }
};

INSTANTIATE_TEST_SUITE_P(Realtime, RealtimeLoops, ::testing::Values(0u, 1u, 3u),
                         [](const auto& param_info) {
                           return "standby" + std::to_string(param_info.param);
                         });

TEST_P(RealtimeLoops, SyncCommandWaitsAtLeastItsModeledLatency) {
  Rig rig(2 * kMs, loops());
  rig.driver->start();
  Command command;
  auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(rig.driver->submit_sync(command));
  double waited_ms = wall_ms_since(start);
  EXPECT_EQ(command.status, Status::kSuccess);
  EXPECT_EQ(command.latency_ns(), 2 * kMs);
  EXPECT_GE(waited_ms, 2.0);  // never delivered early
  EXPECT_LT(waited_ms, 1000.0);
  RealtimeStats stats = rig.driver->stats();
  EXPECT_EQ(stats.completions, 1u);
  EXPECT_EQ(stats.completion_error_ns.count(), 1u);
}

TEST_P(RealtimeLoops, AsyncCompletionsArriveInModeledOrder) {
  Rig rig(kMs, loops());
  rig.driver->start();
  Collector sink;
  std::vector<Command> commands(3);
  const uint64_t latency_ms[] = {30, 10, 20};
  for (size_t i = 0; i < commands.size(); ++i) {
    commands[i].slba = latency_ms[i] * kMs;
    commands[i].sink = &sink;
    commands[i].user_tag = i;
    ASSERT_TRUE(rig.driver->submit_async(commands[i]));
  }
  rig.driver->wait_idle();
  EXPECT_EQ(sink.order(), (std::vector<uint64_t>{1, 2, 0}));
  for (const Command& c : commands) EXPECT_EQ(c.sink, &sink);  // the caller's sink is back
}

TEST_P(RealtimeLoops, CommandsEnterAtTheVirtualTimeOfTheirArrival) {
  Rig rig(10 * kUs, loops());
  rig.driver->start();
  Command first;
  ASSERT_TRUE(rig.driver->submit_sync(first));
  std::this_thread::sleep_for(milliseconds(5));
  Command second;
  ASSERT_TRUE(rig.driver->submit_sync(second));
  // The second arrived at least 5 ms of wall (= virtual) time later.
  EXPECT_GE(second.submit_ns, first.submit_ns + 5 * kMs);
  EXPECT_EQ(second.latency_ns(), 10 * kUs);
}

TEST_P(RealtimeLoops, TimingOffCompletesAtOnce) {
  RealtimeOptions options = loops();
  options.timing = Timing::kOff;
  Rig rig(10 * kS, options);  // ten virtual seconds a command
  rig.driver->start();
  // Each command takes less wall time than the ten seconds it models --
  // by far, but a loaded machine may stretch it, so that is all that is
  // asserted.
  for (int i = 0; i < 100; ++i) {
    auto start = std::chrono::steady_clock::now();
    Command command;
    ASSERT_TRUE(rig.driver->submit_sync(command));
    EXPECT_EQ(command.latency_ns(), 10 * kS);
    EXPECT_LT(wall_ms_since(start), 10'000.0);
  }
  RealtimeStats stats = rig.driver->stats();
  EXPECT_EQ(stats.completions, 100u);
  EXPECT_EQ(stats.turnaround_ns.count(), 100u);
  EXPECT_EQ(stats.completion_error_ns.count(), 0u);  // no modeled wall time to miss
}

TEST_P(RealtimeLoops, ManyThreadsSubmitConcurrently) {
  Rig rig(20 * kUs, loops());
  rig.driver->start();
  constexpr int kThreads = 8;
  constexpr int kEach = 100;
  Collector sink;
  std::vector<std::vector<Command>> async(kThreads, std::vector<Command>(kEach));
  std::vector<std::thread> threads;
  std::vector<int> sync_ok(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        Command& a = async[t][i];
        a.sink = &sink;
        a.user_tag = static_cast<uint64_t>(t * kEach + i);
        EXPECT_TRUE(rig.driver->submit_async(a));
        Command s;
        if (rig.driver->submit_sync(s) && s.status == Status::kSuccess &&
            s.latency_ns() == 20 * kUs) {
          ++sync_ok[t];
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  rig.driver->wait_idle();
  std::vector<uint64_t> order = sink.order();
  std::sort(order.begin(), order.end());
  ASSERT_EQ(order.size(), static_cast<size_t>(kThreads * kEach));
  for (size_t i = 0; i < order.size(); ++i) EXPECT_EQ(order[i], i);  // each exactly once
  for (int ok : sync_ok) EXPECT_EQ(ok, kEach);
  RealtimeStats stats = rig.driver->stats();
  EXPECT_EQ(stats.completions, 2u * kThreads * kEach);
  EXPECT_EQ(stats.completion_error_ns.count(), 2u * kThreads * kEach);
  EXPECT_EQ(stats.refused, 0u);
}

TEST_P(RealtimeLoops, StopCompletesCommandsInFlightAndReleasesWaiters) {
  Rig rig(3600 * kS, loops());  // an hour each: only stop() can finish them
  rig.driver->start();
  Collector sink;
  std::vector<Command> async(50);
  for (size_t i = 0; i < async.size(); ++i) {
    async[i].sink = &sink;
    async[i].user_tag = i;
    ASSERT_TRUE(rig.driver->submit_async(async[i]));
  }
  std::vector<Command> sync(3);
  std::vector<std::thread> waiters;
  std::vector<int> released(sync.size(), 0);
  for (size_t i = 0; i < sync.size(); ++i) {
    waiters.emplace_back([&, i] { released[i] = rig.driver->submit_sync(sync[i]) ? 1 : 2; });
  }
  std::this_thread::sleep_for(milliseconds(20));  // let the waiters submit (or not)
  auto start = std::chrono::steady_clock::now();
  rig.driver->stop();
  EXPECT_LT(wall_ms_since(start), 60'000.0);  // an hour each unless stop() ends them
  for (auto& w : waiters) w.join();
  EXPECT_EQ(sink.order().size(), async.size());
  uint64_t accepted_sync = 0;
  for (size_t i = 0; i < sync.size(); ++i) {
    ASSERT_NE(released[i], 0);
    if (released[i] == 1) {
      ++accepted_sync;
      EXPECT_EQ(sync[i].status, Status::kSuccess);
      EXPECT_EQ(sync[i].latency_ns(), 3600 * kS);  // the modeled result, delivered early
    }
  }
  for (const Command& c : async) EXPECT_EQ(c.latency_ns(), 3600 * kS);
  RealtimeStats stats = rig.driver->stats();
  EXPECT_EQ(stats.drained, async.size() + accepted_sync);
  EXPECT_EQ(stats.completions, 0u);
  EXPECT_EQ(stats.refused, sync.size() - accepted_sync);
  // After stop nothing is accepted; a second stop is harmless.
  Command late;
  late.sink = &sink;
  EXPECT_FALSE(rig.driver->submit_async(late));
  EXPECT_FALSE(rig.driver->submit_sync(late));
  rig.driver->stop();
}

TEST_P(RealtimeLoops, DestructorStopsWithCommandsInFlight) {
  Collector sink;
  std::vector<Command> commands(10);
  {
    Rig rig(3600 * kS, loops());
    rig.driver->start();
    for (auto& c : commands) {
      c.sink = &sink;
      ASSERT_TRUE(rig.driver->submit_async(c));
    }
  }
  EXPECT_EQ(sink.order().size(), commands.size());
}

TEST(RealtimeDriver, StopWithoutADeviceThreadCompletesOnTheCaller) {
  RealtimeOptions options;
  options.max_outstanding = 2;
  Rig rig(kMs, options);
  Collector sink;
  std::vector<Command> commands(3);
  for (auto& c : commands) c.sink = &sink;
  EXPECT_TRUE(rig.driver->submit_async(commands[0]));
  EXPECT_TRUE(rig.driver->submit_async(commands[1]));
  EXPECT_FALSE(rig.driver->submit_async(commands[2]));  // full
  rig.driver->stop();
  EXPECT_EQ(sink.order().size(), 2u);
  EXPECT_EQ(rig.driver->stats().refused, 1u);
  EXPECT_EQ(rig.driver->stats().drained, 2u);
}

// A chain: each completion submits the next command from the device thread,
// as the job engine does inside run_until_idle.
class Chain final : public CompletionSink {
 public:
  Chain(RealtimeDriver& driver, int length) : driver_(driver), left_(length) {
    command_.sink = this;
  }
  void start() { driver_.device().submit(command_); }
  void on_complete(Command& command) override {
    EXPECT_EQ(&command, &command_);
    ++done_;
    if (--left_ > 0) driver_.device().submit(command_);
  }
  int done() const { return done_; }

 private:
  RealtimeDriver& driver_;
  Command command_;
  int left_;
  int done_ = 0;
};

TEST(RealtimeDriver, RunUntilIdleRunsTheLoopOnTheCaller) {
  Rig rig(100 * kUs);
  Chain chain(*rig.driver, 20);
  chain.start();
  auto start = std::chrono::steady_clock::now();
  rig.driver->run_until_idle();
  EXPECT_EQ(chain.done(), 20);
  EXPECT_GE(rig.sim.now_ns(), 20 * 100 * kUs);
  EXPECT_GE(wall_ms_since(start), 2.0);  // 20 x 100 us, never early
  EXPECT_EQ(rig.driver->stats().completion_error_ns.count(), 20u);
  // The loop can run again for the next piece of work.
  Chain more(*rig.driver, 3);
  more.start();
  rig.driver->run_until_idle();
  EXPECT_EQ(more.done(), 3);
}

TEST(RealtimeDriver, TimeScaleStretchesAndShrinksWallTime) {
  {
    RealtimeOptions options;
    options.time_scale = 20.0;  // twenty times slower than the model
    Rig rig(kMs, options);
    rig.driver->start();
    Command command;
    auto start = std::chrono::steady_clock::now();
    ASSERT_TRUE(rig.driver->submit_sync(command));
    double waited_ms = wall_ms_since(start);
    EXPECT_GE(waited_ms, 20.0);
    EXPECT_LT(waited_ms, 1000.0);
    EXPECT_EQ(command.latency_ns(), kMs);  // the model's latency does not change
  }
  {
    RealtimeOptions options;
    options.time_scale = 0.01;  // a hundred times faster
    Rig rig(5 * kS, options);
    rig.driver->start();
    Command command;
    auto start = std::chrono::steady_clock::now();
    ASSERT_TRUE(rig.driver->submit_sync(command));
    double waited_ms = wall_ms_since(start);
    EXPECT_GE(waited_ms, 50.0);
    EXPECT_LT(waited_ms, 2500.0);  // 50 ms; at most half the 5 s it models, even when loaded
  }
}

}  // namespace
}  // namespace zonelab
