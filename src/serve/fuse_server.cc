#define FUSE_USE_VERSION 314
#include "serve/fuse_server.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <fuse3/fuse_lowlevel.h>
#include <linux/falloc.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <mutex>
#include <sstream>

#include "common/units.h"
#include "zonelab/assert.h"

namespace zonelab::serve {

namespace {

constexpr fuse_ino_t kRootIno = FUSE_ROOT_ID;
constexpr fuse_ino_t kFileIno = 2;
// The file's size never changes, nor does the directory: the kernel may
// keep what it was told for long.
constexpr double kAttrTimeoutS = 3600;

// libfuse's own messages, said the way zonelab says things.
void log_to_stderr(enum fuse_log_level level, const char* format, va_list ap) {
  if (level > FUSE_LOG_ERR) return;
  char line[512];
  std::vsnprintf(line, sizeof line, format, ap);
  std::string text = one_line(line);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\n')) text.pop_back();
  std::fprintf(stderr, "zonelab: note: fuse: %s\n", text.c_str());
}

}  // namespace

std::optional<std::string> find_program(const std::string& name) {
  if (name.find('/') != std::string::npos) {
    if (access(name.c_str(), X_OK) == 0) return name;
    return std::nullopt;
  }
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "";
  dirs += ":/usr/sbin:/sbin:/usr/bin:/bin";
  std::stringstream split(dirs);
  std::string dir;
  while (std::getline(split, dir, ':')) {
    if (dir.empty()) continue;
    std::string candidate = dir + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return std::nullopt;
}

std::optional<std::string> mount_point_problem(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    int error = errno;
    if (error == ENOTCONN) {
      return fmt::format(
          "mount point {} is a FUSE mount whose server has gone ({}); unmount it first: "
          "fusermount3 -u {}",
          path, std::strerror(error), path);
    }
    if (error == ENOENT) return fmt::format("mount point {} does not exist", path);
    return fmt::format("mount point {}: {}", path, std::strerror(error));
  }
  if (!S_ISDIR(st.st_mode)) return fmt::format("mount point {} is not a directory", path);
  struct stat parent {};
  std::string up = (std::filesystem::path(path) / "..").string();
  if (stat(up.c_str(), &parent) == 0 && parent.st_dev != st.st_dev) {
    return fmt::format("mount point {} is busy: something is mounted there already", path);
  }
  return std::nullopt;
}

std::optional<std::string> fuse_problem() {
  if (access("/dev/fuse", R_OK | W_OK) != 0) {
    int error = errno;
    if (error == EACCES || error == EPERM) {
      return std::string(
          "FUSE is not usable by this user: /dev/fuse: permission denied (run as root, or make "
          "the device usable by all as Debian's udev does: chmod 0666 /dev/fuse)");
    }
    return fmt::format(
        "FUSE is not available here: /dev/fuse: {} (load the fuse module, or give the container "
        "the device)",
        std::strerror(error));
  }
  if (geteuid() != 0 && !find_program("fusermount3")) {
    return std::string(
        "FUSE needs fusermount3 to mount without privileges and it is not on PATH (Debian: "
        "apt-get install fuse3)");
  }
  return std::nullopt;
}

// The low-level operations; the session's user data is the server.
struct FuseOps {
  static FuseServer& server(fuse_req_t req) {
    return *static_cast<FuseServer*>(fuse_req_userdata(req));
  }

  static struct stat attributes(const FuseServer& s, fuse_ino_t ino) {
    struct stat st {};
    st.st_ino = ino;
    st.st_uid = getuid();
    st.st_gid = getgid();
    st.st_atime = st.st_mtime = st.st_ctime = s.start_time_s_;
    if (ino == kRootIno) {
      st.st_mode = S_IFDIR | 0755;
      st.st_nlink = 2;
    } else {
      st.st_mode = S_IFREG | 0644;
      st.st_nlink = 1;
      st.st_size = static_cast<off_t>(s.file_->size_bytes());
      st.st_blksize = static_cast<blksize_t>(s.file_->block_bytes());
      st.st_blocks = static_cast<blkcnt_t>(s.file_->size_bytes() / 512);
    }
    return st;
  }

  static void lookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
    FuseServer& s = server(req);
    if (parent != kRootIno || s.options_.file_name != name) {
      fuse_reply_err(req, ENOENT);
      return;
    }
    fuse_entry_param entry{};
    entry.ino = kFileIno;
    entry.attr = attributes(s, kFileIno);
    entry.attr_timeout = kAttrTimeoutS;
    entry.entry_timeout = kAttrTimeoutS;
    fuse_reply_entry(req, &entry);
  }

  static void getattr(fuse_req_t req, fuse_ino_t ino, fuse_file_info*) {
    if (ino != kRootIno && ino != kFileIno) {
      fuse_reply_err(req, ENOENT);
      return;
    }
    struct stat st = attributes(server(req), ino);
    fuse_reply_attr(req, &st, kAttrTimeoutS);
  }

  // Times and modes are taken and forgotten; the size is the device's.
  static void setattr(fuse_req_t req, fuse_ino_t ino, struct stat* attr, int to_set,
                      fuse_file_info*) {
    FuseServer& s = server(req);
    if (ino != kFileIno && ino != kRootIno) {
      fuse_reply_err(req, ENOENT);
      return;
    }
    if ((to_set & FUSE_SET_ATTR_SIZE) != 0 &&
        (ino != kFileIno || static_cast<uint64_t>(attr->st_size) != s.file_->size_bytes())) {
      fuse_reply_err(req, EPERM);
      return;
    }
    struct stat st = attributes(s, ino);
    fuse_reply_attr(req, &st, kAttrTimeoutS);
  }

  static void readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset, fuse_file_info*) {
    if (ino != kRootIno) {
      fuse_reply_err(req, ENOTDIR);
      return;
    }
    FuseServer& s = server(req);
    std::vector<char> buffer(size);
    size_t used = 0;
    const std::pair<const char*, fuse_ino_t> entries[] = {
        {".", kRootIno}, {"..", kRootIno}, {s.options_.file_name.c_str(), kFileIno}};
    for (off_t i = offset; i < 3; ++i) {
      struct stat st = attributes(s, entries[i].second);
      size_t need =
          fuse_add_direntry(req, buffer.data() + used, size - used, entries[i].first, &st, i + 1);
      if (need > size - used) break;
      used += need;
    }
    fuse_reply_buf(req, buffer.data(), used);
  }

  static void open(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
    if (ino != kFileIno) {
      fuse_reply_err(req, EISDIR);
      return;
    }
    // Every request reaches the device: no page cache in between.
    fi->direct_io = 1;
    fi->keep_cache = 0;
    fuse_reply_open(req, fi);
  }

  static void read(fuse_req_t req, fuse_ino_t, size_t size, off_t offset, fuse_file_info*) {
    FuseServer& s = server(req);
    std::vector<uint8_t> buffer(std::min<uint64_t>(size, kMaxRequestBytes));
    int64_t got = s.file_->read(static_cast<uint64_t>(offset), buffer);
    if (got < 0) {
      fuse_reply_err(req, static_cast<int>(-got));
      return;
    }
    fuse_reply_buf(req, reinterpret_cast<const char*>(buffer.data()), static_cast<size_t>(got));
  }

  static void write(fuse_req_t req, fuse_ino_t, const char* data, size_t size, off_t offset,
                    fuse_file_info*) {
    FuseServer& s = server(req);
    int64_t put = s.file_->write(static_cast<uint64_t>(offset),
                                 {reinterpret_cast<const uint8_t*>(data), size});
    if (put < 0) {
      fuse_reply_err(req, static_cast<int>(-put));
      return;
    }
    fuse_reply_write(req, static_cast<size_t>(put));
  }

  static void fsync(fuse_req_t req, fuse_ino_t, int, fuse_file_info*) {
    fuse_reply_err(req, -server(req).file_->flush());
  }

  // close(): nothing to do, the data went with each write.
  static void flush(fuse_req_t req, fuse_ino_t, fuse_file_info*) { fuse_reply_err(req, 0); }

  static void fallocate(fuse_req_t req, fuse_ino_t, int mode, off_t offset, off_t length,
                        fuse_file_info*) {
    FuseServer& s = server(req);
    auto first = static_cast<uint64_t>(offset);
    auto count = static_cast<uint64_t>(length);
    if (mode == 0 || mode == FALLOC_FL_KEEP_SIZE) {
      // Preallocation: the device is all there already.
      bool inside = first <= s.file_->size_bytes() && count <= s.file_->size_bytes() - first;
      fuse_reply_err(req, inside || mode == FALLOC_FL_KEEP_SIZE ? 0 : ENOSPC);
      return;
    }
    if (mode == (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE) || mode == FALLOC_FL_ZERO_RANGE ||
        mode == (FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE)) {
      fuse_reply_err(req, -s.file_->hole(first, count));
      return;
    }
    fuse_reply_err(req, EOPNOTSUPP);
  }

  static void statfs(fuse_req_t req, fuse_ino_t) {
    FuseServer& s = server(req);
    struct statvfs sv {};
    sv.f_bsize = s.file_->block_bytes();
    sv.f_frsize = s.file_->block_bytes();
    sv.f_blocks = s.file_->size_bytes() / s.file_->block_bytes();
    sv.f_files = 1;
    sv.f_namemax = 255;
    fuse_reply_statfs(req, &sv);
  }
};

Result<std::unique_ptr<FuseServer>> FuseServer::start(ServedFile& file,
                                                      const FuseOptions& options) {
  if (options.threads == 0 || options.threads > kFuseThreadsMax) {
    return Error{fmt::format("{} worker threads: from 1 to {}", options.threads, kFuseThreadsMax)};
  }
  if (options.file_name.empty() || options.file_name == "." || options.file_name == ".." ||
      options.file_name.find('/') != std::string::npos || options.file_name.size() > 255) {
    return Error{
        fmt::format("file name '{}': a name without '/', of 1 to 255 bytes", options.file_name)};
  }
  if (auto why = fuse_problem()) return Error{*why};
  if (auto why = mount_point_problem(options.mount_point)) return Error{*why};
  auto server = std::unique_ptr<FuseServer>(new FuseServer());
  server->file_ = &file;
  server->options_ = options;
  server->file_path_ = (std::filesystem::path(options.mount_point) / options.file_name).string();
  server->start_time_s_ = static_cast<int64_t>(std::time(nullptr));

  static const fuse_lowlevel_ops ops = [] {
    fuse_lowlevel_ops o{};
    o.lookup = FuseOps::lookup;
    o.getattr = FuseOps::getattr;
    o.setattr = FuseOps::setattr;
    o.readdir = FuseOps::readdir;
    o.open = FuseOps::open;
    o.read = FuseOps::read;
    o.write = FuseOps::write;
    o.fsync = FuseOps::fsync;
    o.flush = FuseOps::flush;
    o.fallocate = FuseOps::fallocate;
    o.statfs = FuseOps::statfs;
    return o;
  }();
  fuse_set_log_func(log_to_stderr);
  const char* argv[] = {"zonelab", "-o", "fsname=zonelab,subtype=zonelab"};
  fuse_args args = FUSE_ARGS_INIT(3, const_cast<char**>(argv));
  server->session_ = fuse_session_new(&args, &ops, sizeof ops, server.get());
  if (server->session_ == nullptr) return Error{"cannot make a FUSE session"};
  if (fuse_session_mount(server->session_, options.mount_point.c_str()) != 0) {
    return Error{fmt::format("cannot mount FUSE at {}", options.mount_point)};
  }
  server->mounted_ = true;
  int fd = fuse_session_fd(server->session_);
  if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) != 0) {
    return Error{fmt::format("FUSE device: {}", std::strerror(errno))};
  }
  server->stop_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (server->stop_fd_ < 0) return Error{fmt::format("eventfd: {}", std::strerror(errno))};
  for (uint32_t i = 0; i < options.threads; ++i) {
    server->workers_.emplace_back([s = server.get()] { s->work(); });
  }
  return server;
}

// Until stopped or unmounted: each worker waits for a request or the stop
// signal, and answers one request at a time.
void FuseServer::work() {
  fuse_buf buffer{};
  int fd = fuse_session_fd(session_);
  while (true) {
    pollfd waits[2] = {{fd, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
    if (poll(waits, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if ((waits[1].revents & POLLIN) != 0) break;
    if ((waits[0].revents & (POLLERR | POLLHUP | POLLNVAL)) != 0) {
      lost_mount_.store(true);
      break;
    }
    int got = fuse_session_receive_buf(session_, &buffer);
    if (got == -EAGAIN || got == -EINTR) continue;  // another worker took it
    if (got <= 0) {
      if (got == 0 || got == -ENODEV) lost_mount_.store(true);
      break;
    }
    requests_.fetch_add(1, std::memory_order_relaxed);
    fuse_session_process_buf(session_, &buffer);
  }
  std::free(buffer.mem);
  // The others see the mount gone too, or the stop signal.
  stop();
}

void FuseServer::stop() {
  if (stop_fd_ < 0) return;
  uint64_t one = 1;
  ssize_t written = ::write(stop_fd_, &one, sizeof one);
  (void)written;  // a full counter has stopped everyone already
}

void FuseServer::wait() {
  for (std::thread& t : workers_) {
    if (t.joinable()) t.join();
  }
}

FuseServer::~FuseServer() {
  stop();
  wait();
  if (session_ != nullptr) {
    if (mounted_) fuse_session_unmount(session_);
    fuse_session_destroy(session_);
  }
  if (stop_fd_ >= 0) close(stop_fd_);
}

}  // namespace zonelab::serve
