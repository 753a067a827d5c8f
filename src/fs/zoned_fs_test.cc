// The zoned file system end to end, in virtual time on a small device image:
// files and directories, durability across unmounts and power cuts, the
// tail of a file a crash cut short, zone resets, garbage collection, the
// open and active zone tokens, the journal rolling over, fsck, and what it
// refuses. Crash points are enumerated in crash_points_test.cc.
#include "fs/zoned_fs.h"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "fs/fs_test_util.h"

namespace zonelab::fs {
namespace {

constexpr uint64_t kZoneBytes = 256 << 10;
constexpr uint64_t kBs = 4096;

TEST(ZonedFs, FilesWrittenReadBackAcrossZones) {
  TestImage image;
  Mounted m = fresh(image);
  ASSERT_TRUE(m.fs->create_dir("/db", false).is_ok());
  std::vector<uint8_t> data = pattern_bytes(1, 3 * kZoneBytes + 12345);  // spans zones
  write_file(*m.fs, "/db/big.sst", data);
  EXPECT_EQ(read_file(*m.fs, "/db/big.sst"), data);
  auto st = m.fs->stat("/db/big.sst");
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->size, data.size());
  EXPECT_GE(st->extents.size(), 4u);  // an extent never spans zones
  for (const Extent& e : st->extents) {
    EXPECT_EQ(m.fs->io().zone_of(e.lba), e.zone);
    EXPECT_EQ(m.fs->io().zone_of(e.end_lba(kBs) - 1), e.zone);
  }
  // Reads at any offset and length, across extent boundaries.
  auto file = m.fs->open_read("/db/big.sst");
  ASSERT_TRUE(file.ok());
  for (uint64_t offset :
       {uint64_t{0}, uint64_t{1}, kZoneBytes - 100, 2 * kZoneBytes + 4095, data.size() - 10}) {
    std::vector<uint8_t> out(20000);
    auto got = (*file)->read(offset, out.size(), out.data());
    ASSERT_TRUE(got.ok());
    uint64_t expect = std::min<uint64_t>(out.size(), data.size() - offset);
    ASSERT_EQ(*got, expect);
    EXPECT_TRUE(std::equal(out.begin(), out.begin() + static_cast<long>(expect),
                           data.begin() + static_cast<long>(offset)))
        << offset;
  }
  std::vector<uint8_t> none(10);
  EXPECT_EQ(*(*file)->read(data.size(), 10, none.data()), 0u);
  file->reset();
  EXPECT_TRUE(m.fs->fsck(false).clean());
}

TEST(ZonedFs, SequentialReadsReadAheadAndSkip) {
  TestImage image;
  Mounted m = fresh(image);
  std::vector<uint8_t> data = pattern_bytes(2, 700000);
  write_file(*m.fs, "/f", data);
  auto file = m.fs->open_read("/f");
  ASSERT_TRUE(file.ok());
  std::vector<uint8_t> got;
  std::vector<uint8_t> piece(3000);
  uint64_t reads_before = m.fs->device_counters().commands[static_cast<size_t>(IoKind::kRead)];
  for (;;) {
    auto n = (*file)->read_next(piece.size(), piece.data());
    ASSERT_TRUE(n.ok());
    if (*n == 0) break;
    got.insert(got.end(), piece.begin(), piece.begin() + static_cast<long>(*n));
    if (got.size() == 30000) {
      ASSERT_TRUE((*file)->skip(100000).is_ok());
    }
  }
  std::vector<uint8_t> expect(data.begin(), data.begin() + 30000);
  expect.insert(expect.end(), data.begin() + 130000, data.end());
  EXPECT_EQ(got, expect);
  uint64_t reads =
      m.fs->device_counters().commands[static_cast<size_t>(IoKind::kRead)] - reads_before;
  EXPECT_LT(reads, 20u);  // about 600 KB in 256 KiB windows, not 3000-byte reads
}

TEST(ZonedFs, ASyncPadsTheLastBlockAndTheSizeIsExact) {
  TestImage image;
  Mounted m = fresh(image);
  auto file = m.fs->open_write("/wal", {Lifetime::kShort, IoClass::kWal, false});
  ASSERT_TRUE(file.ok());
  std::vector<uint8_t> all;
  for (int i = 0; i < 5; ++i) {
    std::vector<uint8_t> part = pattern_bytes(10 + i, 1000 + 333 * i);
    ASSERT_TRUE((*file)->append(part.data(), part.size()).is_ok());
    ASSERT_TRUE((*file)->sync().is_ok());
    all.insert(all.end(), part.begin(), part.end());
  }
  EXPECT_EQ(m.fs->stat("/wal")->size, all.size());
  ASSERT_TRUE((*file)->close().is_ok());
  EXPECT_EQ(read_file(*m.fs, "/wal"), all);
  const DeviceCounters& d = m.fs->device_counters();
  EXPECT_GT(d.write_bytes[static_cast<size_t>(WriteCause::kPadding)], 0u);
  EXPECT_EQ(d.write_bytes[static_cast<size_t>(WriteCause::kData)], all.size());
  EXPECT_EQ(m.fs->counters().syncs, 6u);  // and the one close makes
}

// As on a POSIX file system: what a writer appended is what another opener
// reads and what stat says, synced or not (RocksDB's checkpoints and backups
// copy the live write-ahead log to the size they are told).
TEST(ZonedFs, ReadersSeeEveryAppendedByteOfAFileBeingWritten) {
  TestImage image;
  Mounted m = fresh(image);
  auto file = m.fs->open_write("/wal", {Lifetime::kShort, IoClass::kWal, false});
  ASSERT_TRUE(file.ok());
  std::vector<uint8_t> all;
  // Small appends, a sync in the middle, then past a whole write buffer.
  for (int i = 0; i < 40; ++i) {
    std::vector<uint8_t> part = pattern_bytes(i, i == 30 ? (1u << 20) + 777 : 100 + 37 * i);
    ASSERT_TRUE((*file)->append(part.data(), part.size()).is_ok());
    if (i == 10) {
      ASSERT_TRUE((*file)->sync().is_ok());
    }
    if (i == 20) {
      ASSERT_TRUE((*file)->flush().is_ok());
    }
    all.insert(all.end(), part.begin(), part.end());
    ASSERT_EQ(m.fs->stat("/wal")->size, all.size()) << i;
    auto reader = m.fs->open_read("/wal");
    ASSERT_TRUE(reader.ok());
    ASSERT_EQ((*reader)->size(), all.size());
    std::vector<uint8_t> back(all.size() + 10);
    auto got = (*reader)->read(0, back.size(), back.data());
    ASSERT_TRUE(got.ok());
    ASSERT_EQ(*got, all.size()) << i;
    back.resize(*got);
    ASSERT_TRUE(back == all) << i;
    // A read that starts on the device and ends in the buffer.
    if (all.size() > 5000) {
      std::vector<uint8_t> middle(4000);
      uint64_t at = all.size() - 4500;
      ASSERT_EQ(*(*reader)->read(at, middle.size(), middle.data()), middle.size());
      ASSERT_TRUE(std::equal(middle.begin(), middle.end(), all.begin() + at)) << i;
    }
  }
  ASSERT_TRUE((*file)->close().is_ok());
  EXPECT_EQ(read_file(*m.fs, "/wal"), all);
}

TEST(ZonedFs, EverythingSurvivesAnUnmount) {
  TestImage image;
  std::vector<uint8_t> one = pattern_bytes(1, 5000);
  {
    Mounted m = fresh(image);
    ASSERT_TRUE(m.fs->create_dir("/a/b", true).is_ok());
    write_file(*m.fs, "/a/one", one);
    write_file(*m.fs, "/a/two", pattern_bytes(2, 100));
    ASSERT_TRUE(m.fs->link("/a/one", "/a/b/hard").is_ok());
    ASSERT_TRUE(m.fs->rename("/a/one", "/a/two").is_ok());  // replaces /a/two
    write_file(*m.fs, "/gone", pattern_bytes(3, 10));
    ASSERT_TRUE(m.fs->remove("/gone").is_ok());
    ASSERT_TRUE(m.fs->create_dir("/empty", false).is_ok());
    ASSERT_TRUE(m.fs->remove_dir("/empty").is_ok());
  }
  Mounted m = mount(image);
  EXPECT_EQ(read_file(*m.fs, "/a/two"), one);
  EXPECT_EQ(read_file(*m.fs, "/a/b/hard"), one);
  EXPECT_FALSE(m.fs->exists("/a/one"));
  EXPECT_FALSE(m.fs->exists("/gone"));
  EXPECT_FALSE(m.fs->exists("/empty"));
  auto listing = m.fs->list("/a");
  ASSERT_TRUE(listing.ok());
  EXPECT_EQ(*listing, (std::vector<std::string>{"b", "two"}));
  EXPECT_EQ(m.fs->stat("/a/two")->nlink, 2u);
  EXPECT_TRUE(m.fs->recovery_notes().empty());
  EXPECT_TRUE(m.fs->fsck(false).clean());
}

// What RocksDB's checkpoint builds before it renames it into place.
struct CheckpointTree {
  std::map<std::string, std::vector<uint8_t>> files;  // below the directory
  void make(ZonedFs& fs, const std::string& dir) {
    ASSERT_TRUE(fs.create_dir(dir + "/sub", true).is_ok());
    files["/000012.sst"] = pattern_bytes(41, 300000);  // more than a zone
    files["/CURRENT"] = pattern_bytes(42, 16);
    files["/sub/deep"] = pattern_bytes(43, 5000);
    for (const auto& [name, data] : files) write_file(fs, dir + name, data);
  }
  // Every file there with its bytes, and nothing else.
  void expect_at(ZonedFs& fs, const std::string& dir, const std::string& where) const {
    auto top = fs.list(dir);
    ASSERT_TRUE(top.ok()) << where << ": " << dir << ": " << top.status().message();
    EXPECT_EQ(*top, (std::vector<std::string>{"000012.sst", "CURRENT", "sub"})) << where;
    for (const auto& [name, data] : files) {
      EXPECT_EQ(read_file(fs, dir + name), data) << where << ": " << dir + name;
    }
  }
};

TEST(ZonedFs, ADirectoryIsRenamedWithEverythingBelowIt) {
  TestImage image;
  CheckpointTree tree;
  std::vector<uint8_t> more = pattern_bytes(44, 9000);
  {
    Mounted m = fresh(image);
    tree.make(*m.fs, "/ckpt.tmp");
    ASSERT_TRUE(m.fs->create_dir("/ckpt.tmpx", false).is_ok());  // a neighbour by name
    // Open files are files, not names: a reader and a writer go on.
    auto reader = m.fs->open_read("/ckpt.tmp/CURRENT");
    ASSERT_TRUE(reader.ok());
    auto writer = m.fs->open_write("/ckpt.tmp/sub/log", {});
    ASSERT_TRUE(writer.ok());
    ASSERT_TRUE((*writer)->append(more.data(), 4000).is_ok());
    ASSERT_TRUE(m.fs->rename("/ckpt.tmp", "/ckpt").is_ok());
    ASSERT_TRUE((*writer)->append(more.data() + 4000, more.size() - 4000).is_ok());
    ASSERT_TRUE((*writer)->close().is_ok());
    std::vector<uint8_t> current(16);
    EXPECT_EQ(*(*reader)->read(0, 16, current.data()), 16u);
    EXPECT_EQ(current, tree.files["/CURRENT"]);
    reader->reset();
    EXPECT_FALSE(m.fs->exists("/ckpt.tmp"));
    EXPECT_TRUE(m.fs->exists("/ckpt.tmpx"));
    EXPECT_EQ(read_file(*m.fs, "/ckpt/sub/log"), more);
    ASSERT_TRUE(m.fs->remove("/ckpt/sub/log").is_ok());
    tree.expect_at(*m.fs, "/ckpt", "before unmount");
    auto report = m.fs->fsck(false);
    EXPECT_TRUE(report.clean()) << report.problems[0];
  }
  Mounted m = mount(image);
  ASSERT_NE(m.fs, nullptr);
  tree.expect_at(*m.fs, "/ckpt", "after a mount");
  EXPECT_FALSE(m.fs->exists("/ckpt.tmp"));
  auto report = m.fs->fsck(false);
  EXPECT_TRUE(report.clean()) << report.problems[0];
  // Onto an empty directory, as rename(2): it is replaced.
  ASSERT_TRUE(m.fs->create_dir("/empty", false).is_ok());
  ASSERT_TRUE(m.fs->rename("/ckpt", "/empty").is_ok());
  tree.expect_at(*m.fs, "/empty", "onto an empty directory");
}

TEST(ZonedFs, ADirectoryRenameIsRefusedWhereRename2RefusesIt) {
  TestImage image;
  Mounted m = fresh(image);
  CheckpointTree tree;
  tree.make(*m.fs, "/a");
  ASSERT_TRUE(m.fs->create_dir("/full", false).is_ok());
  write_file(*m.fs, "/full/f", pattern_bytes(1, 10));
  write_file(*m.fs, "/file", pattern_bytes(2, 10));
  EXPECT_EQ(m.fs->rename("/a", "/full").code(), Code::kNotEmpty);
  EXPECT_EQ(m.fs->rename("/a", "/file").code(), Code::kNotDirectory);
  EXPECT_EQ(m.fs->rename("/a", "/a/sub/a").code(), Code::kInvalid);
  EXPECT_EQ(m.fs->rename("/a", "/").code(), Code::kNotEmpty);
  EXPECT_EQ(m.fs->rename("/", "/b").code(), Code::kInvalid);
  EXPECT_EQ(m.fs->rename("/a", "/none/a").code(), Code::kNotFound);
  EXPECT_EQ(m.fs->rename("/file", "/full").code(), Code::kIsDirectory);
  tree.expect_at(*m.fs, "/a", "after the refusals");
  EXPECT_TRUE(m.fs->fsck(false).clean());
}

TEST(ZonedFs, ADirectoryRenameIsAtomicAtEveryPowerCut) {
  // The rename's journal group, the reset it may bring, the file written
  // after it: a cut after each command in turn leaves the whole tree at one
  // name or the other -- and at the new one once the rename returned.
  CheckpointTree tree;
  bool finished = false;
  for (uint64_t cut = 0; cut < 64 && !finished; ++cut) {
    const std::string where = "cut " + std::to_string(cut);
    TestImage image(fs_test_config(), "-cut" + std::to_string(cut));
    bool renamed = false;
    {
      Mounted m = fresh(image);
      ASSERT_NE(m.fs, nullptr);
      tree.make(*m.fs, "/ckpt.tmp");
      ASSERT_TRUE(m.fs->sync_metadata().is_ok());
      m.stack->power_cut_after(cut);
      renamed = m.fs->rename("/ckpt.tmp", "/ckpt").is_ok();
      if (renamed) {
        auto after = m.fs->open_write("/after", {});
        if (after.ok()) {
          std::vector<uint8_t> data = pattern_bytes(45, 20000);
          (void)(*after)->append(data.data(), data.size());
          (void)(*after)->close();
        }
      }
      finished = !m.stack->powered_off();
      if (!finished) {
        EXPECT_TRUE(m.fs->exists("/ckpt") || m.fs->exists("/ckpt.tmp")) << where;
      }
    }
    Mounted m = mount(image);
    ASSERT_NE(m.fs, nullptr) << where;
    auto report = m.fs->fsck(false);
    EXPECT_TRUE(report.clean()) << where << ": " << report.problems[0];
    const bool at_new = m.fs->exists("/ckpt");
    EXPECT_NE(at_new, m.fs->exists("/ckpt.tmp")) << where << ": the tree is at one name";
    if (renamed) {
      EXPECT_TRUE(at_new) << where << ": the rename returned";
    }
    tree.expect_at(*m.fs, at_new ? "/ckpt" : "/ckpt.tmp", where);
  }
  EXPECT_TRUE(finished) << "the workload never ran to its end";
}

TEST(ZonedFs, APowerCutKeepsWhatWasSyncedAndNothingSurprising) {
  TestImage image;
  std::vector<uint8_t> synced = pattern_bytes(3, 10000);
  std::vector<uint8_t> unsynced = pattern_bytes(4, 3000);
  {
    Mounted m = fresh(image);
    write_file(*m.fs, "/closed", pattern_bytes(5, 9000));
    auto wal = m.fs->open_write("/wal", {});
    ASSERT_TRUE(wal.ok());
    ASSERT_TRUE((*wal)->append(synced.data(), synced.size()).is_ok());
    ASSERT_TRUE((*wal)->sync().is_ok());
    ASSERT_TRUE((*wal)->append(unsynced.data(), unsynced.size()).is_ok());  // buffered only
    auto never = m.fs->open_write("/never-synced", {});
    ASSERT_TRUE(never.ok());
    std::vector<uint8_t> lost = pattern_bytes(6, 100000);
    ASSERT_TRUE((*never)->append(lost.data(), lost.size()).is_ok());
    m.stack->power_cut();
    // What the host does after the cut reaches nothing.
    EXPECT_EQ((*wal)->sync().code(), Code::kIoError);
  }
  Mounted m = mount(image);
  EXPECT_EQ(read_file(*m.fs, "/closed"), pattern_bytes(5, 9000));
  EXPECT_EQ(read_file(*m.fs, "/wal"), synced);
  EXPECT_FALSE(m.fs->exists("/never-synced"));  // its name was never committed
  auto report = m.fs->fsck(false);
  EXPECT_TRUE(report.clean()) << (report.problems.empty() ? "" : report.problems[0]);
  // The space written but never recorded is not reused unreset: new files
  // still read back.
  write_file(*m.fs, "/after", pattern_bytes(7, 300000));
  EXPECT_EQ(read_file(*m.fs, "/after"), pattern_bytes(7, 300000));
  EXPECT_TRUE(m.fs->fsck(false).clean());
}

TEST(ZonedFs, TheTailOfAFileBeingWrittenComesBackFromTheWritePointer) {
  TestImage image;
  std::vector<uint8_t> synced = pattern_bytes(8, 5000);
  std::vector<uint8_t> flushed = pattern_bytes(9, 3 * kBs);
  {
    Mounted m = fresh(image);
    auto wal = m.fs->open_write("/wal", {Lifetime::kShort, IoClass::kWal, false});
    ASSERT_TRUE(wal.ok());
    ASSERT_TRUE((*wal)->append(synced.data(), synced.size()).is_ok());
    ASSERT_TRUE((*wal)->sync().is_ok());
    // Whole blocks written out but never synced: on the device, past the
    // file's last record, in the zone the file holds.
    ASSERT_TRUE((*wal)->append(flushed.data(), flushed.size()).is_ok());
    ASSERT_TRUE((*wal)->flush().is_ok());
    m.stack->power_cut();
  }
  Mounted m = mount(image);
  // All but the last block written: that one could be a sync's padding
  // whose record never came, so only the blocks before it are surely the
  // file's bytes.
  std::vector<uint8_t> expect = synced;
  expect.insert(expect.end(), flushed.begin(), flushed.end() - kBs);
  EXPECT_EQ(read_file(*m.fs, "/wal"), expect);
  EXPECT_EQ(m.fs->counters().recovered_tail_bytes, flushed.size() - kBs);
  ASSERT_EQ(m.fs->recovery_notes().size(), 1u);
  EXPECT_NE(m.fs->recovery_notes()[0].find("recovered"), std::string::npos);
  EXPECT_TRUE(m.fs->fsck(false).clean());
  // The recovered tail is journaled: it is there after the next mount too.
  m.fs.reset();
  m.stack.reset();
  Mounted again = mount(image);
  EXPECT_EQ(read_file(*again.fs, "/wal"), expect);
  EXPECT_TRUE(again.fs->recovery_notes().empty());
}

TEST(ZonedFs, ATailIsGivenOnlyToTheLastWriterOfAZone) {
  // One file closes in a zone, another continues the zone and is cut off:
  // the second file's unsynced blocks go to it, none to the first.
  TestImage image;
  std::vector<uint8_t> first = pattern_bytes(10, 2 * kBs + 10);
  std::vector<uint8_t> second = pattern_bytes(11, 4 * kBs);
  {
    Mounted m = fresh(image);
    write_file(*m.fs, "/first", first);
    auto w = m.fs->open_write("/second", {});
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->append(second.data(), second.size()).is_ok());
    ASSERT_TRUE((*w)->flush().is_ok());
    ASSERT_EQ(m.fs->stat("/second")->extents[0].zone, m.fs->stat("/first")->extents[0].zone);
    ASSERT_TRUE(m.fs->sync_metadata().is_ok());  // the name, not the data
    m.stack->power_cut();
  }
  Mounted m = mount(image);
  EXPECT_EQ(read_file(*m.fs, "/first"), first);
  EXPECT_EQ(read_file(*m.fs, "/second"), second);
  EXPECT_TRUE(m.fs->fsck(false).clean());
}

TEST(ZonedFs, ADeletedFilesZonesAreResetWithoutCopying) {
  TestImage image;
  Mounted m = fresh(image);
  write_file(*m.fs, "/big", pattern_bytes(1, 2 * kZoneBytes));
  FsSpace before = m.fs->space();
  ASSERT_TRUE(m.fs->remove("/big").is_ok());
  FsSpace after = m.fs->space();
  EXPECT_EQ(after.empty_zones, before.empty_zones + 2);
  EXPECT_EQ(after.used_bytes, 0u);
  FsCounters c = m.fs->counters();
  EXPECT_EQ(c.zones_reset, 2u);
  EXPECT_EQ(c.zones_reset_without_copy, 2u);
  EXPECT_EQ(c.gc_copied_bytes, 0u);
  EXPECT_EQ(c.files_deleted, 1u);
}

TEST(ZonedFs, AFileReadAfterItsDeleteKeepsItsDataUntilClosed) {
  TestImage image;
  Mounted m = fresh(image);
  std::vector<uint8_t> data = pattern_bytes(2, kZoneBytes);
  write_file(*m.fs, "/f", data);
  auto reader = m.fs->open_read("/f");
  ASSERT_TRUE(reader.ok());
  ASSERT_TRUE(m.fs->remove("/f").is_ok());
  EXPECT_FALSE(m.fs->exists("/f"));
  EXPECT_EQ(m.fs->counters().zones_reset, 0u);  // still read
  std::vector<uint8_t> out(data.size());
  ASSERT_EQ(*(*reader)->read(0, out.size(), out.data()), data.size());
  EXPECT_EQ(out, data);
  reader->reset();
  ASSERT_TRUE(m.fs->reclaim().is_ok());
  EXPECT_EQ(m.fs->counters().zones_reset, 1u);
  EXPECT_EQ(m.fs->counters().files_deleted, 1u);
}

TEST(ZonedFs, GarbageCollectionMakesRoomAndKeepsTheData) {
  TestImage image;
  MountOptions options;
  Mounted m = fresh(image, test_mkfs_options(), options);
  // Files interleaved in the same zones; deleting every other one leaves
  // zones half garbage that only collection can free.
  FsSpace space = m.fs->space();
  const int files = static_cast<int>(space.data_zones) * 2 - 4;
  for (int i = 0; i < files; ++i) {
    write_file(*m.fs, "/f" + std::to_string(i), pattern_bytes(i, kZoneBytes / 2 - 3000));
  }
  for (int i = 0; i < files; i += 2) ASSERT_TRUE(m.fs->remove("/f" + std::to_string(i)).is_ok());
  // More data than the empty zones hold.
  for (int i = 0; i < files / 2; ++i) {
    write_file(*m.fs, "/g" + std::to_string(i), pattern_bytes(1000 + i, kZoneBytes / 2 - 3000));
  }
  FsCounters c = m.fs->counters();
  EXPECT_GT(c.gc_runs, 0u);
  EXPECT_GT(c.gc_copied_bytes, 0u);
  for (int i = 1; i < files; i += 2) {
    EXPECT_EQ(read_file(*m.fs, "/f" + std::to_string(i)), pattern_bytes(i, kZoneBytes / 2 - 3000));
  }
  for (int i = 0; i < files / 2; ++i) {
    EXPECT_EQ(read_file(*m.fs, "/g" + std::to_string(i)),
              pattern_bytes(1000 + i, kZoneBytes / 2 - 3000));
  }
  EXPECT_GT(m.fs->space().write_amplification, 1.0);
  ASSERT_TRUE(m.fs->sync_metadata().is_ok());
  auto report = m.fs->fsck(false);
  EXPECT_TRUE(report.clean()) << (report.problems.empty() ? "" : report.problems[0]);
  // And after a remount.
  m.fs.reset();
  m.stack.reset();
  Mounted again = mount(image);
  EXPECT_EQ(read_file(*again.fs, "/f1"), pattern_bytes(1, kZoneBytes / 2 - 3000));
  EXPECT_TRUE(again.fs->fsck(false).clean());
}

TEST(ZonedFs, WithoutGarbageCollectionAFragmentedDeviceAnswersNoSpace) {
  TestImage image;
  MountOptions options;
  options.gc = false;
  Mounted m = fresh(image, test_mkfs_options(), options);
  FsSpace space = m.fs->space();
  const int files = static_cast<int>(space.data_zones) * 2 - 2;
  for (int i = 0; i < files; ++i) {
    write_file(*m.fs, "/f" + std::to_string(i), pattern_bytes(i, kZoneBytes / 2 - 3000));
  }
  for (int i = 0; i < files; i += 2) ASSERT_TRUE(m.fs->remove("/f" + std::to_string(i)).is_ok());
  FsStatus last;
  for (int i = 0; i < files && last.is_ok(); ++i) {
    auto w = m.fs->open_write("/g" + std::to_string(i), {});
    ASSERT_TRUE(w.ok());
    std::vector<uint8_t> data = pattern_bytes(i, kZoneBytes / 2 - 3000);
    last = (*w)->append(data.data(), data.size());
    if (last.is_ok()) last = (*w)->close();
  }
  EXPECT_EQ(last.code(), Code::kNoSpace);
  EXPECT_NE(last.message().find("garbage collection is off"), std::string::npos) << last.message();
  EXPECT_EQ(m.fs->counters().gc_runs, 0u);
  // The files written before are all there.
  for (int i = 1; i < files; i += 2) {
    EXPECT_EQ(read_file(*m.fs, "/f" + std::to_string(i)), pattern_bytes(i, kZoneBytes / 2 - 3000));
  }
}

TEST(ZonedFs, AFullDeviceOfLiveDataAnswersNoSpace) {
  TestImage image;
  Mounted m = fresh(image);
  auto w = m.fs->open_write("/huge", {});
  ASSERT_TRUE(w.ok());
  std::vector<uint8_t> chunk = pattern_bytes(1, 64 << 10);
  FsStatus last;
  uint64_t written = 0;
  while (last.is_ok() && written < 64 * kZoneBytes) {
    last = (*w)->append(chunk.data(), chunk.size());
    written += chunk.size();
  }
  EXPECT_EQ(last.code(), Code::kNoSpace);
  EXPECT_NE(last.message().find("no space left"), std::string::npos) << last.message();
  EXPECT_EQ(m.fs->device_counters().failed, 0u);  // never an error from the device
}

TEST(ZonedFs, TokensAreLentByIdleWritersAndNeverExceeded) {
  // MAR 4 / MOR 3: 3 active and 2 open data zone tokens. Six files written
  // in turns all fit, because a writer between writes lends its token; the
  // device never answers TOO_MANY_*.
  TestImage image(fs_test_config({"zns.max_active=4", "zns.max_open=3"}));
  Mounted m = fresh(image);
  std::vector<std::unique_ptr<WritableFile>> writers;
  for (int i = 0; i < 6; ++i) {
    auto w = m.fs->open_write("/w" + std::to_string(i),
                              {static_cast<Lifetime>(1 + i % 5), IoClass::kOther, false});
    ASSERT_TRUE(w.ok());
    writers.push_back(std::move(w).value());
  }
  for (int round = 0; round < 4; ++round) {
    for (size_t i = 0; i < writers.size(); ++i) {
      std::vector<uint8_t> data = pattern_bytes(round * 10 + i, 3 * kBs);
      ASSERT_TRUE(writers[i]->append(data.data(), data.size()).is_ok());
      ASSERT_TRUE(writers[i]->flush().is_ok()) << round << " " << i;
    }
  }
  for (auto& w : writers) ASSERT_TRUE(w->close().is_ok());
  writers.clear();
  EXPECT_EQ(m.fs->device_counters().failed, 0u);
  EXPECT_GT(m.fs->token_revocations(), 0u);
  uint32_t active = 0;
  for (uint32_t z = 0; z < m.fs->io().zone_count(); ++z) {
    active += zone_is_active(m.fs->io().zone(z).state) ? 1 : 0;
  }
  EXPECT_LE(active, 4u);
  for (int i = 0; i < 6; ++i) {
    std::vector<uint8_t> expect;
    for (int round = 0; round < 4; ++round) {
      std::vector<uint8_t> data = pattern_bytes(round * 10 + i, 3 * kBs);
      expect.insert(expect.end(), data.begin(), data.end());
    }
    EXPECT_EQ(read_file(*m.fs, "/w" + std::to_string(i)), expect);
  }
  EXPECT_TRUE(m.fs->fsck(false).clean());
}

TEST(ZonedFs, TheFinishThresholdFinishesNearlyFullZones) {
  TestImage image;
  MkfsOptions options = test_mkfs_options();
  options.finish_threshold_pct = 20;
  Mounted m = fresh(image, options);
  write_file(*m.fs, "/nearly", pattern_bytes(1, kZoneBytes * 9 / 10));  // 10 % left
  write_file(*m.fs, "/half", pattern_bytes(2, kZoneBytes / 2));         // 50 % left
  FsCounters c = m.fs->counters();
  EXPECT_EQ(c.zones_finished_threshold, 1u);
  FsSpace s = m.fs->space();
  EXPECT_GT(s.lost_bytes, 0u);
  EXPECT_LT(s.lost_bytes, kZoneBytes / 5);
  uint32_t nearly = m.fs->stat("/nearly")->extents[0].zone;
  uint32_t half = m.fs->stat("/half")->extents[0].zone;
  EXPECT_NE(nearly, half);
  EXPECT_EQ(m.fs->io().zone(nearly).state, ZoneState::kFull);
  EXPECT_NE(m.fs->io().zone(half).state, ZoneState::kFull);
  EXPECT_TRUE(m.fs->fsck(false).clean());
}

TEST(ZonedFs, LifetimesPlaceDataTogetherOnlyWhenTheZoneOutlivesIt) {
  TestImage image;
  Mounted m = fresh(image);
  auto zone_of = [&](const std::string& path) { return m.fs->stat(path)->extents[0].zone; };
  write_file(*m.fs, "/long", pattern_bytes(1, 10000), {Lifetime::kLong, IoClass::kCompaction});
  write_file(*m.fs, "/short", pattern_bytes(2, 10000), {Lifetime::kShort, IoClass::kFlush});
  write_file(*m.fs, "/extreme", pattern_bytes(3, 10000),
             {Lifetime::kExtreme, IoClass::kCompaction});
  write_file(*m.fs, "/wal", pattern_bytes(4, 10000), {Lifetime::kShort, IoClass::kWal});
  // Short data may join the long-lived zone; long data never joins a zone of
  // shorter-lived data; the log keeps to itself.
  EXPECT_EQ(zone_of("/short"), zone_of("/long"));
  EXPECT_NE(zone_of("/extreme"), zone_of("/long"));
  EXPECT_NE(zone_of("/wal"), zone_of("/long"));
  EXPECT_NE(zone_of("/wal"), zone_of("/extreme"));
  FsCounters c = m.fs->counters();
  EXPECT_EQ(c.appended_bytes[static_cast<size_t>(IoClass::kFlush)], 10000u);
  EXPECT_EQ(c.appended_bytes[static_cast<size_t>(IoClass::kCompaction)], 20000u);
  EXPECT_EQ(c.appended_bytes[static_cast<size_t>(IoClass::kWal)], 10000u);
  EXPECT_EQ(c.data_written_bytes[static_cast<size_t>(IoClass::kFlush)], 3 * kBs);
}

TEST(ZonedFs, HintsSetAfterOpeningAreKept) {
  TestImage image;
  {
    Mounted m = fresh(image);
    auto w = m.fs->open_write("/t.sst", {});
    ASSERT_TRUE(w.ok());
    (*w)->set_hints(Lifetime::kMedium, IoClass::kCompaction);
    std::vector<uint8_t> data = pattern_bytes(1, 100);
    ASSERT_TRUE((*w)->append(data.data(), data.size()).is_ok());
    ASSERT_TRUE((*w)->close().is_ok());
  }
  Mounted m = mount(image);
  auto st = m.fs->stat("/t.sst");
  EXPECT_EQ(st->lifetime, Lifetime::kMedium);
  EXPECT_EQ(st->io_class, IoClass::kCompaction);
}

TEST(ZonedFs, TheJournalRollsToTheNextMetadataZoneAndRecovers) {
  TestImage image;
  uint64_t sequence = 0;
  {
    Mounted m = fresh(image);
    // Many small metadata changes fill a metadata zone.
    for (int i = 0; i < 3000; ++i) {
      ASSERT_TRUE(m.fs->create_dir("/d" + std::to_string(i % 40), true).is_ok());
      write_file(*m.fs, "/d" + std::to_string(i % 40) + "/f" + std::to_string(i),
                 pattern_bytes(i, i % 50 == 0 ? 10 : 0));
      if (i % 3 == 0) {
        ASSERT_TRUE(m.fs->remove("/d" + std::to_string(i % 40) + "/f" + std::to_string(i)).is_ok());
      }
    }
    sequence = m.fs->journal_sequence();
    EXPECT_GT(sequence, 2u);
    EXPECT_GT(m.fs->counters().journal_rolls, 0u);
    // Only the journal's zone holds an active resource.
    for (uint32_t z = 0; z < m.fs->superblock().meta_zones; ++z) {
      if (z != m.fs->journal_zone()) {
        EXPECT_FALSE(zone_is_active(m.fs->io().zone(z).state)) << z;
      }
    }
  }
  Mounted m = mount(image);
  EXPECT_EQ(m.fs->journal_sequence(), sequence);
  for (int i = 2990; i < 3000; ++i) {
    std::string path = "/d" + std::to_string(i % 40) + "/f" + std::to_string(i);
    EXPECT_EQ(m.fs->exists(path), i % 3 != 0) << path;
  }
  EXPECT_TRUE(m.fs->fsck(false).clean());
}

TEST(ZonedFs, SameOperationsGiveTheSameFileSystem) {
  auto run = [](TestImage& image) {
    Mounted m = fresh(image);
    for (int i = 0; i < 40; ++i) {
      write_file(*m.fs, "/f" + std::to_string(i), pattern_bytes(i, 1000 + 777 * i));
      if (i % 4 == 1) {
        EXPECT_TRUE(m.fs->remove("/f" + std::to_string(i - 1)).is_ok());
      }
    }
    return std::make_pair(m.fs->dump_json(), m.fs->stats_json());
  };
  TestImage a;
  TestImage b;
  EXPECT_EQ(run(a), run(b));
}

TEST(ZonedFs, BadNamesAndOperationsAreRefusedWithAReason) {
  TestImage image;
  Mounted m = fresh(image);
  EXPECT_EQ(m.fs->open_write("relative", {}).status().code(), Code::kInvalid);
  EXPECT_EQ(m.fs->open_write("/" + std::string(300, 'n'), {}).status().code(), Code::kInvalid);
  EXPECT_EQ(m.fs->open_write("/no/dir/file", {}).status().code(), Code::kNotFound);
  EXPECT_EQ(m.fs->create_dir("/x/y", false).code(), Code::kNotFound);
  EXPECT_EQ(m.fs->open_read("/missing").status().code(), Code::kNotFound);
  EXPECT_EQ(m.fs->remove("/missing").code(), Code::kNotFound);
  // A name's control characters are quoted: a message is one line.
  const FsStatus weird = m.fs->remove("/two\nlines\x1b[31m");
  EXPECT_EQ(weird.code(), Code::kNotFound);
  EXPECT_EQ(weird.message().find_first_of("\n\x1b"), std::string::npos) << weird.message();
  EXPECT_NE(weird.message().find("two\\x0alines\\x1b[31m"), std::string::npos) << weird.message();
  ASSERT_TRUE(m.fs->create_dir("/d", false).is_ok());
  EXPECT_EQ(m.fs->create_dir("/d", false).code(), Code::kExists);
  EXPECT_TRUE(m.fs->create_dir("/d", true).is_ok());
  EXPECT_EQ(m.fs->open_write("/d", {}).status().code(), Code::kIsDirectory);
  EXPECT_EQ(m.fs->remove("/d").code(), Code::kIsDirectory);
  write_file(*m.fs, "/d/f", pattern_bytes(1, 10));
  EXPECT_EQ(m.fs->remove_dir("/d").code(), Code::kNotEmpty);
  EXPECT_EQ(m.fs->remove_dir("/d/f").code(), Code::kNotDirectory);
  EXPECT_EQ(m.fs->open_write("/d/f/g", {}).status().code(), Code::kNotDirectory);
  EXPECT_EQ(m.fs->truncate("/d/f", 100).code(), Code::kInvalid);
  EXPECT_EQ(m.fs->list("/d/f").status().code(), Code::kNotDirectory);
  auto w = m.fs->open_write("/d/f", {Lifetime::kNotSet, IoClass::kOther, true});
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(m.fs->open_write("/d/f", {}).status().code(), Code::kBusy);  // one writer a file
  ASSERT_TRUE((*w)->close().is_ok());
  ASSERT_TRUE(m.fs->lock_file("/d/LOCK").is_ok());
  EXPECT_EQ(m.fs->lock_file("/d/LOCK").code(), Code::kBusy);
  ASSERT_TRUE(m.fs->unlock_file("/d/LOCK").is_ok());
  EXPECT_TRUE(m.fs->lock_file("/d/LOCK").is_ok());
  EXPECT_TRUE(m.fs->exists("/d/LOCK"));
  EXPECT_TRUE(m.fs->fsck(false).clean());
}

TEST(ZonedFs, AppendReopensAFileAndTruncateCutsIt) {
  TestImage image;
  Mounted m = fresh(image);
  std::vector<uint8_t> a = pattern_bytes(1, 5000);
  std::vector<uint8_t> b = pattern_bytes(2, 7000);
  write_file(*m.fs, "/f", a);
  write_file(*m.fs, "/f", b, {Lifetime::kNotSet, IoClass::kOther, true});
  std::vector<uint8_t> both = a;
  both.insert(both.end(), b.begin(), b.end());
  EXPECT_EQ(read_file(*m.fs, "/f"), both);
  ASSERT_TRUE(m.fs->truncate("/f", 6000).is_ok());
  both.resize(6000);
  EXPECT_EQ(read_file(*m.fs, "/f"), both);
  write_file(*m.fs, "/f", b);  // a plain open replaces the file
  EXPECT_EQ(read_file(*m.fs, "/f"), b);
  ASSERT_TRUE(m.fs->sync_metadata().is_ok());
  EXPECT_TRUE(m.fs->fsck(false).clean());
}

TEST(ZonedFs, MkfsRefusesAFileSystemWithoutForceAndDevicesItCannotUse) {
  TestImage image;
  Mounted m = fresh(image);
  FsStatus again = ZonedFs::mkfs(*m.stack, test_mkfs_options());
  EXPECT_EQ(again.code(), Code::kExists);
  MkfsOptions bad = test_mkfs_options();
  bad.meta_zones = 1;
  EXPECT_EQ(ZonedFs::mkfs(*m.stack, bad).code(), Code::kInvalid);
  bad = test_mkfs_options();
  bad.finish_threshold_pct = 101;
  EXPECT_EQ(ZonedFs::mkfs(*m.stack, bad).code(), Code::kInvalid);
  bad = test_mkfs_options();
  bad.policy = "nope";
  EXPECT_EQ(ZonedFs::mkfs(*m.stack, bad).code(), Code::kInvalid);
  bad = test_mkfs_options();
  bad.meta_zones = 8;
  bad.force = true;
  EXPECT_TRUE(ZonedFs::mkfs(*m.stack, bad).is_ok() == (m.fs->io().zone_count() >= 11));

  TestImage tiny(fs_test_config({"flash.blocks_per_plane=8"}));  // 4 zones
  auto stack = tiny.open();
  FsStatus small = ZonedFs::mkfs(*stack, test_mkfs_options());
  EXPECT_EQ(small.code(), Code::kInvalid);
  EXPECT_NE(small.message().find("too small"), std::string::npos) << small.message();

  auto none = Stack::make(fs_test_config({"store.backing=none"}));
  ASSERT_TRUE(none.ok());
  FsStatus no_data = ZonedFs::mkfs(**none, test_mkfs_options());
  EXPECT_NE(no_data.message().find("stores no data"), std::string::npos) << no_data.message();
}

TEST(ZonedFs, AnUnformattedDeviceIsNotMounted) {
  TestImage image;
  auto stack = image.open();
  auto fs = ZonedFs::mount(*stack);
  ASSERT_FALSE(fs.ok());
  EXPECT_EQ(fs.status().code(), Code::kNotFound);
  EXPECT_NE(fs.status().message().find("mkfs"), std::string::npos) << fs.status().message();
}

TEST(ZonedFs, AReadOnlyMountWritesNothing) {
  TestImage image;
  {
    Mounted m = fresh(image);
    write_file(*m.fs, "/f", pattern_bytes(1, 20000));
    auto w = m.fs->open_write("/tail", {});
    std::vector<uint8_t> data = pattern_bytes(2, 2 * kBs);
    ASSERT_TRUE((*w)->append(data.data(), data.size()).is_ok());
    ASSERT_TRUE((*w)->flush().is_ok());
    ASSERT_TRUE(m.fs->sync_metadata().is_ok());
    m.stack->power_cut();
  }
  std::string before = file_bytes(image.path());
  {
    StackOptions so;
    so.read_only = true;
    auto stack = Stack::open(image.path(), so);
    ASSERT_TRUE(stack.ok()) << stack.error();
    MountOptions mo;
    mo.read_only = true;
    auto fs = ZonedFs::mount(**stack, mo);
    ASSERT_TRUE(fs.ok()) << fs.status().message();
    EXPECT_EQ(read_file(**fs, "/f"), pattern_bytes(1, 20000));
    EXPECT_EQ(read_file(**fs, "/tail").size(), 2 * kBs);  // the tail, in memory only
    EXPECT_EQ((*fs)->open_write("/g", {}).status().code(), Code::kInvalid);
    EXPECT_EQ((*fs)->remove("/f").code(), Code::kInvalid);
    EXPECT_TRUE((*fs)->fsck(false).clean());
  }
  EXPECT_EQ(file_bytes(image.path()), before);
}

TEST(ZonedFs, ATornRollFallsBackToTheOlderMetadataZone) {
  TestImage image;
  {
    Mounted m = fresh(image);
    write_file(*m.fs, "/kept", pattern_bytes(1, 5000));
    ASSERT_TRUE(m.fs->sync_metadata().is_ok());
  }
  {
    // A roll cut off half way: zone 1 holds a header's first block only.
    auto stack = image.open();
    StackDevice stack_device(*stack);
    DeviceIo io(stack_device);
    Superblock sb;
    sb.block_bytes = kBs;
    sb.zone_size_lbas = io.info().zone_size_lbas;
    sb.zone_capacity_lbas = io.info().zone_capacity_lbas;
    sb.zone_count = io.zone_count();
    sb.meta_zones = 2;
    sb.policy = "zenfs";
    std::vector<Record> big;
    for (int i = 0; i < 1000; ++i) {
      Record r;
      r.type = RecordType::kDirMade;
      r.path = "/x" + std::to_string(i);
      big.push_back(r);
    }
    std::vector<uint8_t> header = encode_meta_header(99, 1, sb, big, kBs);
    ASSERT_GT(header.size(), kBs);
    ASSERT_TRUE(io.write(io.zone_start(1), header.data(), 1, WriteCause::kMeta).is_ok());
  }
  Mounted m = mount(image);
  EXPECT_EQ(read_file(*m.fs, "/kept"), pattern_bytes(1, 5000));
  EXPECT_FALSE(m.fs->exists("/x0"));
  write_file(*m.fs, "/after", pattern_bytes(2, 100));
  EXPECT_TRUE(m.fs->fsck(false).clean());
  m.fs.reset();
  m.stack.reset();
  Mounted again = mount(image);
  EXPECT_EQ(read_file(*again.fs, "/after"), pattern_bytes(2, 100));
}

TEST(ZonedFs, ATornJournalTailIsLeftBehindAndTheJournalGoesOn) {
  TestImage image;
  {
    Mounted m = fresh(image);
    write_file(*m.fs, "/kept", pattern_bytes(1, 5000));
    ASSERT_TRUE(m.fs->sync_metadata().is_ok());
    // The first block of a two-block group where the next group goes, the
    // second never written: what a crash between the commands of one group
    // leaves (a group over 1 MiB goes in several).
    auto rec = Journal::recover(m.fs->io());
    ASSERT_TRUE(rec.ok());
    std::vector<uint8_t> records = pattern_bytes(9, 5000);
    std::vector<uint8_t> group = encode_group(rec->header.sequence, rec->groups, records, kBs);
    ASSERT_EQ(group.size(), 2 * kBs);
    uint32_t zone = m.fs->journal_zone();
    ZoneDescriptor d = m.fs->io().zone(zone);
    ASSERT_TRUE(m.fs->io().write(d.wp_lba, group.data(), 1, WriteCause::kMeta).is_ok());
    m.stack->power_cut();
  }
  {
    Mounted m = mount(image);
    ASSERT_NE(m.fs, nullptr);
    ASSERT_EQ(m.fs->recovery_notes().size(), 1u);
    EXPECT_NE(m.fs->recovery_notes()[0].find("not replayed"), std::string::npos);
    EXPECT_EQ(read_file(*m.fs, "/kept"), pattern_bytes(1, 5000));
    write_file(*m.fs, "/after", pattern_bytes(2, 100));
    EXPECT_TRUE(m.fs->fsck(false).clean());
  }
  Mounted m = mount(image);
  EXPECT_EQ(read_file(*m.fs, "/after"), pattern_bytes(2, 100));
  EXPECT_TRUE(m.fs->recovery_notes().empty());
}

TEST(ZonedFs, NoReadableHeaderIsNoFileSystem) {
  TestImage image;
  {
    Mounted m = fresh(image);
    write_file(*m.fs, "/f", pattern_bytes(1, 10));
  }
  {
    auto stack = image.open();
    StackDevice stack_device(*stack);
    DeviceIo io(stack_device);
    for (uint32_t z = 0; z < 2; ++z) {
      if (io.zone(z).state != ZoneState::kEmpty) {
        ASSERT_TRUE(io.reset(z).is_ok());
      }
    }
    std::vector<uint8_t> junk = pattern_bytes(3, kBs);
    ASSERT_TRUE(io.write(io.zone_start(0), junk.data(), 1, WriteCause::kMeta).is_ok());
  }
  auto stack = image.open();
  auto fs = ZonedFs::mount(*stack);
  ASSERT_FALSE(fs.ok());
  EXPECT_EQ(fs.status().code(), Code::kNotFound);
  EXPECT_NE(fs.status().message().find("no metadata header"), std::string::npos)
      << fs.status().message();
}

TEST(ZonedFs, ADamagedHeaderIsDamageAndMkfsWillNotWriteOverIt) {
  TestImage image;
  {
    Mounted m = fresh(image);
    write_file(*m.fs, "/f", pattern_bytes(1, 10));
  }
  {
    // The header's magic stays, a byte of its superblock changes.
    auto stack = image.open();
    StackDevice stack_device(*stack);
    DeviceIo io(stack_device);
    std::vector<uint8_t> block(kBs);
    ASSERT_TRUE(io.read(io.zone_start(0), block.data(), 1).is_ok());
    block[40] ^= 0xff;
    ASSERT_TRUE(io.reset(0).is_ok());
    ASSERT_TRUE(io.write(io.zone_start(0), block.data(), 1, WriteCause::kMeta).is_ok());
  }
  auto stack = image.open();
  auto fs = ZonedFs::mount(*stack);
  ASSERT_FALSE(fs.ok());
  EXPECT_EQ(fs.status().code(), Code::kCorruption);
  EXPECT_NE(fs.status().message().find("damaged"), std::string::npos) << fs.status().message();
  FsStatus made = ZonedFs::mkfs(*stack, test_mkfs_options());
  EXPECT_EQ(made.code(), Code::kExists);
  EXPECT_NE(made.message().find("--force"), std::string::npos) << made.message();
  MkfsOptions force = test_mkfs_options();
  force.force = true;
  EXPECT_TRUE(ZonedFs::mkfs(*stack, force).is_ok());
}

TEST(ZonedFs, FsckFindsDataTheDeviceNoLongerHoldsAndRepairs) {
  TestImage image;
  std::vector<uint8_t> data = pattern_bytes(1, 3 * kBs);
  uint32_t zone = 0;
  {
    Mounted m = fresh(image);
    write_file(*m.fs, "/victim", data);
    zone = m.fs->stat("/victim")->extents[0].zone;
  }
  {
    // The zone is reset behind the file system's back.
    auto stack = image.open();
    StackDevice stack_device(*stack);
    DeviceIo io(stack_device);
    ASSERT_TRUE(io.reset(zone).is_ok());
  }
  {
    auto stack = image.open();
    auto refused = ZonedFs::mount(*stack);
    ASSERT_FALSE(refused.ok());  // mounting checks every extent
    EXPECT_NE(refused.status().message().find("beyond zone"), std::string::npos);
  }
  MountOptions cut;
  cut.cut_lost_data = true;
  {
    // fsck's read-only mount: the loss is damage, and nothing changes.
    StackOptions so;
    so.read_only = true;
    cut.read_only = true;
    Mounted m = mount(image, cut, so);
    ASSERT_NE(m.fs, nullptr);
    auto report = m.fs->fsck(false);
    ASSERT_EQ(report.problems.size(), 1u);
    EXPECT_NE(report.problems[0].find("cut to 0 bytes"), std::string::npos) << report.problems[0];
  }
  {
    // fsck --repair's writable mount: the cut is journaled.
    cut.read_only = false;
    Mounted m = mount(image, cut);
    ASSERT_NE(m.fs, nullptr);
    auto report = m.fs->fsck(true);
    EXPECT_TRUE(report.clean());
    // The cut gave up data the journal held: a loss, not a clean repair.
    EXPECT_TRUE(report.repairs.empty());
    ASSERT_EQ(report.losses.size(), 1u);
    EXPECT_NE(report.losses[0].find("(/victim)"), std::string::npos) << report.losses[0];
  }
  Mounted m = mount(image);
  ASSERT_NE(m.fs, nullptr);
  EXPECT_EQ(m.fs->stat("/victim")->size, 0u);
  EXPECT_TRUE(m.fs->fsck(false).clean());
}

TEST(ZonedFs, CountersAndWriteAmplificationAreKeptAcrossMounts) {
  TestImage image;
  FsCounters before;
  double wa = 0;
  {
    Mounted m = fresh(image);
    write_file(*m.fs, "/a", pattern_bytes(1, 100000), {Lifetime::kShort, IoClass::kFlush});
    write_file(*m.fs, "/b", pattern_bytes(2, 5000));
    ASSERT_TRUE(m.fs->remove("/a").is_ok());
    before = m.fs->counters();
    wa = m.fs->space().write_amplification;
  }
  Mounted m = mount(image);
  FsCounters after = m.fs->counters();
  EXPECT_EQ(counter_values(after), counter_values(before));
  EXPECT_EQ(m.fs->space().write_amplification, wa);
  EXPECT_GT(wa, 1.0);
  EXPECT_EQ(after.files_created, 2u);
  EXPECT_EQ(after.appended_bytes[static_cast<size_t>(IoClass::kFlush)], 100000u);
  // A record with fewer values (an older zonelab's) leaves the rest zero.
  FsCounters partial = counters_of({7, 8});
  EXPECT_EQ(partial.appended_bytes[0], 7u);
  EXPECT_EQ(partial.appended_bytes[1], 8u);
  EXPECT_EQ(partial.files_created, 0u);
}

TEST(ZonedFs, StatisticsNameEverythingTheFileSystemDid) {
  TestImage image;
  Mounted m = fresh(image);
  write_file(*m.fs, "/a", pattern_bytes(1, 100000), {Lifetime::kShort, IoClass::kFlush});
  ASSERT_TRUE(m.fs->remove("/a").is_ok());
  auto stats = nlohmann::json::parse(m.fs->stats_json());
  EXPECT_EQ(stats["files"]["created"], 1);
  EXPECT_EQ(stats["files"]["deleted"], 1);
  EXPECT_EQ(stats["files"]["by_class"]["flush"]["appended_bytes"], 100000);
  EXPECT_EQ(stats["zones"]["reset"], 1);
  EXPECT_EQ(stats["zones"]["reset_without_copy_share"], 1.0);
  EXPECT_GT(stats["device_io"]["commands"]["write"]["count"].get<uint64_t>(), 0u);
  EXPECT_GT(stats["device_io"]["commands"]["write"]["latency_ns"]["p50"].get<uint64_t>(), 0u);
  EXPECT_GT(stats["space"]["write_amplification"].get<double>(), 1.0);
  auto dump = nlohmann::json::parse(m.fs->dump_json());
  EXPECT_EQ(dump["files"].size(), 0u);
  EXPECT_EQ(dump["zones"].size(), m.fs->space().data_zones);
}

}  // namespace
}  // namespace zonelab::fs
