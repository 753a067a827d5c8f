// The page-mapped FTL on its own: the mapping against a reference map under
// random overwrite and trim, GC that never loses a live LBA, and write
// amplification 1.0 for sequential whole-device overwrite.
#include "conv/ftl.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

namespace zonelab {
namespace {

// 2 channels x 2 planes, 128 blocks of 8 pages of 16 KiB (4 LBAs each).
Config tiny(const std::string& op = "28%", const std::string& gc = "greedy", int streams = 1) {
  Config c = *preset_config("small");
  for (std::string kv : {"flash.channels=2", "flash.dies_per_channel=1", "flash.planes_per_die=2",
                         "flash.blocks_per_plane=128", "flash.pages_per_block=8",
                         "flash.page_size=16KiB", "host.lba_size=4KiB", "block.gc_watermark=2"}) {
    EXPECT_TRUE(apply_override(c, kv).ok()) << kv;
  }
  EXPECT_TRUE(apply_override(c, "block.overprovisioning=" + op).ok());
  EXPECT_TRUE(apply_override(c, "block.gc=" + gc).ok());
  EXPECT_TRUE(apply_override(c, "block.streams=" + std::to_string(streams)).ok());
  return c;
}

uint64_t programs(const Flash& flash, FlashCause cause) {
  return flash.counters().program_pages[static_cast<size_t>(cause)];
}

TEST(Ftl, HostCapacityIsTheFlashOverOnePlusOverprovisioning) {
  Config c = tiny("28%");
  uint64_t flash_lbas = 4 * 128 * 8 * 4;
  ASSERT_TRUE(Ftl::host_lbas(c).ok());
  EXPECT_EQ(*Ftl::host_lbas(c), flash_lbas * 100 / 128);
  ASSERT_TRUE(apply_override(c, "block.overprovisioning=7%").ok());
  ASSERT_TRUE(Ftl::host_lbas(c).ok());
  EXPECT_EQ(*Ftl::host_lbas(c), flash_lbas * 100 / 107);
}

TEST(Ftl, TooLittleSpareIsRefused) {
  Config c = tiny("1%");  // the reserve needs 4 of 128 blocks per plane, more than 1%
  auto host = Ftl::host_lbas(c);
  ASSERT_FALSE(host.ok());
  EXPECT_NE(host.error().find("block.overprovisioning"), std::string::npos) << host.error();
}

// A random mix of writes, rewrites and trims against a plain map of what
// each LBA last received: the FTL must agree after every step.
void model_check(const Config& c, uint64_t seed) {
  Flash flash(c.flash);
  Ftl ftl(c, flash);
  std::mt19937_64 rng(seed);
  std::map<uint64_t, bool> live;  // LBA -> written and not trimmed since
  uint64_t t = 0;
  for (int step = 0; step < 4000; ++step) {
    uint64_t lba = rng() % ftl.lba_count();
    auto nlb = static_cast<uint32_t>(1 + rng() % 24);
    nlb = static_cast<uint32_t>(std::min<uint64_t>(nlb, ftl.lba_count() - lba));
    uint32_t stream = static_cast<uint32_t>(rng() % c.block.streams);
    if (rng() % 5 == 0) {
      ftl.trim(lba, nlb);
      for (uint32_t i = 0; i < nlb; ++i) live.erase(lba + i);
    } else {
      t = ftl.write(lba, nlb, stream, t);
      for (uint32_t i = 0; i < nlb; ++i) live[lba + i] = true;
    }
    if (step % 500 == 0) {
      ASSERT_TRUE(ftl.consistent()) << step;
    }
  }
  ASSERT_TRUE(ftl.consistent());
  for (uint64_t lba = 0; lba < ftl.lba_count(); ++lba) {
    EXPECT_EQ(ftl.where(lba) != Ftl::kUnmapped, live.count(lba) == 1) << lba;
  }
  EXPECT_GT(ftl.counters().gc_runs, 0u);  // the mix wrote the device over several times
}

TEST(Ftl, MappingMatchesAReferenceUnderRandomOverwriteAndTrimGreedy) {
  model_check(tiny("28%", "greedy"), 1);
}

TEST(Ftl, MappingMatchesAReferenceUnderRandomOverwriteAndTrimCostBenefit) {
  model_check(tiny("7%", "cost-benefit"), 2);
}

TEST(Ftl, MappingMatchesAReferenceWithSeveralStreams) { model_check(tiny("28%", "greedy", 3), 3); }

TEST(Ftl, GcNeverLosesALiveLba) {
  Config c = tiny("7%");
  Flash flash(c.flash);
  Ftl ftl(c, flash);
  std::mt19937_64 rng(7);
  // Fill, then random 4 KiB overwrites many times the capacity.
  ftl.write(0, static_cast<uint32_t>(ftl.lba_count()), 0, 0);
  for (uint64_t i = 0; i < 6 * ftl.lba_count(); ++i) ftl.write(rng() % ftl.lba_count(), 1, 0, 0);
  EXPECT_GT(ftl.counters().gc_moved_lbas, 0u);
  EXPECT_TRUE(ftl.consistent());
  for (uint64_t lba = 0; lba < ftl.lba_count(); ++lba) {
    EXPECT_NE(ftl.where(lba), Ftl::kUnmapped) << lba;
  }
  // Random overwrite amplifies writes.
  EXPECT_GT(programs(flash, FlashCause::kGc), 0u);
}

TEST(Ftl, SequentialWholeDeviceOverwriteHasWriteAmplificationOne) {
  Config c = tiny("7%");
  Flash flash(c.flash);
  Ftl ftl(c, flash);
  auto n = static_cast<uint32_t>(ftl.lba_count());
  for (int pass = 0; pass < 5; ++pass) {
    for (uint32_t lba = 0; lba < n; lba += 64) ftl.write(lba, std::min(64u, n - lba), 0, 0);
  }
  EXPECT_GT(flash.counters().erases[static_cast<size_t>(FlashCause::kGc)], 0u);
  EXPECT_EQ(programs(flash, FlashCause::kGc), 0u);
  EXPECT_EQ(ftl.counters().gc_moved_lbas, 0u);
  EXPECT_TRUE(ftl.consistent());
}

TEST(Ftl, TrimmedLbasReadAsUnmappedAndCostNoFlashRead) {
  Config c = tiny();
  Flash flash(c.flash);
  Ftl ftl(c, flash);
  ftl.write(0, 16, 0, 0);
  ftl.trim(4, 8);
  EXPECT_EQ(ftl.counters().trimmed_lbas, 8u);
  uint64_t reads = flash.counters().read_pages;
  EXPECT_EQ(ftl.read(4, 8, 1000), 1000u);
  EXPECT_EQ(flash.counters().read_pages, reads);
  EXPECT_GT(ftl.read(0, 4, 1000), 1000u);
  EXPECT_TRUE(ftl.consistent());
}

TEST(Ftl, WriteTimeIsTransferAndProgramOnceAPageFills) {
  Config c = tiny();
  Flash flash(c.flash);
  Ftl ftl(c, flash);
  EXPECT_EQ(ftl.write(0, 3, 0, 0), 0u);  // waits in the buffer
  EXPECT_EQ(ftl.write(3, 1, 0, 0), c.flash.transfer_latency_ns + c.flash.program_latency_ns);
}

TEST(Ftl, GcMakesAHostWriteWaitOnItsPlane) {
  Config c = tiny("7%");
  Flash flash(c.flash);
  Ftl ftl(c, flash);
  std::mt19937_64 rng(9);
  ftl.write(0, static_cast<uint32_t>(ftl.lba_count()), 0, 0);
  uint64_t worst = 0;
  uint64_t t = 1'000'000'000;
  for (int i = 0; i < 4000; ++i) {
    uint64_t lba = (rng() % (ftl.lba_count() / 4)) * 4;
    uint64_t done = ftl.write(lba, 4, 0, t);
    worst = std::max(worst, done - t);
    t = done;
  }
  // Some write found GC's reads, programs and erase ahead of it.
  EXPECT_GT(worst, c.flash.erase_latency_ns);
}

}  // namespace
}  // namespace zonelab
