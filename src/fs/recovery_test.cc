// Recovery's edges, one case each: a sync's padding never becomes a file's
// bytes (on the device it is zeros; after a crash between the padded write
// and its record the file gets a prefix of what it was given), and a
// journal damaged below its write pointer -- which no crash makes -- is
// refused for writing, shown read-only as far as it checks, and cut only by
// a repair that lists what it lost. (A tail of unsynced whole blocks, and
// a torn journal tail: zoned_fs_test.cc.)
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

#include "fs/fs_test_util.h"

namespace zonelab::fs {
namespace {

constexpr uint64_t kBs = 4096;

// Where LBA 0 lives in the image file (docs/image-format.md, Header).
uint64_t data_offset(const std::string& image) {
  std::ifstream in(image, std::ios::binary);
  uint8_t header[32] = {};
  in.read(reinterpret_cast<char*>(header), sizeof header);
  uint64_t offset = 0;
  std::memcpy(&offset, header + 24, sizeof offset);
  return offset;
}

// XORs one byte of the image file at `lba`'s block, `byte` in.
void flip_byte(const std::string& image, uint64_t lba, uint64_t byte) {
  std::fstream f(image, std::ios::binary | std::ios::in | std::ios::out);
  const auto at = static_cast<std::streamoff>(data_offset(image) + lba * kBs + byte);
  f.seekg(at);
  char c = 0;
  f.read(&c, 1);
  c = static_cast<char>(c ^ 0x5a);
  f.seekp(at);
  f.write(&c, 1);
}

TEST(FsRecovery, ASyncPadsItsLastBlockWithZeros) {
  TestImage image;
  Mounted m = fresh(image);
  auto log = m.fs->open_write("/log", {Lifetime::kShort, IoClass::kWal, false});
  ASSERT_TRUE(log.ok());
  // A long record, then a short one: the buffer still holds the long one's
  // bytes past the short one's end.
  std::vector<uint8_t> first = pattern_bytes(1, 3000);
  std::vector<uint8_t> second = pattern_bytes(2, 100);
  ASSERT_TRUE((*log)->append(first.data(), first.size()).is_ok());
  ASSERT_TRUE((*log)->sync().is_ok());
  ASSERT_TRUE((*log)->append(second.data(), second.size()).is_ok());
  ASSERT_TRUE((*log)->sync().is_ok());
  ASSERT_TRUE((*log)->close().is_ok());
  auto st = m.fs->stat("/log");
  ASSERT_TRUE(st.ok());
  ASSERT_EQ(st->extents.size(), 2u);
  const Extent& e = st->extents[1];
  ASSERT_EQ(e.length, 100u);
  std::vector<uint8_t> block(kBs);
  ASSERT_TRUE(m.fs->io().read(e.lba, block.data(), 1).is_ok());
  EXPECT_TRUE(std::equal(second.begin(), second.end(), block.begin()));
  for (size_t i = second.size(); i < kBs; ++i) {
    ASSERT_EQ(block[i], 0) << "byte " << i << " of a synced block past the file's data";
  }
}

TEST(FsRecovery, ACrashBetweenAPaddedWriteAndItsRecordGivesAPrefix) {
  TestImage image;
  std::vector<uint8_t> synced = pattern_bytes(3, 5000);
  std::vector<uint8_t> unsynced = pattern_bytes(4, 3100);
  {
    Mounted m = fresh(image);
    auto log = m.fs->open_write("/log", {Lifetime::kShort, IoClass::kWal, false});
    ASSERT_TRUE(log.ok());
    ASSERT_TRUE((*log)->append(synced.data(), synced.size()).is_ok());
    ASSERT_TRUE((*log)->sync().is_ok());
    ASSERT_TRUE((*log)->append(unsynced.data(), unsynced.size()).is_ok());
    // The padded write completes; the journal group recording it does not.
    m.stack->power_cut_after(1);
    EXPECT_FALSE((*log)->sync().is_ok());
    (void)(*log)->close();
  }
  Mounted m = mount(image);
  ASSERT_NE(m.fs, nullptr);
  std::vector<uint8_t> got = read_file(*m.fs, "/log");
  // The padded block may hold a crash's bytes only up to where they were
  // given: here the one block is the padded one, so nothing past the sync.
  EXPECT_EQ(got, synced);
  EXPECT_TRUE(m.fs->fsck(false).clean());
}

// A file system whose journal holds several groups after the header; the
// LBA of each group's first block (a block that begins with the group
// magic, "ZLRG").
std::vector<uint64_t> journal_with_groups(TestImage& image) {
  Mounted m = fresh(image);
  const uint32_t zone = m.fs->journal_zone();
  const uint64_t header_end = m.fs->io().zone(zone).wp_lba;
  write_file(*m.fs, "/a", pattern_bytes(7, 20000));
  EXPECT_TRUE(m.fs->create_dir("/d", false).is_ok());
  write_file(*m.fs, "/d/b", pattern_bytes(8, 30000));
  write_file(*m.fs, "/d/c", pattern_bytes(9, 7000));
  EXPECT_TRUE(m.fs->unmount().is_ok());
  EXPECT_EQ(m.fs->journal_zone(), zone);
  std::vector<uint64_t> groups;
  std::vector<uint8_t> block(kBs);
  for (uint64_t lba = header_end; lba < m.fs->io().zone(zone).wp_lba; ++lba) {
    EXPECT_TRUE(m.fs->io().read(lba, block.data(), 1).is_ok());
    if (std::memcmp(block.data(), "ZLRG", 4) == 0) groups.push_back(lba);
  }
  return groups;
}

TEST(FsRecovery, ADamagedJournalGroupIsRefusedForWriting) {
  TestImage image;
  std::vector<uint64_t> groups = journal_with_groups(image);
  ASSERT_GE(groups.size(), 4u);
  flip_byte(image.path(), groups[1], 40);  // inside the second group's records

  auto stack = image.open();
  ASSERT_NE(stack, nullptr);
  auto writable = ZonedFs::mount(*stack);
  ASSERT_FALSE(writable.ok());
  EXPECT_EQ(writable.status().code(), Code::kCorruption);
  EXPECT_NE(writable.status().message().find("checksum does not match"), std::string::npos)
      << writable.status().message();
  EXPECT_NE(writable.status().message().find("fsck --repair"), std::string::npos);
  stack.reset();

  // Read-only, it mounts as far as the journal checks, and fsck says what
  // the damage drops -- without changing the image.
  const std::string before = file_bytes(image.path());
  {
    StackOptions ro;
    ro.read_only = true;
    MountOptions options;
    options.read_only = true;
    Mounted m = mount(image, options, ro);
    ASSERT_NE(m.fs, nullptr);
    auto report = m.fs->fsck(false);
    EXPECT_FALSE(report.clean());
    bool names_b = false;
    for (const std::string& p : report.problems) names_b |= p.find("/d/b") != std::string::npos;
    EXPECT_TRUE(names_b) << "fsck names the file the damage drops";
  }
  EXPECT_EQ(file_bytes(image.path()), before);
}

TEST(FsRecovery, ARepairCutsADamagedJournalAndReportsEveryLoss) {
  TestImage image;
  std::vector<uint64_t> groups = journal_with_groups(image);
  ASSERT_GE(groups.size(), 4u);
  flip_byte(image.path(), groups[1], 40);
  {
    MountOptions options;
    options.cut_damaged_journal = true;
    Mounted m = mount(image, options);
    ASSERT_NE(m.fs, nullptr);
    auto report = m.fs->fsck(true);
    ASSERT_FALSE(report.losses.empty());
    bool names_b = false;
    bool names_c = false;
    for (const std::string& l : report.losses) {
      names_b |= l.find("/d/b:") != std::string::npos;
      names_c |= l.find("/d/c:") != std::string::npos;
    }
    EXPECT_TRUE(names_b && names_c) << report.losses[0];
    EXPECT_TRUE(m.fs->fsck(false).clean());
    EXPECT_TRUE(m.fs->unmount().is_ok());
  }
  // Cut, the file system is consistent and takes writes again; what the
  // lost records made is gone, never half there.
  Mounted m = mount(image);
  ASSERT_NE(m.fs, nullptr);
  EXPECT_TRUE(m.fs->fsck(false).clean());
  EXPECT_FALSE(m.fs->exists("/d/c"));
  write_file(*m.fs, "/after", pattern_bytes(9, 10000));
  EXPECT_EQ(read_file(*m.fs, "/after"), pattern_bytes(9, 10000));
}

TEST(FsRecovery, ABlockBelowTheWritePointerThatIsNoGroupIsDamage) {
  // The last thing in the journal's zone, but no torn write: a group there
  // whose first block no longer checks. Its records may have been
  // acknowledged, so the mount does not drop them silently.
  TestImage image;
  {
    Mounted m = fresh(image);
    write_file(*m.fs, "/kept", pattern_bytes(1, 5000));
    std::vector<uint8_t> junk = pattern_bytes(2, kBs);
    ZoneDescriptor d = m.fs->io().zone(m.fs->journal_zone());
    ASSERT_TRUE(m.fs->io().write(d.wp_lba, junk.data(), 1, WriteCause::kMeta).is_ok());
    m.stack->power_cut();
  }
  {
    auto stack = image.open();
    auto refused = ZonedFs::mount(*stack);
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.status().message().find("no group"), std::string::npos);
  }
  MountOptions cut;
  cut.cut_damaged_journal = true;
  {
    Mounted m = mount(image, cut);
    ASSERT_NE(m.fs, nullptr);
    auto report = m.fs->fsck(true);
    ASSERT_FALSE(report.losses.empty());
    EXPECT_NE(report.losses[0].find("0 later groups that check"), std::string::npos)
        << report.losses[0];
    EXPECT_NE(report.losses[0].find("not known"), std::string::npos) << report.losses[0];
  }
  Mounted m = mount(image);
  ASSERT_NE(m.fs, nullptr);
  EXPECT_EQ(read_file(*m.fs, "/kept"), pattern_bytes(1, 5000));
  EXPECT_TRUE(m.fs->fsck(false).clean());
}

// Every active zone the device allows held by data -- here the zones a
// crash left part written by writers that never synced -- and a journal
// that must roll from a zone it has not filled: the mount's roll (the
// writers' tails given back make records) frees the old journal zone's
// active resource before it takes the next one, so the mount is not
// refused for want of an active zone.
TEST(FsRecovery, AMountThatRollsTheJournalWithEveryDataTokenTakenFindsAnActiveZone) {
  TestImage image(fs_test_config({"zns.max_active=4", "zns.max_open=4"}));
  MountOptions small_buffers;
  small_buffers.write_buffer_bytes = 2 * kBs;
  {
    Mounted m = fresh(image, test_mkfs_options(), small_buffers);
    ASSERT_NE(m.fs, nullptr);
    std::vector<std::unique_ptr<WritableFile>> writers;
    // max_active - 1 = 3 tokens for data, each taken by a writer whose
    // blocks reach the device with no record of them.
    for (int w = 0; w < 3; ++w) {
      auto file =
          m.fs->open_write("/w" + std::to_string(w), {Lifetime::kShort, IoClass::kWal, false});
      ASSERT_TRUE(file.ok()) << file.status().message();
      std::vector<uint8_t> data = pattern_bytes(static_cast<uint64_t>(w), 5 * kBs);
      ASSERT_TRUE((*file)->append(data.data(), data.size()).is_ok());
      writers.push_back(std::move(file).value());
    }
    uint32_t active = 0;
    for (uint32_t z = 0; z < m.fs->superblock().zone_count; ++z) {
      active += zone_is_active(m.fs->io().zone(z).state) ? 1 : 0;
    }
    ASSERT_EQ(active, 4u);
    ASSERT_NE(m.fs->io().zone(m.fs->journal_zone()).state, ZoneState::kFull);
    m.stack->power_cut();
    writers.clear();
  }
  Mounted m = mount(image);
  ASSERT_NE(m.fs, nullptr);
  EXPECT_GT(m.fs->counters().journal_rolls, 0u);
  EXPECT_TRUE(m.fs->fsck(false).clean());
  for (int w = 0; w < 3; ++w) {
    std::vector<uint8_t> got = read_file(*m.fs, "/w" + std::to_string(w));
    std::vector<uint8_t> given = pattern_bytes(static_cast<uint64_t>(w), 5 * kBs);
    ASSERT_LE(got.size(), given.size());
    EXPECT_TRUE(std::equal(got.begin(), got.end(), given.begin())) << w;
  }
}

}  // namespace
}  // namespace zonelab::fs
