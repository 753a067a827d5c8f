// The ZenFS+ policy on the file system: the map mkfs stores, flush kept
// apart from compaction, its collections, and what it refuses.
#include <gtest/gtest.h>

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
  Mounted m = fresh(image, plus_options());
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
  // zenfs resets the zone at once; zenfs+ leaves it to its minor collection.
  EXPECT_GT(m.fs->space().reclaimable_bytes, 0u);
  ASSERT_TRUE(m.fs->reclaim().is_ok());
  EXPECT_EQ(m.fs->space().reclaimable_bytes, 0u);
  EXPECT_GE(m.fs->counters().zones_reset_without_copy, 1u);
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
