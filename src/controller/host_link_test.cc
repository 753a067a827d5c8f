// The host link's transfer time: the same rounded-up quotient whether it is
// computed in 64 or 128 bits, and the same through LinkTime's memory.
#include "controller/host_link.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace zonelab {
namespace {

uint64_t wide_link_time_ns(uint64_t bytes, uint64_t bytes_per_s) {
  __extension__ typedef unsigned __int128 Wide;
  return static_cast<uint64_t>((static_cast<Wide>(bytes) * 1'000'000'000ULL + bytes_per_s - 1) /
                               bytes_per_s);
}

TEST(HostLink, TimeIsTheRoundedUpQuotientOnBothSidesOfThe64BitLimit) {
  const std::vector<uint64_t> rates{
      1, 3, 1'000'000'000, 3'938'000'000, 16'000'000'000, UINT64_MAX / 2};
  for (uint64_t rate : rates) {
    const uint64_t limit = (UINT64_MAX - rate) / 1'000'000'000ULL;  // the last 64-bit size
    for (uint64_t bytes : {uint64_t{0}, uint64_t{1}, uint64_t{4096}, uint64_t{1} << 20, limit - 1,
                           limit, limit + 1, limit + 1000}) {
      if (wide_link_time_ns(bytes, rate) > UINT64_MAX / 2) continue;  // no such transfer
      EXPECT_EQ(link_time_ns(bytes, rate), wide_link_time_ns(bytes, rate))
          << bytes << " bytes at " << rate;
    }
  }
}

TEST(HostLink, LinkTimeAnswersAsLinkTimeNsForEverySizeInTurn) {
  LinkTime link(3'938'000'000);
  for (uint64_t bytes : {4096, 4096, 65536, 4096, 0, 131072, 131072, 512}) {
    EXPECT_EQ(link.ns(bytes), link_time_ns(bytes, 3'938'000'000)) << bytes;
  }
}

}  // namespace
}  // namespace zonelab
