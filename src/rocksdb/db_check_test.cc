// fsck's database check: every directory holding a CURRENT file opened by
// RocksDB, read-only, over a file system mounted in virtual time as `zonelab
// fs fsck` mounts it. A database that opens is reported so; one that lost a
// table file, or whose CURRENT names no MANIFEST, is damage; RocksDB's own
// scratch (a checkpoint being made) and a backup's private directory are not
// databases to open on their own; nothing is written.
#include "rocksdb/db_check.h"

#include <gtest/gtest.h>
#include <rocksdb/db.h>
#include <rocksdb/utilities/backup_engine.h>
#include <rocksdb/utilities/checkpoint.h>
#include <unistd.h>

#include <filesystem>

#include "rocksdb/zonelab_fs.h"

namespace zonelab::rocksdb_plugin {
namespace {

namespace rdb = ROCKSDB_NAMESPACE;

class DbCheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("zonelab-db-check-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    image_ = (dir_ / "dev.img").string();
    ASSERT_TRUE(create_image_with_fs(image_, "small", 0).ok());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // The image's file system mounted in virtual time (writable unless
  // `read_only`), as the CLI mounts it.
  void mount(bool read_only) {
    zfs_.reset();
    stack_.reset();
    StackOptions so;
    so.read_only = read_only;
    auto stack = Stack::open(image_, so);
    ASSERT_TRUE(stack.ok()) << stack.error();
    stack_ = std::move(stack).value();
    fs::MountOptions mo;
    mo.read_only = read_only;
    auto mounted = fs::ZonedFs::mount(*stack_, mo);
    ASSERT_TRUE(mounted.ok()) << mounted.status().message();
    zfs_ = std::move(mounted).value();
  }

  // A database of a few table files at `dir`, closed.
  void make_db(const std::string& dir) {
    std::unique_ptr<rdb::Env> env = make_env(unowned(*zfs_));
    rdb::Options options;
    options.env = env.get();
    options.create_if_missing = true;
    options.write_buffer_size = 64 << 10;
    rdb::DB* raw = nullptr;
    ASSERT_TRUE(rdb::DB::Open(options, dir, &raw).ok());
    std::unique_ptr<rdb::DB> db(raw);
    for (int i = 0; i < 2000; ++i) {
      ASSERT_TRUE(
          db->Put(rdb::WriteOptions(), "key" + std::to_string(i), std::string(100, 'v')).ok());
    }
    ASSERT_TRUE(db->Flush(rdb::FlushOptions()).ok());
    rdb::Checkpoint* checkpoint = nullptr;
    ASSERT_TRUE(rdb::Checkpoint::Create(db.get(), &checkpoint).ok());
    ASSERT_TRUE(checkpoint->CreateCheckpoint(dir + "-ckpt").ok());
    delete checkpoint;
    rdb::BackupEngine* backups = nullptr;
    ASSERT_TRUE(
        rdb::BackupEngine::Open(env.get(), rdb::BackupEngineOptions(dir + "-backup"), &backups)
            .ok());
    ASSERT_TRUE(backups->CreateNewBackup(db.get()).ok());
    delete backups;
    ASSERT_TRUE(db->Close().ok());
  }

  const DbCheck* find(const std::vector<DbCheck>& checks, const std::string& dir) {
    for (const DbCheck& c : checks) {
      if (c.dir == dir) return &c;
    }
    return nullptr;
  }

  std::filesystem::path dir_;
  std::string image_;
  std::unique_ptr<Stack> stack_;
  std::unique_ptr<fs::ZonedFs> zfs_;  // goes before the stack
};

TEST_F(DbCheckTest, EveryDatabaseOpensAndNothingIsWritten) {
  mount(false);
  make_db("/db");
  ASSERT_TRUE(zfs_->unmount().is_ok());
  mount(true);
  const uint64_t written = zfs_->device_counters().written_bytes();
  std::vector<DbCheck> checks = check_databases(*zfs_);
  const DbCheck* db = find(checks, "/db");
  ASSERT_NE(db, nullptr);
  EXPECT_TRUE(db->opened) << db->error;
  EXPECT_GE(db->table_files, 1u);
  EXPECT_EQ(db->options_file, 1u);
  EXPECT_EQ(db->column_families, std::vector<std::string>{"default"});
  const DbCheck* ckpt = find(checks, "/db-ckpt");
  ASSERT_NE(ckpt, nullptr);
  EXPECT_TRUE(ckpt->opened) << ckpt->error;
  // The backup's private directory has a CURRENT but is no database alone.
  bool private_dir = false;
  for (const DbCheck& c : checks) {
    if (c.dir.rfind("/db-backup/private/", 0) == 0) {
      private_dir = true;
      EXPECT_TRUE(c.unchecked && !c.damaged()) << c.dir << ": " << c.error;
    }
  }
  EXPECT_TRUE(private_dir);
  EXPECT_EQ(zfs_->device_counters().written_bytes(), written);
  EXPECT_EQ(zfs_->open_handles(), 0u);
}

TEST_F(DbCheckTest, AMissingTableOrManifestIsDamage) {
  mount(false);
  make_db("/db");
  // The checkpoint loses a table file the MANIFEST names; the database
  // gets a CURRENT that names no MANIFEST.
  auto names = zfs_->list("/db-ckpt");
  ASSERT_TRUE(names.ok());
  std::string table;
  for (const std::string& n : *names) {
    if (n.size() > 4 && n.compare(n.size() - 4, 4, ".sst") == 0) table = n;
  }
  ASSERT_FALSE(table.empty());
  ASSERT_TRUE(zfs_->remove("/db-ckpt/" + table).is_ok());
  {
    auto current = zfs_->open_write("/db/CURRENT", {});
    ASSERT_TRUE(current.ok());
    const std::string text = "MANIFEST-999999\n";
    ASSERT_TRUE(
        (*current)->append(reinterpret_cast<const uint8_t*>(text.data()), text.size()).is_ok());
    ASSERT_TRUE((*current)->close().is_ok());
  }
  // Scratch of a checkpoint being made is not a database.
  ASSERT_TRUE(zfs_->create_dir("/half.tmp", false).is_ok());
  {
    auto current = zfs_->open_write("/half.tmp/CURRENT", {});
    ASSERT_TRUE(current.ok());
    ASSERT_TRUE((*current)->close().is_ok());
  }
  std::vector<DbCheck> checks = check_databases(*zfs_);
  const DbCheck* db = find(checks, "/db");
  ASSERT_NE(db, nullptr);
  EXPECT_TRUE(db->damaged());
  EXPECT_NE(db->error.find("MANIFEST-999999"), std::string::npos) << db->error;
  const DbCheck* ckpt = find(checks, "/db-ckpt");
  ASSERT_NE(ckpt, nullptr);
  EXPECT_TRUE(ckpt->damaged());
  EXPECT_NE(ckpt->error.find(table.substr(0, table.size() - 4)), std::string::npos) << ckpt->error;
  const DbCheck* half = find(checks, "/half.tmp");
  ASSERT_NE(half, nullptr);
  EXPECT_FALSE(half->damaged());
  ASSERT_TRUE(zfs_->unmount().is_ok());
}

}  // namespace
}  // namespace zonelab::rocksdb_plugin
