// A ServedFile shown to a guest kernel as a virtio block device through a
// vhost-user socket: the guest (User-Mode Linux's virtio_uml driver, or any
// vhost-user front end) connects to a Unix socket this server listens on,
// shares its memory (the file descriptors it sends with its memory table)
// and its virtqueue, and the server answers the virtio-blk requests it
// finds there -- reads, writes, flushes, discards and the device's id --
// with the file's methods, each on a worker thread of its own. So the
// device sees the guest's queue depth: up to `threads` requests at once, as
// many as the guest's block layer keeps in flight, where a UML ubd disk
// sends one 4 KiB request at a time.
//
// What the guest is told (virtio 1.x, split rings): capacity in 512-byte
// sectors, the file's block size as the logical block size (so the guest
// issues whole LBAs), a volatile write cache (flushes are asked for and
// become the file's flush: NVMe Flush), discard in whole LBAs (the file's
// hole: Dataset Management deallocate), indirect descriptors, one queue.
//
// One guest at a time. The connection ends when the guest closes it (its
// kernel powered off or died); requests in flight are answered first.
// A malformed message or ring (an address outside the shared memory, a
// descriptor chain that loops, a size beyond the protocol's) ends the
// connection with the reason kept in error(); it never reads or writes
// outside the memory the guest shared.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>

#include "serve/served_file.h"
#include "zonelab/result.h"

namespace zonelab::serve {

struct VhostUserOptions {
  // Where to listen: a path that does not exist yet (it is made, and
  // removed when the server ends).
  std::string socket_path;
  // Requests served at once; more wait in the ring.
  uint32_t threads = 32;
};

inline constexpr uint32_t kVhostThreadsMax = 256;

// Why a socket cannot be made at `path`, or nothing: too long for a Unix
// socket's address, something there already, no directory to hold it.
std::optional<std::string> socket_path_problem(const std::string& path);

// What the guest asked, by kind, and how deep its queue was.
struct VhostCounters {
  uint64_t requests = 0;
  uint64_t reads = 0;
  uint64_t writes = 0;
  uint64_t flushes = 0;
  uint64_t discards = 0;
  uint64_t get_ids = 0;
  uint64_t unsupported = 0;
  uint64_t errors = 0;  // answered with an I/O error
  uint64_t kicks = 0;
  // Requests in flight at the server: the most at once, and the mean seen
  // by each arriving request (itself included).
  uint64_t max_in_flight = 0;
  double mean_in_flight = 0;
};

nlohmann::ordered_json vhost_counters_json(const VhostCounters& c);

class VhostUserBlkServer {
 public:
  // Listens; a guest may connect from then on.
  static Result<std::unique_ptr<VhostUserBlkServer>> start(ServedFile& file,
                                                           const VhostUserOptions& options);
  // Stops, then removes the socket.
  ~VhostUserBlkServer();
  VhostUserBlkServer(const VhostUserBlkServer&) = delete;
  VhostUserBlkServer& operator=(const VhostUserBlkServer&) = delete;

  const std::string& socket_path() const { return options_.socket_path; }
  // Ends the serving: no more connections or requests; those being
  // answered finish first. Any thread; async-signal-safe.
  void stop();
  // Returns once serving has ended: stop(), or a guest that was connected
  // went away.
  void wait();
  // A guest connected and has gone (rather than stop()).
  bool guest_gone() const { return guest_gone_.load(); }
  // Why the connection was ended by the server, or empty.
  std::string error() const;

  VhostCounters counters() const;

 private:
  struct Impl;
  VhostUserBlkServer();
  std::unique_ptr<Impl> impl_;
  VhostUserOptions options_;
  std::thread thread_;
  int listen_fd_ = -1;
  int stop_fd_ = -1;
  std::atomic<bool> guest_gone_{false};
};

}  // namespace zonelab::serve
