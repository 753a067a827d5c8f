// The file system on a namespace of several zone sizes (FlexZNS zone sets,
// seed 001 §III-B): the superblock records the sets, zone geometry comes
// from each zone's set, garbage collection keeps each set's copies in the
// set, and space is told set by set.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "fs/fs_test_util.h"

namespace zonelab::fs {
namespace {

constexpr uint64_t kBs = 4096;

// 16 zones of 128 KiB, then 8 of 512 KiB (8 dies: a 512 KiB zone spans
// them all, a 128 KiB zone two).
Config sets_config(const std::vector<std::string>& more = {}) {
  std::vector<std::string> overrides{"flash.dies_per_channel=4", "flash.blocks_per_plane=16",
                                     "zns.format=128KiB:16,512KiB:8"};
  overrides.insert(overrides.end(), more.begin(), more.end());
  return fs_test_config(overrides);
}

// Zones 0-15 are set 0, 16-23 set 1.
uint32_t set_of(uint32_t zone) { return zone < 16 ? 0 : 1; }

// A superblock of 24 zones of 32 blocks, two of them metadata (no sets).
Superblock small_superblock() {
  Superblock sb;
  sb.block_bytes = 4096;
  sb.zone_size_lbas = 32;
  sb.zone_capacity_lbas = 32;
  sb.zone_count = 24;
  sb.meta_zones = 2;
  sb.policy = "zenfs";
  return sb;
}

TEST(ZoneSets, TheSuperblockRecordsEverySetAndDecodesBack) {
  Superblock sb = small_superblock();
  sb.uuid[0] = 7;
  // Equal zones: version 1, 128 bytes, as before there were sets.
  std::vector<uint8_t> v1 = encode_superblock(sb);
  ASSERT_EQ(v1.size(), 128u);
  EXPECT_EQ(v1[8], 1u);
  sb.zone_sets = {{32, 32, 16}, {128, 120, 8}};
  std::vector<uint8_t> v2 = encode_superblock(sb);
  ASSERT_EQ(v2.size(), superblock_bytes(sb));
  EXPECT_EQ(v2.size(), 128u + 2 * 20 + 4);
  EXPECT_EQ(v2[8], 2u);
  auto back = decode_superblock(v2.data(), v2.size());
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, sb);

  // Every field of the sets is checked.
  auto broken = [&](const std::function<void(Superblock&)>& change) {
    Superblock bad = sb;
    change(bad);
    std::vector<uint8_t> bytes = encode_superblock(bad);
    return decode_superblock(bytes.data(), bytes.size()).status();
  };
  EXPECT_EQ(broken([](Superblock& b) { b.zone_sets[1].count = 9; }).code(), Code::kCorruption);
  EXPECT_EQ(broken([](Superblock& b) { b.zone_sets[1].capacity_lbas = 200; }).code(),
            Code::kCorruption);
  EXPECT_EQ(broken([](Superblock& b) { b.zone_sets[0].size_lbas = 64; }).code(), Code::kCorruption);
  for (size_t at : {size_t{80}, size_t{130}, v2.size() - 1}) {
    std::vector<uint8_t> flipped = v2;
    flipped[at] ^= 0x10;
    auto got = decode_superblock(flipped.data(), flipped.size());
    EXPECT_EQ(got.status().code(), Code::kCorruption) << "byte " << at;
  }
  // Cut short: the sets are not all there.
  EXPECT_FALSE(decode_superblock(v2.data(), v2.size() - 1).ok());
  // A metadata header carries the longer superblock and decodes whole.
  std::vector<uint8_t> header = encode_meta_header(3, 9, sb, {}, kBs);
  uint64_t needed = 0;
  auto meta = decode_meta_header(header.data(), header.size(), kBs, &needed);
  ASSERT_TRUE(meta.ok()) << meta.status().message();
  EXPECT_EQ(meta->superblock, sb);
  EXPECT_EQ(meta->sequence, 3u);
}

TEST(ZoneSets, FilesLandInBothSetsAndComeBackAfterARemount) {
  TestImage image(sets_config());
  std::map<std::string, std::vector<uint8_t>> files;
  {
    Mounted m = fresh(image);
    ASSERT_NE(m.fs, nullptr);
    const Superblock& sb = m.fs->superblock();
    ASSERT_EQ(sb.zone_sets.size(), 2u);
    EXPECT_EQ(sb.zone_sets[0], (SuperZoneSet{32, 32, 16}));
    EXPECT_EQ(sb.zone_sets[1], (SuperZoneSet{128, 128, 8}));
    // More than the small zones hold: the rest goes to the large ones.
    for (int i = 0; i < 14; ++i) {
      const std::string path = "/f" + std::to_string(i);
      files[path] = pattern_bytes(i, 200'000 + i * 1000);
      write_file(*m.fs, path, files[path], {Lifetime::kMedium, IoClass::kFlush, false});
    }
    const FsSpace space = m.fs->space();
    ASSERT_EQ(space.sets.size(), 2u);
    EXPECT_EQ(space.sets[0].data_zones, 14u);
    EXPECT_EQ(space.sets[1].data_zones, 8u);
    EXPECT_EQ(space.sets[0].zone_bytes, 128u << 10);
    EXPECT_EQ(space.sets[1].zone_bytes, 512u << 10);
    EXPECT_EQ(space.size_bytes, (14u << 17) + (8u << 19));
    EXPECT_EQ(space.zone_bytes, 128u << 10);
    EXPECT_EQ(space.sets[0].used_bytes + space.sets[1].used_bytes, space.used_bytes);
    EXPECT_EQ(space.sets[0].free_bytes + space.sets[1].free_bytes, space.free_bytes);
    EXPECT_GT(space.sets[0].used_bytes, 0u);
    EXPECT_GT(space.sets[1].used_bytes, 0u);
    // No extent crosses its zone's end (a zone's size is its set's).
    for (const auto& [path, data] : files) {
      auto file = m.fs->open_read(path);
      ASSERT_TRUE(file.ok());
    }
    FsCounters c = m.fs->counters();
    ASSERT_EQ(c.set_written_bytes.size(), 2u);
    const size_t data = static_cast<size_t>(WriteCause::kData);
    EXPECT_GT(c.set_written_bytes[0][data], 0u);
    EXPECT_GT(c.set_written_bytes[1][data], 0u);
    EXPECT_TRUE(m.fs->unmount().is_ok());
  }
  Mounted again = mount(image);
  ASSERT_NE(again.fs, nullptr);
  for (const auto& [path, data] : files) EXPECT_EQ(read_file(*again.fs, path), data) << path;
  ZonedFs::FsckReport report = again.fs->fsck(false);
  EXPECT_TRUE(report.problems.empty()) << report.problems.front();
  // The counters by set were journaled at unmount and come back.
  FsCounters c = again.fs->counters();
  ASSERT_EQ(c.set_written_bytes.size(), 2u);
  EXPECT_GT(c.set_written_bytes[1][static_cast<size_t>(WriteCause::kData)], 0u);
}

TEST(ZoneSets, CollectionCopiesStayInTheVictimsSet) {
  TestImage image(sets_config());
  MkfsOptions mkfs = test_mkfs_options();
  mkfs.gc_free_pct = 40;
  MountOptions mount_options;
  mount_options.gc = true;
  Mounted m = fresh(image, mkfs, mount_options);
  ASSERT_NE(m.fs, nullptr);
  // Write and delete in turns until both sets have been collected from.
  std::map<std::string, std::vector<uint8_t>> live;
  uint64_t seed = 1;
  for (int round = 0; round < 60; ++round) {
    const std::string path = "/r" + std::to_string(round);
    live[path] = pattern_bytes(seed++, 60'000 + (round % 7) * 20'000);
    // Level 0 in the small zones, level 2 in the large.
    const ZonedFs::WriteOptions level0{Lifetime::kMedium, IoClass::kFlush, false};
    const ZonedFs::WriteOptions level2{Lifetime::kLong, IoClass::kCompaction, false};
    write_file(*m.fs, path, live[path], round % 2 == 0 ? level0 : level2);
    if (live.size() > 12) {
      // Drop every other file, so zones keep some live data.
      auto it = live.begin();
      std::advance(it, round % live.size());
      ASSERT_TRUE(m.fs->remove(it->first).is_ok());
      live.erase(it);
    }
  }
  // Where each file's extents lie, by set, before a full collection.
  auto sets_of = [&](const std::string& path) {
    std::vector<uint32_t> out;
    auto dump = nlohmann::json::parse(m.fs->dump_json());
    for (const auto& f : dump["files"]) {
      for (const auto& name : f["names"]) {
        if (name.get<std::string>() != path) continue;
        for (const auto& e : f["extents"]) out.push_back(set_of(e["zone"].get<uint32_t>()));
      }
    }
    return out;
  };
  std::map<std::string, std::vector<uint32_t>> before;
  for (const auto& [path, data] : live) before[path] = sets_of(path);
  auto collected = m.fs->collect_garbage(m.fs->space().data_zones);
  ASSERT_TRUE(collected.ok()) << collected.status().message();
  FsCounters c = m.fs->counters();
  EXPECT_GT(c.gc_runs, 0u);
  for (const auto& [path, data] : live) {
    EXPECT_EQ(read_file(*m.fs, path), data) << path;
    // An extent moved by the collection stays in its set: a file's sets
    // are the ones it had.
    std::vector<uint32_t> after = sets_of(path);
    std::sort(after.begin(), after.end());
    after.erase(std::unique(after.begin(), after.end()), after.end());
    std::vector<uint32_t> had = before[path];
    std::sort(had.begin(), had.end());
    had.erase(std::unique(had.begin(), had.end()), had.end());
    EXPECT_EQ(after, had) << path;
  }
  // The collection's copies were written into the sets it collected, and
  // each set's write amplification counts them.
  const FsSpace space = m.fs->space();
  ASSERT_EQ(space.sets.size(), 2u);
  uint64_t gc_bytes = 0;
  for (const FsSetSpace& set : space.sets) {
    // Both sets were collected from.
    EXPECT_GT(set.gc_written_bytes, 0u);
    EXPECT_GT(set.write_amplification, 1.0);
    gc_bytes += set.gc_written_bytes;
  }
  EXPECT_EQ(gc_bytes, m.fs->device_counters().write_bytes[static_cast<size_t>(WriteCause::kGc)]);
  ZonedFs::FsckReport report = m.fs->fsck(false);
  EXPECT_TRUE(report.problems.empty()) << report.problems.front();
}

TEST(ZoneSets, AFileSystemDoesNotMountOnZoneSetsItWasNotMadeFor) {
  TestImage image(sets_config());
  { Mounted m = fresh(image); }
  // A superblock that records other sets (as one made before the device
  // was formatted another way would): 8 small zones and 16 large.
  {
    auto stack = image.open();
    ASSERT_NE(stack, nullptr);
    StackDevice device(*stack);
    DeviceIo io(device);
    auto found = Journal::recover(io);
    ASSERT_TRUE(found.ok()) << found.status().message();
    Superblock sb = found->header.superblock;
    sb.zone_sets = {{32, 32, 8}, {128, 128, 16}};
    ASSERT_TRUE(Journal::format(io, sb, {}).is_ok());
  }
  auto stack = image.open();
  ASSERT_NE(stack, nullptr);
  auto fs = ZonedFs::mount(*stack, {});
  ASSERT_FALSE(fs.ok());
  EXPECT_EQ(fs.status().code(), Code::kCorruption);
  EXPECT_NE(fs.status().message().find(
                "made for zones 8x32/32,16x128/128 blocks, the device has 16x32/32,8x128/128"),
            std::string::npos)
      << fs.status().message();
}

// The sets a file's extents lie in.
std::set<uint32_t> sets_of_file(ZonedFs& fs, const std::string& path) {
  std::set<uint32_t> out;
  auto dump = nlohmann::json::parse(fs.dump_json());
  for (const auto& f : dump["files"]) {
    for (const auto& name : f["names"]) {
      if (name.get<std::string>() != path) continue;
      for (const auto& e : f["extents"]) out.insert(set_of(e["zone"].get<uint32_t>()));
    }
  }
  return out;
}

TEST(ZoneSets, HotLevelsGoToTheSmallZonesAndTheRestToTheLarge) {
  TestImage image(sets_config());
  Mounted m = fresh(image);
  ASSERT_NE(m.fs, nullptr);
  // mkfs's default: the set of the smallest zones takes wal, L0 and L1.
  EXPECT_EQ(m.fs->superblock().hot_set, 0u);
  EXPECT_EQ(data_levels_text(m.fs->superblock().hot_levels), "wal,L0,L1");
  struct Kind {
    const char* path;
    Lifetime lifetime;
    IoClass io_class;
    uint32_t set;
  };
  const Kind kinds[] = {
      {"/db/000004.log", Lifetime::kShort, IoClass::kWal, 0},
      {"/db/000010.sst", Lifetime::kMedium, IoClass::kFlush, 0},        // L0
      {"/db/000011.sst", Lifetime::kMedium, IoClass::kCompaction, 0},   // L1
      {"/db/000012.sst", Lifetime::kLong, IoClass::kCompaction, 1},     // L2
      {"/db/000013.sst", Lifetime::kExtreme, IoClass::kCompaction, 1},  // L3+
      {"/db/MANIFEST-000001", Lifetime::kNotSet, IoClass::kManifest, 1},
  };
  ASSERT_TRUE(m.fs->create_dir("/db", false).is_ok());
  for (const Kind& k : kinds) {
    write_file(*m.fs, k.path, pattern_bytes(1, 100'000), {k.lifetime, k.io_class, false});
    EXPECT_EQ(sets_of_file(*m.fs, k.path), std::set<uint32_t>{k.set}) << k.path;
  }
  EXPECT_EQ(m.fs->counters().set_fallbacks, 0u);
  // More level-0 data than the small zones hold: the large zones take the
  // rest, and each zone taken so is counted.
  std::map<std::string, std::vector<uint8_t>> l0;
  for (int i = 0; i < 20; ++i) {
    const std::string path = "/db/l0-" + std::to_string(i);
    l0[path] = pattern_bytes(100 + i, 120'000);
    write_file(*m.fs, path, l0[path], {Lifetime::kMedium, IoClass::kFlush, false});
  }
  EXPECT_GT(m.fs->counters().set_fallbacks, 0u);
  const FsSpace space = m.fs->space();
  EXPECT_LT(space.sets[0].free_bytes, 2 * (128u << 10));
  for (const auto& [path, data] : l0) EXPECT_EQ(read_file(*m.fs, path), data) << path;
  // The fallback is journaled with the other counters.
  Mounted again = remount(image, m);
  ASSERT_NE(again.fs, nullptr);
  EXPECT_GT(again.fs->counters().set_fallbacks, 0u);
}

TEST(ZoneSets, SpillColdFillsTheHotSetAsTheOthers) {
  // The small set: 16 zones of 128 KiB (two hold the metadata), 1.75 MiB
  // of data zones; the large: 8 of 512 KiB, 4 MiB.
  auto cold_in_hot_set = [](bool spill) {
    TestImage image(sets_config());
    auto stack = image.open();
    EXPECT_NE(stack, nullptr);
    MkfsOptions o = test_mkfs_options();
    o.spill_cold = spill;
    EXPECT_TRUE(ZonedFs::mkfs(*stack, o).is_ok());
    stack.reset();
    Mounted m = mount(image);
    EXPECT_NE(m.fs, nullptr);
    EXPECT_EQ(m.fs->superblock().spill_cold, spill ? 1u : 0u);
    EXPECT_TRUE(m.fs->create_dir("/db", false).is_ok());
    // Level-3 tables, one after another: without spilling all go to the
    // large set; with it, each goes to whichever set is the emptier.
    std::map<std::string, std::vector<uint8_t>> files;
    uint64_t in_hot = 0;
    for (int i = 0; i < 16; ++i) {
      const std::string path = "/db/l3-" + std::to_string(i);
      files[path] = pattern_bytes(200 + i, 150'000);
      write_file(*m.fs, path, files[path], {Lifetime::kExtreme, IoClass::kCompaction, false});
      if (sets_of_file(*m.fs, path).count(0) != 0) ++in_hot;
    }
    const FsSpace space = m.fs->space();
    auto live_share = [](const FsSetSpace& set) {
      return static_cast<double>(set.used_bytes) /
             static_cast<double>(set.used_bytes + set.free_bytes);
    };
    const double hot_share = live_share(space.sets[0]);
    const double cold_share = live_share(space.sets[1]);
    for (const auto& [path, data] : files) EXPECT_EQ(read_file(*m.fs, path), data) << path;
    // The choice is in the superblock: it holds after a remount.
    Mounted again = remount(image, m);
    EXPECT_NE(again.fs, nullptr);
    EXPECT_EQ(again.fs->superblock().spill_cold, spill ? 1u : 0u);
    return std::tuple{in_hot, hot_share, cold_share};
  };
  const auto [off_files, off_hot, off_cold] = cold_in_hot_set(false);
  EXPECT_EQ(off_files, 0u);
  EXPECT_EQ(off_hot, 0.0);
  const auto [on_files, on_hot, on_cold] = cold_in_hot_set(true);
  EXPECT_GT(on_files, 2u);
  EXPECT_LT(on_files, 14u);
  // Both sets about as full: within a zone's worth of the large set.
  EXPECT_NEAR(on_hot, on_cold, 0.2) << on_hot << " " << on_cold;
}

TEST(ZoneSets, SpillColdNeedsAHotSet) {
  TestImage image(sets_config());
  auto stack = image.open();
  ASSERT_NE(stack, nullptr);
  MkfsOptions o = test_mkfs_options();
  o.spill_cold = true;
  o.hot_set = "none";
  FsStatus made = ZonedFs::mkfs(*stack, o);
  EXPECT_EQ(made.code(), Code::kInvalid);
  EXPECT_EQ(made.message(),
            "--spill-cold: no hot set to spill into (--hot-set none or no hot levels)");
  EXPECT_EQ(stack->zone(0).state, ZoneState::kEmpty);  // nothing written
  // Nor on a device of one zone size.
  TestImage plain;
  auto plain_stack = plain.open();
  o = test_mkfs_options();
  o.spill_cold = true;
  made = ZonedFs::mkfs(*plain_stack, o);
  EXPECT_EQ(made.code(), Code::kInvalid);
  EXPECT_NE(made.message().find("one zone size"), std::string::npos) << made.message();
  // The superblock refuses the flag without a hot set, or any other value.
  Superblock sb = small_superblock();
  sb.zone_sets = {{32, 32, 16}, {128, 128, 8}};
  sb.hot_set = 0;
  sb.hot_levels = 1;
  for (uint32_t value : {0u, 1u, 2u}) {
    sb.spill_cold = value;
    std::vector<uint8_t> bytes = encode_superblock(sb);
    EXPECT_EQ(decode_superblock(bytes.data(), bytes.size()).ok(), value <= 1) << value;
  }
  sb.hot_set = kNoHotSet;
  sb.hot_levels = 0;
  sb.spill_cold = 1;
  std::vector<uint8_t> bytes = encode_superblock(sb);
  auto got = decode_superblock(bytes.data(), bytes.size());
  EXPECT_EQ(got.status().code(), Code::kCorruption);
  EXPECT_EQ(got.status().message(), "superblock: spill cold 1");
}

TEST(ZoneSets, TheHotSetAndLevelsAreChecked) {
  TestImage image(sets_config());
  auto stack = image.open();
  ASSERT_NE(stack, nullptr);
  auto refused = [&](const std::string& set, const std::string& levels) {
    MkfsOptions o = test_mkfs_options();
    o.hot_set = set;
    o.hot_levels = levels;
    FsStatus made = ZonedFs::mkfs(*stack, o);
    EXPECT_EQ(made.code(), Code::kInvalid) << set << " " << levels;
    return made.message();
  };
  EXPECT_EQ(refused("2", "wal"),
            "--hot-set 2: no such zone set (the device has sets 0-1, or none)");
  EXPECT_EQ(refused("x", "wal"),
            "--hot-set x: no such zone set (the device has sets 0-1, or none)");
  EXPECT_EQ(refused("", "wal,L7"),
            "--hot-levels wal,L7: 'L7' is no level (the levels: wal,manifest,L0,L1,L2,L3+,other)");
  EXPECT_EQ(stack->zone(0).state, ZoneState::kEmpty);  // nothing written
  // The large set hot, the deep levels in it; or no map at all.
  MkfsOptions o = test_mkfs_options();
  o.hot_set = "1";
  o.hot_levels = "L2,L3+";
  ASSERT_TRUE(ZonedFs::mkfs(*stack, o).is_ok());
  o.hot_set = "none";
  o.force = true;
  ASSERT_TRUE(ZonedFs::mkfs(*stack, o).is_ok());
  // On equal zones there is no set to name.
  TestImage plain;
  auto plain_stack = plain.open();
  o = test_mkfs_options();
  o.hot_set = "0";
  FsStatus made = ZonedFs::mkfs(*plain_stack, o);
  EXPECT_EQ(made.code(), Code::kInvalid);
  EXPECT_NE(made.message().find("one zone size"), std::string::npos) << made.message();
}

TEST(ZoneSets, MkfsRefusesSetsOfZonesTooSmallForIt) {
  // 16 KiB zones (4 blocks) in the first set: too small for the metadata.
  TestImage image(sets_config({"flash.pages_per_block=1", "zns.format=16KiB:32,64KiB:16"}));
  auto stack = image.open();
  ASSERT_NE(stack, nullptr);
  FsStatus made = ZonedFs::mkfs(*stack, test_mkfs_options());
  ASSERT_FALSE(made.is_ok());
  EXPECT_EQ(made.code(), Code::kInvalid);
  EXPECT_NE(made.message().find("zone set 0"), std::string::npos) << made.message();
  // Nothing was written.
  EXPECT_EQ(stack->zone(0).state, ZoneState::kEmpty);
}

}  // namespace
}  // namespace zonelab::fs
