// The host link (PCIe) between host and controller: data crosses it at
// `host.link_bandwidth` in each direction, one transfer after another.
#pragma once

#include <cstdint>

namespace zonelab {

// Link time of `bytes` at `bytes_per_s`, rounded up.
inline uint64_t link_time_ns(uint64_t bytes, uint64_t bytes_per_s) {
  constexpr uint64_t kNsPerS = 1'000'000'000ULL;
  // Every command's transfer comes here: in 64 bits when the product fits
  // (any transfer below 18 GB), the same quotient without a 128-bit division.
  if (bytes <= (UINT64_MAX - bytes_per_s) / kNsPerS) {
    return (bytes * kNsPerS + bytes_per_s - 1) / bytes_per_s;
  }
  __extension__ typedef unsigned __int128 Wide;
  return static_cast<uint64_t>((static_cast<Wide>(bytes) * kNsPerS + bytes_per_s - 1) /
                               bytes_per_s);
}

// link_time_ns at one bandwidth, remembering the last size asked: a run's
// commands are mostly of one size, and the division is among a command's
// dearest instructions. The same answers as link_time_ns.
class LinkTime {
 public:
  explicit LinkTime(uint64_t bytes_per_s) : bytes_per_s_(bytes_per_s) {}
  uint64_t ns(uint64_t bytes) {
    if (bytes != last_bytes_) {
      last_bytes_ = bytes;
      last_ns_ = link_time_ns(bytes, bytes_per_s_);
    }
    return last_ns_;
  }

 private:
  uint64_t bytes_per_s_;
  uint64_t last_bytes_ = 0;
  uint64_t last_ns_ = 0;  // link_time_ns(0, ...) is 0
};

}  // namespace zonelab
