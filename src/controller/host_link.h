// The host link (PCIe) between host and controller: data crosses it at
// `host.link_bandwidth` in each direction, one transfer after another.
#pragma once

#include <cstdint>

namespace zonelab {

// Link time of `bytes` at `bytes_per_s`, rounded up.
inline uint64_t link_time_ns(uint64_t bytes, uint64_t bytes_per_s) {
  __extension__ typedef unsigned __int128 Wide;
  return static_cast<uint64_t>((static_cast<Wide>(bytes) * 1'000'000'000ULL + bytes_per_s - 1) /
                               bytes_per_s);
}

}  // namespace zonelab
