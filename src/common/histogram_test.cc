// Percentiles and bounds of the latency histogram.
#include "common/histogram.h"

#include <gtest/gtest.h>

#include <cmath>

namespace zonelab {
namespace {

TEST(Histogram, SmallValuesAreExact) {
  Histogram h;
  for (uint64_t v = 1; v <= 50; ++v) h.record(v);
  EXPECT_EQ(h.count(), 50u);
  EXPECT_EQ(h.percentile(50), 25u);
  EXPECT_EQ(h.percentile(100), 50u);
  EXPECT_EQ(h.max(), 50u);
  EXPECT_DOUBLE_EQ(h.mean(), 25.5);
}

TEST(Histogram, LargeValuesStayWithinTheBucketError) {
  Histogram h;
  for (uint64_t v = 1000; v < 1'000'000; v += 997) h.record(v);
  for (double p : {1.0, 50.0, 95.0, 99.0, 99.9}) {
    // The exact value at rank ceil(p/100 * n) of the arithmetic sequence.
    uint64_t n = h.count();
    auto rank = static_cast<uint64_t>(std::ceil(p / 100.0 * static_cast<double>(n)));
    uint64_t exact = 1000 + (rank - 1) * 997;
    uint64_t got = h.percentile(p);
    EXPECT_GE(got, exact) << p;
    EXPECT_LE(static_cast<double>(got), static_cast<double>(exact) * 1.016) << p;
  }
}

TEST(Histogram, PercentilesNeverExceedTheMaximum) {
  Histogram h;
  h.record(1'000'001);
  EXPECT_EQ(h.percentile(99.9), 1'000'001u);
}

TEST(Histogram, EmptyHistogramReportsZero) {
  Histogram h;
  EXPECT_EQ(h.percentile(50), 0u);
  EXPECT_EQ(h.max(), 0u);
  EXPECT_EQ(h.mean(), 0.0);
}

TEST(Histogram, MergeAddsCounts) {
  Histogram a, b;
  a.record(10);
  b.record(20);
  b.record(30);
  a.merge(b);
  EXPECT_EQ(a.count(), 3u);
  EXPECT_EQ(a.max(), 30u);
  EXPECT_EQ(a.min(), 10u);
}

TEST(Histogram, HugeValuesDoNotOverflow) {
  Histogram h;
  h.record(UINT64_MAX / 4);
  h.record(1);
  EXPECT_EQ(h.percentile(100), UINT64_MAX / 4);
}

}  // namespace
}  // namespace zonelab
