// Writing a whole buffer to a file descriptor: write(2) until every byte is
// written, across short writes and EINTR.
#pragma once

#include <cstdint>
#include <string_view>

#include "zonelab/result.h"

namespace zonelab {

// An error holds strerror's text (or "nothing written" for a write of 0).
Outcome write_all(int fd, const void* data, uint64_t bytes);
inline Outcome write_all(int fd, std::string_view text) {
  return write_all(fd, text.data(), text.size());
}

}  // namespace zonelab
