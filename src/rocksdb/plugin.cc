// The entry of libzonelab_rocksdb.so: loading the library registers the
// zonelab:// URI with RocksDB (registry.cc, linked in whole). The one symbol
// it exports besides is the runtime the zonelab command loads for its
// RocksDB work (kv/runtime.h).
#include "kv/runtime.h"
#include "rocksdb/db_check.h"
#include "rocksdb/kv_runner.h"
#include "rocksdb/registry.h"

namespace {

constexpr zonelab::rocksdb_plugin::RocksdbRuntime kRuntime{
    zonelab::rocksdb_plugin::rocksdb_runtime_abi(), &zonelab::rocksdb_plugin::run_kv,
    &zonelab::rocksdb_plugin::check_databases, &zonelab::rocksdb_plugin::run_kv_tenants};

}  // namespace

extern "C" __attribute__((visibility("default"))) const zonelab::rocksdb_plugin::RocksdbRuntime*
zonelab_rocksdb_runtime(uint64_t abi) {
  return abi == kRuntime.abi ? &kRuntime : nullptr;
}
