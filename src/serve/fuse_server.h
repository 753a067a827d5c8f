// A ServedFile shown to the kernel through FUSE: a directory mounted with
// one regular file in it, so that anything that takes a disk image -- a
// User-Mode Linux ubd disk, losetup, fio, dd -- reaches the modeled device.
// The file is opened with direct I/O: the host's page cache keeps nothing,
// and every read, write, fsync (Flush) and punched hole (trim) of the
// guest arrives here as it was asked.
//
// Requests are served by a fixed number of worker threads, each waiting on
// the FUSE device and on a stop signal, so that stop() ends the serving at
// once from any thread (or from a signal handler: it only writes to an
// eventfd) without interrupting a request halfway. The mount goes when the
// server is destroyed, or earlier when someone unmounts it from outside
// (fusermount3 -u), after which wait() returns.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "serve/served_file.h"
#include "zonelab/result.h"

struct fuse_session;

namespace zonelab::serve {

struct FuseOptions {
  // An existing directory, not a mount point already.
  std::string mount_point;
  // The file's name in it.
  std::string file_name = "disk";
  // Worker threads; requests beyond wait in the kernel.
  uint32_t threads = 4;
};

inline constexpr uint32_t kFuseThreadsMax = 64;

// Where the program `name` is: itself when it holds a '/', else the first
// executable of that name on PATH or, after it, in the system's bin and
// sbin directories (mkfs and fusermount3 live there for users whose PATH
// lacks them).
std::optional<std::string> find_program(const std::string& name);

// Why a mount point cannot take a mount, or nothing: missing, not a
// directory, a mount point already (or one whose server is gone).
std::optional<std::string> mount_point_problem(const std::string& path);
// Why FUSE cannot be used here (no /dev/fuse, no fusermount3 for a user
// without privileges), or nothing.
std::optional<std::string> fuse_problem();

class FuseServer {
 public:
  // Mounts and starts the workers.
  static Result<std::unique_ptr<FuseServer>> start(ServedFile& file, const FuseOptions& options);
  // Stops, then unmounts.
  ~FuseServer();
  FuseServer(const FuseServer&) = delete;
  FuseServer& operator=(const FuseServer&) = delete;

  // The served file's path.
  const std::string& file_path() const { return file_path_; }
  // Ends the serving; requests being answered finish first. Any thread;
  // async-signal-safe.
  void stop();
  // Returns once the workers have ended: stop(), or unmounted from outside.
  void wait();
  // Unmounted from outside (or the connection aborted) rather than stopped.
  bool lost_mount() const { return lost_mount_.load(); }

  // The requests the kernel sent, by kind (lookup, getattr, read, ...).
  uint64_t requests() const { return requests_.load(std::memory_order_relaxed); }

 private:
  FuseServer() = default;
  void work();

  ServedFile* file_ = nullptr;
  FuseOptions options_;
  std::string file_path_;
  fuse_session* session_ = nullptr;
  int stop_fd_ = -1;
  bool mounted_ = false;
  std::vector<std::thread> workers_;
  std::atomic<bool> lost_mount_{false};
  std::atomic<uint64_t> requests_{0};
  int64_t start_time_s_ = 0;

  friend struct FuseOps;
};

}  // namespace zonelab::serve
