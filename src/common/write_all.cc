// See write_all.h.
#include "common/write_all.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace zonelab {

Outcome write_all(int fd, const void* data, uint64_t bytes) {
  const auto* next = static_cast<const uint8_t*>(data);
  while (bytes > 0) {
    ssize_t n = ::write(fd, next, bytes);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Error{n < 0 ? std::strerror(errno) : "nothing written"};
    next += n;
    bytes -= static_cast<uint64_t>(n);
  }
  return {};
}

}  // namespace zonelab
