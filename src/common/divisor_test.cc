// Divisor gives the division's quotients, by a shift or by a division.
#include "common/divisor.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace zonelab {
namespace {

TEST(Divisor, PowersOfTwoAndOthersGiveTheDivisionsQuotients) {
  const std::vector<uint64_t> divisors{
      1, 2, 3, 4, 7, 8, 12, 4096, 65535, 1ULL << 20, 1ULL << 63, (1ULL << 63) + 1, UINT64_MAX};
  const std::vector<uint64_t> values{0,
                                     1,
                                     2,
                                     3,
                                     4095,
                                     4096,
                                     4097,
                                     1ULL << 40,
                                     (1ULL << 63) - 1,
                                     1ULL << 63,
                                     UINT64_MAX - 1,
                                     UINT64_MAX};
  for (uint64_t d : divisors) {
    Divisor divisor(d);
    EXPECT_EQ(divisor.value(), d);
    for (uint64_t n : values) EXPECT_EQ(divisor.quotient(n), n / d) << n << " / " << d;
  }
}

TEST(Divisor, DefaultDividesByOne) { EXPECT_EQ(Divisor().quotient(12345), 12345u); }

}  // namespace
}  // namespace zonelab
