// What fsck learns of one RocksDB database on a zoned file system: whether
// RocksDB opens it (rocksdb/db_check.h does the opening, inside
// libzonelab_rocksdb.so; kv/runtime.h reaches it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

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

}  // namespace zonelab::rocksdb_plugin
