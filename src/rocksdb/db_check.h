// Whether the RocksDB databases on a zoned file system open: fsck's last
// check, so that "clean" means what a user of the file system needs -- the
// database RocksDB keeps there opens. Each directory holding a CURRENT file
// is opened read-only in this process by RocksDB itself (the library the
// plugin links), over the mounted file system: its MANIFEST replayed, every
// table file it names opened (footer, index), its write-ahead logs replayed
// with the database's own recovery mode -- what a DB::Open checks before it
// writes anything. Nothing is written.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fs/zoned_fs.h"

namespace zonelab::rocksdb_plugin {

// Databases checked at most in one call (a bound on the walk).
inline constexpr size_t kDbCheckDatabasesMax = 1024;

struct DbCheck {
  std::string dir;
  bool opened = false;
  // RocksDB's answer when it did not open the database.
  std::string error;
  // Not checked, for a reason that is not damage (in `error`): its options
  // name a comparator this process does not know; or the directory is
  // RocksDB's scratch (NAME.tmp: a checkpoint or backup being made) or a
  // backup's private directory (its tables live in the backup's shared/).
  bool unchecked = false;
  std::vector<std::string> column_families;
  uint64_t table_files = 0;   // live SST files, as the MANIFEST names them
  uint64_t wal_files = 0;     // write-ahead logs replayed
  uint64_t options_file = 0;  // 1 when the database's own OPTIONS file was used
  bool damaged() const { return !opened && !unchecked; }
};

// Every directory of `fs` that holds a CURRENT file, in name order, opened
// read-only. `fs` must stay mounted through the call.
std::vector<DbCheck> check_databases(fs::ZonedFs& fs);

}  // namespace zonelab::rocksdb_plugin
