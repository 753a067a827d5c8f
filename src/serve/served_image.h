// A device image served to a kernel: the stack in real time (the device
// paced to the wall clock by its own thread), the image's LBAs as one file
// (BlockFile), and what shows it -- a FUSE mount holding the file
// (FuseServer), or a virtio block device on a vhost-user socket
// (VhostUserBlkServer). What `zonelab serve` and `zonelab vm` run.
//
// Only a block-interface image can be served: a kernel file system writes
// anywhere, which a zoned namespace refuses. (A zoned device shown to the
// kernel needs a zoned block device -- a ubd or loop device cannot be one
// -- and is a later step; ServedImage keeps the interface check in one
// place for it.)
//
// Every write the guest's kernel sees completed is in the image's journal
// (the stack records each state-changing command before its completion is
// reported), so a served image killed at any instant opens with what was
// acknowledged, and its kernel file system with what was flushed.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "serve/fuse_server.h"
#include "serve/served_file.h"
#include "serve/stream_hints.h"
#include "serve/vhost_user_blk.h"
#include "stack/stack.h"
#include "zonelab/result.h"

namespace zonelab::serve {

struct ServeOptions {
  std::string image;
  // `image` is a plain host file served as it is, without the model
  // (serve/pass_through_file.h): no stack, no device counters.
  bool pass_through = false;
  // Shown as a file through FUSE (fuse.mount_point), or, with vhost_user,
  // as a virtio block device to the guest that connects to vhost.socket_path.
  bool vhost_user = false;
  FuseOptions fuse;
  VhostUserOptions vhost;
  std::string scheduler;  // empty: the configuration's
  // Non-empty: the hints file a guest's hint shim appends to; each write
  // goes to the stream its LBAs were hinted for (serve/stream_hints.h). The
  // image needs block.streams of 2 or more.
  std::string stream_hints_path;
  RealtimeOptions realtime;
};

// Why `info` cannot be served, or nothing.
std::optional<std::string> serve_interface_problem(const std::string& image,
                                                   const DeviceInfo& info);

class ServedImage {
 public:
  static Result<std::unique_ptr<ServedImage>> open(const ServeOptions& options);
  ~ServedImage();
  ServedImage(const ServedImage&) = delete;
  ServedImage& operator=(const ServedImage&) = delete;

  const ServeOptions& options() const { return options_; }
  // The served file's path, or the vhost-user socket's.
  const std::string& file_path() const { return file_path_; }
  uint64_t size_bytes() const { return file_->size_bytes(); }
  // The device's LBA size (a passed-through file's block size).
  uint64_t block_bytes() const { return file_->block_bytes(); }
  // Serving ended from outside: the mount was unmounted, or the guest on the
  // vhost-user socket went away.
  bool gone() const;
  // Why the vhost-user server ended the guest's connection, or empty.
  std::string transport_error() const;
  // What opening the image had to tell (stack/stack.h).
  const std::vector<std::string>& notes() const { return notes_; }

  // Everything it can tell: the requests served, the device's counters since
  // it opened, the real-time driver's pacing. Before and after close().
  nlohmann::ordered_json stats_json() const;
  // Unmounts (the guest's requests in flight are answered first), stops the
  // device and saves the image. Idempotent.
  Outcome close();

 private:
  ServedImage() = default;
  ServeOptions options_;
  std::string file_path_;
  std::unique_ptr<Stack> stack_;
  std::vector<std::string> notes_;
  std::unique_ptr<StreamHints> hints_;  // before file_: the file uses it
  std::unique_ptr<ServedFile> file_;
  std::unique_ptr<FuseServer> server_;
  std::unique_ptr<VhostUserBlkServer> vhost_;
  uint64_t fuse_requests_ = 0;  // at close()
  bool closed_ = false;
};

}  // namespace zonelab::serve
