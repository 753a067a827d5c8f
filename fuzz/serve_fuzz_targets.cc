// The serving layer's fuzz targets (see fuzz_targets.h): the vhost-user
// block server, and the stream hints file.
//
// The vhost-user block server's: a front
// end that says whatever the bytes say, over a real socket, with the guest's
// memory a memfd whose first bytes the input also gives.
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "fuzz_targets.h"
#include "serve/stream_hints.h"
#include "serve/vhost_user_blk.h"

namespace zonelab {
namespace {

constexpr const char* kTarget = "vhost_user";
constexpr size_t kMemoryBytes = 1 << 20;
constexpr size_t kMemoryGivenMax = 64 << 10;

// A device of 256 LBAs of 4 KiB in memory.
class MemFile final : public serve::ServedFile {
 public:
  uint64_t size_bytes() const override { return bytes_.size(); }
  uint64_t block_bytes() const override { return 4096; }
  int64_t read(uint64_t offset, std::span<uint8_t> out) override {
    if (offset >= bytes_.size()) return 0;
    size_t n = std::min<size_t>(out.size(), bytes_.size() - offset);
    if (n != 0) std::memcpy(out.data(), bytes_.data() + offset, n);
    return static_cast<int64_t>(n);
  }
  int64_t write(uint64_t offset, std::span<const uint8_t> in) override {
    if (offset >= bytes_.size() || in.size() > bytes_.size() - offset) return -ENOSPC;
    if (!in.empty()) std::memcpy(bytes_.data() + offset, in.data(), in.size());
    return static_cast<int64_t>(in.size());
  }
  int hole(uint64_t offset, uint64_t length) override {
    if (offset >= bytes_.size()) return 0;
    size_t n = std::min<uint64_t>(length, bytes_.size() - offset);
    std::memset(bytes_.data() + offset, 0, n);
    return 0;
  }
  int flush() override { return 0; }
  serve::FileCounters counters() const override { return {}; }

 private:
  std::vector<uint8_t> bytes_ = std::vector<uint8_t>(256 * 4096);
};

const std::string& socket_dir() {
  static const std::string dir = [] {
    char pattern[] = "/tmp/zonelab-fuzz-vhost.XXXXXX";
    if (mkdtemp(pattern) == nullptr) fuzz_violated(kTarget, "cannot make a directory in /tmp");
    return std::string(pattern);
  }();
  return dir;
}

void send_message(int sock, const uint8_t* bytes, size_t length, const std::vector<int>& fds) {
  iovec iov{const_cast<uint8_t*>(bytes), length};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 8)];
  if (!fds.empty()) {
    msg.msg_control = control;
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
  }
  // The server may already have ended the connection: that is an answer too.
  (void)sendmsg(sock, &msg, MSG_NOSIGNAL);
}

}  // namespace

// Bytes 0-1: how many bytes of guest memory follow (at most 64 KiB), put at
// the start of a 1 MiB memfd; the rest is the front end's messages, each a
// 12-byte header and up to its size of payload. A memory table carries
// copies of the memfd (as many as it names regions, up to 8); a ring's
// kick, call or error message and the back-end channel carry an eventfd.
// After the last message the kick is rung and the socket closed for writing. The server
// must end by itself, with no reason or a one-line one.
int fuzz_vhost_user(const uint8_t* data, size_t size) {
  static std::atomic<uint64_t> calls{0};
  if (size < 2) return 0;
  size_t given =
      std::min<size_t>({size_t{data[0]} | size_t{data[1]} << 8, size - 2, kMemoryGivenMax});
  const uint8_t* memory_bytes = data + 2;
  const uint8_t* p = data + 2 + given;
  const uint8_t* end = data + size;

  MemFile file;
  serve::VhostUserOptions options;
  options.socket_path = socket_dir() + "/s" + std::to_string(calls++);
  options.threads = 2;
  auto started = serve::VhostUserBlkServer::start(file, options);
  if (!started) fuzz_violated(kTarget, "the server did not start: " + started.error());
  std::unique_ptr<serve::VhostUserBlkServer> server = std::move(started).value();

  int memory = memfd_create("guest", MFD_CLOEXEC);
  if (memory < 0 || ftruncate(memory, kMemoryBytes) != 0) {
    fuzz_violated(kTarget, "no memfd");
  }
  if (given != 0 && pwrite(memory, memory_bytes, given, 0) != static_cast<ssize_t>(given)) {
    fuzz_violated(kTarget, "cannot fill the memfd");
  }
  int kick = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  int sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, options.socket_path.data(), options.socket_path.size());
  if (kick < 0 || sock < 0 ||
      connect(sock, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    fuzz_violated(kTarget, "cannot connect to the server");
  }
  std::vector<int> extra;  // eventfds given away, closed at the end
  while (end - p >= 12) {
    uint32_t request, message_size;
    std::memcpy(&request, p, 4);
    std::memcpy(&message_size, p + 8, 4);
    size_t length = 12 + std::min<size_t>(message_size, static_cast<size_t>(end - p) - 12);
    std::vector<int> fds;
    if (request == 5 && length >= 16) {
      uint32_t regions;
      std::memcpy(&regions, p + 12, 4);
      for (uint32_t i = 0; i < std::min<uint32_t>(regions, 8); ++i) fds.push_back(memory);
    } else if (request == 12) {
      fds.push_back(kick);
    } else if (request == 13 || request == 14 || request == 21) {
      int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
      if (fd >= 0) {
        fds.push_back(fd);
        extra.push_back(fd);
      }
    }
    send_message(sock, p, length, fds);
    p += length;
  }
  const uint64_t one = 1;
  (void)!write(kick, &one, sizeof one);
  // Half closed: the server reads to the end and may still answer (its
  // replies wait unread in this socket's buffer).
  shutdown(sock, SHUT_WR);
  server->wait();
  ::close(sock);
  std::string why = server->error();
  if (!why.empty()) fuzz_check_message(kTarget, why);
  // ZONELAB_FUZZ_SHOW=1: what each input did, to see what a corpus reaches.
  if (std::getenv("ZONELAB_FUZZ_SHOW") != nullptr) {
    serve::VhostCounters c = server->counters();
    std::fprintf(stderr, "vhost_user: %llu requests (%llu reads, %llu writes), ended: %s\n",
                 static_cast<unsigned long long>(c.requests),
                 static_cast<unsigned long long>(c.reads),
                 static_cast<unsigned long long>(c.writes), why.empty() ? "-" : why.c_str());
  }
  server.reset();
  ::close(kick);
  ::close(memory);
  for (int fd : extra) ::close(fd);
  return 0;
}

}  // namespace zonelab

namespace zonelab {
namespace {

const std::string& hints_dir() {
  static const std::string dir = [] {
    char pattern[] = "/tmp/zonelab-fuzz-hints.XXXXXX";
    if (mkdtemp(pattern) == nullptr) fuzz_violated("stream_hints", "cannot make a directory");
    return std::string(pattern);
  }();
  return dir;
}

}  // namespace

int fuzz_stream_hints(const uint8_t* data, size_t size) {
  constexpr const char* kHints = "stream_hints";
  if (size < 2) return 0;
  // Byte 0: the device's streams (1-16); byte 1: where the file is cut in
  // two appends, read between them; the rest: the file.
  const uint32_t streams = 1 + data[0] % serve::kMaxStreams;
  const uint64_t lbas = 256;
  const std::string path = hints_dir() + "/hints";
  std::string text(reinterpret_cast<const char*>(data + 2), size - 2);
  const size_t cut = text.empty() ? 0 : data[1] % (text.size() + 1);
  size_t newlines = 0;
  for (char c : text) newlines += c == '\n';
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) fuzz_violated(kHints, "cannot write the hints file");
  std::fwrite(text.data(), 1, cut, f);
  std::fclose(f);
  serve::StreamHints hints(path, streams, 4096, lbas);
  auto check_whole_device = [&] {
    uint64_t next = 0;
    int r = hints.split(0, lbas, [&](uint64_t lba, uint64_t nlb, uint32_t stream) {
      if (lba != next || nlb == 0 || stream >= streams) {
        fuzz_violated(kHints, "a split that is not the device in order, or a stream it lacks");
      }
      next = lba + nlb;
      return 0;
    });
    if (r != 0 || next != lbas) fuzz_violated(kHints, "a split that does not cover the device");
  };
  check_whole_device();
  f = std::fopen(path.c_str(), "a");
  if (f == nullptr) fuzz_violated(kHints, "cannot append to the hints file");
  std::fwrite(text.data() + cut, 1, text.size() - cut, f);
  std::fclose(f);
  check_whole_device();
  const serve::StreamHintCounters c = hints.counters();
  if (c.records + c.ignored > newlines) {
    fuzz_violated(kHints, "more records and ignored lines than lines ended");
  }
  uint64_t counted = 0;
  for (uint64_t bytes : c.write_bytes) counted += bytes;
  if (counted != 2 * lbas * 4096) fuzz_violated(kHints, "bytes counted other than split");
  return 0;
}

}  // namespace zonelab
