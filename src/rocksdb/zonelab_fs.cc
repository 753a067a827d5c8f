// See zonelab_fs.h.
#include "rocksdb/zonelab_fs.h"

#include <fmt/format.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

namespace zonelab::rocksdb_plugin {

namespace rdb = ROCKSDB_NAMESPACE;
using rdb::IODebugContext;
using rdb::IOOptions;
using rdb::IOStatus;
using rdb::Slice;

IOStatus to_io_status(const fs::FsStatus& status) {
  // No error of a stop under way reaches the program; see session.h.
  if (!status.is_ok() && stopping_by_signal()) wait_for_the_signal_to_end_the_process();
  const std::string& m = status.message();
  switch (status.code()) {
    case fs::Code::kOk:
      return IOStatus::OK();
    case fs::Code::kNotFound:
      return IOStatus::PathNotFound(m);
    case fs::Code::kInvalid:
      return IOStatus::InvalidArgument(m);
    case fs::Code::kNoSpace:
      return IOStatus::NoSpace(m);
    case fs::Code::kBusy:
      return IOStatus::Busy(m);
    case fs::Code::kCorruption:
      return IOStatus::Corruption(m);
    case fs::Code::kExists:
    case fs::Code::kNotDirectory:
    case fs::Code::kIsDirectory:
    case fs::Code::kNotEmpty:
    case fs::Code::kIoError:
      return IOStatus::IOError(m);
  }
  return IOStatus::IOError(m);
}

std::string fs_path(const std::string& rocksdb_path) {
  std::filesystem::path p(rocksdb_path.empty() || rocksdb_path[0] != '/' ? "/" + rocksdb_path
                                                                         : rocksdb_path);
  std::string out = p.lexically_normal().string();
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  // lexically_normal keeps a leading "/.." as "/": nothing is above the root.
  return out;
}

namespace {

// The RocksDB thread pool the calling thread belongs to, from the name
// RocksDB gives its pool threads ("rocksdb:high" runs flushes,
// "rocksdb:low" and "rocksdb:bottom" compactions); none for any other
// thread (a user's, or a pool of another Env).
//
// Looked up once per thread (every read asks): RocksDB names a pool thread
// while it holds the pool's lock, before the thread can take a job, so the
// name a thread has at its first I/O is the one it keeps.
enum class Pool { kNone, kFlush, kCompaction };
Pool look_up_pool() {
  char name[16] = {};
  if (pthread_getname_np(pthread_self(), name, sizeof(name)) != 0) return Pool::kNone;
  std::string_view n(name);
  if (n == "rocksdb:high") return Pool::kFlush;
  if (n == "rocksdb:low" || n == "rocksdb:bottom") return Pool::kCompaction;
  return Pool::kNone;
}
Pool pool_of_this_thread() {
  thread_local const Pool pool = look_up_pool();
  return pool;
}

// What RocksDB writes into a file, from its name, the thread that writes it
// and the hints it sets.
fs::IoClass io_class_of(const std::string& path, rdb::Env::IOPriority priority,
                        rdb::Env::WriteLifeTimeHint hint) {
  std::string name = path.substr(path.rfind('/') + 1);
  auto ends_with = [&](std::string_view suffix) {
    return name.size() >= suffix.size() &&
           name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (ends_with(".log")) return fs::IoClass::kWal;
  if (name.rfind("MANIFEST-", 0) == 0) return fs::IoClass::kManifest;
  if (ends_with(".sst") || ends_with(".blob")) {
    // A flush runs in the high-priority pool, a compaction in the low one:
    // the thread tells them apart even under a write stall, when RocksDB
    // gives both user priority and a level-1 output the same lifetime hint
    // as a flushed table. Otherwise (a flush run by the user's thread, as at
    // open): flush writes at high priority, compaction at low; at user
    // priority a level-0 file (medium lifetime) is taken for a flush.
    switch (pool_of_this_thread()) {
      case Pool::kFlush:
        return fs::IoClass::kFlush;
      case Pool::kCompaction:
        return fs::IoClass::kCompaction;
      case Pool::kNone:
        break;
    }
    if (priority == rdb::Env::IO_HIGH) return fs::IoClass::kFlush;
    if (priority == rdb::Env::IO_LOW) return fs::IoClass::kCompaction;
    if (hint == rdb::Env::WLTH_MEDIUM) return fs::IoClass::kFlush;
    if (hint != rdb::Env::WLTH_NOT_SET) return fs::IoClass::kCompaction;
  }
  return fs::IoClass::kOther;
}

fs::Lifetime lifetime_of(rdb::Env::WriteLifeTimeHint hint) {
  auto value = static_cast<uint8_t>(hint);
  return value <= fs::kLifetimeLast ? static_cast<fs::Lifetime>(value) : fs::Lifetime::kNotSet;
}

// RocksDB's info log ("LOG", "LOG.old.*"): diagnostics only.
bool is_info_log(const std::string& path) {
  std::string name = path.substr(path.rfind('/') + 1);
  return name == "LOG" || name.rfind("LOG.old.", 0) == 0;
}

class WritableFile final : public rdb::FSWritableFile {
 public:
  WritableFile(std::shared_ptr<fs::ZonedFs> fs, std::string path,
               std::unique_ptr<fs::WritableFile> file)
      : fs_(std::move(fs)),
        path_(std::move(path)),
        file_(std::move(file)),
        info_log_(is_info_log(path_)) {}
  ~WritableFile() override {
    if (file_) (void)file_->close();
  }

  IOStatus Append(const Slice& data, const IOOptions&, IODebugContext*) override {
    apply_hints();
    return answer(file_->append(reinterpret_cast<const uint8_t*>(data.data()), data.size()));
  }
  IOStatus Append(const Slice& data, const IOOptions& options, const rdb::DataVerificationInfo&,
                  IODebugContext* dbg) override {
    return Append(data, options, dbg);
  }
  IOStatus Truncate(uint64_t size, const IOOptions&, IODebugContext*) override {
    if (size == file_->size()) return IOStatus::OK();
    return answer(file_->truncate(size));
  }
  IOStatus Close(const IOOptions&, IODebugContext*) override {
    apply_hints();
    return answer(file_->close());
  }
  // Data stays in the file's buffer until it fills, a sync or the close, as
  // ZenFS keeps it: RocksDB flushes after every write-ahead-log record, and
  // writing each block out then would make every write wait for the device.
  // Only a sync makes data durable, on zonelab as on a file system.
  IOStatus Flush(const IOOptions&, IODebugContext*) override {
    apply_hints();
    return IOStatus::OK();
  }
  IOStatus Sync(const IOOptions&, IODebugContext*) override {
    apply_hints();
    return answer(file_->sync());
  }
  IOStatus Fsync(const IOOptions& options, IODebugContext* dbg) override {
    return Sync(options, dbg);
  }
  bool IsSyncThreadSafe() const override { return false; }
  uint64_t GetFileSize(const IOOptions&, IODebugContext*) override { return file_->size(); }
  size_t GetRequiredBufferAlignment() const override { return fs_->block_bytes(); }

 private:
  // The info log's writes never fail: what the file system cannot take
  // (a full device) is dropped. RocksDB keeps logging after an error of its
  // info log, and a RocksDB built with assertions (Debian's) aborts when it
  // writes again to a file that failed.
  IOStatus answer(const fs::FsStatus& status) {
    if (info_log_ && !status.is_ok()) return IOStatus::OK();
    return to_io_status(status);
  }

  // The hints RocksDB set (priority, lifetime) go to the file before its
  // first write, when placement needs them.
  void apply_hints() {
    if (hints_applied_) return;
    hints_applied_ = true;
    file_->set_hints(lifetime_of(GetWriteLifeTimeHint()),
                     io_class_of(path_, GetIOPriority(), GetWriteLifeTimeHint()));
  }

  std::shared_ptr<fs::ZonedFs> fs_;  // outlives file_
  std::string path_;
  std::unique_ptr<fs::WritableFile> file_;
  bool info_log_;
  bool hints_applied_ = false;
};

// A compaction's reads come from a low-priority pool thread (Algorithm 1
// makes them wait for a flush writing in their group). RocksDB passes them
// at IO_LOW (its rate limiter's priority, in IOOptions), or at IO_USER
// while writes are delayed; the pool tells them apart from a flush's reads
// (its verification of the table it wrote) and a user's.
fs::IoClass reader_of(const IOOptions& options) {
  switch (pool_of_this_thread()) {
    case Pool::kCompaction:
      return fs::IoClass::kCompaction;
    case Pool::kFlush:
      return fs::IoClass::kOther;
    case Pool::kNone:
      break;
  }
  return options.rate_limiter_priority == rdb::Env::IO_LOW ? fs::IoClass::kCompaction
                                                           : fs::IoClass::kOther;
}

class SequentialFile final : public rdb::FSSequentialFile {
 public:
  SequentialFile(std::shared_ptr<fs::ZonedFs> fs, std::unique_ptr<fs::ReadableFile> file)
      : fs_(std::move(fs)), file_(std::move(file)) {}

  IOStatus Read(size_t n, const IOOptions&, Slice* result, char* scratch,
                IODebugContext*) override {
    auto got = file_->read_next(n, reinterpret_cast<uint8_t*>(scratch));
    if (!got) return to_io_status(got.status());
    *result = Slice(scratch, *got);
    return IOStatus::OK();
  }
  IOStatus PositionedRead(uint64_t offset, size_t n, const IOOptions&, Slice* result, char* scratch,
                          IODebugContext*) override {
    auto got = file_->read(offset, n, reinterpret_cast<uint8_t*>(scratch));
    if (!got) return to_io_status(got.status());
    *result = Slice(scratch, *got);
    return IOStatus::OK();
  }
  IOStatus Skip(uint64_t n) override { return to_io_status(file_->skip(n)); }

 private:
  std::shared_ptr<fs::ZonedFs> fs_;  // outlives file_
  std::unique_ptr<fs::ReadableFile> file_;
};

class RandomAccessFile final : public rdb::FSRandomAccessFile {
 public:
  RandomAccessFile(std::shared_ptr<fs::ZonedFs> fs, std::unique_ptr<fs::ReadableFile> file)
      : fs_(std::move(fs)), file_(std::move(file)) {}

  IOStatus Read(uint64_t offset, size_t n, const IOOptions& options, Slice* result, char* scratch,
                IODebugContext*) const override {
    auto got = file_->read(offset, n, reinterpret_cast<uint8_t*>(scratch), reader_of(options));
    if (!got) return to_io_status(got.status());
    *result = Slice(scratch, *got);
    return IOStatus::OK();
  }
  IOStatus Prefetch(uint64_t, size_t, const IOOptions&, IODebugContext*) override {
    return IOStatus::OK();  // no cache to fill
  }
  size_t GetRequiredBufferAlignment() const override { return fs_->block_bytes(); }

 private:
  std::shared_ptr<fs::ZonedFs> fs_;  // outlives file_
  std::unique_ptr<fs::ReadableFile> file_;
};

class Directory final : public rdb::FSDirectory {
 public:
  explicit Directory(std::shared_ptr<fs::ZonedFs> fs) : fs_(std::move(fs)) {}
  IOStatus Fsync(const IOOptions&, IODebugContext*) override {
    return to_io_status(fs_->sync_metadata());
  }
  // Nothing is held open (a POSIX directory closes its descriptor).
  IOStatus Close(const IOOptions&, IODebugContext*) override { return IOStatus::OK(); }

 private:
  std::shared_ptr<fs::ZonedFs> fs_;
};

class Lock final : public rdb::FileLock {
 public:
  explicit Lock(std::string locked) : path(std::move(locked)) {}
  std::string path;
};

// A directory that is missing or no directory, listed: NotFound, as
// FileSystem::GetChildren documents and PosixFileSystem answers (RocksDB
// tells a missing directory from a failing one by IsNotFound()).
IOStatus listing_status(const fs::FsStatus& status) {
  switch (status.code()) {
    case fs::Code::kNotFound:
    case fs::Code::kNotDirectory:
    case fs::Code::kInvalid:
      return IOStatus::NotFound(status.message());
    default:
      return to_io_status(status);
  }
}

// A listing names CURRENT (the file that makes a directory a database: it
// names the live MANIFEST) first, the rest in name order. RocksDB's
// DestroyDB deletes a database's files one by one in listing order; with
// CURRENT gone first, a crash part way leaves a directory of leftover files
// that is no longer a database, instead of a MANIFEST that names tables
// already deleted -- which no DB::Open, and no fsck, could tell from a loss.
// (db_stress destroys each checkpoint it verifies so, and db_bench its
// database at every fresh start.)
void current_first(std::vector<std::string>& names) {
  auto current = std::find(names.begin(), names.end(), "CURRENT");
  if (current != names.end()) std::rotate(names.begin(), current, current + 1);
}

}  // namespace

std::shared_ptr<fs::ZonedFs> unowned(fs::ZonedFs& fs) {
  return std::shared_ptr<fs::ZonedFs>(&fs, [](fs::ZonedFs*) {});
}

ZonelabFileSystem::ZonelabFileSystem(std::shared_ptr<fs::ZonedFs> fs, std::string id,
                                     const std::string& tenant)
    : fs_(std::move(fs)), id_(std::move(id)), root_(tenant.empty() ? "" : "/" + tenant) {
  ZL_ASSERT(fs_ != nullptr);
}

// The aliasing constructor: a pointer to the session's file system that
// owns the session, so files keep the whole session (device thread, image
// lock, statistics) alive, not just the file system inside it.
ZonelabFileSystem::ZonelabFileSystem(std::shared_ptr<Session> session, std::string uri,
                                     const std::string& tenant)
    : fs_(session, &session->fs()),
      session_(std::move(session)),
      id_(std::move(uri)),
      root_(tenant.empty() ? "" : "/" + tenant) {}

std::string ZonelabFileSystem::path_of(const std::string& rocksdb_path) const {
  std::string path = fs_path(rocksdb_path);
  if (root_.empty()) return path;
  return path == "/" ? root_ : root_ + path;
}

Session& ZonelabFileSystem::session() {
  ZL_ASSERT(session_ != nullptr);
  return *session_;
}

std::unique_ptr<rdb::Env> make_env(std::shared_ptr<fs::ZonedFs> fs, const std::string& tenant) {
  return rdb::NewCompositeEnv(
      std::make_shared<ZonelabFileSystem>(std::move(fs), ZonelabFileSystem::kClassName(), tenant));
}

IOStatus ZonelabFileSystem::NewSequentialFile(const std::string& fname, const FileOptions&,
                                              std::unique_ptr<rdb::FSSequentialFile>* result,
                                              IODebugContext*) {
  result->reset();
  auto file = fs_->open_read(path_of(fname));
  if (!file) return to_io_status(file.status());
  *result = std::make_unique<SequentialFile>(fs_, std::move(file).value());
  return IOStatus::OK();
}

IOStatus ZonelabFileSystem::NewRandomAccessFile(const std::string& fname, const FileOptions&,
                                                std::unique_ptr<rdb::FSRandomAccessFile>* result,
                                                IODebugContext*) {
  result->reset();
  auto file = fs_->open_read(path_of(fname));
  if (!file) return to_io_status(file.status());
  *result = std::make_unique<RandomAccessFile>(fs_, std::move(file).value());
  return IOStatus::OK();
}

IOStatus ZonelabFileSystem::open_writable(const std::string& fname, bool append,
                                          std::unique_ptr<rdb::FSWritableFile>* result) {
  result->reset();
  std::string path = path_of(fname);
  fs::ZonedFs::WriteOptions options;
  options.append = append;
  options.io_class = io_class_of(path, rdb::Env::IO_TOTAL, rdb::Env::WLTH_NOT_SET);
  auto file = fs_->open_write(path, options);
  if (!file) return to_io_status(file.status());
  *result = std::make_unique<WritableFile>(fs_, path, std::move(file).value());
  return IOStatus::OK();
}

IOStatus ZonelabFileSystem::NewWritableFile(const std::string& fname, const FileOptions&,
                                            std::unique_ptr<rdb::FSWritableFile>* result,
                                            IODebugContext*) {
  return open_writable(fname, false, result);
}

IOStatus ZonelabFileSystem::ReopenWritableFile(const std::string& fname, const FileOptions&,
                                               std::unique_ptr<rdb::FSWritableFile>* result,
                                               IODebugContext*) {
  return open_writable(fname, true, result);
}

// POSIX opens the old file, renames it to the new name and overwrites it
// from the start; a missing old file is an error (RocksDB recycles only
// logs it knows). A zone is not rewritten in place, so after the rename the
// file is written anew, empty: a recycled log's reader stops at its end
// either way.
IOStatus ZonelabFileSystem::ReuseWritableFile(const std::string& fname,
                                              const std::string& old_fname, const FileOptions&,
                                              std::unique_ptr<rdb::FSWritableFile>* result,
                                              IODebugContext*) {
  result->reset();
  const std::string old_path = path_of(old_fname);
  auto old = fs_->stat(old_path);
  if (!old) return to_io_status(old.status());
  if (old->is_dir) return IOStatus::IOError(fmt::format("{} is a directory", old_fname));
  if (fs::FsStatus renamed = fs_->rename(old_path, path_of(fname)); !renamed) {
    return to_io_status(renamed);
  }
  return open_writable(fname, false, result);
}

IOStatus ZonelabFileSystem::NewDirectory(const std::string& name, const IOOptions&,
                                         std::unique_ptr<rdb::FSDirectory>* result,
                                         IODebugContext*) {
  result->reset();
  auto st = fs_->stat(path_of(name));
  if (!st) return to_io_status(st.status());
  if (!st->is_dir) return IOStatus::IOError(fmt::format("{} is not a directory", name));
  *result = std::make_unique<Directory>(fs_);
  return IOStatus::OK();
}

IOStatus ZonelabFileSystem::FileExists(const std::string& fname, const IOOptions&,
                                       IODebugContext*) {
  if (fs_->exists(path_of(fname))) return IOStatus::OK();
  return IOStatus::NotFound(fname);
}

IOStatus ZonelabFileSystem::GetChildren(const std::string& dir, const IOOptions&,
                                        std::vector<std::string>* result, IODebugContext*) {
  result->clear();
  auto names = fs_->list(path_of(dir));
  if (!names) return listing_status(names.status());
  *result = std::move(names).value();
  current_first(*result);
  return IOStatus::OK();
}

// One listing, then each name's size; a name gone in between is left out
// (as FileSystem's own version does). Subdirectories are listed too, with
// size 0, as POSIX lists them with theirs.
IOStatus ZonelabFileSystem::GetChildrenFileAttributes(const std::string& dir, const IOOptions&,
                                                      std::vector<FileAttributes>* result,
                                                      IODebugContext*) {
  result->clear();
  const std::string path = path_of(dir);
  auto names = fs_->list(path);
  if (!names) return listing_status(names.status());
  result->reserve(names->size());
  for (std::string& name : *names) {
    auto st = fs_->stat(path == "/" ? "/" + name : path + "/" + name);
    if (!st) {
      if (st.status().code() == fs::Code::kNotFound) continue;
      result->clear();
      return to_io_status(st.status());
    }
    result->push_back(FileAttributes{std::move(name), st->size});
  }
  return IOStatus::OK();
}

IOStatus ZonelabFileSystem::DeleteFile(const std::string& fname, const IOOptions&,
                                       IODebugContext*) {
  return to_io_status(fs_->remove(path_of(fname)));
}

IOStatus ZonelabFileSystem::Truncate(const std::string& fname, size_t size, const IOOptions&,
                                     IODebugContext*) {
  return to_io_status(fs_->truncate(path_of(fname), size));
}

// Missing directories above are made (RocksDB's paths are chosen outside
// the image, where nobody made them); the directory itself must be new.
IOStatus ZonelabFileSystem::CreateDir(const std::string& dirname, const IOOptions&,
                                      IODebugContext*) {
  std::string path = path_of(dirname);
  if (fs_->exists(path)) return IOStatus::IOError(fmt::format("{} exists", dirname));
  return to_io_status(fs_->create_dir(path, true));
}

IOStatus ZonelabFileSystem::CreateDirIfMissing(const std::string& dirname, const IOOptions&,
                                               IODebugContext*) {
  return to_io_status(fs_->create_dir(path_of(dirname), true));
}

IOStatus ZonelabFileSystem::DeleteDir(const std::string& dirname, const IOOptions&,
                                      IODebugContext*) {
  return to_io_status(fs_->remove_dir(path_of(dirname)));
}

IOStatus ZonelabFileSystem::GetFileSize(const std::string& fname, const IOOptions&,
                                        uint64_t* file_size, IODebugContext*) {
  *file_size = 0;
  auto st = fs_->stat(path_of(fname));
  if (!st) return to_io_status(st.status());
  *file_size = st->size;
  return IOStatus::OK();
}

IOStatus ZonelabFileSystem::GetFileModificationTime(const std::string& fname, const IOOptions&,
                                                    uint64_t* file_mtime, IODebugContext*) {
  auto st = fs_->stat(path_of(fname));
  if (!st) return to_io_status(st.status());
  *file_mtime = st->mtime_ns / 1'000'000'000;  // seconds of device time
  return IOStatus::OK();
}

// Files and directories alike, as rename(2): RocksDB's checkpoint and
// column-family export build "dir.tmp" and rename it into place.
IOStatus ZonelabFileSystem::RenameFile(const std::string& src, const std::string& target,
                                       const IOOptions&, IODebugContext*) {
  return to_io_status(fs_->rename(path_of(src), path_of(target)));
}

IOStatus ZonelabFileSystem::LinkFile(const std::string& src, const std::string& target,
                                     const IOOptions&, IODebugContext*) {
  const std::string from = path_of(src);
  fs::FsStatus linked = fs_->link(from, path_of(target));
  if (linked.code() == fs::Code::kNotFound) {
    // link(2) of a directory is EPERM, an IOError, not a missing path.
    auto st = fs_->stat(from);
    if (st && st->is_dir) return IOStatus::IOError(fmt::format("{} is a directory", src));
  }
  return to_io_status(linked);
}

IOStatus ZonelabFileSystem::NumFileLinks(const std::string& fname, const IOOptions&,
                                         uint64_t* count, IODebugContext*) {
  auto st = fs_->stat(path_of(fname));
  if (!st) return to_io_status(st.status());
  *count = st->nlink;
  return IOStatus::OK();
}

IOStatus ZonelabFileSystem::AreFilesSame(const std::string& first, const std::string& second,
                                         const IOOptions&, bool* res, IODebugContext*) {
  const std::string a_path = path_of(first);
  const std::string b_path = path_of(second);
  auto a = fs_->stat(a_path);
  if (!a) return to_io_status(a.status());
  auto b = fs_->stat(b_path);
  if (!b) return to_io_status(b.status());
  // A directory has no id; it is the same only as itself.
  *res = (a->is_dir || b->is_dir) ? (a->is_dir && b->is_dir && a_path == b_path) : a->id == b->id;
  return IOStatus::OK();
}

IOStatus ZonelabFileSystem::LockFile(const std::string& fname, const IOOptions&,
                                     rdb::FileLock** lock, IODebugContext*) {
  *lock = nullptr;
  std::string path = path_of(fname);
  fs::FsStatus locked = fs_->lock_file(path);
  if (!locked) {
    // A lock held already is an IOError on POSIX too (ENOLCK).
    if (locked.code() == fs::Code::kBusy) return IOStatus::IOError(locked.message());
    return to_io_status(locked);
  }
  *lock = new Lock(path);
  return IOStatus::OK();
}

IOStatus ZonelabFileSystem::UnlockFile(rdb::FileLock* lock, const IOOptions&, IODebugContext*) {
  auto* ours = static_cast<Lock*>(lock);
  fs::FsStatus unlocked = fs_->unlock_file(ours->path);
  delete ours;
  return to_io_status(unlocked);
}

// TEST_TMPDIR when set, as PosixFileSystem: a test run keeps its databases
// apart from another's (inside the image, like every path).
IOStatus ZonelabFileSystem::GetTestDirectory(const IOOptions&, std::string* path, IODebugContext*) {
  const char* tmpdir = std::getenv("TEST_TMPDIR");
  *path = tmpdir != nullptr && tmpdir[0] != '\0' ? fs_path(tmpdir)
                                                 : fmt::format("/tmp/rocksdbtest-{}", ::geteuid());
  return to_io_status(fs_->create_dir(path_of(*path), true));
}

IOStatus ZonelabFileSystem::GetAbsolutePath(const std::string& db_path, const IOOptions&,
                                            std::string* output_path, IODebugContext*) {
  *output_path = fs_path(db_path);
  return IOStatus::OK();
}

IOStatus ZonelabFileSystem::IsDirectory(const std::string& path, const IOOptions&, bool* is_dir,
                                        IODebugContext*) {
  auto st = fs_->stat(path_of(path));
  if (!st) return to_io_status(st.status());
  *is_dir = st->is_dir;
  return IOStatus::OK();
}

IOStatus ZonelabFileSystem::GetFreeSpace(const std::string&, const IOOptions&, uint64_t* diskfree,
                                         IODebugContext*) {
  fs::FsSpace space = fs_->space();
  *diskfree = space.free_bytes + space.reclaimable_bytes;
  return IOStatus::OK();
}

}  // namespace zonelab::rocksdb_plugin
