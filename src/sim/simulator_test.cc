// Event ordering of the discrete-event kernel.
#include "sim/simulator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <utility>
#include <vector>

namespace zonelab {
namespace {

class Recorder : public EventHandler {
 public:
  explicit Recorder(Simulator& sim) : sim_(sim) {}
  void on_event(uint64_t tag) override { seen.push_back({sim_.now_ns(), tag}); }
  std::vector<std::pair<uint64_t, uint64_t>> seen;

 private:
  Simulator& sim_;
};

TEST(Simulator, RunsEventsInTimeOrder) {
  Simulator sim;
  Recorder r(sim);
  sim.schedule_at(30, &r, 3);
  sim.schedule_at(10, &r, 1);
  sim.schedule_at(20, &r, 2);
  sim.run();
  ASSERT_EQ(r.seen.size(), 3u);
  EXPECT_EQ(r.seen[0], (std::pair<uint64_t, uint64_t>{10, 1}));
  EXPECT_EQ(r.seen[1], (std::pair<uint64_t, uint64_t>{20, 2}));
  EXPECT_EQ(r.seen[2], (std::pair<uint64_t, uint64_t>{30, 3}));
  EXPECT_EQ(sim.now_ns(), 30u);
}

TEST(Simulator, BreaksTiesBySchedulingOrder) {
  Simulator sim;
  Recorder r(sim);
  for (uint64_t tag = 0; tag < 100; ++tag) sim.schedule_at(5, &r, tag);
  sim.run();
  ASSERT_EQ(r.seen.size(), 100u);
  for (uint64_t tag = 0; tag < 100; ++tag) EXPECT_EQ(r.seen[tag].second, tag);
}

TEST(Simulator, RunUntilStopsAtTheLimit) {
  Simulator sim;
  Recorder r(sim);
  sim.schedule_at(10, &r, 1);
  sim.schedule_at(50, &r, 2);
  sim.run_until(20);
  EXPECT_EQ(r.seen.size(), 1u);
  EXPECT_EQ(sim.pending(), 1u);
  sim.run();
  EXPECT_EQ(r.seen.size(), 2u);
}

TEST(Simulator, ScheduleAfterIsRelativeToNow) {
  Simulator sim;
  Recorder r(sim);
  sim.advance_to(100);
  sim.schedule_after(5, &r, 7);
  sim.run();
  EXPECT_EQ(r.seen[0].first, 105u);
}

// Each event schedules 0, 1 or 2 more at pseudo-random later times (fixed
// seed): the run order must be the (time, scheduling order) order of every
// event scheduled, whichever way the handlers refill the heap.
class Spawner : public EventHandler {
 public:
  explicit Spawner(Simulator& sim) : sim_(sim) {}
  void on_event(uint64_t tag) override {
    ran.push_back(tag);
    for (uint64_t k = next() % 3; k > 0 && scheduled.size() < 5000; --k) add(next() % 50);
  }
  void add(uint64_t delay_ns) {
    uint64_t tag = scheduled.size();
    scheduled.push_back({sim_.now_ns() + delay_ns, tag});
    sim_.schedule_after(delay_ns, this, tag);
  }
  uint64_t next() {
    state_ = state_ * 6364136223846793005ULL + 1442695040888963407ULL;
    return state_ >> 33;
  }
  std::vector<std::pair<uint64_t, uint64_t>> scheduled;  // (time, tag); tag = order
  std::vector<uint64_t> ran;

 private:
  Simulator& sim_;
  uint64_t state_ = 7;
};

TEST(Simulator, RunsInTimeThenSchedulingOrderWhenHandlersSchedule) {
  Simulator sim;
  Spawner s(sim);
  for (int i = 0; i < 40; ++i) s.add(s.next() % 20);
  sim.run();
  std::vector<std::pair<uint64_t, uint64_t>> expected = s.scheduled;
  std::sort(expected.begin(), expected.end());
  ASSERT_EQ(s.ran.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(s.ran[i], expected[i].second) << i;
  EXPECT_EQ(sim.events_run(), expected.size());
}

// What a handler sees of the queue while its own event runs.
class Peeker : public EventHandler {
 public:
  explicit Peeker(Simulator& sim) : sim_(sim) {}
  void on_event(uint64_t tag) override {
    if (tag != 0) return;
    pending = sim_.pending();
    next_ns = sim_.next_time_ns();
    sim_.schedule_at(15, this, 1);
    pending_after = sim_.pending();
    next_after_ns = sim_.next_time_ns();
  }
  size_t pending = 0;
  size_t pending_after = 0;
  uint64_t next_ns = 0;
  uint64_t next_after_ns = 0;

 private:
  Simulator& sim_;
};

TEST(Simulator, AHandlerSeesThePendingEventsWithoutItsOwn) {
  Simulator sim;
  Peeker p(sim);
  sim.schedule_at(10, &p, 0);
  sim.schedule_at(30, &p, 2);
  sim.schedule_at(20, &p, 3);
  sim.step();
  EXPECT_EQ(p.pending, 2u);
  EXPECT_EQ(p.next_ns, 20u);
  EXPECT_EQ(p.pending_after, 3u);
  EXPECT_EQ(p.next_after_ns, 15u);
  EXPECT_EQ(sim.pending(), 3u);
  EXPECT_EQ(sim.next_time_ns(), 15u);
}

// A blocking caller inside a handler runs the simulation itself.
class Nester : public EventHandler {
 public:
  explicit Nester(Simulator& sim) : sim_(sim) {}
  void on_event(uint64_t tag) override {
    ran.push_back(tag);
    if (tag == 0) {
      sim_.schedule_after(1, this, 10);
      while (ran.back() != 10) ASSERT_TRUE(sim_.step());
    }
  }
  std::vector<uint64_t> ran;

 private:
  Simulator& sim_;
};

TEST(Simulator, AStepFromInsideAHandlerRunsTheNextEvents) {
  Simulator sim;
  Nester n(sim);
  sim.schedule_at(5, &n, 0);
  sim.schedule_at(5, &n, 1);
  sim.schedule_at(100, &n, 2);
  sim.run();
  EXPECT_EQ(n.ran, (std::vector<uint64_t>{0, 1, 10, 2}));
  EXPECT_TRUE(sim.empty());
}

}  // namespace
}  // namespace zonelab
