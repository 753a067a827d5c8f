#include "serve/vhost_user_blk.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <optional>
#include <vector>

#include "zonelab/assert.h"

namespace zonelab::serve {

namespace {

// --- the vhost-user protocol (the front end's messages and our replies)

enum Request : uint32_t {
  kGetFeatures = 1,
  kSetFeatures = 2,
  kSetOwner = 3,
  kResetOwner = 4,
  kSetMemTable = 5,
  kSetVringNum = 8,
  kSetVringAddr = 9,
  kSetVringBase = 10,
  kGetVringBase = 11,
  kSetVringKick = 12,
  kSetVringCall = 13,
  kSetVringErr = 14,
  kGetProtocolFeatures = 15,
  kSetProtocolFeatures = 16,
  kGetQueueNum = 17,
  kSetVringEnable = 18,
  kSetBackendReqFd = 21,
  kGetConfig = 24,
  kSetConfig = 25,
};

constexpr uint32_t kFlagVersion = 0x1;
constexpr uint32_t kFlagReply = 0x4;
constexpr uint32_t kFlagNeedReply = 0x8;

struct Header {
  uint32_t request;
  uint32_t flags;
  uint32_t size;
};
static_assert(sizeof(Header) == 12);

// A message's payload is at most this (a memory table of 8 regions is 264
// bytes, a configuration space 12 + 256).
constexpr uint32_t kPayloadMax = 4096;
constexpr size_t kFdsMax = 8;
constexpr uint32_t kRegionsMax = 8;
constexpr uint32_t kConfigMax = 256;
// Index bits of a vring file message; bit 8 says "no file descriptor".
constexpr uint64_t kVringIndexMask = 0xff;
constexpr uint64_t kVringNoFd = 1u << 8;

// Feature bits.
constexpr uint64_t bit(unsigned n) { return uint64_t{1} << n; }
constexpr uint64_t kBlkSegMax = bit(2);
constexpr uint64_t kBlkBlkSize = bit(6);
constexpr uint64_t kBlkFlush = bit(9);
constexpr uint64_t kBlkDiscard = bit(13);
constexpr uint64_t kRingIndirect = bit(28);
constexpr uint64_t kProtocolFeatures = bit(30);
constexpr uint64_t kVersion1 = bit(32);
constexpr uint64_t kOffered = kBlkSegMax | kBlkBlkSize | kBlkFlush | kBlkDiscard | kRingIndirect |
                              kProtocolFeatures | kVersion1;
constexpr uint64_t kProtocolReplyAck = bit(3);
// The back end may send requests of its own on a channel the front end
// gives. This device sends none, but UML's virtio_uml (6.1) allocates the
// interrupt its queues share only when this is agreed.
constexpr uint64_t kProtocolBackendReq = bit(5);
constexpr uint64_t kProtocolConfig = bit(9);
constexpr uint64_t kProtocolOffered = kProtocolReplyAck | kProtocolBackendReq | kProtocolConfig;

// --- virtio-blk

constexpr uint32_t kTypeIn = 0;
constexpr uint32_t kTypeOut = 1;
constexpr uint32_t kTypeFlush = 4;
constexpr uint32_t kTypeGetId = 8;
constexpr uint32_t kTypeDiscard = 11;
constexpr uint8_t kStatusOk = 0;
constexpr uint8_t kStatusIoErr = 1;
constexpr uint8_t kStatusUnsupported = 2;
constexpr uint64_t kSectorBytes = 512;
constexpr uint32_t kIdBytes = 20;
constexpr uint32_t kSegMax = 254;
constexpr uint32_t kDiscardSegMax = 32;
constexpr uint32_t kDiscardSectorsMax = 1u << 22;  // 2 GiB a segment

// A split ring's descriptor.
struct Desc {
  uint64_t addr;
  uint32_t len;
  uint16_t flags;
  uint16_t next;
};
static_assert(sizeof(Desc) == 16);
constexpr uint16_t kDescNext = 1;
constexpr uint16_t kDescWrite = 2;
constexpr uint16_t kDescIndirect = 4;
constexpr uint32_t kRingSizeMax = 32768;

template <typename T>
void put_le(uint8_t* p, T v) {
  std::memcpy(p, &v, sizeof v);  // the hosts zonelab runs on are little-endian
}

// A piece of a request in the guest's memory.
struct Segment {
  uint8_t* data;
  uint32_t len;
  bool writable;
};

// One request taken off the ring: the head's index and its buffers,
// readable ones first.
struct Job {
  uint16_t head;
  std::vector<Segment> segments;
};

// Copies between a request's buffers of one direction and contiguous bytes,
// from byte `skip` of them.
size_t gather(const std::vector<Segment>& segs, bool writable, size_t skip, uint8_t* out,
              size_t length) {
  size_t done = 0;
  for (const Segment& s : segs) {
    if (s.writable != writable || done == length) continue;
    if (skip >= s.len) {
      skip -= s.len;
      continue;
    }
    size_t n = std::min<size_t>(s.len - skip, length - done);
    std::memcpy(out + done, s.data + skip, n);
    done += n;
    skip = 0;
  }
  return done;
}
size_t scatter(const std::vector<Segment>& segs, const uint8_t* in, size_t length) {
  size_t done = 0;
  for (const Segment& s : segs) {
    if (!s.writable || done == length) continue;
    size_t n = std::min<size_t>(s.len, length - done);
    std::memcpy(s.data, in + done, n);
    done += n;
  }
  return done;
}
size_t total(const std::vector<Segment>& segs, bool writable) {
  size_t n = 0;
  for (const Segment& s : segs) {
    if (s.writable == writable) n += s.len;
  }
  return n;
}

}  // namespace

nlohmann::ordered_json vhost_counters_json(const VhostCounters& c) {
  return {{"requests", c.requests},
          {"reads", c.reads},
          {"writes", c.writes},
          {"flushes", c.flushes},
          {"discards", c.discards},
          {"get_ids", c.get_ids},
          {"unsupported", c.unsupported},
          {"errors", c.errors},
          {"kicks", c.kicks},
          {"max_in_flight", c.max_in_flight},
          {"mean_in_flight", c.mean_in_flight}};
}

// The directory a socket path names its socket in.
std::string socket_dir(const std::string& path) {
  std::string dir = path.find('/') == std::string::npos ? "." : path.substr(0, path.rfind('/'));
  return dir.empty() ? "/" : dir;
}

// Gives the listening socket at `staged` its path: a link, which never
// replaces what another process made there meanwhile, or a rename where the
// directory's file system takes no links.
bool publish_socket(const std::string& staged, const std::string& path) {
  if (link(staged.c_str(), path.c_str()) == 0) return true;
  if (errno == EEXIST) return false;
  return rename(staged.c_str(), path.c_str()) == 0;
}

std::optional<std::string> socket_path_problem(const std::string& path) {
  sockaddr_un address{};
  if (path.empty() || path.size() >= sizeof address.sun_path) {
    return fmt::format("{}: a socket path of 1 to {} bytes", path, sizeof address.sun_path - 1);
  }
  struct stat st;
  if (lstat(path.c_str(), &st) == 0) {
    return fmt::format("{} exists: the socket is made afresh (remove it first)", path);
  }
  std::string dir = socket_dir(path);
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return fmt::format("{}: no directory {} to make the socket in", path, dir);
  }
  return std::nullopt;
}

struct VhostUserBlkServer::Impl {
  ServedFile& file;
  uint32_t threads;

  explicit Impl(ServedFile& f, uint32_t n) : file(f), threads(n) {}

  // --- the connection (the serving thread only, unless said)
  int sock = -1;
  int backend_req = -1;  // kept open (a closed pipe would wake the guest forever)
  uint64_t features = 0;
  uint64_t protocol = 0;
  std::string error;  // under counters_mutex once the thread has ended

  struct Region {
    uint64_t guest = 0;
    uint64_t size = 0;
    uint64_t user = 0;
    uint8_t* base = nullptr;  // the region's first byte
    void* mapping = nullptr;
    size_t mapping_bytes = 0;
  };
  std::vector<Region> regions;

  struct Ring {
    uint32_t num = 0;
    uint64_t desc_addr = 0, avail_addr = 0, used_addr = 0;
    Desc* desc = nullptr;
    uint16_t* avail = nullptr;  // flags, idx, ring[num], used_event
    uint8_t* used = nullptr;    // flags, idx, {id, len}[num], avail_event
    uint16_t last_avail = 0;
    uint16_t used_idx = 0;  // under used_mutex
    int kick = -1;
    int call = -1;
    bool enabled = false;
    bool addressed = false;
  } ring;
  std::mutex used_mutex;

  // --- the workers
  std::mutex jobs_mutex;
  std::condition_variable jobs_cv;
  std::condition_variable idle_cv;
  std::deque<Job> jobs;
  uint32_t busy = 0;
  bool quit = false;
  std::vector<std::thread> workers;

  // --- counters
  mutable std::mutex counters_mutex;
  VhostCounters counters;
  uint64_t in_flight = 0;  // under counters_mutex
  uint64_t in_flight_sum = 0;

  // Where [addr, addr + len) is in our mapping of the guest's memory, by
  // guest address (buffers) or by the front end's address (rings).
  uint8_t* at(uint64_t addr, uint64_t len, bool user) const {
    for (const Region& r : regions) {
      uint64_t start = user ? r.user : r.guest;
      if (addr >= start && addr - start <= r.size && len <= r.size - (addr - start)) {
        return r.base + (addr - start);
      }
    }
    return nullptr;
  }

  void unmap() {
    for (Region& r : regions) munmap(r.mapping, r.mapping_bytes);
    regions.clear();
    ring.addressed = false;
  }

  // Waits until no request is queued or being answered.
  void drain() {
    std::unique_lock lock(jobs_mutex);
    idle_cv.wait(lock, [&] { return jobs.empty() && busy == 0; });
  }

  void start_workers() {
    for (uint32_t i = 0; i < threads; ++i) workers.emplace_back([this] { work(); });
  }
  void stop_workers() {
    {
      std::lock_guard lock(jobs_mutex);
      quit = true;
    }
    jobs_cv.notify_all();
    for (std::thread& t : workers) t.join();
    workers.clear();
  }

  void work() {
    for (;;) {
      Job job;
      {
        std::unique_lock lock(jobs_mutex);
        jobs_cv.wait(lock, [&] { return quit || !jobs.empty(); });
        if (jobs.empty()) return;
        job = std::move(jobs.front());
        jobs.pop_front();
        ++busy;
      }
      uint32_t written = answer(job);
      complete(job.head, written);
      {
        std::lock_guard lock(jobs_mutex);
        --busy;
        if (jobs.empty() && busy == 0) idle_cv.notify_all();
      }
    }
  }

  void count(uint64_t VhostCounters::*field) {
    std::lock_guard lock(counters_mutex);
    ++(counters.*field);
  }

  // Answers one request; the bytes written into the guest's buffers.
  uint32_t answer(const Job& job) {
    const size_t in_bytes = total(job.segments, false);
    const size_t out_bytes = total(job.segments, true);
    // Every request has a 16-byte header to read and a status byte to write.
    if (in_bytes < 16 || out_bytes < 1) {
      count(&VhostCounters::errors);
      return 0;
    }
    std::array<uint8_t, 16> header{};
    gather(job.segments, false, 0, header.data(), header.size());
    uint32_t type;
    uint64_t sector;
    std::memcpy(&type, header.data(), 4);
    std::memcpy(&sector, header.data() + 8, 8);
    const size_t data_in = in_bytes - 16;   // what the guest gives
    const size_t data_out = out_bytes - 1;  // room for what it asks for
    uint8_t status = kStatusOk;
    uint32_t written = 1;
    const bool offset_ok = sector <= UINT64_MAX / kSectorBytes;
    const uint64_t offset = sector * kSectorBytes;
    switch (type) {
      case kTypeIn: {
        count(&VhostCounters::reads);
        std::vector<uint8_t> data(data_out);
        int64_t got = offset_ok ? file.read(offset, data) : -EINVAL;
        if (got != static_cast<int64_t>(data_out)) {
          status = kStatusIoErr;
        } else {
          scatter(job.segments, data.data(), data_out);
          written += static_cast<uint32_t>(data_out);
        }
        break;
      }
      case kTypeOut: {
        count(&VhostCounters::writes);
        std::vector<uint8_t> data(data_in);
        gather(job.segments, false, 16, data.data(), data_in);
        int64_t put = offset_ok ? file.write(offset, data) : -EINVAL;
        if (put != static_cast<int64_t>(data_in)) status = kStatusIoErr;
        break;
      }
      case kTypeFlush:
        count(&VhostCounters::flushes);
        if (file.flush() != 0) status = kStatusIoErr;
        break;
      case kTypeDiscard: {
        count(&VhostCounters::discards);
        std::vector<uint8_t> ranges(data_in);
        gather(job.segments, false, 16, ranges.data(), data_in);
        if (data_in % 16 != 0) status = kStatusIoErr;
        for (size_t i = 0; status == kStatusOk && i + 16 <= data_in; i += 16) {
          uint64_t first;
          uint32_t count_sectors;
          std::memcpy(&first, ranges.data() + i, 8);
          std::memcpy(&count_sectors, ranges.data() + i + 8, 4);
          if (first > file.size_bytes() / kSectorBytes ||
              count_sectors > file.size_bytes() / kSectorBytes - first ||
              file.hole(first * kSectorBytes, uint64_t{count_sectors} * kSectorBytes) != 0) {
            status = kStatusIoErr;
          }
        }
        break;
      }
      case kTypeGetId: {
        count(&VhostCounters::get_ids);
        std::array<uint8_t, kIdBytes> id{};
        const char* name = "zonelab";
        std::memcpy(id.data(), name, std::strlen(name));
        size_t n = scatter(job.segments, id.data(), std::min<size_t>(kIdBytes, data_out));
        written += static_cast<uint32_t>(n);
        break;
      }
      default:
        count(&VhostCounters::unsupported);
        status = kStatusUnsupported;
    }
    if (status == kStatusIoErr) count(&VhostCounters::errors);
    // The status is the last byte of the writable buffers.
    size_t left = out_bytes - 1;
    for (const Segment& s : job.segments) {
      if (!s.writable) continue;
      if (left < s.len) {
        s.data[left] = status;
        break;
      }
      left -= s.len;
    }
    return written;
  }

  // Puts a request in the used ring and interrupts the guest. Any worker.
  void complete(uint16_t head, uint32_t written) {
    {
      std::lock_guard lock(used_mutex);
      uint8_t* elem = ring.used + 4 + 8 * (ring.used_idx % ring.num);
      put_le<uint32_t>(elem, head);
      put_le<uint32_t>(elem + 4, written);
      ++ring.used_idx;
      __atomic_store_n(reinterpret_cast<uint16_t*>(ring.used + 2), ring.used_idx, __ATOMIC_RELEASE);
    }
    {
      std::lock_guard lock(counters_mutex);
      --in_flight;
    }
    // The guest's end is a pipe (UML) or an eventfd: either takes 8 bytes.
    // A full pipe already holds an interrupt the guest has not taken.
    const uint64_t one = 1;
    if (ring.call >= 0) {
      ssize_t n;
      do {
        n = ::write(ring.call, &one, sizeof one);
      } while (n < 0 && errno == EINTR);
    }
  }

  // Takes what the guest has made available; false on a malformed ring.
  bool take_available() {
    if (!ring.addressed || !ring.enabled) return true;
    for (;;) {
      uint16_t avail_idx = __atomic_load_n(ring.avail + 1, __ATOMIC_ACQUIRE);
      if (avail_idx == ring.last_avail) return true;
      if (static_cast<uint16_t>(avail_idx - ring.last_avail) > ring.num) {
        error = fmt::format("the guest made {} requests available in a ring of {}",
                            static_cast<uint16_t>(avail_idx - ring.last_avail), ring.num);
        return false;
      }
      while (ring.last_avail != avail_idx) {
        uint16_t head = ring.avail[2 + ring.last_avail % ring.num];
        ++ring.last_avail;
        Job job{head, {}};
        if (!walk(head, job.segments)) return false;
        {
          std::lock_guard lock(counters_mutex);
          ++counters.requests;
          ++in_flight;
          in_flight_sum += in_flight;
          counters.max_in_flight = std::max(counters.max_in_flight, in_flight);
        }
        {
          std::lock_guard lock(jobs_mutex);
          jobs.push_back(std::move(job));
        }
        jobs_cv.notify_one();
      }
    }
  }

  // The buffers of the chain starting at `head`; false (and error) if it
  // leaves the shared memory, loops or nests indirect tables.
  bool walk(uint16_t head, std::vector<Segment>& out) {
    if (head >= ring.num) {
      error = fmt::format("descriptor {} is outside the ring of {}", head, ring.num);
      return false;
    }
    const Desc* table = ring.desc;
    uint32_t size = ring.num;
    uint32_t i = head;
    uint32_t seen = 0;
    bool indirect = false;
    bool writing = false;
    for (;;) {
      if (++seen > size) {
        error = "a descriptor chain loops";
        return false;
      }
      Desc d;
      std::memcpy(&d, table + i, sizeof d);
      if (d.flags & kDescIndirect) {
        if (indirect || seen != 1 || (d.flags & kDescNext) || d.len % sizeof(Desc) != 0 ||
            d.len == 0 || d.len / sizeof(Desc) > kRingSizeMax) {
          error = "a malformed indirect descriptor table";
          return false;
        }
        const uint8_t* t = at(d.addr, d.len, false);
        if (t == nullptr) {
          error = fmt::format("an indirect table at {:#x} is outside the guest's shared memory",
                              d.addr);
          return false;
        }
        table = reinterpret_cast<const Desc*>(t);
        size = d.len / sizeof(Desc);
        indirect = true;
        i = 0;
        seen = 0;
        continue;
      }
      uint8_t* p = at(d.addr, d.len, false);
      if (p == nullptr) {
        error = fmt::format("a buffer at {:#x} ({} bytes) is outside the guest's shared memory",
                            d.addr, d.len);
        return false;
      }
      const bool w = (d.flags & kDescWrite) != 0;
      if (writing && !w) {
        error = "a readable buffer after a writable one";
        return false;
      }
      writing = w;
      out.push_back({p, d.len, w});
      if (!(d.flags & kDescNext)) return true;
      i = d.next;
      if (i >= size) {
        error = fmt::format("descriptor {} is outside its table of {}", i, size);
        return false;
      }
    }
  }

  std::array<uint8_t, kConfigMax> config() const {
    std::array<uint8_t, kConfigMax> c{};
    const uint64_t block = file.block_bytes();
    put_le<uint64_t>(c.data() + 0, file.size_bytes() / kSectorBytes);  // capacity
    put_le<uint32_t>(c.data() + 12, kSegMax);
    put_le<uint32_t>(c.data() + 20, static_cast<uint32_t>(block));  // blk_size
    c[32] = 1;                                                      // wce
    put_le<uint16_t>(c.data() + 34, 1);                             // num_queues
    put_le<uint32_t>(c.data() + 36, kDiscardSectorsMax);
    put_le<uint32_t>(c.data() + 40, kDiscardSegMax);
    put_le<uint32_t>(c.data() + 44, static_cast<uint32_t>(std::max<uint64_t>(1, block / 512)));
    return c;
  }

  // --- messages

  bool send(uint32_t request, const void* payload, uint32_t size) {
    std::vector<uint8_t> buffer(sizeof(Header) + size);
    Header h{request, kFlagVersion | kFlagReply, size};
    std::memcpy(buffer.data(), &h, sizeof h);
    if (size != 0) std::memcpy(buffer.data() + sizeof h, payload, size);
    size_t done = 0;
    while (done < buffer.size()) {
      ssize_t n = ::send(sock, buffer.data() + done, buffer.size() - done, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        error = fmt::format("the guest's socket: {}", std::strerror(errno));
        return false;
      }
      done += static_cast<size_t>(n);
    }
    return true;
  }
  bool send_u64(uint32_t request, uint64_t value) { return send(request, &value, 8); }

  // Reads exactly `length` bytes, taking any file descriptors that come
  // with them; false at the end of the connection or on an error.
  bool receive(void* data, size_t length, std::vector<int>* fds) {
    auto* p = static_cast<uint8_t*>(data);
    size_t done = 0;
    while (done < length) {
      iovec iov{p + done, length - done};
      alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kFdsMax)];
      msghdr msg{};
      msg.msg_iov = &iov;
      msg.msg_iovlen = 1;
      msg.msg_control = control;
      msg.msg_controllen = sizeof control;
      ssize_t n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
      if (n < 0 && errno == EINTR) continue;
      for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
        size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t k = 0; k < count; ++k) {
          int fd;
          std::memcpy(&fd, CMSG_DATA(c) + k * sizeof(int), sizeof fd);
          if (fds != nullptr) {
            fds->push_back(fd);
          } else {
            ::close(fd);
          }
        }
      }
      if (n == 0) return false;
      if (n < 0) {
        error = fmt::format("the guest's socket: {}", std::strerror(errno));
        return false;
      }
      done += static_cast<size_t>(n);
    }
    return true;
  }

  // One message; false to end the connection (error says why, empty when
  // the guest closed it).
  bool handle_message() {
    Header h;
    std::vector<int> fds;
    if (!receive(&h, sizeof h, &fds)) return false;
    struct Closer {
      std::vector<int>& fds;
      ~Closer() {
        for (int fd : fds) ::close(fd);
      }
    } closer{fds};
    if ((h.flags & 0x3) != kFlagVersion) {
      error = fmt::format("vhost-user message of version {}, not 1", h.flags & 0x3);
      return false;
    }
    if (h.size > kPayloadMax) {
      error = fmt::format("vhost-user message {} of {} bytes (at most {})", h.request, h.size,
                          kPayloadMax);
      return false;
    }
    std::vector<uint8_t> payload(h.size);
    if (h.size != 0 && !receive(payload.data(), h.size, &fds)) {
      if (error.empty()) error = "the guest closed its socket inside a message";
      return false;
    }
    auto u64 = [&](uint64_t& v) {
      if (payload.size() < 8) return false;
      std::memcpy(&v, payload.data(), 8);
      return true;
    };
    auto take_fd = [&]() {
      if (fds.empty()) return -1;
      int fd = fds.front();
      fds.erase(fds.begin());
      return fd;
    };
    auto short_payload = [&]() {
      error = fmt::format("vhost-user message {} with a payload of {} bytes", h.request, h.size);
      return false;
    };
    bool replied = false;
    switch (h.request) {
      case kGetFeatures:
        if (!send_u64(h.request, kOffered)) return false;
        replied = true;
        break;
      case kSetFeatures: {
        uint64_t v;
        if (!u64(v)) return short_payload();
        if ((v & ~kOffered) != 0) {
          error = fmt::format("the guest set features {:#x} that were not offered", v & ~kOffered);
          return false;
        }
        features = v;
        break;
      }
      case kGetProtocolFeatures:
        if (!send_u64(h.request, kProtocolOffered)) return false;
        replied = true;
        break;
      case kSetProtocolFeatures: {
        uint64_t v;
        if (!u64(v)) return short_payload();
        protocol = v & kProtocolOffered;
        break;
      }
      case kSetOwner:
      case kResetOwner:
        break;
      case kGetQueueNum:
        if (!send_u64(h.request, 1)) return false;
        replied = true;
        break;
      case kSetMemTable: {
        if (payload.size() < 8) return short_payload();
        uint32_t n;
        std::memcpy(&n, payload.data(), 4);
        if (n == 0 || n > kRegionsMax || payload.size() < 8 + 32 * size_t{n} || fds.size() < n) {
          error =
              fmt::format("a memory table of {} regions with {} file descriptors", n, fds.size());
          return false;
        }
        drain();
        unmap();
        for (uint32_t k = 0; k < n; ++k) {
          Region r;
          uint64_t offset;
          const uint8_t* e = payload.data() + 8 + 32 * k;
          std::memcpy(&r.guest, e, 8);
          std::memcpy(&r.size, e + 8, 8);
          std::memcpy(&r.user, e + 16, 8);
          std::memcpy(&offset, e + 24, 8);
          int fd = take_fd();
          if (r.size == 0 || offset > UINT64_MAX - r.size) {
            ::close(fd);
            error = "a memory region of size 0 or beyond 2^64";
            return false;
          }
          // A region past the end of its file would fault (SIGBUS) when
          // touched: the file must hold all of it.
          struct stat st;
          const bool sized = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
          if (!sized || offset + r.size > static_cast<uint64_t>(st.st_size)) {
            ::close(fd);
            error = sized ? fmt::format(
                                "memory region {} ({} bytes at offset {}) is past the end of "
                                "its file ({} bytes)",
                                k, r.size, offset, st.st_size)
                          : fmt::format("memory region {} is not a regular file", k);
            return false;
          }
          r.mapping_bytes = static_cast<size_t>(offset + r.size);
          r.mapping = mmap(nullptr, r.mapping_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
          ::close(fd);
          if (r.mapping == MAP_FAILED) {
            error = fmt::format("cannot map the guest's memory ({} bytes): {}", r.mapping_bytes,
                                std::strerror(errno));
            return false;
          }
          r.base = static_cast<uint8_t*>(r.mapping) + offset;
          regions.push_back(r);
        }
        // Rings given before are found again in the new table.
        if (ring.desc_addr != 0 && !address_ring()) return false;
        break;
      }
      case kSetVringNum:
      case kSetVringBase:
      case kSetVringEnable: {
        if (payload.size() < 8) return short_payload();
        drain();
        uint32_t index, num;
        std::memcpy(&index, payload.data(), 4);
        std::memcpy(&num, payload.data() + 4, 4);
        if (index != 0) {
          error = fmt::format("queue {}: the device has one queue", index);
          return false;
        }
        if (h.request == kSetVringNum) {
          if (num == 0 || num > kRingSizeMax || (num & (num - 1)) != 0) {
            error = fmt::format("a ring of {} descriptors (a power of two up to {})", num,
                                kRingSizeMax);
            return false;
          }
          ring.num = num;
        } else if (h.request == kSetVringBase) {
          ring.last_avail = static_cast<uint16_t>(num);
          ring.used_idx = static_cast<uint16_t>(num);
        } else {
          ring.enabled = num != 0;
          if (ring.enabled && !take_available()) return false;
        }
        break;
      }
      case kSetVringAddr: {
        if (payload.size() < 40) return short_payload();
        uint32_t index;
        std::memcpy(&index, payload.data(), 4);
        if (index != 0) {
          error = fmt::format("queue {}: the device has one queue", index);
          return false;
        }
        drain();
        std::memcpy(&ring.desc_addr, payload.data() + 8, 8);
        std::memcpy(&ring.used_addr, payload.data() + 16, 8);
        std::memcpy(&ring.avail_addr, payload.data() + 24, 8);
        if (!address_ring()) return false;
        break;
      }
      case kGetVringBase: {
        if (payload.size() < 8) return short_payload();
        // The ring stops: what was taken is answered first.
        drain();
        uint32_t reply[2];
        std::memcpy(&reply[0], payload.data(), 4);
        reply[1] = ring.last_avail;
        if (ring.kick >= 0) ::close(ring.kick);
        ring.kick = -1;
        ring.enabled = false;
        if (!send(h.request, reply, sizeof reply)) return false;
        replied = true;
        break;
      }
      case kSetVringKick:
      case kSetVringCall:
      case kSetVringErr: {
        uint64_t v;
        if (!u64(v)) return short_payload();
        if ((v & kVringIndexMask) != 0) {
          error = fmt::format("queue {}: the device has one queue", v & kVringIndexMask);
          return false;
        }
        int fd = (v & kVringNoFd) ? -1 : take_fd();
        if (h.request == kSetVringErr) {
          if (fd >= 0) ::close(fd);
          break;
        }
        if (fd < 0) {
          error = "a ring without a notifier (polling) is not supported";
          return false;
        }
        if (h.request == kSetVringKick) {
          if (ring.kick >= 0) ::close(ring.kick);
          ring.kick = fd;
          // Without protocol features a ring starts once it has a kick.
          if (!(features & kProtocolFeatures)) ring.enabled = true;
          if (!take_available()) return false;
        } else {
          drain();
          if (ring.call >= 0) ::close(ring.call);
          fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
          ring.call = fd;
        }
        break;
      }
      case kSetBackendReqFd: {
        int fd = take_fd();
        if (fd < 0) {
          error = "a back-end request channel without a file descriptor";
          return false;
        }
        if (backend_req >= 0) ::close(backend_req);
        backend_req = fd;
        break;
      }
      case kGetConfig:
      case kSetConfig: {
        if (payload.size() < 12) return short_payload();
        uint32_t offset, size;
        std::memcpy(&offset, payload.data(), 4);
        std::memcpy(&size, payload.data() + 4, 4);
        if (offset > kConfigMax || size > kConfigMax - offset || payload.size() < 12 + size) {
          error = fmt::format("configuration bytes {}..{} (the space is {})", offset,
                              uint64_t{offset} + size, kConfigMax);
          return false;
        }
        if (h.request == kGetConfig) {
          auto c = config();
          std::vector<uint8_t> reply(payload.begin(), payload.begin() + 12 + size);
          std::memcpy(reply.data() + 12, c.data() + offset, size);
          if (!send(h.request, reply.data(), static_cast<uint32_t>(reply.size()))) return false;
          replied = true;
        }
        // Writes (the write-cache bit) change nothing: flushes are always
        // honored.
        break;
      }
      default:
        error = fmt::format("vhost-user request {} is not supported", h.request);
        return false;
    }
    if ((h.flags & kFlagNeedReply) && !replied && (protocol & kProtocolReplyAck)) {
      if (!send_u64(h.request, 0)) return false;
    }
    return true;
  }

  bool address_ring() {
    if (ring.num == 0) {
      error = "ring addresses before the ring's size";
      return false;
    }
    ring.desc = reinterpret_cast<Desc*>(at(ring.desc_addr, uint64_t{16} * ring.num, true));
    ring.avail = reinterpret_cast<uint16_t*>(at(ring.avail_addr, 6 + uint64_t{2} * ring.num, true));
    ring.used = at(ring.used_addr, 6 + uint64_t{8} * ring.num, true);
    if (ring.desc == nullptr || ring.avail == nullptr || ring.used == nullptr ||
        ring.used_addr % 4 != 0 || ring.avail_addr % 2 != 0 || ring.desc_addr % 16 != 0) {
      error = "the ring is outside the guest's shared memory or misaligned";
      return false;
    }
    ring.addressed = true;
    return true;
  }

  void end_connection() {
    drain();
    if (ring.kick >= 0) ::close(ring.kick);
    if (ring.call >= 0) ::close(ring.call);
    if (backend_req >= 0) ::close(backend_req);
    backend_req = -1;
    ring = Ring{};
    unmap();
    ::close(sock);
    sock = -1;
  }
};

VhostUserBlkServer::VhostUserBlkServer() = default;

Result<std::unique_ptr<VhostUserBlkServer>> VhostUserBlkServer::start(
    ServedFile& file, const VhostUserOptions& options) {
  if (options.threads == 0 || options.threads > kVhostThreadsMax) {
    return Error{fmt::format("threads {}: 1 to {}", options.threads, kVhostThreadsMax)};
  }
  if (auto why = socket_path_problem(options.socket_path)) return Error{*why};
  auto server = std::unique_ptr<VhostUserBlkServer>(new VhostUserBlkServer());
  server->options_ = options;
  server->impl_ = std::make_unique<Impl>(file, options.threads);
  // The socket is bound and listening under a temporary name in the same
  // directory, then linked to its path: whoever sees the path can connect
  // (a path bound but not yet listening refuses connections). A path too
  // long to have a staging name beside it is bound in place.
  const std::string& path = options.socket_path;
  static std::atomic<uint32_t> staged_count{0};
  std::string staging =
      fmt::format("{}/.zonelab-socket-{}-{}", socket_dir(path), getpid(), staged_count++);
  sockaddr_un staged{};
  if (staging.size() >= sizeof staged.sun_path) staging = path;
  staged.sun_family = AF_UNIX;
  std::memcpy(staged.sun_path, staging.data(), staging.size());
  if (staging != path) ::unlink(staging.c_str());
  server->listen_fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  bool listening =
      server->listen_fd_ >= 0 &&
      bind(server->listen_fd_, reinterpret_cast<sockaddr*>(&staged), sizeof staged) == 0 &&
      listen(server->listen_fd_, 1) == 0 && (staging == path || publish_socket(staging, path));
  std::string why = listening ? "" : std::strerror(errno);
  if (staging != path) ::unlink(staging.c_str());
  if (!listening) {
    if (server->listen_fd_ >= 0) ::close(server->listen_fd_);
    server->listen_fd_ = -1;
    return Error{fmt::format("cannot listen on {}: {}", path, why)};
  }
  server->stop_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  ZL_ASSERT(server->stop_fd_ >= 0);
  server->impl_->start_workers();
  server->thread_ = std::thread([s = server.get()] {
    Impl& im = *s->impl_;
    for (;;) {
      pollfd fds[3] = {{s->stop_fd_, POLLIN, 0},
                       {im.sock >= 0 ? im.sock : s->listen_fd_, POLLIN, 0},
                       {im.sock >= 0 ? im.ring.kick : -1, POLLIN, 0}};
      int n = poll(fds, 3, -1);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 || (fds[0].revents & POLLIN)) break;
      if (im.sock < 0) {
        if (fds[1].revents & POLLIN) {
          im.sock = accept4(s->listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
          // One guest: nobody else connects.
          if (im.sock >= 0) {
            ::close(s->listen_fd_);
            s->listen_fd_ = -1;
          }
        }
        continue;
      }
      if (fds[2].revents & POLLIN) {
        uint64_t value;
        if (::read(im.ring.kick, &value, sizeof value) == sizeof value) {
          std::lock_guard lock(im.counters_mutex);
          ++im.counters.kicks;
        }
        if (!im.take_available()) {
          s->guest_gone_.store(true);
          break;
        }
      }
      if (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) {
        if (!im.handle_message()) {
          s->guest_gone_.store(true);
          break;
        }
      }
    }
    if (im.sock >= 0) im.end_connection();
  });
  return server;
}

void VhostUserBlkServer::stop() {
  if (stop_fd_ < 0) return;
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t n = ::write(stop_fd_, &one, sizeof one);
}

void VhostUserBlkServer::wait() {
  if (thread_.joinable()) thread_.join();
}

std::string VhostUserBlkServer::error() const {
  std::lock_guard lock(impl_->counters_mutex);
  return thread_.joinable() ? std::string() : impl_->error;
}

VhostCounters VhostUserBlkServer::counters() const {
  std::lock_guard lock(impl_->counters_mutex);
  VhostCounters c = impl_->counters;
  if (c.requests != 0) {
    c.mean_in_flight = static_cast<double>(impl_->in_flight_sum) / static_cast<double>(c.requests);
  }
  return c;
}

VhostUserBlkServer::~VhostUserBlkServer() {
  stop();
  wait();
  if (impl_ != nullptr) impl_->stop_workers();
  if (listen_fd_ >= 0) ::close(listen_fd_);
  if (stop_fd_ >= 0) ::close(stop_fd_);
  if (!options_.socket_path.empty()) ::unlink(options_.socket_path.c_str());
}

}  // namespace zonelab::serve
