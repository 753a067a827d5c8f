// Real RocksDB on the zoned file system, in this process: a database made,
// written, closed and read back; flush and compaction writes told apart;
// synced writes surviving a power cut of the device; RocksDB's view of the
// file system's errors, method by method as PosixFileSystem answers;
// checkpoints and exported column families (a directory renamed into
// place); a database read over a file system mounted by someone else, in
// virtual time; sessions shared per image. The device runs in real time
// with timing off (as fast as the host allows).
#include <gtest/gtest.h>
#include <rocksdb/convenience.h>
#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <rocksdb/metadata.h>
#include <rocksdb/options.h>
#include <rocksdb/utilities/checkpoint.h>
#include <rocksdb/utilities/object_registry.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "rocksdb/registry.h"
#include "rocksdb/session.h"

namespace zonelab::rocksdb_plugin {
namespace {

namespace rdb = ROCKSDB_NAMESPACE;

class PluginTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("zonelab-plugin-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    image_ = (dir_ / "dev.img").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string uri(const std::string& extra = "") const {
    return "zonelab://" + image_ + "?timing=off&pacing=sleep&stats=none" + extra;
  }

  // An image of the `small` preset with a file system on it.
  void make_image() { ASSERT_TRUE(create_image_with_fs(image_, "small", 0).ok()); }

  struct Db {
    std::shared_ptr<rdb::FileSystem> fs;
    std::unique_ptr<rdb::Env> env;
    std::unique_ptr<rdb::DB> db;
    ZonelabFileSystem& zfs() { return static_cast<ZonelabFileSystem&>(*fs); }
    ~Db() {
      db.reset();  // files close before the file system goes
    }
  };

  std::unique_ptr<Db> open(const std::string& u, rdb::Options options = {}) {
    auto made = std::make_unique<Db>();
    auto fs = open_file_system(u);
    EXPECT_TRUE(fs.ok()) << fs.error();
    if (!fs.ok()) return nullptr;
    made->fs = std::move(fs).value();
    made->env = rdb::NewCompositeEnv(made->fs);
    options.env = made->env.get();
    options.create_if_missing = true;
    rdb::DB* db = nullptr;
    rdb::Status s = rdb::DB::Open(options, "/db", &db);
    EXPECT_TRUE(s.ok()) << s.ToString();
    made->db.reset(db);
    return made;
  }

  static rdb::Options small_tables() {
    rdb::Options o;
    o.write_buffer_size = 256 << 10;
    o.target_file_size_base = 512 << 10;
    o.max_bytes_for_level_base = 1 << 20;
    o.level0_file_num_compaction_trigger = 2;
    return o;
  }

  static std::string key(int i) { return "key" + std::to_string(1000000 + i); }
  static std::string value(int i) {
    return std::string(100 + i % 50, static_cast<char>('a' + i % 26));
  }

  std::filesystem::path dir_;
  std::string image_;
};

TEST_F(PluginTest, ADatabaseIsWrittenClosedAndReadBack) {
  make_image();
  {
    auto d = open(uri(), small_tables());
    ASSERT_NE(d, nullptr);
    for (int i = 0; i < 20000; ++i) {
      ASSERT_TRUE(d->db->Put(rdb::WriteOptions(), key(i), value(i)).ok());
    }
    ASSERT_TRUE(d->db->Flush(rdb::FlushOptions()).ok());
  }
  auto d = open(uri(), small_tables());
  ASSERT_NE(d, nullptr);
  for (int i = 0; i < 20000; i += 7) {
    std::string got;
    ASSERT_TRUE(d->db->Get(rdb::ReadOptions(), key(i), &got).ok()) << i;
    EXPECT_EQ(got, value(i));
  }
  std::unique_ptr<rdb::Iterator> it(d->db->NewIterator(rdb::ReadOptions()));
  int n = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) ++n;
  EXPECT_EQ(n, 20000);
  it.reset();
  // Nothing of it on the host: the database lives in the image.
  EXPECT_FALSE(std::filesystem::exists("/db/CURRENT"));
  auto names = d->zfs().session().fs().list("/db");
  ASSERT_TRUE(names.ok());
  EXPECT_NE(std::find(names->begin(), names->end(), "CURRENT"), names->end());
  EXPECT_NE(std::find(names->begin(), names->end(), "LOCK"), names->end());
  EXPECT_NE(std::find(names->begin(), names->end(), "LOG"), names->end());
}

TEST_F(PluginTest, FlushAndCompactionWritesAreToldApart) {
  make_image();
  auto d = open(uri(), small_tables());
  ASSERT_NE(d, nullptr);
  for (int round = 0; round < 4; ++round) {
    for (int i = 0; i < 8000; ++i) {
      ASSERT_TRUE(d->db->Put(rdb::WriteOptions(), key(i), value(i + round)).ok());
    }
    ASSERT_TRUE(d->db->Flush(rdb::FlushOptions()).ok());
  }
  ASSERT_TRUE(d->db->CompactRange(rdb::CompactRangeOptions(), nullptr, nullptr).ok());
  fs::FsCounters c = d->zfs().session().fs().counters();
  auto bytes = [&](fs::IoClass k) { return c.appended_bytes[static_cast<size_t>(k)]; };
  EXPECT_GT(bytes(fs::IoClass::kWal), 0u);
  EXPECT_GT(bytes(fs::IoClass::kManifest), 0u);
  EXPECT_GT(bytes(fs::IoClass::kFlush), 0u);
  EXPECT_GT(bytes(fs::IoClass::kCompaction), 0u);
  // A flushed table and a compacted one were placed by their lifetimes.
  bool medium = false;
  bool longer = false;
  const nlohmann::json dump = nlohmann::json::parse(d->zfs().session().fs().dump_json());
  for (const auto& node : dump["files"]) {
    std::string lifetime = node["lifetime"];
    medium = medium || lifetime == "medium";
    longer = longer || lifetime == "long" || lifetime == "extreme";
  }
  EXPECT_TRUE(medium || longer) << d->zfs().session().fs().dump_json();
}

TEST_F(PluginTest, SyncedWritesSurviveAPowerCutOfTheDevice) {
  make_image();
  std::vector<int> acked;
  {
    auto d = open(uri("&power_cut_after=400"), small_tables());
    ASSERT_NE(d, nullptr);
    rdb::WriteOptions sync;
    sync.sync = true;
    for (int i = 0; i < 100000; ++i) {
      if (!d->db->Put(sync, key(i), value(i)).ok()) break;
      acked.push_back(i);
    }
    ASSERT_TRUE(d->zfs().session().stack().powered_off());
    ASSERT_LT(acked.size(), 100000u);
  }
  ASSERT_GT(acked.size(), 10u);
  auto d = open(uri(), small_tables());
  ASSERT_NE(d, nullptr);
  for (int i : acked) {
    std::string got;
    ASSERT_TRUE(d->db->Get(rdb::ReadOptions(), key(i), &got).ok()) << "acknowledged key " << i;
    EXPECT_EQ(got, value(i));
  }
  auto report = d->zfs().session().fs().fsck(false);
  EXPECT_TRUE(report.clean()) << report.problems[0];
}

TEST_F(PluginTest, TheFileSystemsErrorsReachRocksDBAsIOStatus) {
  make_image();
  auto fs = open_file_system(uri());
  ASSERT_TRUE(fs.ok()) << fs.error();
  rdb::IOOptions io;
  std::unique_ptr<rdb::FSSequentialFile> seq;
  rdb::IOStatus missing =
      (*fs)->NewSequentialFile("/nope/CURRENT", rdb::FileOptions(), &seq, nullptr);
  EXPECT_TRUE(missing.IsPathNotFound()) << missing.ToString();  // as POSIX answers
  EXPECT_TRUE((*fs)->FileExists("/nope", io, nullptr).IsNotFound());
  std::unique_ptr<rdb::FSWritableFile> w;
  rdb::IOStatus long_name =
      (*fs)->NewWritableFile("/" + std::string(300, 'x'), rdb::FileOptions(), &w, nullptr);
  EXPECT_TRUE(long_name.IsInvalidArgument()) << long_name.ToString();
  ASSERT_TRUE((*fs)->CreateDirIfMissing("/a/b/c", io, nullptr).ok());
  EXPECT_FALSE((*fs)->CreateDir("/a/b/c", io, nullptr).ok());
  rdb::FileLock* lock = nullptr;
  ASSERT_TRUE((*fs)->LockFile("/a/LOCK", io, &lock, nullptr).ok());
  rdb::FileLock* second = nullptr;
  EXPECT_FALSE((*fs)->LockFile("/a/LOCK", io, &second, nullptr).ok());
  EXPECT_TRUE((*fs)->UnlockFile(lock, io, nullptr).ok());
  std::string test_dir;
  ASSERT_TRUE((*fs)->GetTestDirectory(io, &test_dir, nullptr).ok());
  bool is_dir = false;
  ASSERT_TRUE((*fs)->IsDirectory(test_dir, io, &is_dir, nullptr).ok());
  EXPECT_TRUE(is_dir);
  std::string abs;
  ASSERT_TRUE((*fs)->GetAbsolutePath("rel//x/./y", io, &abs, nullptr).ok());
  EXPECT_EQ(abs, "/rel/x/y");
  // A file written, renamed over another, linked, truncated, deleted.
  ASSERT_TRUE((*fs)->NewWritableFile("/a/f", rdb::FileOptions(), &w, nullptr).ok());
  ASSERT_TRUE(w->Append("hello world", io, nullptr).ok());
  ASSERT_TRUE(w->Close(io, nullptr).ok());
  w.reset();
  ASSERT_TRUE((*fs)->RenameFile("/a/f", "/a/g", io, nullptr).ok());
  ASSERT_TRUE((*fs)->LinkFile("/a/g", "/a/h", io, nullptr).ok());
  uint64_t links = 0;
  ASSERT_TRUE((*fs)->NumFileLinks("/a/h", io, &links, nullptr).ok());
  EXPECT_EQ(links, 2u);
  bool same = false;
  ASSERT_TRUE((*fs)->AreFilesSame("/a/g", "/a/h", io, &same, nullptr).ok());
  EXPECT_TRUE(same);
  ASSERT_TRUE((*fs)->Truncate("/a/g", 5, io, nullptr).ok());
  uint64_t size = 0;
  ASSERT_TRUE((*fs)->GetFileSize("/a/h", io, &size, nullptr).ok());
  EXPECT_EQ(size, 5u);
  std::vector<std::string> children;
  ASSERT_TRUE((*fs)->GetChildren("/a", io, &children, nullptr).ok());
  EXPECT_EQ(children, (std::vector<std::string>{"LOCK", "b", "g", "h"}));
  EXPECT_FALSE((*fs)->DeleteDir("/a", io, nullptr).ok());  // not empty
  ASSERT_TRUE((*fs)->DeleteFile("/a/g", io, nullptr).ok());
  EXPECT_TRUE((*fs)->DeleteFile("/a/g", io, nullptr).IsPathNotFound());
}

// What each method answers for a missing path, a wrong kind of path, and
// the results it leaves, against what RocksDB's PosixFileSystem answers
// (env/fs_posix.cc: opendir's and access(2)'s ENOENT are NotFound; every
// other ENOENT is PathNotFound, an IOError; results are emptied first).
TEST_F(PluginTest, MissingPathsAnswerAsPosixDoes) {
  make_image();
  auto made = open_file_system(uri());
  ASSERT_TRUE(made.ok()) << made.error();
  rdb::FileSystem& fs = **made;
  rdb::IOOptions io;
  ASSERT_TRUE(fs.CreateDirIfMissing("/d/sub", io, nullptr).ok());
  std::unique_ptr<rdb::FSWritableFile> w;
  ASSERT_TRUE(fs.NewWritableFile("/d/f", rdb::FileOptions(), &w, nullptr).ok());
  ASSERT_TRUE(w->Append("0123456789", io, nullptr).ok());
  ASSERT_TRUE(w->Close(io, nullptr).ok());
  w.reset();

  // Listing: NotFound (not an IOError), and the old contents gone.
  std::vector<std::string> names = {"stale"};
  rdb::IOStatus s = fs.GetChildren("/missing", io, &names, nullptr);
  EXPECT_TRUE(s.IsNotFound()) << s.ToString();
  EXPECT_FALSE(s.IsIOError()) << s.ToString();
  EXPECT_TRUE(names.empty());
  names = {"stale"};
  s = fs.GetChildren("/d/f", io, &names, nullptr);  // a file: ENOTDIR, NotFound too
  EXPECT_TRUE(s.IsNotFound()) << s.ToString();
  EXPECT_TRUE(names.empty());
  std::vector<rdb::FileAttributes> attrs = {{"stale", 1}};
  s = fs.GetChildrenFileAttributes("/missing", io, &attrs, nullptr);
  EXPECT_TRUE(s.IsNotFound()) << s.ToString();
  EXPECT_TRUE(attrs.empty());
  attrs = {{"stale", 1}};
  ASSERT_TRUE(fs.GetChildrenFileAttributes("/d", io, &attrs, nullptr).ok());
  ASSERT_EQ(attrs.size(), 2u);
  EXPECT_EQ(attrs[0].name, "f");
  EXPECT_EQ(attrs[0].size_bytes, 10u);
  EXPECT_EQ(attrs[1].name, "sub");
  EXPECT_TRUE(fs.FileExists("/d/missing", io, nullptr).IsNotFound());
  EXPECT_TRUE(fs.FileExists("/d/sub", io, nullptr).ok());

  // Everything else: PathNotFound, an IOError, as ENOENT is.
  auto path_not_found = [](const rdb::IOStatus& status) {
    return status.IsPathNotFound() && status.IsIOError();
  };
  std::unique_ptr<rdb::FSSequentialFile> seq;
  ASSERT_TRUE(fs.NewSequentialFile("/d/f", rdb::FileOptions(), &seq, nullptr).ok());
  s = fs.NewSequentialFile("/d/missing", rdb::FileOptions(), &seq, nullptr);
  EXPECT_TRUE(path_not_found(s)) << s.ToString();
  EXPECT_EQ(seq, nullptr);  // emptied, as POSIX resets it
  std::unique_ptr<rdb::FSRandomAccessFile> random;
  ASSERT_TRUE(fs.NewRandomAccessFile("/d/f", rdb::FileOptions(), &random, nullptr).ok());
  s = fs.NewRandomAccessFile("/d/missing", rdb::FileOptions(), &random, nullptr);
  EXPECT_TRUE(path_not_found(s)) << s.ToString();
  EXPECT_EQ(random, nullptr);
  std::unique_ptr<rdb::FSDirectory> dir;
  s = fs.NewDirectory("/missing", io, &dir, nullptr);
  EXPECT_TRUE(path_not_found(s)) << s.ToString();
  EXPECT_EQ(dir, nullptr);
  uint64_t size = 99;
  s = fs.GetFileSize("/d/missing", io, &size, nullptr);
  EXPECT_TRUE(path_not_found(s)) << s.ToString();
  EXPECT_EQ(size, 0u);
  uint64_t mtime = 0;
  EXPECT_TRUE(path_not_found(fs.GetFileModificationTime("/d/missing", io, &mtime, nullptr)));
  EXPECT_TRUE(path_not_found(fs.DeleteFile("/d/missing", io, nullptr)));
  EXPECT_TRUE(path_not_found(fs.DeleteDir("/missing", io, nullptr)));
  EXPECT_TRUE(path_not_found(fs.RenameFile("/d/missing", "/d/g", io, nullptr)));
  EXPECT_TRUE(path_not_found(fs.LinkFile("/d/missing", "/d/g", io, nullptr)));
  uint64_t links = 0;
  EXPECT_TRUE(path_not_found(fs.NumFileLinks("/d/missing", io, &links, nullptr)));
  bool same = true;
  EXPECT_TRUE(path_not_found(fs.AreFilesSame("/d/f", "/d/missing", io, &same, nullptr)));
  bool is_dir = false;
  EXPECT_TRUE(path_not_found(fs.IsDirectory("/missing", io, &is_dir, nullptr)));
  EXPECT_TRUE(path_not_found(fs.NewWritableFile("/missing/f", rdb::FileOptions(), &w, nullptr)));
  EXPECT_EQ(w, nullptr);

  // The wrong kind of path: an IOError that is no missing path.
  s = fs.LinkFile("/d/sub", "/d/sub2", io, nullptr);
  EXPECT_TRUE(s.IsIOError() && !s.IsPathNotFound()) << s.ToString();
  s = fs.DeleteFile("/d/sub", io, nullptr);
  EXPECT_TRUE(s.IsIOError() && !s.IsPathNotFound()) << s.ToString();
  ASSERT_TRUE(fs.AreFilesSame("/d/sub", "/d//sub/", io, &same, nullptr).ok());
  EXPECT_TRUE(same);
  ASSERT_TRUE(fs.AreFilesSame("/d/sub", "/d", io, &same, nullptr).ok());
  EXPECT_FALSE(same);
  rdb::FileLock* lock = nullptr;
  ASSERT_TRUE(fs.LockFile("/d/LOCK", io, &lock, nullptr).ok());
  rdb::FileLock* second = lock;  // to see it emptied
  s = fs.LockFile("/d/LOCK", io, &second, nullptr);
  EXPECT_TRUE(s.IsIOError()) << s.ToString();  // ENOLCK on POSIX
  EXPECT_EQ(second, nullptr);
  EXPECT_TRUE(fs.UnlockFile(lock, io, nullptr).ok());
}

// DestroyDB deletes in listing order; CURRENT is listed first, so a
// destroy cut off after its first deletion leaves no database, not one
// whose MANIFEST names deleted tables.
TEST_F(PluginTest, AListingNamesCurrentFirstSoAHalfDestroyedDatabaseIsNone) {
  make_image();
  std::shared_ptr<rdb::FileSystem> fs;
  {
    auto db = open(uri(), small_tables());
    ASSERT_NE(db, nullptr);
    for (int i = 0; i < 2000; ++i) {
      ASSERT_TRUE(db->db->Put({}, "k" + std::to_string(i), std::string(100, 'v')).ok());
    }
    ASSERT_TRUE(db->db->Flush({}).ok());
    fs = db->fs;
  }
  rdb::IOOptions io;
  std::vector<std::string> names;
  ASSERT_TRUE(fs->GetChildren("/db", io, &names, nullptr).ok());
  ASSERT_GT(names.size(), 3u);
  EXPECT_EQ(names[0], "CURRENT");
  EXPECT_TRUE(std::is_sorted(names.begin() + 1, names.end()));
  EXPECT_TRUE(std::any_of(names.begin(), names.end(),
                          [](const std::string& n) { return n.ends_with(".sst"); }));
  // DestroyDB killed after one deletion.
  ASSERT_TRUE(fs->DeleteFile("/db/" + names[0], io, nullptr).ok());
  std::unique_ptr<rdb::Env> env = rdb::NewCompositeEnv(fs);
  rdb::Options options;
  options.env = env.get();
  rdb::DB* opened = nullptr;
  rdb::Status s = rdb::DB::Open(options, "/db", &opened);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();  // "does not exist"
  delete opened;
}

TEST_F(PluginTest, ReusingAWritableFileNeedsTheOldOne) {
  make_image();
  auto made = open_file_system(uri());
  ASSERT_TRUE(made.ok()) << made.error();
  rdb::FileSystem& fs = **made;
  rdb::IOOptions io;
  ASSERT_TRUE(fs.CreateDirIfMissing("/db", io, nullptr).ok());
  std::unique_ptr<rdb::FSWritableFile> w;
  rdb::IOStatus s =
      fs.ReuseWritableFile("/db/000009.log", "/db/000004.log", rdb::FileOptions(), &w, nullptr);
  EXPECT_TRUE(s.IsPathNotFound()) << s.ToString();
  EXPECT_EQ(w, nullptr);
  EXPECT_TRUE(fs.FileExists("/db/000009.log", io, nullptr).IsNotFound());  // nothing made
  s = fs.ReuseWritableFile("/db/000009.log", "/db", rdb::FileOptions(), &w, nullptr);
  EXPECT_TRUE(s.IsIOError() && !s.IsPathNotFound()) << s.ToString();
  EXPECT_TRUE(fs.FileExists("/db", io, nullptr).ok());
  // The old log takes the new name and is written from the start.
  ASSERT_TRUE(fs.NewWritableFile("/db/000004.log", rdb::FileOptions(), &w, nullptr).ok());
  ASSERT_TRUE(w->Append("old records", io, nullptr).ok());
  ASSERT_TRUE(w->Close(io, nullptr).ok());
  s = fs.ReuseWritableFile("/db/000009.log", "/db/000004.log", rdb::FileOptions(), &w, nullptr);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_TRUE(w->Append("new", io, nullptr).ok());
  ASSERT_TRUE(w->Close(io, nullptr).ok());
  EXPECT_TRUE(fs.FileExists("/db/000004.log", io, nullptr).IsNotFound());
  uint64_t size = 0;
  ASSERT_TRUE(fs.GetFileSize("/db/000009.log", io, &size, nullptr).ok());
  EXPECT_EQ(size, 3u);
}

TEST_F(PluginTest, DirectoriesAreRenamedAsRename2Does) {
  make_image();
  auto made = open_file_system(uri());
  ASSERT_TRUE(made.ok()) << made.error();
  rdb::FileSystem& fs = **made;
  rdb::IOOptions io;
  ASSERT_TRUE(fs.CreateDirIfMissing("/ckpt.tmp/sub", io, nullptr).ok());
  ASSERT_TRUE(fs.CreateDirIfMissing("/full", io, nullptr).ok());
  std::unique_ptr<rdb::FSWritableFile> w;
  for (const char* name : {"/ckpt.tmp/CURRENT", "/ckpt.tmp/sub/x", "/full/y"}) {
    ASSERT_TRUE(fs.NewWritableFile(name, rdb::FileOptions(), &w, nullptr).ok());
    ASSERT_TRUE(w->Append(name, io, nullptr).ok());
    ASSERT_TRUE(w->Close(io, nullptr).ok());
  }
  rdb::IOStatus s = fs.RenameFile("/ckpt.tmp", "/full", io, nullptr);
  EXPECT_TRUE(s.IsIOError()) << s.ToString();  // ENOTEMPTY
  s = fs.RenameFile("/ckpt.tmp", "/full/y", io, nullptr);
  EXPECT_TRUE(s.IsIOError()) << s.ToString();  // ENOTDIR
  s = fs.RenameFile("/ckpt.tmp", "/ckpt.tmp/sub/in", io, nullptr);
  EXPECT_FALSE(s.ok());  // EINVAL
  ASSERT_TRUE(fs.RenameFile("/ckpt.tmp", "/ckpt", io, nullptr).ok());
  std::vector<std::string> names;
  ASSERT_TRUE(fs.GetChildren("/ckpt", io, &names, nullptr).ok());
  EXPECT_EQ(names, (std::vector<std::string>{"CURRENT", "sub"}));
  uint64_t size = 0;
  ASSERT_TRUE(fs.GetFileSize("/ckpt/sub/x", io, &size, nullptr).ok());
  EXPECT_EQ(size, std::string("/ckpt.tmp/sub/x").size());
  EXPECT_TRUE(fs.FileExists("/ckpt.tmp", io, nullptr).IsNotFound());
}

// RocksDB's checkpoint builds "dir.tmp" (hard links to the tables, copies
// of the rest) and renames it into place; an exported column family the
// same. Both open as databases of their own.
TEST_F(PluginTest, ACheckpointAndAnExportedColumnFamilyOpen) {
  make_image();
  auto d = open(uri(), small_tables());
  ASSERT_NE(d, nullptr);
  for (int i = 0; i < 5000; ++i) {
    ASSERT_TRUE(d->db->Put(rdb::WriteOptions(), key(i), value(i)).ok());
  }
  ASSERT_TRUE(d->db->Flush(rdb::FlushOptions()).ok());
  for (int i = 5000; i < 6000; ++i) {  // in the log only, until the checkpoint flushes
    ASSERT_TRUE(d->db->Put(rdb::WriteOptions(), key(i), value(i)).ok());
  }
  rdb::Checkpoint* made = nullptr;
  ASSERT_TRUE(rdb::Checkpoint::Create(d->db.get(), &made).ok());
  std::unique_ptr<rdb::Checkpoint> checkpoint(made);
  rdb::Status s = checkpoint->CreateCheckpoint("/ckpt");
  ASSERT_TRUE(s.ok()) << s.ToString();
  s = checkpoint->CreateCheckpoint("/ckpt");
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();  // it exists
  rdb::ExportImportFilesMetaData* exported = nullptr;
  s = checkpoint->ExportColumnFamily(d->db->DefaultColumnFamily(), "/export", &exported);
  ASSERT_TRUE(s.ok()) << s.ToString();
  std::unique_ptr<rdb::ExportImportFilesMetaData> metadata(exported);
  fs::ZonedFs& zfs = d->zfs().fs();
  EXPECT_FALSE(zfs.exists("/ckpt.tmp"));
  EXPECT_FALSE(zfs.exists("/export.tmp"));
  ASSERT_FALSE(metadata->files.empty());

  // The checkpoint opens in the same process, the data all there; the
  // exported tables import into it as a new column family.
  rdb::Options options = small_tables();
  options.env = d->env.get();
  rdb::DB* opened = nullptr;
  s = rdb::DB::Open(options, "/ckpt", &opened);
  ASSERT_TRUE(s.ok()) << s.ToString();
  std::unique_ptr<rdb::DB> copy(opened);
  for (int i = 0; i < 6000; i += 13) {
    std::string got;
    ASSERT_TRUE(copy->Get(rdb::ReadOptions(), key(i), &got).ok()) << i;
    EXPECT_EQ(got, value(i));
  }
  rdb::ColumnFamilyHandle* imported = nullptr;
  s = copy->CreateColumnFamilyWithImport(rdb::ColumnFamilyOptions(options), "imported",
                                         rdb::ImportColumnFamilyOptions(), *metadata, &imported);
  ASSERT_TRUE(s.ok()) << s.ToString();
  std::string got;
  ASSERT_TRUE(copy->Get(rdb::ReadOptions(), imported, key(5999), &got).ok());
  EXPECT_EQ(got, value(5999));
  ASSERT_TRUE(copy->DestroyColumnFamilyHandle(imported).ok());
  copy.reset();
  auto report = zfs.fsck(false);
  EXPECT_TRUE(report.clean()) << report.problems[0];
}

// A checkpoint that does not flush the memtables copies the live
// write-ahead log to the size the file system gives, which must hold every
// byte RocksDB wrote to it, synced or not (as a POSIX file system's page
// cache does): the copy reads that many bytes, and the checkpoint has the
// writes only the log holds. (db_stress met "Corruption: file too small"
// here when a log's unsynced tail was counted but could not be read.)
TEST_F(PluginTest, ACheckpointCopiesTheLiveLogWithItsUnsyncedTail) {
  make_image();
  auto d = open(uri(), small_tables());
  ASSERT_NE(d, nullptr);
  for (int i = 0; i < 3000; ++i) {
    ASSERT_TRUE(d->db->Put(rdb::WriteOptions(), key(i), value(i)).ok());
  }
  ASSERT_TRUE(d->db->Flush(rdb::FlushOptions()).ok());
  rdb::WriteOptions synced;
  synced.sync = true;
  ASSERT_TRUE(d->db->Put(synced, key(3000), value(3000)).ok());
  for (int i = 3001; i < 3300; ++i) {  // in the log's unsynced tail only
    ASSERT_TRUE(d->db->Put(rdb::WriteOptions(), key(i), value(i)).ok());
  }
  rdb::Checkpoint* made = nullptr;
  ASSERT_TRUE(rdb::Checkpoint::Create(d->db.get(), &made).ok());
  std::unique_ptr<rdb::Checkpoint> checkpoint(made);
  // log_size_for_flush at its largest: never flush, copy the log.
  rdb::Status s = checkpoint->CreateCheckpoint("/ckpt", UINT64_MAX);
  ASSERT_TRUE(s.ok()) << s.ToString();
  rdb::Options options = small_tables();
  options.env = d->env.get();
  rdb::DB* opened = nullptr;
  s = rdb::DB::Open(options, "/ckpt", &opened);
  ASSERT_TRUE(s.ok()) << s.ToString();
  std::unique_ptr<rdb::DB> copy(opened);
  for (int i = 2990; i < 3300; ++i) {
    std::string got;
    ASSERT_TRUE(copy->Get(rdb::ReadOptions(), key(i), &got).ok()) << i;
    EXPECT_EQ(got, value(i));
  }
  copy.reset();
  auto report = d->zfs().fs().fsck(false);
  EXPECT_TRUE(report.clean()) << report.problems[0];
}

// A database read in this process over a file system someone else mounted
// and owns: here as `zonelab fs fsck` mounts it, read-only in virtual time.
TEST_F(PluginTest, ADatabaseIsReadOverAFileSystemMountedElsewhere) {
  make_image();
  {
    auto d = open(uri(), small_tables());
    ASSERT_NE(d, nullptr);
    for (int i = 0; i < 3000; ++i) {
      ASSERT_TRUE(d->db->Put(rdb::WriteOptions(), key(i), value(i)).ok());
    }
  }  // closed: the session unmounts and the image is free
  StackOptions stack_options;
  stack_options.read_only = true;
  auto stack = Stack::open(image_, stack_options);
  ASSERT_TRUE(stack.ok()) << stack.error();
  fs::MountOptions mount_options;
  mount_options.read_only = true;
  auto mounted = fs::ZonedFs::mount(**stack, mount_options);
  ASSERT_TRUE(mounted.ok()) << mounted.status().message();
  std::unique_ptr<fs::ZonedFs> zfs = std::move(mounted).value();
  {
    std::unique_ptr<rdb::Env> env = make_env(unowned(*zfs));
    rdb::Options options;
    options.env = env.get();
    rdb::DB* opened = nullptr;
    rdb::Status s = rdb::DB::OpenForReadOnly(options, "/db", &opened);
    ASSERT_TRUE(s.ok()) << s.ToString();
    std::unique_ptr<rdb::DB> db(opened);
    for (int i = 0; i < 3000; i += 7) {
      std::string got;
      ASSERT_TRUE(db->Get(rdb::ReadOptions(), key(i), &got).ok()) << i;
      EXPECT_EQ(got, value(i));
    }
    // A change is refused, as on a read-only mount it must be.
    std::unique_ptr<rdb::FSWritableFile> w;
    rdb::IOStatus refused =
        env->GetFileSystem()->NewWritableFile("/db/x", rdb::FileOptions(), &w, nullptr);
    EXPECT_TRUE(refused.IsInvalidArgument()) << refused.ToString();
  }
  EXPECT_EQ(zfs->open_handles(), 0u);  // RocksDB closed every file it opened
  EXPECT_TRUE(zfs->fsck(false).clean());
}

TEST_F(PluginTest, TheFileSystemLivesAsLongAsItsLastFile) {
  make_image();
  auto stack = Stack::open(image_);
  ASSERT_TRUE(stack.ok()) << stack.error();
  auto mounted = fs::ZonedFs::mount(**stack);
  ASSERT_TRUE(mounted.ok()) << mounted.status().message();
  std::unique_ptr<fs::ZonedFs> zfs = std::move(mounted).value();
  ASSERT_TRUE(zfs->create_dir("/d", false).is_ok());
  bool released = false;
  std::shared_ptr<fs::ZonedFs> held(zfs.get(), [&](fs::ZonedFs*) { released = true; });
  std::unique_ptr<rdb::Env> env = make_env(std::move(held));
  std::unique_ptr<rdb::FSWritableFile> w;
  ASSERT_TRUE(env->GetFileSystem()->NewWritableFile("/d/f", rdb::FileOptions(), &w, nullptr).ok());
  env.reset();
  EXPECT_FALSE(released);  // the open file holds it
  ASSERT_TRUE(w->Append("abc", rdb::IOOptions(), nullptr).ok());
  ASSERT_TRUE(w->Close(rdb::IOOptions(), nullptr).ok());
  w.reset();
  EXPECT_TRUE(released);
  EXPECT_EQ(zfs->stat("/d/f")->size, 3u);
  ASSERT_TRUE(zfs->unmount().is_ok());
}

TEST_F(PluginTest, TheTestDirectoryFollowsTestTmpdir) {
  make_image();
  auto made = open_file_system(uri());
  ASSERT_TRUE(made.ok()) << made.error();
  rdb::IOOptions io;
  std::string dir;
  const char* before = std::getenv("TEST_TMPDIR");
  std::string saved = before != nullptr ? before : "";
  ::setenv("TEST_TMPDIR", "/run/one//test", 1);
  ASSERT_TRUE((*made)->GetTestDirectory(io, &dir, nullptr).ok());
  EXPECT_EQ(dir, "/run/one/test");
  EXPECT_TRUE((*made)->FileExists(dir, io, nullptr).ok());  // made, in the image
  ::unsetenv("TEST_TMPDIR");
  ASSERT_TRUE((*made)->GetTestDirectory(io, &dir, nullptr).ok());
  EXPECT_EQ(dir, "/tmp/rocksdbtest-" + std::to_string(::geteuid()));
  if (before != nullptr) ::setenv("TEST_TMPDIR", saved.c_str(), 1);
}

TEST_F(PluginTest, OneSessionAnImageSharedByTheSameUriOnly) {
  make_image();
  auto a = open_file_system(uri());
  auto b = open_file_system(uri());
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(&(*a)->session(), &(*b)->session());
  auto other = open_file_system(uri("&gc=off"));
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.error().find("other zonelab:// options"), std::string::npos) << other.error();
}

TEST_F(PluginTest, AnImageWithoutAFileSystemOrNoImageIsAClearError) {
  auto none = open_file_system(uri());
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().find("dev.img"), std::string::npos) << none.error();
  ASSERT_TRUE(Stack::create_image(image_, *preset_config("small"), false).ok());
  auto bare = open_file_system(uri());
  ASSERT_FALSE(bare.ok());
  EXPECT_NE(bare.error().find("mkfs"), std::string::npos) << bare.error();
  // create= makes what is missing -- but not over an image that exists.
  std::filesystem::remove(image_);
  auto made = open_file_system(uri("&create=small"));
  ASSERT_TRUE(made.ok()) << made.error();
}

TEST_F(PluginTest, TheRegistryFindsTheUri) {
  make_image();
  std::shared_ptr<rdb::FileSystem> fs;
  rdb::ConfigOptions co;
  rdb::Status s = rdb::FileSystem::CreateFromString(co, uri(), &fs);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_STREQ(fs->Name(), "ZonelabFileSystem");
  rdb::Env* env = nullptr;
  std::shared_ptr<rdb::Env> guard;
  s = rdb::Env::CreateFromUri(co, "id=" + uri(), "", &env, &guard);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_NE(env, nullptr);
  EXPECT_STREQ(env->GetFileSystem()->Name(), "ZonelabFileSystem");
  std::shared_ptr<rdb::FileSystem> bad;
  s = rdb::FileSystem::CreateFromString(co, "zonelab://" + image_ + "?colour=blue", &bad);
  EXPECT_FALSE(s.ok());
}

}  // namespace
}  // namespace zonelab::rocksdb_plugin
