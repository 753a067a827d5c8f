// Journal records and what they do to the metadata: every record round
// trips; refused records change nothing; a snapshot rebuilds the state.
#include "fs/metadata.h"

#include <gtest/gtest.h>

#include "fs/journal.h"
#include "store/bytes.h"

namespace zonelab::fs {
namespace {

constexpr uint64_t kBs = 4096;

Record created(FileId id, Lifetime lifetime = Lifetime::kShort) {
  Record r;
  r.type = RecordType::kFileCreated;
  r.id = id;
  r.lifetime = lifetime;
  r.io_class = IoClass::kWal;
  r.mtime_ns = 77;
  return r;
}

Record linked(FileId id, const std::string& path) {
  Record r;
  r.type = RecordType::kNameLinked;
  r.id = id;
  r.path = path;
  return r;
}

Record path_record(RecordType type, const std::string& path, const std::string& path2 = "") {
  Record r;
  r.type = type;
  r.path = path;
  r.path2 = path2;
  return r;
}

Record extent(FileId id, uint32_t zone, uint64_t lba, uint64_t length) {
  Record r;
  r.type = RecordType::kExtentAdded;
  r.id = id;
  r.extent = Extent{zone, lba, length};
  return r;
}

std::vector<Record> every_kind() {
  Record size;
  size.type = RecordType::kSizeSet;
  size.id = 3;
  size.size = 1000;
  size.mtime_ns = 5;
  Record moved;
  moved.type = RecordType::kExtentMoved;
  moved.id = 3;
  moved.extent = Extent{3, 50, 4106};
  moved.extents = {Extent{4, 100, 4096}, Extent{5, 200, 10}};
  Record counters;
  counters.type = RecordType::kCounters;
  counters.values = {1, 2, 3, UINT64_MAX};
  Record taken;
  taken.type = RecordType::kZoneTaken;
  taken.zone = 9;
  taken.id = 3;
  taken.lba = 9 * 64 + 12;
  Record hints;
  hints.type = RecordType::kHintsSet;
  hints.id = 3;
  hints.lifetime = Lifetime::kExtreme;
  hints.io_class = IoClass::kCompaction;
  Record policy;
  policy.type = RecordType::kPolicySet;
  policy.path = "zenfs+";
  policy.blob =
      "isolation=on\nizg=64:p=32:0.1.2.3.4.5.6.7.8.9.10.11.12.13.14.15.16.17.18.19.20.21."
      "22.23.24.25.26.27.28.29.30.31\n";
  return {created(3),
          linked(3, "/db/000003.log"),
          path_record(RecordType::kNameUnlinked, "/db/x"),
          path_record(RecordType::kRenamed, "/db/CURRENT.tmp", "/db/CURRENT"),
          extent(3, 7, 7 * 64 + 5, 12345),
          size,
          path_record(RecordType::kDirMade, "/db"),
          path_record(RecordType::kDirRemoved, "/db"),
          moved,
          hints,
          taken,
          counters,
          policy};
}

TEST(FsRecords, EveryKindRoundTrips) {
  std::vector<uint8_t> bytes;
  for (const Record& r : every_kind()) encode_record(r, bytes);
  auto decoded = decode_records(bytes.data(), bytes.size());
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(*decoded, every_kind());
}

TEST(FsRecords, EveryCutIsRefusedAsCorruption) {
  for (const Record& r : every_kind()) {
    std::vector<uint8_t> bytes;
    encode_record(r, bytes);
    for (size_t cut = 1; cut < bytes.size(); ++cut) {
      auto decoded = decode_records(bytes.data(), cut);
      ASSERT_FALSE(decoded.ok()) << record_type_name(r.type) << " cut at " << cut;
      EXPECT_EQ(decoded.status().code(), Code::kCorruption);
    }
  }
}

TEST(FsRecords, UnknownTypesLongStringsAndHugeCountsAreRefused) {
  std::vector<uint8_t> unknown = {kRecordTypeLast + 1, 0, 0, 0, 0};
  EXPECT_FALSE(decode_records(unknown.data(), unknown.size()).ok());
  std::vector<uint8_t> zero = {0, 0, 0, 0, 0};
  EXPECT_FALSE(decode_records(zero.data(), zero.size()).ok());
  // A path whose length is past the limit.
  std::vector<uint8_t> long_path = {7, 2, 0, 0, 0, 0xFF, 0xFF};
  EXPECT_FALSE(decode_records(long_path.data(), long_path.size()).ok());
  // An extent-moved record claiming 2^32-1 pieces.
  std::vector<uint8_t> many = {9, 32, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0};
  many.insert(many.end(), 20, 0);
  many.insert(many.end(), {0xFF, 0xFF, 0xFF, 0xFF});
  EXPECT_FALSE(decode_records(many.data(), many.size()).ok());
  // A policy record whose state claims more than the limit.
  std::vector<uint8_t> huge_state = {13, 12, 0, 0, 0, 1, 0, 'z', 0xFF, 0xFF, 0xFF, 0x7F};
  EXPECT_FALSE(decode_records(huge_state.data(), huge_state.size()).ok());
  // Lifetime and class past their last values.
  Record bad_hints = created(1);
  std::vector<uint8_t> hint_bytes;
  encode_record(bad_hints, hint_bytes);
  hint_bytes[5 + 8] = kLifetimeLast + 1;
  EXPECT_FALSE(decode_records(hint_bytes.data(), hint_bytes.size()).ok());
  hint_bytes[5 + 8] = 0;
  hint_bytes[5 + 9] = kIoClassLast + 1;
  EXPECT_FALSE(decode_records(hint_bytes.data(), hint_bytes.size()).ok());
  // A record longer than any record may be.
  std::vector<uint8_t> huge = {7, 0xFF, 0xFF, 0xFF, 0x7F};
  EXPECT_FALSE(decode_records(huge.data(), huge.size()).ok());
  // A body longer than its record says.
  std::vector<uint8_t> bytes;
  encode_record(created(1), bytes);
  bytes[1] = 3;
  EXPECT_FALSE(decode_records(bytes.data(), bytes.size()).ok());
}

TEST(FsPaths, OnlyNormalizedAbsolutePathsWithinTheLimits) {
  for (const char* good : {"/", "/a", "/db/000012.sst", "/tmp/rocksdbtest-0/dbbench/LOCK"}) {
    EXPECT_TRUE(check_path(good).is_ok()) << good;
  }
  for (const char* bad : {"", "a", "/a/", "//a", "/a//b", "/a/./b", "/a/../b", "/."}) {
    EXPECT_EQ(check_path(bad).code(), Code::kInvalid) << bad;
  }
  EXPECT_FALSE(check_path("/" + std::string(256, 'x')).is_ok());  // a name too long
  EXPECT_TRUE(check_path("/" + std::string(255, 'x')).is_ok());
  EXPECT_FALSE(check_path("/" + std::string(kPathBytesMax, 'x')).is_ok());
  EXPECT_EQ(parent_of("/a/b"), "/a");
  EXPECT_EQ(parent_of("/a"), "/");
}

TEST(FsMetadata, NamesNeedADirectoryAndAreUnique) {
  Metadata m;
  ASSERT_TRUE(m.apply(created(1), kBs).is_ok());
  EXPECT_EQ(m.apply(linked(1, "/db/a"), kBs).code(), Code::kNotFound);
  ASSERT_TRUE(m.apply(path_record(RecordType::kDirMade, "/db"), kBs).is_ok());
  ASSERT_TRUE(m.apply(linked(1, "/db/a"), kBs).is_ok());
  EXPECT_EQ(m.apply(linked(1, "/db/a"), kBs).code(), Code::kExists);
  EXPECT_EQ(m.apply(linked(9, "/db/b"), kBs).code(), Code::kCorruption);
  EXPECT_EQ(m.apply(path_record(RecordType::kDirRemoved, "/db"), kBs).code(), Code::kNotEmpty);
  EXPECT_EQ(m.children("/db"), std::vector<std::string>{"a"});
  EXPECT_EQ(m.children("/"), std::vector<std::string>{"db"});
}

TEST(FsMetadata, ContiguousExtentsMergeUnlessTheLastBlockWasPadded) {
  Metadata m;
  ASSERT_TRUE(m.apply(created(1), kBs).is_ok());
  ASSERT_TRUE(m.apply(linked(1, "/f"), kBs).is_ok());
  SpaceChanges ch;
  ASSERT_TRUE(m.apply(extent(1, 2, 128, 8192), kBs, &ch).is_ok());
  ASSERT_TRUE(m.apply(extent(1, 2, 130, 100), kBs, &ch).is_ok());  // continues: merged
  ASSERT_TRUE(m.apply(extent(1, 2, 131, 50), kBs, &ch).is_ok());   // after padding: new
  const FileNode* f = m.lookup("/f");
  ASSERT_EQ(f->extents.size(), 2u);
  EXPECT_EQ(f->extents[0], (Extent{2, 128, 8292}));
  EXPECT_EQ(f->size, 8342u);
  ASSERT_EQ(ch.added.size(), 3u);
  EXPECT_EQ(ch.added[1], (Extent{2, 130, kBs}));  // whole blocks taken
}

TEST(FsMetadata, AFileGoesWithItsLastNameUnlessHeld) {
  Metadata m;
  ASSERT_TRUE(m.apply(created(1), kBs).is_ok());
  ASSERT_TRUE(m.apply(linked(1, "/a"), kBs).is_ok());
  ASSERT_TRUE(m.apply(linked(1, "/b"), kBs).is_ok());
  ASSERT_TRUE(m.apply(extent(1, 3, 192, 5000), kBs).is_ok());
  EXPECT_EQ(m.file(1)->nlink, 2u);
  SpaceChanges ch;
  ASSERT_TRUE(m.apply(path_record(RecordType::kNameUnlinked, "/a"), kBs, &ch).is_ok());
  EXPECT_TRUE(ch.freed.empty());
  m.hold(1);
  ASSERT_TRUE(m.apply(path_record(RecordType::kNameUnlinked, "/b"), kBs, &ch).is_ok());
  EXPECT_NE(m.file(1), nullptr);  // still open
  m.release(1, kBs, &ch);
  EXPECT_EQ(m.file(1), nullptr);
  ASSERT_EQ(ch.freed.size(), 1u);
  EXPECT_EQ(ch.freed[0], (Extent{3, 192, 2 * kBs}));
}

TEST(FsMetadata, RenameReplacesTheTargetAndFreesIt) {
  Metadata m;
  for (FileId id : {1, 2}) ASSERT_TRUE(m.apply(created(id), kBs).is_ok());
  ASSERT_TRUE(m.apply(linked(1, "/CURRENT.tmp"), kBs).is_ok());
  ASSERT_TRUE(m.apply(linked(2, "/CURRENT"), kBs).is_ok());
  ASSERT_TRUE(m.apply(extent(2, 4, 256, 10), kBs).is_ok());
  SpaceChanges ch;
  ASSERT_TRUE(
      m.apply(path_record(RecordType::kRenamed, "/CURRENT.tmp", "/CURRENT"), kBs, &ch).is_ok());
  EXPECT_EQ(m.lookup("/CURRENT")->id, 1u);
  EXPECT_EQ(m.lookup("/CURRENT.tmp"), nullptr);
  EXPECT_EQ(m.file(2), nullptr);
  EXPECT_EQ(ch.freed.size(), 1u);
  EXPECT_EQ(m.apply(path_record(RecordType::kRenamed, "/none", "/x"), kBs).code(), Code::kNotFound);
}

// A tree: /ckpt.tmp/{000012.sst, CURRENT, sub/deep}, and /ckpt.tmpx/other,
// whose name starts like the directory's but lies outside it.
Metadata checkpoint_tree() {
  Metadata m;
  for (const char* dir : {"/ckpt.tmp", "/ckpt.tmp/sub", "/ckpt.tmpx", "/empty", "/full"}) {
    EXPECT_TRUE(m.apply(path_record(RecordType::kDirMade, dir), kBs).is_ok()) << dir;
  }
  FileId id = 1;
  for (const char* name : {"/ckpt.tmp/000012.sst", "/ckpt.tmp/CURRENT", "/ckpt.tmp/sub/deep",
                           "/ckpt.tmpx/other", "/full/x"}) {
    EXPECT_TRUE(m.apply(created(id), kBs).is_ok());
    EXPECT_TRUE(m.apply(linked(id, name), kBs).is_ok()) << name;
    ++id;
  }
  return m;
}

TEST(FsMetadata, ADirectoryRenameMovesEverythingBelowIt) {
  Metadata m = checkpoint_tree();
  SpaceChanges ch;
  ASSERT_TRUE(m.apply(path_record(RecordType::kRenamed, "/ckpt.tmp", "/ckpt"), kBs, &ch).is_ok());
  EXPECT_TRUE(ch.freed.empty());
  EXPECT_FALSE(m.is_dir("/ckpt.tmp"));
  EXPECT_FALSE(m.is_dir("/ckpt.tmp/sub"));
  EXPECT_TRUE(m.is_dir("/ckpt"));
  EXPECT_TRUE(m.is_dir("/ckpt/sub"));
  EXPECT_EQ(m.lookup("/ckpt/000012.sst")->id, 1u);
  EXPECT_EQ(m.lookup("/ckpt/CURRENT")->id, 2u);
  EXPECT_EQ(m.lookup("/ckpt/sub/deep")->id, 3u);
  EXPECT_EQ(m.lookup("/ckpt.tmpx/other")->id, 4u);  // a neighbour, not below it
  EXPECT_EQ(m.children("/ckpt"), (std::vector<std::string>{"000012.sst", "CURRENT", "sub"}));
  EXPECT_EQ(m.children("/"), (std::vector<std::string>{"ckpt", "ckpt.tmpx", "empty", "full"}));
  EXPECT_EQ(m.names().size(), 5u);
  EXPECT_EQ(m.file(1)->nlink, 1u);
  // Deeper, and back: the tree is where it started.
  ASSERT_TRUE(m.apply(path_record(RecordType::kRenamed, "/ckpt", "/ckpt.tmpx/in"), kBs).is_ok());
  EXPECT_EQ(m.lookup("/ckpt.tmpx/in/sub/deep")->id, 3u);
  ASSERT_TRUE(
      m.apply(path_record(RecordType::kRenamed, "/ckpt.tmpx/in", "/ckpt.tmp"), kBs).is_ok());
  Metadata fresh = checkpoint_tree();
  EXPECT_EQ(m.dirs(), fresh.dirs());
  EXPECT_EQ(m.names(), fresh.names());
  // The same name: nothing happens.
  ASSERT_TRUE(m.apply(path_record(RecordType::kRenamed, "/ckpt.tmp", "/ckpt.tmp"), kBs).is_ok());
  EXPECT_EQ(m.names(), fresh.names());
}

TEST(FsMetadata, ADirectoryRenameReplacesOnlyAnEmptyDirectory) {
  Metadata m = checkpoint_tree();
  ASSERT_TRUE(m.apply(path_record(RecordType::kRenamed, "/ckpt.tmp", "/empty"), kBs).is_ok());
  EXPECT_EQ(m.lookup("/empty/CURRENT")->id, 2u);
  EXPECT_TRUE(m.is_dir("/empty/sub"));
  EXPECT_FALSE(m.is_dir("/ckpt.tmp"));
}

TEST(FsMetadata, ADirectoryRenameIsRefusedAsRename2RefusesIt) {
  const Metadata before = checkpoint_tree();
  auto refused = [&](const std::string& from, const std::string& to) {
    Metadata m = checkpoint_tree();
    Code code = m.apply(path_record(RecordType::kRenamed, from, to), kBs).code();
    EXPECT_EQ(m.dirs(), before.dirs()) << from << " -> " << to;  // nothing changed
    EXPECT_EQ(m.names(), before.names()) << from << " -> " << to;
    return code;
  };
  EXPECT_EQ(refused("/ckpt.tmp", "/full"), Code::kNotEmpty);
  EXPECT_EQ(refused("/ckpt.tmp", "/"), Code::kNotEmpty);
  EXPECT_EQ(refused("/ckpt.tmp/sub", "/ckpt.tmp"), Code::kNotEmpty);  // onto its own parent
  EXPECT_EQ(refused("/ckpt.tmp", "/full/x"), Code::kNotDirectory);    // onto a file
  EXPECT_EQ(refused("/ckpt.tmp", "/full/x/y"), Code::kNotDirectory);  // below a file
  EXPECT_EQ(refused("/ckpt.tmp", "/ckpt.tmp/sub/in"), Code::kInvalid);
  EXPECT_EQ(refused("/ckpt.tmp", "/ckpt.tmp/in"), Code::kInvalid);
  EXPECT_EQ(refused("/", "/root"), Code::kInvalid);
  EXPECT_EQ(refused("/ckpt.tmp", "/none/ckpt"), Code::kNotFound);
  EXPECT_EQ(refused("/ckpt.tmp", "/bad//path"), Code::kInvalid);
  EXPECT_EQ(refused("/ckpt.tmpx/other", "/empty"), Code::kIsDirectory);  // a file onto a dir
  // Every path below must stay within the limit: "/ckpt.tmp/000012.sst" is
  // the longest, 11 bytes past "/ckpt.tmp".
  Metadata m = checkpoint_tree();
  std::string parent;
  for (int i = 0; i < 3; ++i) {
    parent += "/" + std::string(kNameBytesMax, 'b');
    ASSERT_TRUE(m.apply(path_record(RecordType::kDirMade, parent), kBs).is_ok());
  }
  const std::string fits = parent + "/" + std::string(kPathBytesMax - 11 - parent.size() - 1, 'c');
  EXPECT_EQ(m.apply(path_record(RecordType::kRenamed, "/ckpt.tmp", fits + "c"), kBs).code(),
            Code::kInvalid);
  EXPECT_TRUE(m.is_dir("/ckpt.tmp"));
  ASSERT_TRUE(m.apply(path_record(RecordType::kRenamed, "/ckpt.tmp", fits), kBs).is_ok());
  ASSERT_NE(m.lookup(fits + "/000012.sst"), nullptr);
  EXPECT_EQ((fits + "/000012.sst").size(), kPathBytesMax);
}

TEST(FsMetadata, ASnapshotAfterADirectoryRenameRebuildsIt) {
  Metadata m = checkpoint_tree();
  ASSERT_TRUE(m.apply(path_record(RecordType::kRenamed, "/ckpt.tmp", "/ckpt"), kBs).is_ok());
  Metadata copy;
  for (const Record& r : m.snapshot()) ASSERT_TRUE(copy.apply(r, kBs).is_ok());
  EXPECT_EQ(copy.dirs(), m.dirs());
  EXPECT_EQ(copy.names(), m.names());
}

TEST(FsMetadata, SizeSetCutsExtentsAndFreesTheBlocksBeyond) {
  Metadata m;
  ASSERT_TRUE(m.apply(created(1), kBs).is_ok());
  ASSERT_TRUE(m.apply(linked(1, "/f"), kBs).is_ok());
  ASSERT_TRUE(m.apply(extent(1, 2, 128, 4 * kBs), kBs).is_ok());
  ASSERT_TRUE(m.apply(extent(1, 3, 192, 2 * kBs), kBs).is_ok());
  Record cut;
  cut.type = RecordType::kSizeSet;
  cut.id = 1;
  cut.size = kBs + 1;
  SpaceChanges ch;
  ASSERT_TRUE(m.apply(cut, kBs, &ch).is_ok());
  const FileNode* f = m.file(1);
  EXPECT_EQ(f->size, kBs + 1);
  ASSERT_EQ(f->extents.size(), 1u);
  EXPECT_EQ(f->extents[0], (Extent{2, 128, kBs + 1}));
  ASSERT_EQ(ch.freed.size(), 2u);
  EXPECT_EQ(ch.freed[0], (Extent{2, 130, 2 * kBs}));
  EXPECT_EQ(ch.freed[1], (Extent{3, 192, 2 * kBs}));
  cut.size = kBs * 10;
  EXPECT_EQ(m.apply(cut, kBs).code(), Code::kInvalid);  // files grow by appends only
}

TEST(FsMetadata, ExtentMovedKeepsTheBytesAndMovesTheSpace) {
  Metadata m;
  ASSERT_TRUE(m.apply(created(1), kBs).is_ok());
  ASSERT_TRUE(m.apply(linked(1, "/f"), kBs).is_ok());
  ASSERT_TRUE(m.apply(extent(1, 2, 128, 5000), kBs).is_ok());
  ASSERT_TRUE(m.apply(extent(1, 3, 192, 100), kBs).is_ok());
  Record moved;
  moved.type = RecordType::kExtentMoved;
  moved.id = 1;
  moved.extent = Extent{2, 128, 5000};
  moved.extents = {Extent{6, 384, 4096}, Extent{7, 448, 904}};
  SpaceChanges ch;
  ASSERT_TRUE(m.apply(moved, kBs, &ch).is_ok());
  EXPECT_EQ(m.file(1)->extents,
            (std::vector<Extent>{{6, 384, 4096}, {7, 448, 904}, {3, 192, 100}}));
  EXPECT_EQ(m.file(1)->size, 5100u);
  EXPECT_EQ(ch.freed, (std::vector<Extent>{{2, 128, 2 * kBs}}));
  EXPECT_EQ(ch.added, (std::vector<Extent>{{6, 384, kBs}, {7, 448, kBs}}));
  // An extent the file does not have, pieces that are not its bytes, a
  // piece that is not whole blocks before the last: refused, nothing moved.
  EXPECT_EQ(m.apply(moved, kBs).code(), Code::kCorruption);
  moved.extent = Extent{3, 192, 100};
  moved.extents = {Extent{8, 512, 99}};
  EXPECT_EQ(m.apply(moved, kBs).code(), Code::kCorruption);
  moved.extents = {Extent{8, 512, 50}, Extent{9, 576, 50}};
  EXPECT_EQ(m.apply(moved, kBs).code(), Code::kCorruption);
  EXPECT_EQ(m.file(1)->extents.size(), 3u);
}

TEST(FsMetadata, AMovedExtentMergesWithTheOneItNowContinues) {
  // A move that lands right after the file's previous extent merges with it,
  // as replaying the snapshot would: the record that moves it later names
  // the merged extent either way.
  Metadata m;
  ASSERT_TRUE(m.apply(created(1), kBs).is_ok());
  ASSERT_TRUE(m.apply(linked(1, "/f"), kBs).is_ok());
  ASSERT_TRUE(m.apply(extent(1, 6, 384, kBs), kBs).is_ok());
  ASSERT_TRUE(m.apply(extent(1, 2, 128, 10), kBs).is_ok());
  Record moved;
  moved.type = RecordType::kExtentMoved;
  moved.id = 1;
  moved.extent = Extent{2, 128, 10};
  moved.extents = {Extent{6, 385, 10}};
  ASSERT_TRUE(m.apply(moved, kBs).is_ok());
  EXPECT_EQ(m.file(1)->extents, (std::vector<Extent>{{6, 384, kBs + 10}}));
  Metadata copy;
  for (const Record& r : m.snapshot()) ASSERT_TRUE(copy.apply(r, kBs).is_ok());
  EXPECT_EQ(copy.file(1)->extents, m.file(1)->extents);
}

TEST(FsMetadata, AZoneIsTakenByAFileOrByNobody) {
  Metadata m;
  Record taken;
  taken.type = RecordType::kZoneTaken;
  taken.zone = 4;
  taken.id = 1;
  taken.lba = 300;
  EXPECT_EQ(m.apply(taken, kBs).code(), Code::kCorruption);  // no file 1
  ASSERT_TRUE(m.apply(created(1), kBs).is_ok());
  ASSERT_TRUE(m.apply(linked(1, "/f"), kBs).is_ok());
  ASSERT_TRUE(m.apply(taken, kBs).is_ok());
  EXPECT_EQ(m.owners().at(4), (ZoneOwner{1, 300}));
  taken.id = 0;  // garbage collection
  taken.lba = 310;
  ASSERT_TRUE(m.apply(taken, kBs).is_ok());
  EXPECT_EQ(m.owners().at(4), (ZoneOwner{0, 310}));
}

TEST(FsMetadata, ASnapshotRebuildsTheState) {
  Metadata m;
  ASSERT_TRUE(m.apply(path_record(RecordType::kDirMade, "/a"), kBs).is_ok());
  ASSERT_TRUE(m.apply(path_record(RecordType::kDirMade, "/a/b"), kBs).is_ok());
  ASSERT_TRUE(m.apply(path_record(RecordType::kDirMade, "/a-c"), kBs).is_ok());
  for (FileId id = 1; id <= 3; ++id) {
    ASSERT_TRUE(m.apply(created(id, static_cast<Lifetime>(id)), kBs).is_ok());
    ASSERT_TRUE(m.apply(linked(id, "/a/b/f" + std::to_string(id)), kBs).is_ok());
    ASSERT_TRUE(
        m.apply(extent(id, static_cast<uint32_t>(2 + id), 64 * (2 + id), 4096 * id + 7), kBs)
            .is_ok());
  }
  ASSERT_TRUE(m.apply(linked(2, "/a-c/hard"), kBs).is_ok());
  Record taken;
  taken.type = RecordType::kZoneTaken;
  taken.zone = 5;
  taken.id = 3;
  taken.lba = 5 * 64 + 3;
  ASSERT_TRUE(m.apply(taken, kBs).is_ok());
  Metadata copy;
  for (const Record& r : m.snapshot()) ASSERT_TRUE(copy.apply(r, kBs).is_ok());
  EXPECT_EQ(copy.dirs(), m.dirs());
  EXPECT_EQ(copy.names(), m.names());
  ASSERT_EQ(copy.files().size(), m.files().size());
  for (const auto& [id, node] : m.files()) {
    const FileNode* other = copy.file(id);
    ASSERT_NE(other, nullptr);
    EXPECT_EQ(other->extents, node.extents);
    EXPECT_EQ(other->size, node.size);
    EXPECT_EQ(other->nlink, node.nlink);
    EXPECT_EQ(other->lifetime, node.lifetime);
  }
  EXPECT_EQ(copy.owners(), m.owners());
  EXPECT_EQ(copy.snapshot(), m.snapshot());
}

TEST(Superblock, RoundTripsAndRefusesEveryDamage) {
  Superblock sb;
  sb.uuid[0] = 7;
  sb.block_bytes = 4096;
  sb.zone_size_lbas = 16;
  sb.zone_capacity_lbas = 12;
  sb.zone_count = 10;
  sb.meta_zones = 2;
  sb.finish_threshold_pct = 10;
  sb.gc_free_pct = 10;
  sb.policy = "zenfs";
  const std::vector<uint8_t> bytes = encode_superblock(sb);
  auto back = decode_superblock(bytes.data(), bytes.size());
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(encode_superblock(*back), bytes);
  // Any byte changed: the checksum fails.
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::vector<uint8_t> bad = bytes;
    bad[i] ^= 0x40;
    EXPECT_FALSE(decode_superblock(bad.data(), bad.size()).ok()) << "byte " << i;
  }
  // A reserved byte that is not zero, under a checksum that matches, is
  // refused too: what decodes encodes back to the same bytes.
  std::vector<uint8_t> reserved = bytes;
  reserved[100] = 1;
  store_u32(reserved.data() + 124, crc32c(reserved.data(), 124));
  auto refused = decode_superblock(reserved.data(), reserved.size());
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), Code::kCorruption);
  EXPECT_NE(refused.status().message().find("reserved"), std::string::npos);
}

}  // namespace
}  // namespace zonelab::fs
