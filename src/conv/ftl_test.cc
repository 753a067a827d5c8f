// The page-mapped FTL on its own: the mapping against a reference map under
// random overwrite and trim, GC that never loses a live LBA, and write
// amplification 1.0 for sequential whole-device overwrite.
#include "conv/ftl.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <random>
#include <vector>

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

// --- Export and import (device images) ------------------------------------

// A random mix of writes and trims from `t`; returns the completion times.
std::vector<uint64_t> random_mix(Ftl& ftl, uint32_t streams, uint64_t seed, int steps,
                                 uint64_t& t) {
  std::mt19937_64 rng(seed);
  std::vector<uint64_t> done;
  for (int step = 0; step < steps; ++step) {
    uint64_t lba = rng() % ftl.lba_count();
    auto nlb = static_cast<uint32_t>(std::min<uint64_t>(1 + rng() % 24, ftl.lba_count() - lba));
    if (rng() % 5 == 0) {
      ftl.trim(lba, nlb);
      continue;
    }
    // Half the writes arrive before the last one ended, so work is in flight.
    t = ftl.write(lba, nlb, static_cast<uint32_t>(rng() % streams), rng() % 2 == 0 ? t : t / 2);
    done.push_back(t);
  }
  return done;
}

// What a device image carries besides the FTL: the flash's erase counts and
// when each plane and channel is next free.
void copy_flash(const Flash& from, Flash& to) {
  to.erase_counts() = from.erase_counts();
  std::vector<uint64_t> planes;
  std::vector<uint64_t> channels;
  for (uint32_t p = 0; p < from.planes(); ++p) planes.push_back(from.plane_free_at_ns(p));
  for (uint32_t ch = 0; ch < from.channels(); ++ch) channels.push_back(from.channel_free_at_ns(ch));
  to.restore_free_at_ns(planes, channels);
}

void expect_import_continues_identically(const Config& c) {
  Flash flash(c.flash);
  Ftl ftl(c, flash);
  uint64_t t = 0;
  random_mix(ftl, static_cast<uint32_t>(c.block.streams), 11, 3000, t);
  ASSERT_GT(ftl.counters().gc_runs, 0u);
  FtlState saved;
  ftl.export_state(saved);

  Flash flash_copy(c.flash);
  Ftl copy(c, flash_copy);
  ASSERT_TRUE(copy.import_state(saved).ok());
  copy_flash(flash, flash_copy);
  FtlState again;
  copy.export_state(again);
  EXPECT_EQ(again, saved);
  EXPECT_TRUE(copy.consistent());
  EXPECT_EQ(copy.valid_lbas(), ftl.valid_lbas());

  uint64_t t_copy = t;
  std::vector<uint64_t> want = random_mix(ftl, static_cast<uint32_t>(c.block.streams), 12, 2000, t);
  std::vector<uint64_t> got =
      random_mix(copy, static_cast<uint32_t>(c.block.streams), 12, 2000, t_copy);
  EXPECT_EQ(got, want);
  FtlState end_want;
  FtlState end_got;
  ftl.export_state(end_want);
  copy.export_state(end_got);
  EXPECT_EQ(end_got, end_want);
  EXPECT_EQ(flash_copy.erase_counts(), flash.erase_counts());
}

TEST(FtlState, ImportContinuesAsTheOriginalGreedy) {
  expect_import_continues_identically(tiny("7%", "greedy"));
}

TEST(FtlState, ImportContinuesAsTheOriginalCostBenefit) {
  expect_import_continues_identically(tiny("7%", "cost-benefit"));
}

TEST(FtlState, ImportContinuesAsTheOriginalWithSeveralStreams) {
  expect_import_continues_identically(tiny("28%", "greedy", 3));
}

// Each mutation of a real state is something the FTL could never have been
// in; import refuses it and leaves the FTL as it was.
TEST(FtlState, ImportRefusesImpossibleStates) {
  Config c = tiny("7%", "greedy", 2);
  Flash flash(c.flash);
  Ftl ftl(c, flash);
  uint64_t t = 0;
  random_mix(ftl, 2, 5, 2500, t);
  ftl.write(0, 1, 0, t);  // leave an LBA in stream 0's buffer
  FtlState good;
  ftl.export_state(good);
  ASSERT_FALSE(good.buffers[0].empty());
  uint32_t buffered = good.buffers[0][0];
  auto first_mapped = [&] {
    for (uint32_t lba = 0;; ++lba) {
      if (good.l2p[lba] < Ftl::kBuffered) return lba;
    }
  };
  auto first_block = [&](uint8_t state) {
    for (uint32_t b = 0;; ++b) {
      if (good.blocks[b].state == state) return b;
    }
  };
  uint32_t mapped = first_mapped();
  uint32_t full = first_block(2);
  uint32_t free_block = first_block(0);
  uint32_t open = first_block(1);

  struct Case {
    const char* name;
    std::function<void(FtlState&)> mutate;
  };
  std::vector<Case> cases = {
      {"map shorter", [](FtlState& s) { s.l2p.pop_back(); }},
      {"a block fewer", [](FtlState& s) { s.blocks.pop_back(); }},
      {"a plane fewer", [](FtlState& s) { s.planes.pop_back(); }},
      {"a buffer fewer", [](FtlState& s) { s.buffers.pop_back(); }},
      {"a cursor fewer", [](FtlState& s) { s.cursors.pop_back(); }},
      {"cursor beyond the planes", [](FtlState& s) { s.cursors[0] = 99; }},
      {"block state unknown", [&](FtlState& s) { s.blocks[full].state = 3; }},
      {"full block with a page left", [&](FtlState& s) { s.blocks[full].next_page -= 1; }},
      {"open block past its end", [&](FtlState& s) { s.blocks[open].next_page = 8; }},
      {"free block holding data", [&](FtlState& s) { s.blocks[free_block].valid_lbas = 1; }},
      {"valid count off by one", [&](FtlState& s) { s.blocks[full].valid_lbas ^= 1; }},
      {"LBA mapped beyond the flash", [&](FtlState& s) { s.l2p[mapped] = 0x0FFFFFFF; }},
      {"two LBAs on one slot",
       [&](FtlState& s) {
         for (uint32_t lba = mapped + 1;; ++lba) {
           if (s.l2p[lba] < Ftl::kBuffered) {
             s.l2p[lba] = s.l2p[mapped];
             return;
           }
         }
       }},
      {"LBA in a buffer that does not exist",
       [&](FtlState& s) { s.l2p[mapped] = Ftl::kBuffered + 1000; }},
      {"buffered LBA missing from its buffer", [&](FtlState& s) { s.buffers[0].clear(); }},
      {"buffer holds an LBA mapped elsewhere",
       [&](FtlState& s) { s.buffers[1].push_back(mapped); }},
      {"buffer holds an LBA twice", [&](FtlState& s) { s.buffers[0].push_back(buffered); }},
      {"free list names a full block",
       [&](FtlState& s) { s.planes[0].free.push_back(full % 128); }},
      {"free list names a block twice",
       [](FtlState& s) { s.planes[0].free.push_back(s.planes[0].free.front()); }},
      {"free list beyond the plane", [](FtlState& s) { s.planes[0].free.push_back(128); }},
      {"free block missing from the list", [](FtlState& s) { s.planes[0].free.pop_back(); }},
      {"open entry names a free block",
       [](FtlState& s) {
         for (uint32_t& b : s.planes[0].open) b = s.planes[0].free.front();
       }},
      {"open entries missing", [](FtlState& s) { s.planes[0].open.pop_back(); }},
  };
  for (const Case& k : cases) {
    FtlState bad = good;
    k.mutate(bad);
    Flash fresh_flash(c.flash);
    Ftl fresh(c, fresh_flash);
    FtlState before;
    fresh.export_state(before);
    Outcome imported = fresh.import_state(bad);
    ASSERT_FALSE(imported.ok()) << k.name;
    EXPECT_EQ(imported.error().rfind("corrupt image: ftl: ", 0), 0u) << imported.error();
    EXPECT_EQ(imported.error().find('\n'), std::string::npos) << k.name;
    FtlState after;
    fresh.export_state(after);
    EXPECT_EQ(after, before) << k.name;
  }
  Flash fresh_flash(c.flash);
  Ftl fresh(c, fresh_flash);
  EXPECT_TRUE(fresh.import_state(good).ok());
}

}  // namespace
}  // namespace zonelab
