// Real RocksDB on the zoned file system, in this process: a database made,
// written, closed and read back; flush and compaction writes told apart;
// synced writes surviving a power cut of the device; RocksDB's view of the
// file system's errors; sessions shared per image. The device runs in real
// time with timing off (as fast as the host allows).
#include <gtest/gtest.h>
#include <rocksdb/convenience.h>
#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <rocksdb/options.h>
#include <rocksdb/utilities/object_registry.h>
#include <unistd.h>

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
