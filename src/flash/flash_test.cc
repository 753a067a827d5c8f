// Timing rules of the flash array: read = tR on the plane then the data over
// the channel; program = the page over the channel then tPROG on the plane;
// erase = tBERS on the plane. Planes work independently, a channel carries
// one transfer at a time, and every resource serves work first come, first
// served. Expected times are built from the configured latencies.
#include "flash/flash.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "zonelab/config.h"

namespace zonelab {
namespace {

// 2 channels x 2 dies x 2 planes x 4 blocks; the latencies are the preset's
// but the tests only use them by name.
FlashConfig test_flash() {
  FlashConfig f = default_config().flash;
  f.channels = 2;
  f.dies_per_channel = 2;
  f.planes_per_die = 2;
  f.blocks_per_plane = 4;
  f.pages_per_block = 8;
  return f;
}

class FlashTest : public testing::Test {
 protected:
  FlashConfig config_ = test_flash();
  Flash flash_{config_};
  const uint64_t tr_ = config_.read_latency_ns;
  const uint64_t tprog_ = config_.program_latency_ns;
  const uint64_t tbers_ = config_.erase_latency_ns;
  const uint64_t xfer_ = config_.transfer_latency_ns;
  const uint64_t page_ = config_.page_size_bytes;

  uint32_t plane(uint32_t channel, uint32_t die, uint32_t p) const {
    return flash_.plane_index(channel, die, p);
  }
};

TEST_F(FlashTest, TheConfiguredLatenciesAreOrderedAsNandIs) {
  // The other cases rely on a transfer being shorter than any array operation.
  EXPECT_GT(xfer_, 0u);
  EXPECT_LT(xfer_, tr_);
  EXPECT_LT(tr_, tprog_);
  EXPECT_LT(tprog_, tbers_);
}

TEST_F(FlashTest, GeometryAndFlatIndices) {
  EXPECT_EQ(flash_.channels(), 2u);
  EXPECT_EQ(flash_.dies(), 4u);
  EXPECT_EQ(flash_.planes(), 8u);
  EXPECT_EQ(flash_.blocks_per_plane(), 4u);
  EXPECT_EQ(flash_.page_size_bytes(), page_);
  for (uint32_t c = 0; c < 2; ++c) {
    for (uint32_t d = 0; d < 2; ++d) {
      for (uint32_t p = 0; p < 2; ++p) {
        uint32_t flat = plane(c, d, p);
        EXPECT_EQ(flat, (c * 2 + d) * 2 + p);
        EXPECT_EQ(flash_.channel_of_plane(flat), c);
        EXPECT_EQ(flash_.die_of_plane(flat), c * 2 + d);
      }
    }
  }
}

TEST_F(FlashTest, ReadIsSenseThenTransfer) {
  EXPECT_EQ(flash_.read(plane(0, 0, 0), 0, page_), tr_ + xfer_);
}

TEST_F(FlashTest, APartialPageReadTransfersItsShareRoundedUp) {
  EXPECT_EQ(flash_.read(plane(0, 0, 0), 0, page_ / 4), tr_ + (xfer_ + 3) / 4);
  EXPECT_EQ(flash_.read(plane(1, 0, 0), 0, 1), tr_ + (xfer_ + page_ - 1) / page_);
}

TEST_F(FlashTest, ProgramIsTransferThenProgram) {
  EXPECT_EQ(flash_.program(plane(0, 0, 0), 0, FlashCause::kHost), xfer_ + tprog_);
}

TEST_F(FlashTest, CopybackOccupiesThePlaneButNotTheChannel) {
  uint32_t p = plane(0, 0, 0);
  uint64_t sensed = flash_.copyback_read(p, 0);
  EXPECT_EQ(sensed, tr_);
  EXPECT_EQ(flash_.copyback_program(p, sensed, FlashCause::kGc), tr_ + tprog_);
  EXPECT_EQ(flash_.plane_free_at_ns(p), tr_ + tprog_);
  EXPECT_EQ(flash_.channel_busy_ns(0), 0u);
  // A host program on another plane of the channel does not wait for it.
  EXPECT_EQ(flash_.program(plane(0, 0, 1), 0, FlashCause::kHost), xfer_ + tprog_);
  EXPECT_EQ(flash_.counters().program_pages[static_cast<size_t>(FlashCause::kGc)], 1u);
  EXPECT_EQ(flash_.counters().read_pages, 1u);
}

TEST_F(FlashTest, EraseIsTheEraseLatencyOnThePlane) {
  EXPECT_EQ(flash_.erase(plane(0, 0, 0), 2, 0, FlashCause::kReset), tbers_);
}

TEST_F(FlashTest, WorkStartsNoEarlierThanItIsReady) {
  const uint64_t ready = 1'000'000;
  EXPECT_EQ(flash_.read(plane(0, 0, 0), ready, page_), ready + tr_ + xfer_);
  EXPECT_EQ(flash_.program(plane(1, 0, 0), ready, FlashCause::kHost), ready + xfer_ + tprog_);
  EXPECT_EQ(flash_.erase(plane(1, 1, 1), 0, ready, FlashCause::kReset), ready + tbers_);
}

TEST_F(FlashTest, OperationsOnOnePlaneRunOneAfterAnother) {
  uint32_t p = plane(0, 0, 0);
  uint64_t first = flash_.program(p, 0, FlashCause::kHost);
  // The second page crosses the channel while the first programs, then waits.
  EXPECT_EQ(flash_.program(p, 0, FlashCause::kHost), first + tprog_);
  EXPECT_EQ(flash_.erase(p, 0, 0, FlashCause::kReset), first + tprog_ + tbers_);
  EXPECT_EQ(flash_.read(p, 0, page_), first + tprog_ + tbers_ + tr_ + xfer_);
}

TEST_F(FlashTest, PlanesOfOneDieWorkInParallelButShareTheChannel) {
  uint64_t a = flash_.program(plane(0, 0, 0), 0, FlashCause::kHost);
  uint64_t b = flash_.program(plane(0, 0, 1), 0, FlashCause::kHost);
  EXPECT_EQ(a, xfer_ + tprog_);
  EXPECT_EQ(b, 2 * xfer_ + tprog_);  // only the transfer waited
}

TEST_F(FlashTest, DiesOfOneChannelShareOnlyTheChannel) {
  uint64_t a = flash_.program(plane(0, 0, 0), 0, FlashCause::kHost);
  uint64_t b = flash_.program(plane(0, 1, 0), 0, FlashCause::kHost);
  EXPECT_EQ(b, a + xfer_);
}

TEST_F(FlashTest, DifferentChannelsDoNotDelayEachOther) {
  uint64_t a = flash_.program(plane(0, 0, 0), 0, FlashCause::kHost);
  uint64_t b = flash_.program(plane(1, 0, 0), 0, FlashCause::kHost);
  EXPECT_EQ(a, b);
  // A read on the busy channel senses first, so the transfer finds it free.
  EXPECT_EQ(flash_.read(plane(0, 1, 0), 0, page_), tr_ + xfer_);
}

TEST_F(FlashTest, ReadsSenseInParallelAndQueueOnTheChannel) {
  uint64_t a = flash_.read(plane(0, 0, 0), 0, page_);
  uint64_t b = flash_.read(plane(0, 0, 1), 0, page_);
  uint64_t c = flash_.read(plane(0, 1, 0), 0, page_);
  EXPECT_EQ(a, tr_ + xfer_);
  EXPECT_EQ(b, tr_ + 2 * xfer_);
  EXPECT_EQ(c, tr_ + 3 * xfer_);
}

TEST_F(FlashTest, EraseDoesNotUseTheChannel) {
  uint64_t erase = flash_.erase(plane(0, 0, 0), 0, 0, FlashCause::kReset);
  uint64_t read = flash_.read(plane(0, 0, 1), 0, page_);  // same channel, other plane
  EXPECT_EQ(erase, tbers_);
  EXPECT_EQ(read, tr_ + xfer_);
}

TEST_F(FlashTest, WorkIsServedInReservationOrderWithoutBackfilling) {
  uint32_t p = plane(1, 1, 0);
  const uint64_t late = 10 * tbers_;
  EXPECT_EQ(flash_.erase(p, 0, late, FlashCause::kReset), late + tbers_);
  // Ready long before, but reserved after: it may not use the idle gap.
  EXPECT_EQ(flash_.erase(p, 1, 0, FlashCause::kReset), late + 2 * tbers_);
}

TEST_F(FlashTest, EveryEraseCountsOnItsBlock) {
  uint32_t p = plane(1, 0, 1);
  flash_.erase(p, 3, 0, FlashCause::kReset);
  flash_.erase(p, 3, 0, FlashCause::kReset);
  flash_.erase(p, 1, 0, FlashCause::kGc);
  EXPECT_EQ(flash_.erase_count(p, 3), 2u);
  EXPECT_EQ(flash_.erase_count(p, 1), 1u);
  EXPECT_EQ(flash_.erase_count(p, 0), 0u);
  EXPECT_EQ(flash_.erase_count(plane(1, 0, 0), 3), 0u);
  EXPECT_EQ(flash_.erase_counts().size(), 8u * 4u);
}

TEST_F(FlashTest, OperationsAreCountedByCause) {
  flash_.program(plane(0, 0, 0), 0, FlashCause::kHost);
  flash_.program(plane(0, 0, 0), 0, FlashCause::kHost);
  flash_.program(plane(0, 0, 1), 0, FlashCause::kFinish);
  flash_.erase(plane(0, 0, 0), 0, 0, FlashCause::kReset);
  flash_.read(plane(0, 0, 0), 0, page_);
  flash_.read(plane(0, 0, 0), 0, page_ / 2);
  const FlashCounters& n = flash_.counters();
  EXPECT_EQ(n.program_pages[static_cast<size_t>(FlashCause::kHost)], 2u);
  EXPECT_EQ(n.program_pages[static_cast<size_t>(FlashCause::kFinish)], 1u);
  EXPECT_EQ(n.program_pages[static_cast<size_t>(FlashCause::kGc)], 0u);
  EXPECT_EQ(n.erases[static_cast<size_t>(FlashCause::kReset)], 1u);
  EXPECT_EQ(n.read_pages, 2u);
  EXPECT_EQ(n.read_bytes, page_ + page_ / 2);
}

TEST_F(FlashTest, BusyTimesOfChannelsAndDies) {
  flash_.program(plane(0, 0, 0), 0, FlashCause::kHost);
  flash_.program(plane(0, 0, 1), 0, FlashCause::kHost);  // overlaps the first on the die
  flash_.read(plane(1, 0, 0), 0, page_);
  EXPECT_EQ(flash_.channel_busy_ns(0), 2 * xfer_);
  EXPECT_EQ(flash_.channel_busy_ns(1), xfer_);
  // The die is busy while either plane programs: [x, x+tPROG] u [2x, 2x+tPROG].
  EXPECT_EQ(flash_.die_busy_ns(0), tprog_ + xfer_);
  EXPECT_EQ(flash_.die_busy_ns(2), tr_);
  EXPECT_EQ(flash_.die_busy_ns(1), 0u);
}

TEST_F(FlashTest, DrainedAtIsTheLatestBusyResource) {
  EXPECT_EQ(flash_.drained_at_ns(), 0u);
  flash_.program(plane(0, 0, 0), 0, FlashCause::kHost);
  uint64_t erase_end = flash_.erase(plane(1, 1, 1), 0, 5, FlashCause::kReset);
  EXPECT_EQ(flash_.drained_at_ns(), std::max(erase_end, xfer_ + tprog_));
}

TEST_F(FlashTest, ResetStatsClearsCountersAndBusyTimesButNotWearOrTime) {
  uint32_t p = plane(0, 0, 0);
  uint64_t end = flash_.erase(p, 2, 0, FlashCause::kReset);
  flash_.program(p, 0, FlashCause::kHost);
  flash_.reset_stats();
  EXPECT_EQ(flash_.counters().erases[static_cast<size_t>(FlashCause::kReset)], 0u);
  EXPECT_EQ(flash_.counters().program_pages[static_cast<size_t>(FlashCause::kHost)], 0u);
  EXPECT_EQ(flash_.channel_busy_ns(0), 0u);
  EXPECT_EQ(flash_.die_busy_ns(0), 0u);
  EXPECT_EQ(flash_.erase_count(p, 2), 1u);  // wear survives
  // The plane is still busy with the program reserved before the reset.
  EXPECT_EQ(flash_.erase(p, 1, 0, FlashCause::kReset), end + tprog_ + tbers_);
}

TEST(Timeline, ReservesFromTheLaterOfReadyAndFree) {
  Timeline t;
  EXPECT_EQ(t.reserve(100, 10), 110u);
  EXPECT_EQ(t.reserve(50, 10), 120u);   // waits for the resource
  EXPECT_EQ(t.reserve(500, 10), 510u);  // idle until ready
  EXPECT_EQ(t.busy_ns(), 30u);
  EXPECT_EQ(t.free_at_ns(), 510u);
}

TEST_F(FlashTest, WithBackfillAReadTakesTheChannelBeforeTransfersBookedForLater) {
  FlashConfig c = config_;
  c.channel_backfill = 1;
  Flash f(c);
  // A program whose data arrives late books channel 0 from then on.
  const uint64_t later = 100 * xfer_;
  EXPECT_EQ(f.program(plane(0, 0, 0), later, FlashCause::kHost), later + xfer_ + tprog_);
  // A read of the other die of channel 0, sensed long before: the idle
  // channel takes its transfer (without back-filling it waits until later).
  EXPECT_EQ(f.read(plane(0, 1, 0), 0, page_), tr_ + xfer_);
  EXPECT_EQ(flash_.program(plane(0, 0, 0), later, FlashCause::kHost), later + xfer_ + tprog_);
  EXPECT_EQ(flash_.read(plane(0, 1, 0), 0, page_), later + 2 * xfer_);
  // Neither takes back a gap too short for it, nor the plane's time.
  EXPECT_EQ(f.read(plane(0, 1, 1), later - xfer_ - tr_ + 1, page_), later + 2 * xfer_);
  EXPECT_EQ(f.channel_busy_ns(0), 3 * xfer_);
}

TEST(ChannelTimeline, WithoutBackfillItIsATimeline) {
  ChannelTimeline c;
  Timeline t;
  uint64_t x = 12345;
  for (int i = 0; i < 10000; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    const uint64_t ready = (x >> 33) % 100000;
    const uint64_t duration = (x >> 20) % 500;
    ASSERT_EQ(c.reserve(ready, duration), t.reserve(ready, duration)) << i;
  }
  EXPECT_EQ(c.free_at_ns(), t.free_at_ns());
  EXPECT_EQ(c.busy_ns(), t.busy_ns());
}

// Back-filling against first fit over every interval ever booked: while no
// more intervals than it keeps lie ahead of the present, the channel puts
// work exactly where first fit does.
TEST(ChannelTimeline, BackfillIsFirstFitOverEverythingBooked) {
  ChannelTimeline c(true);
  std::vector<std::pair<uint64_t, uint64_t>> all;  // sorted by start
  uint64_t x = 777;
  uint64_t now = 0;
  int backfilled = 0;
  for (int i = 0; i < 20000; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    now += (x >> 40) % 50;
    // Work ready now, or booked for later (a write's data on its way).
    const uint64_t ready = now + ((x >> 13) % 4 == 0 ? (x >> 20) % 1000 : 0);
    const uint64_t duration = 1 + (x >> 30) % 40;
    size_t ahead = 0;
    for (const auto& b : all) ahead += b.second > now ? 1 : 0;
    ASSERT_LE(ahead, 32u) << i << ": the test left the regime it checks";
    uint64_t start = ready;
    for (const auto& [from, to] : all) {
      if (to <= start) continue;
      if (start + duration <= from) break;
      start = to;
    }
    ASSERT_EQ(c.reserve(ready, duration), start + duration) << i;
    if (!all.empty() && start < all.back().first) ++backfilled;
    all.insert(std::upper_bound(all.begin(), all.end(), std::make_pair(start, start + duration)),
               {start, start + duration});
  }
  EXPECT_GT(backfilled, 1000);
  EXPECT_EQ(c.free_at_ns(), all.back().second);
}

TEST(ChannelTimeline, WorkThatTakesNoTimeBooksNothing) {
  ChannelTimeline c(true);
  EXPECT_EQ(c.reserve(1000, 10), 1010u);
  // Many bookings of no time (a channel with no transfer time) leave the
  // gap before the booking above open.
  for (int i = 0; i < 100; ++i) EXPECT_EQ(c.reserve(2000 + i, 0), 2000u + i);
  EXPECT_EQ(c.reserve(0, 10), 10u);
  EXPECT_EQ(c.free_at_ns(), 1010u);
}

TEST(UnionBusy, CountsOverlapOnce) {
  UnionBusy u;
  u.add(0, 10);
  u.add(5, 15);   // overlaps by 5
  u.add(20, 30);  // disjoint
  u.add(22, 25);  // inside
  EXPECT_EQ(u.busy_ns(), 15u + 10u);
}

}  // namespace
}  // namespace zonelab
