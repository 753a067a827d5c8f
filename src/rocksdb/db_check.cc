// See db_check.h.
#include "rocksdb/db_check.h"

#include <fmt/format.h>
#include <rocksdb/convenience.h>
#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <rocksdb/utilities/options_util.h>

#include <algorithm>
#include <cstdarg>
#include <optional>

#include "rocksdb/zonelab_fs.h"

namespace zonelab::rocksdb_plugin {
namespace {

namespace rdb = ROCKSDB_NAMESPACE;

// RocksDB's info log, dropped: the check writes nothing (a read-only mount
// could not take a LOG file anyway).
class NullLogger final : public rdb::Logger {
 public:
  using rdb::Logger::Logv;
  void Logv(const char*, va_list) override {}
};

// The directories holding a CURRENT file, depth first, bounded.
void find_databases(const fs::ZonedFs& zfs, const std::string& dir, std::vector<std::string>& out) {
  auto names = zfs.list(dir);
  if (!names) return;
  std::vector<std::string> subdirs;
  for (const std::string& name : *names) {
    std::string path = dir == "/" ? "/" + name : dir + "/" + name;
    auto st = zfs.stat(path);
    if (!st) continue;
    if (st->is_dir) {
      subdirs.push_back(path);
    } else if (name == "CURRENT" && out.size() < kDbCheckDatabasesMax) {
      out.push_back(dir);
    }
  }
  for (const std::string& sub : subdirs) find_databases(zfs, sub, out);
}

// An answer that says the database cannot be checked here rather than
// that it is damaged: options this process cannot rebuild (a comparator
// of the program's own, a feature this RocksDB lacks).
bool not_damage(const rdb::Status& s) {
  return s.IsNotSupported() ||
         (s.IsInvalidArgument() && s.ToString().find("omparator") != std::string::npos);
}

// The database's options (its latest OPTIONS file), or defaults with the
// column families its MANIFEST lists.
rdb::Status options_of(rdb::Env* env, const std::string& dir, rdb::DBOptions& db,
                       std::vector<rdb::ColumnFamilyDescriptor>& families, DbCheck& check) {
  rdb::ConfigOptions config;
  config.env = env;
  config.ignore_unknown_options = true;
  if (rdb::LoadLatestOptions(config, dir, &db, &families).ok()) {
    check.options_file = 1;
    return rdb::Status::OK();
  }
  db = rdb::DBOptions();
  families.clear();
  std::vector<std::string> names;
  db.env = env;
  rdb::Status listed = rdb::DB::ListColumnFamilies(db, dir, &names);
  if (!listed.ok()) return listed;
  for (const std::string& name : names) {
    families.emplace_back(name, rdb::ColumnFamilyOptions());
  }
  return rdb::Status::OK();
}

DbCheck check_one(rdb::Env* env, const std::string& dir) {
  DbCheck check;
  check.dir = dir;
  rdb::DBOptions db;
  std::vector<rdb::ColumnFamilyDescriptor> families;
  if (rdb::Status s = options_of(env, dir, db, families, check); !s.ok()) {
    check.error = s.ToString();
    check.unchecked = not_damage(s);
    return check;
  }
  db.env = env;
  db.info_log = std::make_shared<NullLogger>();
  db.create_if_missing = false;
  db.error_if_exists = false;
  // Every table file the MANIFEST names is opened (its footer and index
  // read), one at a time: a missing or cut table is found here, not at the
  // first read that needs it.
  db.max_open_files = -1;
  db.max_file_opening_threads = 1;
  db.stats_dump_period_sec = 0;
  db.stats_persist_period_sec = 0;
  for (const auto& f : families) check.column_families.push_back(f.name);

  std::vector<rdb::ColumnFamilyHandle*> handles;
  rdb::DB* opened = nullptr;
  rdb::Status s = rdb::DB::OpenForReadOnly(db, dir, families, &handles, &opened);
  if (!s.ok()) {
    check.error = s.ToString();
    check.unchecked = not_damage(s);
    return check;
  }
  check.opened = true;
  std::vector<rdb::LiveFileMetaData> tables;
  opened->GetLiveFilesMetaData(&tables);
  check.table_files = tables.size();
  rdb::VectorLogPtr wals;
  if (opened->GetSortedWalFiles(wals).ok()) check.wal_files = wals.size();
  for (rdb::ColumnFamilyHandle* h : handles) (void)opened->DestroyColumnFamilyHandle(h);
  (void)opened->Close();
  delete opened;
  return check;
}

// Why a directory with a CURRENT file is no database to open on its own,
// if it is not: RocksDB's own scratch and copies that live elsewhere.
std::optional<std::string> not_a_database(const fs::ZonedFs& zfs, const std::string& dir) {
  const std::string name = dir.substr(dir.rfind('/') + 1);
  // A checkpoint being made (Checkpoint builds DIR.tmp and renames it) or
  // a backup being taken (BackupEngine's private/N.tmp).
  if (name.size() > 4 && name.compare(name.size() - 4, 4, ".tmp") == 0) {
    return "a RocksDB temporary directory (a checkpoint or backup being made)";
  }
  // BackupEngine keeps BACKUP_DIR/{meta,private,shared...}: a backup's
  // private directory holds its MANIFEST and CURRENT, its tables are in
  // shared/.
  const std::string parent = fs::parent_of(dir);
  const std::string grandparent = fs::parent_of(parent);
  const std::string meta = grandparent == "/" ? "/meta" : grandparent + "/meta";
  if (parent.substr(parent.rfind('/') + 1) == "private" && zfs.stat(meta).ok()) {
    return "a backup's private directory (its table files are in the backup's shared "
           "directory; BackupEngine restores it)";
  }
  return std::nullopt;
}

}  // namespace

std::vector<DbCheck> check_databases(fs::ZonedFs& zfs) {
  std::vector<std::string> dirs;
  find_databases(zfs, "/", dirs);
  std::vector<DbCheck> out;
  if (dirs.empty()) return out;
  std::unique_ptr<rdb::Env> env = make_env(unowned(zfs));
  for (const std::string& dir : dirs) {
    if (auto why = not_a_database(zfs, dir)) {
      DbCheck skipped;
      skipped.dir = dir;
      skipped.unchecked = true;
      skipped.error = *why;
      out.push_back(skipped);
      continue;
    }
    out.push_back(check_one(env.get(), dir));
  }
  return out;
}

}  // namespace zonelab::rocksdb_plugin
