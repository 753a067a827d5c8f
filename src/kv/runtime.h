// RocksDB in the zonelab command, loaded when a command needs it. The
// command itself does not link RocksDB (loading librocksdb costs every run
// of the device model about 10 MiB and its static initializers' time):
// `zonelab kv`, fsck's database check and the experiments that run RocksDB
// reach it through libzonelab_rocksdb.so -- the same library db_bench
// preloads -- opened with dlopen on first use.
#pragma once

#include <cstdint>
#include <vector>

#include "fs/zoned_fs.h"
#include "kv/database.h"
#include "kv/result.h"
#include "zonelab/result.h"

namespace zonelab::rocksdb_plugin {

// What the library gives the command. The two are built from the same
// sources in one build; `abi` tells a library of another build apart,
// whose types may be laid out differently.
struct RocksdbRuntime {
  uint64_t abi = 0;
  KvResult (*run_kv)(const KvOptions& options) = nullptr;
  std::vector<DbCheck> (*check_databases)(fs::ZonedFs& fs) = nullptr;
  KvTenantsResult (*run_kv_tenants)(const std::vector<KvOptions>& tenants) = nullptr;
};

// The library's entry: extern "C" const RocksdbRuntime* NAME(uint64_t abi),
// null when `abi` is not its own.
inline constexpr const char* kRocksdbRuntimeSymbol = "zonelab_rocksdb_runtime";
// The library's file name, looked for beside the running executable...
inline constexpr const char* kRocksdbLibraryName = "libzonelab_rocksdb.so";
// ... unless this environment variable names the file.
inline constexpr const char* kRocksdbLibraryEnv = "ZONELAB_ROCKSDB_LIBRARY";

// The interface's version: the layout of what crosses it.
constexpr uint64_t rocksdb_runtime_abi() {
  uint64_t h = 1469598103934665603ULL;
  for (uint64_t v :
       {uint64_t{1}, uint64_t{sizeof(KvOptions)}, uint64_t{sizeof(KvResult)},
        uint64_t{sizeof(KvPhase)}, uint64_t{sizeof(DbCheck)}, uint64_t{sizeof(fs::ZonedFs)},
        uint64_t{sizeof(RocksdbRuntime)}, uint64_t{sizeof(KvTenantsResult)}}) {
    h = (h ^ v) * 1099511628211ULL;
  }
  return h;
}

// The library, loaded once per process; or why it cannot be (one line).
Result<const RocksdbRuntime*> rocksdb_runtime();

// run_kv in the library; a library that cannot be loaded is bad input
// (the message says what is missing).
KvResult run_kv_loaded(const KvOptions& options);
// run_kv_tenants in the library, likewise.
KvTenantsResult run_kv_tenants_loaded(const std::vector<KvOptions>& tenants);

}  // namespace zonelab::rocksdb_plugin
