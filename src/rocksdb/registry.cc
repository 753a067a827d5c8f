// The zonelab:// URI in RocksDB's object registry, as a FileSystem
// (--fs_uri) and as an Env over it (--env_uri). The registration runs when
// the library is loaded -- by LD_PRELOAD into a stock RocksDB tool, or
// linked into zonelab -- into the registry of the shared librocksdb it
// links, the one the tools look in.
#include "rocksdb/registry.h"

#include <fmt/format.h>
#include <rocksdb/env.h>
#include <rocksdb/utilities/object_registry.h>

#include <cstdio>

#include "rocksdb/zonelab_fs.h"

namespace zonelab::rocksdb_plugin {

namespace rdb = ROCKSDB_NAMESPACE;

Result<std::unique_ptr<ZonelabFileSystem>> open_file_system(const std::string& uri) {
  auto options = parse_uri(uri);
  if (!options) return Error{options.error()};
  auto session = Session::open(*options);
  if (!session) return Error{session.error()};
  if (!options->tenant.empty()) {
    const fs::Superblock& sb = (*session)->fs().superblock();
    std::string names;
    bool found = false;
    for (const fs::SuperTenant& t : sb.tenants) {
      names += (names.empty() ? "" : ", ") + t.name;
      found = found || t.name == options->tenant;
    }
    if (!found) {
      return Error{fmt::format("zonelab:// URI: tenant={}: the file system on {} has {}",
                               options->tenant, options->image,
                               names.empty() ? std::string("no tenants") : "tenants " + names)};
    }
  }
  return std::make_unique<ZonelabFileSystem>(std::move(session).value(), uri, options->tenant);
}

namespace {

rdb::ObjectLibrary::PatternEntry uri_pattern() {
  return rdb::ObjectLibrary::PatternEntry("zonelab", false).AddSeparator("://", false);
}

bool register_factories() {
  auto library = rdb::ObjectLibrary::Default();
  library->AddFactory<rdb::FileSystem>(
      uri_pattern(),
      [](const std::string& uri, std::unique_ptr<rdb::FileSystem>* guard,
         std::string* errmsg) -> rdb::FileSystem* {
        auto fs = open_file_system(uri);
        if (!fs) {
          *errmsg = fs.error();
          std::fprintf(stderr, "zonelab: %s\n", fs.error().c_str());
          return nullptr;
        }
        *guard = std::move(fs).value();
        return guard->get();
      });
  library->AddFactory<rdb::Env>(uri_pattern(),
                                [](const std::string& uri, std::unique_ptr<rdb::Env>* guard,
                                   std::string* errmsg) -> rdb::Env* {
                                  auto fs = open_file_system(uri);
                                  if (!fs) {
                                    *errmsg = fs.error();
                                    std::fprintf(stderr, "zonelab: %s\n", fs.error().c_str());
                                    return nullptr;
                                  }
                                  // The host's Env with our file system (threads, clock: the
                                  // host's).
                                  std::shared_ptr<rdb::FileSystem> shared = std::move(fs).value();
                                  *guard = rdb::NewCompositeEnv(shared);
                                  return guard->get();
                                });
  return true;
}

[[maybe_unused]] const bool registered = register_factories();

}  // namespace

void ensure_registered() { (void)registered; }

}  // namespace zonelab::rocksdb_plugin
