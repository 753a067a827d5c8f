// The zonelab:// URI in RocksDB's object registry (registry.cc).
#pragma once

#include <memory>
#include <string>

#include "rocksdb/zonelab_fs.h"
#include "zonelab/result.h"

namespace zonelab::rocksdb_plugin {

// The file system a zonelab:// URI names (its session opened or shared).
Result<std::unique_ptr<ZonelabFileSystem>> open_file_system(const std::string& uri);

// Keeps the registration in a program that links this layer statically.
void ensure_registered();

}  // namespace zonelab::rocksdb_plugin
