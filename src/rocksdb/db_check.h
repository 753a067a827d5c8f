// Whether the RocksDB databases on a zoned file system open: fsck's last
// check, so that "clean" means what a user of the file system needs -- the
// database RocksDB keeps there opens. Each directory holding a CURRENT file
// is opened read-only in this process by RocksDB itself (the library the
// plugin links), over the mounted file system: its MANIFEST replayed, every
// table file it names opened (footer, index), its write-ahead logs replayed
// with the database's own recovery mode -- what a DB::Open checks before it
// writes anything. Nothing is written.
#pragma once

#include <vector>

#include "fs/zoned_fs.h"
#include "kv/database.h"

namespace zonelab::rocksdb_plugin {

// Every directory of `fs` that holds a CURRENT file, in name order, opened
// read-only. `fs` must stay mounted through the call.
std::vector<DbCheck> check_databases(fs::ZonedFs& fs);

}  // namespace zonelab::rocksdb_plugin
