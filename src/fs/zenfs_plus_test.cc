// The ZenFS+ policy on the file system: the map mkfs stores, flush kept
// apart from compaction, its collections, and what it refuses.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "fs/fs_test_util.h"

namespace zonelab::fs {
namespace {

// Eight units (4 channels x 2 dies), one zone on each: 64 zones of 256 KiB,
// zone z on unit z mod 8.
Config grouped_config(const std::vector<std::string>& more = {}) {
  std::vector<std::string> overrides = {"flash.channels=4", "flash.dies_per_channel=2",
                                        "zns.channels_per_zone=1"};
  overrides.insert(overrides.end(), more.begin(), more.end());
  return fs_test_config(overrides);
}

MkfsOptions plus_options(const std::string& options = "") {
  MkfsOptions o = test_mkfs_options();
  o.policy = "zenfs+";
  o.policy_options = options;
  return o;
}

uint32_t zone_of(ZonedFs& fs, const std::string& path) {
  auto st = fs.stat(path);
  EXPECT_TRUE(st.ok());
  EXPECT_FALSE(st->extents.empty());
  return st->extents.empty() ? 0 : st->extents.back().zone;
}

TEST(ZenFsPlus, MkfsProbesAndStoresTheMapAMountGivesBack) {
  TestImage image(grouped_config());
  MkfsReport report;
  {
    auto stack = image.open();
    ASSERT_TRUE(ZonedFs::mkfs(*stack, plus_options(), &report).is_ok());
  }
  ASSERT_TRUE(report.probe.has_value());
  EXPECT_EQ(report.probe->map.groups, 8u);
  EXPECT_NE(report.policy_state.find("izg=64:p=8:"), std::string::npos) << report.policy_state;
  for (int round = 0; round < 2; ++round) {
    Mounted m = mount(image);
    ASSERT_NE(m.fs, nullptr);
    EXPECT_EQ(m.fs->policy().name(), "zenfs+");
    const std::vector<uint32_t>& groups = m.fs->policy().zone_groups();
    ASSERT_EQ(groups.size(), 64u);
    // Zones on one unit share a group; zones on two units do not.
    for (uint32_t a = 0; a < 64; ++a) {
      for (uint32_t b = 0; b < 64; ++b) {
        ASSERT_EQ(groups[a] == groups[b], a % 8 == b % 8) << a << " " << b;
      }
    }
    EXPECT_EQ(m.fs->policy().describe().at("groups"), "8");
    write_file(*m.fs, "/f" + std::to_string(round), pattern_bytes(round, 100'000));
    ASSERT_TRUE(m.fs->unmount().is_ok());
  }
}

TEST(ZenFsPlus, AFlushTakesAGroupNoCompactionHolds) {
  TestImage image(grouped_config());
  Mounted m = fresh(image, plus_options("stripe_width=1"));
  ASSERT_NE(m.fs, nullptr);
  const auto& groups = m.fs->policy().zone_groups();
  // Compactions write and keep their files open (their zones held).
  std::vector<std::unique_ptr<WritableFile>> compactions;
  std::set<uint32_t> compaction_groups;
  for (int i = 0; i < 3; ++i) {
    auto f = m.fs->open_write("/c" + std::to_string(i), {Lifetime::kLong, IoClass::kCompaction});
    ASSERT_TRUE(f.ok());
    auto data = pattern_bytes(i, 64 << 10);
    ASSERT_TRUE((*f)->append(data.data(), data.size()).is_ok());
    ASSERT_TRUE((*f)->flush().is_ok());
    compaction_groups.insert(groups[zone_of(*m.fs, "/c" + std::to_string(i))]);
    compactions.push_back(std::move(*f));
  }
  EXPECT_EQ(compaction_groups.size(), 3u) << "each compaction took an idle group";
  for (int i = 0; i < 4; ++i) {
    const std::string path = "/l0-" + std::to_string(i);
    write_file(*m.fs, path, pattern_bytes(10 + i, 64 << 10), {Lifetime::kMedium, IoClass::kFlush});
    EXPECT_EQ(compaction_groups.count(groups[zone_of(*m.fs, path)]), 0u) << path;
  }
  for (auto& f : compactions) ASSERT_TRUE(f->close().is_ok());
}

// The groups of a file's extents, in file order.
std::vector<uint32_t> extent_groups(ZonedFs& fs, const std::string& path) {
  auto st = fs.stat(path);
  EXPECT_TRUE(st.ok());
  std::vector<uint32_t> out;
  const auto& groups = fs.policy().zone_groups();
  for (const Extent& e : st->extents) out.push_back(groups.at(e.zone));
  return out;
}

TEST(ZenFsPlus, AFlushIsStripedOverZonesOfDifferentGroupsAndReadsBackWhole) {
  TestImage image(grouped_config());
  Mounted m = fresh(image, plus_options("stripe_width=4,stripe_unit=16KiB"));
  ASSERT_NE(m.fs, nullptr);
  EXPECT_EQ(m.fs->policy().describe().at("stripe_width"), "4");
  // Appends of odd sizes with a sync between them (a padded block).
  const auto data = pattern_bytes(7, 300'001);
  auto f = m.fs->open_write("/l0", {Lifetime::kMedium, IoClass::kFlush});
  ASSERT_TRUE(f.ok());
  ASSERT_TRUE((*f)->append(data.data(), 100'003).is_ok());
  ASSERT_TRUE((*f)->sync().is_ok());
  ASSERT_TRUE((*f)->append(data.data() + 100'003, data.size() - 100'003).is_ok());
  ASSERT_TRUE((*f)->close().is_ok());
  const std::vector<uint32_t> groups = extent_groups(*m.fs, "/l0");
  ASSERT_GE(groups.size(), 8u);
  // The first four units went to four groups; the file lies in four.
  EXPECT_EQ(std::set<uint32_t>(groups.begin(), groups.begin() + 4).size(), 4u);
  EXPECT_EQ(std::set<uint32_t>(groups.begin(), groups.end()).size(), 4u);
  EXPECT_EQ(read_file(*m.fs, "/l0"), data);
  {
    // Reads at offsets that cut units and blocks.
    auto r = m.fs->open_read("/l0");
    ASSERT_TRUE(r.ok());
    for (uint64_t offset : {1ull, 16383ull, 16384ull, 65537ull, 299'000ull}) {
      std::vector<uint8_t> got(40'000);
      auto n = (*r)->read(offset, got.size(), got.data());
      ASSERT_TRUE(n.ok());
      got.resize(*n);
      EXPECT_TRUE(std::equal(got.begin(), got.end(), data.begin() + static_cast<long>(offset)))
          << offset;
    }
  }
  // A compaction's output is striped too; the log is not.
  write_file(*m.fs, "/sst", pattern_bytes(8, 200'000), {Lifetime::kLong, IoClass::kCompaction});
  const auto sst = extent_groups(*m.fs, "/sst");
  EXPECT_EQ(std::set<uint32_t>(sst.begin(), sst.end()).size(), 4u);
  // Written in one go: unit after unit, the four groups in turn.
  ASSERT_GE(sst.size(), 12u);
  for (size_t i = 4; i < sst.size(); ++i) EXPECT_EQ(sst[i], sst[i - 4]) << i;
  write_file(*m.fs, "/wal", pattern_bytes(9, 200'000), {Lifetime::kShort, IoClass::kWal});
  const auto wal = extent_groups(*m.fs, "/wal");
  EXPECT_EQ(std::set<uint32_t>(wal.begin(), wal.end()).size(), 1u);
  Mounted again = remount(image, m);
  ASSERT_NE(again.fs, nullptr);
  EXPECT_EQ(read_file(*again.fs, "/l0"), data);
}

TEST(ZenFsPlus, AStripesWritesAreInFlightTogether) {
  // The same file, striped over four groups and written one zone at a
  // time: in device time the stripe takes well under half as long.
  uint64_t took[2] = {};
  for (int striped = 0; striped < 2; ++striped) {
    TestImage image(grouped_config());
    auto stack = image.open();
    ASSERT_TRUE(ZonedFs::mkfs(*stack, plus_options(striped ? "stripe_width=4,stripe_unit=16KiB"
                                                           : "stripe_width=1"))
                    .is_ok());
    FaultDevice device(*stack);
    auto fs = ZonedFs::mount(device);
    ASSERT_TRUE(fs.ok());
    const uint64_t start = stack->clock().now_ns();
    write_file(**fs, "/l0", pattern_bytes(3, 1 << 20), {Lifetime::kMedium, IoClass::kFlush});
    took[striped] = stack->clock().now_ns() - start;
    if (striped) {
      // One batch of four pieces per round at least.
      EXPECT_NE(std::find(device.batches.begin(), device.batches.end(), 4u), device.batches.end());
    } else {
      EXPECT_TRUE(device.batches.empty());
    }
    ASSERT_TRUE((*fs)->unmount().is_ok());
  }
  EXPECT_LT(took[1] * 2, took[0]) << took[1] << " ns striped, " << took[0] << " ns not";
}

TEST(ZenFsPlus, AWriteFaultInAStripeLeavesASyncedPrefix) {
  TestImage image(grouped_config());
  const auto data = pattern_bytes(4, 400'000);
  {
    auto stack = image.open();
    ASSERT_TRUE(ZonedFs::mkfs(*stack, plus_options("stripe_width=4,stripe_unit=16KiB")).is_ok());
    FaultDevice device(*stack);
    auto fs = ZonedFs::mount(device);
    ASSERT_TRUE(fs.ok());
    auto f = (*fs)->open_write("/l0", {Lifetime::kMedium, IoClass::kFlush});
    ASSERT_TRUE(f.ok());
    ASSERT_TRUE((*f)->append(data.data(), 100'000).is_ok());
    ASSERT_TRUE((*f)->sync().is_ok());
    // Two more writes reach the device, then every write faults: a round
    // of the stripe in part.
    device.writes_ok = device.writes + 2;
    ASSERT_TRUE((*f)->append(data.data() + 100'000, 300'000).is_ok());
    EXPECT_FALSE((*f)->sync().is_ok());
    (void)(*f)->close();
    (void)(*fs)->unmount();
  }
  Mounted m = mount(image);
  ASSERT_NE(m.fs, nullptr);
  const std::vector<uint8_t> got = read_file(*m.fs, "/l0");
  ASSERT_GE(got.size(), 100'000u);
  ASSERT_LE(got.size(), data.size());
  EXPECT_TRUE(std::equal(got.begin(), got.end(), data.begin())) << "a prefix of what was written";
  EXPECT_TRUE(m.fs->fsck(false).clean());
}

TEST(ZenFsPlus, StripeOptionsOutOfBoundsAreRefused) {
  TestImage image(grouped_config());
  auto stack = image.open();
  for (const char* bad : {"stripe_width=9", "stripe_width=0", "stripe_unit=1000", "stripe_unit=0",
                          "stripe_width=x"}) {
    FsStatus made = ZonedFs::mkfs(*stack, plus_options(bad));
    EXPECT_EQ(made.code(), Code::kInvalid) << bad;
    EXPECT_NE(made.message().find(std::string(bad).substr(0, 11)), std::string::npos)
        << made.message();
  }
  // Eight groups take a stripe of eight.
  EXPECT_TRUE(ZonedFs::mkfs(*stack, plus_options("stripe_width=8")).is_ok());
}

TEST(ZenFsPlus, ZenFsPlacesAFlushWhereverRoundRobinSays) {
  // The same writers under zenfs: nothing keeps a flush off a compaction's
  // group (the contrast the test above rests on).
  TestImage image(grouped_config());
  Mounted m = fresh(image);
  ASSERT_NE(m.fs, nullptr);
  EXPECT_TRUE(m.fs->policy().zone_groups().empty());
  auto c = m.fs->open_write("/c", {Lifetime::kLong, IoClass::kCompaction});
  ASSERT_TRUE(c.ok());
  auto data = pattern_bytes(1, 64 << 10);
  ASSERT_TRUE((*c)->append(data.data(), data.size()).is_ok());
  ASSERT_TRUE((*c)->flush().is_ok());
  const uint32_t cz = zone_of(*m.fs, "/c");
  bool shared = false;
  for (int i = 0; i < 48 && !shared; ++i) {
    const std::string path = "/l0-" + std::to_string(i);
    write_file(*m.fs, path, pattern_bytes(i, 64 << 10), {Lifetime::kMedium, IoClass::kFlush});
    shared = zone_of(*m.fs, path) % 8 == cz % 8;
  }
  EXPECT_TRUE(shared);
  ASSERT_TRUE((*c)->close().is_ok());
}

TEST(ZenFsPlus, DeadZonesWaitForTheMinorCollection) {
  TestImage image(grouped_config());
  Mounted m = fresh(image, plus_options());
  ASSERT_NE(m.fs, nullptr);
  write_file(*m.fs, "/f", pattern_bytes(1, 256 << 10));
  ASSERT_TRUE(m.fs->remove("/f").is_ok());
  // zenfs resets the zone at once; zenfs+ leaves it to its minor collection,
  // however many files are closed meanwhile.
  EXPECT_GT(m.fs->space().reclaimable_bytes, 0u);
  write_file(*m.fs, "/g", pattern_bytes(2, 64 << 10));
  EXPECT_GT(m.fs->space().reclaimable_bytes, 0u);
  ASSERT_TRUE(m.fs->reclaim().is_ok());
  EXPECT_EQ(m.fs->space().reclaimable_bytes, 0u);
  EXPECT_GE(m.fs->counters().zones_reset_without_copy, 1u);
}

// A full collection takes no more victims than bring the empty zones to
// its target: asked for one more empty zone, it copies less than asked for
// every zone it can empty (here nothing: a zone holding nothing comes
// first), and still reaches the target.
TEST(ZenFsPlus, AFullCollectionStopsAtItsTarget) {
  uint64_t copied[2] = {0, 0};
  for (int all = 0; all < 2; ++all) {
    TestImage image(grouped_config());
    Mounted m = fresh(image, plus_options("stripe_width=4,stripe_unit=16KiB,full_gc_trigger=0"));
    ASSERT_NE(m.fs, nullptr);
    for (int i = 0; i < 24; ++i) {
      write_file(*m.fs, "/t" + std::to_string(i), pattern_bytes(100 + i, 96'000 + 777 * i),
                 {Lifetime::kLong, IoClass::kCompaction});
    }
    for (int i = 1; i < 24; i += 2) ASSERT_TRUE(m.fs->remove("/t" + std::to_string(i)).is_ok());
    const uint32_t empty_before = m.fs->space().empty_zones;
    const uint32_t target = all == 1 ? m.fs->space().data_zones : empty_before + 1;
    auto emptied = m.fs->collect_garbage(target);
    ASSERT_TRUE(emptied.ok()) << emptied.status().message();
    if (all == 0) {
      // Fewer victims than a stripe of 4: a zone that holds nothing comes
      // first in the greedy order and alone meets the target.
      EXPECT_GE(m.fs->space().empty_zones, target);
      EXPECT_LT(*emptied, 4u);
    }
    copied[all] = m.fs->counters().gc_copied_bytes;
    EXPECT_TRUE(m.fs->fsck(false).clean());
  }
  EXPECT_EQ(copied[0], 0u);
  EXPECT_GT(copied[1], 0u);
}

TEST(ZenFsPlus, CollectsGarbageInUnitsOfAStripe) {
  // Striped tables, half of them removed: a collection empties several
  // zones together, copies the live half over zones of several groups,
  // and every file left reads back whole, before and after a remount.
  TestImage image(grouped_config());
  Mounted m = fresh(image, plus_options("stripe_width=4,stripe_unit=16KiB,full_gc_trigger=0"));
  ASSERT_NE(m.fs, nullptr);
  std::vector<std::string> kept;
  for (int i = 0; i < 24; ++i) {
    const std::string path = "/t" + std::to_string(i);
    write_file(*m.fs, path, pattern_bytes(100 + i, 96'000 + 777 * i),
               {Lifetime::kLong, IoClass::kCompaction});
    if (i % 2 == 0) kept.push_back(path);
  }
  for (int i = 1; i < 24; i += 2) ASSERT_TRUE(m.fs->remove("/t" + std::to_string(i)).is_ok());
  const uint32_t empty_before = m.fs->space().empty_zones;
  auto emptied = m.fs->collect_garbage(m.fs->space().data_zones);
  ASSERT_TRUE(emptied.ok()) << emptied.status().message();
  EXPECT_GE(*emptied, 4u);
  const FsCounters c = m.fs->counters();
  EXPECT_GT(c.gc_copied_bytes, 0u);
  EXPECT_GT(m.fs->space().empty_zones, empty_before);
  // The copies of one file lie in several groups (a stripe of copies).
  bool spread = false;
  for (const std::string& path : kept) {
    auto st = m.fs->stat(path);
    ASSERT_TRUE(st.ok());
    std::set<uint32_t> groups;
    for (const Extent& e : st->extents) groups.insert(m.fs->policy().zone_groups().at(e.zone));
    spread = spread || groups.size() > 1;
  }
  EXPECT_TRUE(spread);
  for (size_t i = 0; i < kept.size(); ++i) {
    const int n = std::stoi(kept[i].substr(2));
    EXPECT_EQ(read_file(*m.fs, kept[i]), pattern_bytes(100 + n, 96'000 + 777 * n)) << kept[i];
  }
  EXPECT_TRUE(m.fs->fsck(false).clean());
  Mounted again = remount(image, m);
  ASSERT_NE(again.fs, nullptr);
  for (const std::string& path : kept) {
    const int n = std::stoi(path.substr(2));
    EXPECT_EQ(read_file(*again.fs, path), pattern_bytes(100 + n, 96'000 + 777 * n)) << path;
  }
}

TEST(ZenFsPlus, RefusesWhatItCannotUseAndLeavesTheDeviceAsItWas) {
  // fs_test_config's zones span both of its channels: one group.
  TestImage image(fs_test_config());
  {
    Mounted m = fresh(image);
    write_file(*m.fs, "/keep", pattern_bytes(3, 5000));
    ASSERT_TRUE(m.fs->unmount().is_ok());
  }
  MkfsOptions o = plus_options();
  o.force = true;
  {
    auto stack = image.open();
    FsStatus made = ZonedFs::mkfs(*stack, o);
    ASSERT_FALSE(made.is_ok());
    EXPECT_EQ(made.code(), Code::kInvalid);
    EXPECT_NE(made.message().find("every zone interferes"), std::string::npos) << made.message();
    ASSERT_TRUE(stack->close().ok());
  }
  Mounted m = mount(image);
  ASSERT_NE(m.fs, nullptr);
  EXPECT_EQ(m.fs->policy().name(), "zenfs");
  EXPECT_EQ(read_file(*m.fs, "/keep"), pattern_bytes(3, 5000));

  for (const char* bad :
       {"bogus=1", "isolation=maybe", "minor_gc_period=0s", "full_gc_trigger=90", "samples=1",
        "izg=3:z=0", "izg=64:q", "isolation=on,isolation=off", "novalue"}) {
    EXPECT_FALSE(make_placement_policy("zenfs+", bad, PolicyContext{64, 2}).ok()) << bad;
  }
  EXPECT_FALSE(make_placement_policy("zenfs", "isolation=on", PolicyContext{64, 2}).ok());
  EXPECT_FALSE(make_placement_policy("zenfs++", "", PolicyContext{64, 2}).ok());
}

}  // namespace
}  // namespace zonelab::fs
