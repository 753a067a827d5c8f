// RocksDB's FileSystem on the zoned file system: what RocksDB asks (files
// to write sequentially, to read at random or in sequence, directories,
// renames, links, locks) answered by a mounted ZonedFs. Registered under
// the zonelab:// URI (registry.cc), so that `db_bench --fs_uri=zonelab://...`
// and `--env_uri=...` run on a modeled device; or made over a ZonedFs
// someone else mounted (a tool's, in virtual time) with make_env().
//
// Each method answers as RocksDB's PosixFileSystem does where RocksDB acts
// on the answer (docs/rocksdb.md, "The FileSystem contract"): a missing
// directory listed or a missing name tested is NotFound, any other missing
// path PathNotFound (an IOError, as ENOENT is); results are emptied before
// anything can fail.
//
// Paths are the ones RocksDB chooses, any absolute path (test directories
// included); "//", "." and ".." are resolved and a relative path is taken
// from "/". Nothing goes to the host's file system.
//
// zonelab has no page cache: direct and buffered I/O are the same, so the
// direct I/O options are accepted and files report buffered I/O (RocksDB
// then appends sequentially, which a zone needs).
#pragma once

#include <rocksdb/env.h>
#include <rocksdb/file_system.h>

#include <memory>
#include <string>

#include "fs/status.h"
#include "fs/zoned_fs.h"
#include "rocksdb/session.h"

namespace zonelab::rocksdb_plugin {

// A file system error as RocksDB's IOStatus, with the message.
ROCKSDB_NAMESPACE::IOStatus to_io_status(const fs::FsStatus& status);

// RocksDB's path as the file system's: absolute, normalized.
std::string fs_path(const std::string& rocksdb_path);

// A file system someone else owns, as the shared pointer the FileSystem
// keeps: nothing is freed when the last copy goes. The owner keeps it
// mounted until every FileSystem, Env and file made over it is gone.
std::shared_ptr<fs::ZonedFs> unowned(fs::ZonedFs& fs);

class ZonelabFileSystem final : public ROCKSDB_NAMESPACE::FileSystem {
 public:
  // Over a mounted file system: the FileSystem and every file it opens hold
  // `fs`, so it lives until the last of them goes. `id` is what GetId
  // answers. A read-only mount answers every change with InvalidArgument.
  // With a tenant (seed 001 §IV-D), every path RocksDB names lies under the
  // tenant's directory /TENANT, so its files use the tenant's zone sets
  // alone; RocksDB sees the paths it named.
  explicit ZonelabFileSystem(std::shared_ptr<fs::ZonedFs> fs, std::string id = kClassName(),
                             const std::string& tenant = "");
  // Over a session's file system (the zonelab:// URI's), holding the
  // session as long as the file system.
  ZonelabFileSystem(std::shared_ptr<Session> session, std::string uri,
                    const std::string& tenant = "");

  static const char* kClassName() { return "ZonelabFileSystem"; }
  const char* Name() const override { return kClassName(); }
  // The URI it was made from, as RocksDB saves it in its OPTIONS file (or
  // the id it was given).
  std::string GetId() const override { return id_; }
  fs::ZonedFs& fs() { return *fs_; }
  bool has_session() const { return session_ != nullptr; }
  // The session it was made over (has_session() must be true).
  Session& session();

  using IOOptions = ROCKSDB_NAMESPACE::IOOptions;
  using IOStatus = ROCKSDB_NAMESPACE::IOStatus;
  using FileOptions = ROCKSDB_NAMESPACE::FileOptions;
  using IODebugContext = ROCKSDB_NAMESPACE::IODebugContext;
  using FileAttributes = ROCKSDB_NAMESPACE::FileAttributes;

  IOStatus NewSequentialFile(const std::string& fname, const FileOptions& options,
                             std::unique_ptr<ROCKSDB_NAMESPACE::FSSequentialFile>* result,
                             IODebugContext* dbg) override;
  IOStatus NewRandomAccessFile(const std::string& fname, const FileOptions& options,
                               std::unique_ptr<ROCKSDB_NAMESPACE::FSRandomAccessFile>* result,
                               IODebugContext* dbg) override;
  IOStatus NewWritableFile(const std::string& fname, const FileOptions& options,
                           std::unique_ptr<ROCKSDB_NAMESPACE::FSWritableFile>* result,
                           IODebugContext* dbg) override;
  IOStatus ReopenWritableFile(const std::string& fname, const FileOptions& options,
                              std::unique_ptr<ROCKSDB_NAMESPACE::FSWritableFile>* result,
                              IODebugContext* dbg) override;
  IOStatus ReuseWritableFile(const std::string& fname, const std::string& old_fname,
                             const FileOptions& options,
                             std::unique_ptr<ROCKSDB_NAMESPACE::FSWritableFile>* result,
                             IODebugContext* dbg) override;
  IOStatus NewDirectory(const std::string& name, const IOOptions& options,
                        std::unique_ptr<ROCKSDB_NAMESPACE::FSDirectory>* result,
                        IODebugContext* dbg) override;
  IOStatus FileExists(const std::string& fname, const IOOptions& options,
                      IODebugContext* dbg) override;
  IOStatus GetChildren(const std::string& dir, const IOOptions& options,
                       std::vector<std::string>* result, IODebugContext* dbg) override;
  IOStatus GetChildrenFileAttributes(const std::string& dir, const IOOptions& options,
                                     std::vector<FileAttributes>* result,
                                     IODebugContext* dbg) override;
  IOStatus DeleteFile(const std::string& fname, const IOOptions& options,
                      IODebugContext* dbg) override;
  IOStatus Truncate(const std::string& fname, size_t size, const IOOptions& options,
                    IODebugContext* dbg) override;
  IOStatus CreateDir(const std::string& dirname, const IOOptions& options,
                     IODebugContext* dbg) override;
  IOStatus CreateDirIfMissing(const std::string& dirname, const IOOptions& options,
                              IODebugContext* dbg) override;
  IOStatus DeleteDir(const std::string& dirname, const IOOptions& options,
                     IODebugContext* dbg) override;
  IOStatus GetFileSize(const std::string& fname, const IOOptions& options, uint64_t* file_size,
                       IODebugContext* dbg) override;
  IOStatus GetFileModificationTime(const std::string& fname, const IOOptions& options,
                                   uint64_t* file_mtime, IODebugContext* dbg) override;
  IOStatus RenameFile(const std::string& src, const std::string& target, const IOOptions& options,
                      IODebugContext* dbg) override;
  IOStatus LinkFile(const std::string& src, const std::string& target, const IOOptions& options,
                    IODebugContext* dbg) override;
  IOStatus NumFileLinks(const std::string& fname, const IOOptions& options, uint64_t* count,
                        IODebugContext* dbg) override;
  IOStatus AreFilesSame(const std::string& first, const std::string& second,
                        const IOOptions& options, bool* res, IODebugContext* dbg) override;
  IOStatus LockFile(const std::string& fname, const IOOptions& options,
                    ROCKSDB_NAMESPACE::FileLock** lock, IODebugContext* dbg) override;
  IOStatus UnlockFile(ROCKSDB_NAMESPACE::FileLock* lock, const IOOptions& options,
                      IODebugContext* dbg) override;
  IOStatus GetTestDirectory(const IOOptions& options, std::string* path,
                            IODebugContext* dbg) override;
  IOStatus GetAbsolutePath(const std::string& db_path, const IOOptions& options,
                           std::string* output_path, IODebugContext* dbg) override;
  IOStatus IsDirectory(const std::string& path, const IOOptions& options, bool* is_dir,
                       IODebugContext* dbg) override;
  IOStatus GetFreeSpace(const std::string& path, const IOOptions& options, uint64_t* diskfree,
                        IODebugContext* dbg) override;

 private:
  IOStatus open_writable(const std::string& fname, bool append,
                         std::unique_ptr<ROCKSDB_NAMESPACE::FSWritableFile>* result);

  // The file system's path of a path RocksDB names (under the tenant's
  // directory with one).
  std::string path_of(const std::string& rocksdb_path) const;

  std::shared_ptr<fs::ZonedFs> fs_;
  std::shared_ptr<Session> session_;  // null over a file system given alone
  std::string id_;
  std::string root_;  // "/TENANT", or empty
};

// An Env whose files are `fs`'s and whose threads and clock are the
// default Env's (rocksdb::NewCompositeEnv): for RocksDB over a file system
// mounted in this process, `options.env = env.get()`. The Env holds the
// file system as ZonelabFileSystem does.
std::unique_ptr<ROCKSDB_NAMESPACE::Env> make_env(std::shared_ptr<fs::ZonedFs> fs,
                                                 const std::string& tenant = "");

}  // namespace zonelab::rocksdb_plugin
