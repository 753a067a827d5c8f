#include "serve/pass_through_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <linux/falloc.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace zonelab::serve {

Result<std::unique_ptr<PassThroughFile>> PassThroughFile::open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return Error{fmt::format("{}: {}", path, std::strerror(errno))};
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Error{fmt::format("{}: not a regular file", path)};
  }
  auto file = std::unique_ptr<PassThroughFile>(new PassThroughFile());
  file->fd_ = fd;
  file->size_bytes_ = static_cast<uint64_t>(st.st_size);
  if (st.st_blksize > 0) file->block_bytes_ = static_cast<uint64_t>(st.st_blksize);
  return file;
}

PassThroughFile::~PassThroughFile() {
  if (fd_ >= 0) ::close(fd_);
}

int64_t PassThroughFile::read(uint64_t offset, std::span<uint8_t> out) {
  counters_.reads.fetch_add(1, std::memory_order_relaxed);
  if (out.size() > kMaxRequestBytes) return counters_.error(-EINVAL);
  if (offset >= size_bytes_ || out.empty()) return 0;
  size_t length = static_cast<size_t>(std::min<uint64_t>(out.size(), size_bytes_ - offset));
  size_t done = 0;
  while (done < length) {
    ssize_t got = pread(fd_, out.data() + done, length - done, static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return counters_.error(-errno);
    if (got == 0) break;
    done += static_cast<size_t>(got);
  }
  counters_.read_bytes.fetch_add(done, std::memory_order_relaxed);
  return static_cast<int64_t>(done);
}

int64_t PassThroughFile::write(uint64_t offset, std::span<const uint8_t> in) {
  counters_.writes.fetch_add(1, std::memory_order_relaxed);
  if (in.size() > kMaxRequestBytes) return counters_.error(-EINVAL);
  if (in.empty()) return 0;
  if (offset >= size_bytes_ || in.size() > size_bytes_ - offset) return counters_.error(-ENOSPC);
  size_t done = 0;
  while (done < in.size()) {
    ssize_t put =
        pwrite(fd_, in.data() + done, in.size() - done, static_cast<off_t>(offset + done));
    if (put < 0 && errno == EINTR) continue;
    if (put < 0) return counters_.error(-errno);
    done += static_cast<size_t>(put);
  }
  counters_.write_bytes.fetch_add(done, std::memory_order_relaxed);
  return static_cast<int64_t>(done);
}

int PassThroughFile::hole(uint64_t offset, uint64_t length) {
  counters_.holes.fetch_add(1, std::memory_order_relaxed);
  if (length > UINT64_MAX - offset) return counters_.error(-EINVAL);
  uint64_t end = std::min(offset + length, size_bytes_);
  if (offset >= end) return 0;
  if (fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(offset),
                static_cast<off_t>(end - offset)) != 0) {
    return counters_.error(-errno);
  }
  counters_.hole_bytes.fetch_add(end - offset, std::memory_order_relaxed);
  return 0;
}

int PassThroughFile::flush() {
  counters_.flushes.fetch_add(1, std::memory_order_relaxed);
  if (fdatasync(fd_) != 0) return counters_.error(-errno);
  return 0;
}

FileCounters PassThroughFile::counters() const { return counters_.snapshot(); }

}  // namespace zonelab::serve
