// A divisor fixed at setup (a geometry's LBAs per page, LBAs per zone):
// quotients by a shift when it is a power of two, as every shipped
// geometry's are, and by a division otherwise. The quotients are the
// division's in every case; only their cost differs (a 64-bit division is
// tens of cycles, and a command takes several).
#pragma once

#include <bit>
#include <cstdint>

#include "zonelab/assert.h"

namespace zonelab {

class Divisor {
 public:
  Divisor() = default;
  explicit Divisor(uint64_t divisor)
      : divisor_(divisor), shift_(std::has_single_bit(divisor) ? std::countr_zero(divisor) : -1) {
    ZL_ASSERT(divisor > 0);
  }

  uint64_t value() const { return divisor_; }
  uint64_t quotient(uint64_t n) const { return shift_ >= 0 ? n >> shift_ : n / divisor_; }

 private:
  uint64_t divisor_ = 1;
  int shift_ = 0;  // log2(divisor) for a power of two, else -1
};

}  // namespace zonelab
