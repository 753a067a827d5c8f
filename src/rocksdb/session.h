// A device image opened for a RocksDB program: the stack in real time
// (the device paced to the wall clock in a thread of its own), the zoned
// file system mounted on it, and its statistics. A process holds at most
// one session per image, shared by every FileSystem and Env that names it;
// the image stays locked until the last one lets go, when the file system
// is unmounted, the image saved and the statistics written.
//
// Statistics (device counters, file-system counters, per-zone state, the
// real-time driver's pacing and CPU use) go as one JSON object to the
// URI's stats path at close, and whenever the process gets SIGUSR1 (unless
// the program handles SIGUSR1 itself).
//
// SIGINT and SIGTERM, when the program leaves them to their default action
// (db_bench does): the first writes the statistics and closes every session
// as close_all_at_exit() does, then takes the signal's default action (the
// process ends as it would have: 130 / 143 in a shell); a second one during
// that takes the default action at once.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "fs/zoned_fs.h"
#include "rocksdb/uri.h"
#include "stack/stack.h"
#include "zonelab/result.h"

namespace zonelab::rocksdb_plugin {

class Session {
 public:
  // The session of `options.image`: the one open in this process (when its
  // options are the same), or a new one. With create=, a missing image is
  // made first, with a file system on it.
  static Result<std::shared_ptr<Session>> open(const UriOptions& options);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  fs::ZonedFs& fs() { return *fs_; }
  Stack& stack() { return *stack_; }
  const UriOptions& options() const { return options_; }

  // Everything the session can tell, as one JSON object.
  std::string stats_json() const;
  // Writes stats_json() to the stats path (atomically: a temporary file
  // renamed over it); nothing without a path.
  Outcome write_stats() const;

  // At exit: sessions still open are closed as far as can be -- the journal
  // committed, the stack stopped and the image saved -- even with files
  // open (the file system object is then left alone).
  static void close_all_at_exit();
  // Statistics of every open session written now (SIGUSR1).
  static void write_all_stats();

 private:
  Session() = default;
  static Result<std::unique_ptr<Session>> make(const UriOptions& options);
  void shut(bool at_exit);

  UriOptions options_;
  std::unique_ptr<Stack> stack_;
  std::unique_ptr<fs::ZonedFs> fs_;
  mutable std::mutex mutex_;  // shut() against write_stats()
  bool shutting_ = false;
  bool shut_ = false;  // statistics can no longer be taken
};

// True once a first SIGINT or SIGTERM has begun closing the sessions: the
// file system is (or is about to be) unmounted under the program's threads.
bool stopping_by_signal();
// Parks the calling thread until the signal's default action ends the
// process. A RocksDB thread whose call failed because the stop unmounted
// the file system waits here: returning the error would let the program
// end by its own error path (db_bench: exit 1 on a failed put) before the
// signal does.
[[noreturn]] void wait_for_the_signal_to_end_the_process();

// Makes a device image with a preset and a file system on it (create=).
Outcome create_image_with_fs(const std::string& path, const std::string& preset,
                             uint32_t finish_threshold_pct);

}  // namespace zonelab::rocksdb_plugin
