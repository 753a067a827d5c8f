// See kv/runtime.h.
#include "kv/runtime.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <string>

#include "common/self_path.h"

namespace zonelab::rocksdb_plugin {

namespace {

Result<const RocksdbRuntime*> load() {
  const char* named = std::getenv(kRocksdbLibraryEnv);
  std::string path = named != nullptr && *named != '\0' ? std::string(named)
                                                        : beside_executable(kRocksdbLibraryName);
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    return Error{fmt::format(
        "RocksDB support is not available: {} ({}; build it with `make`, or "
        "set {} to the library)",
        one_line(why != nullptr ? why : "dlopen failed"), kRocksdbLibraryName, kRocksdbLibraryEnv)};
  }
  using Entry = const RocksdbRuntime* (*)(uint64_t);
  auto entry = reinterpret_cast<Entry>(::dlsym(handle, kRocksdbRuntimeSymbol));
  const RocksdbRuntime* runtime = entry != nullptr ? entry(rocksdb_runtime_abi()) : nullptr;
  if (runtime == nullptr) {
    return Error{
        fmt::format("RocksDB support is not available: {} is from another build of "
                    "zonelab (rebuild both, or set {})",
                    one_line(path), kRocksdbLibraryEnv)};
  }
  // Never closed: RocksDB's threads and registrations live to the end.
  return runtime;
}

}  // namespace

Result<const RocksdbRuntime*> rocksdb_runtime() {
  static const Result<const RocksdbRuntime*> loaded = load();  // once, thread-safe
  return loaded;
}

KvResult run_kv_loaded(const KvOptions& options) {
  auto runtime = rocksdb_runtime();
  if (!runtime) {
    KvResult result;
    result.failure = KvFailure::kBadInput;
    result.error = runtime.error();
    return result;
  }
  return (*runtime)->run_kv(options);
}

KvTenantsResult run_kv_tenants_loaded(const std::vector<KvOptions>& tenants) {
  auto runtime = rocksdb_runtime();
  if (!runtime) {
    KvTenantsResult result;
    result.error = runtime.error();
    return result;
  }
  return (*runtime)->run_kv_tenants(tenants);
}

}  // namespace zonelab::rocksdb_plugin
