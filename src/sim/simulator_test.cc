// Event ordering of the discrete-event kernel.
#include "sim/simulator.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace zonelab
