// A latency histogram with bounded relative error: values below 64 are exact,
// larger values fall in one of 64 sub-buckets per power of two (error under
// 1.6 %). Percentiles report the upper edge of the bucket that holds the
// requested rank, never more than the largest value seen. Mean and max are
// exact.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace zonelab {

class Histogram {
 public:
  Histogram();
  // Inline: a run records every command's latency.
  void record(uint64_t value) {
    ++buckets_[index_of(value)];
    ++count_;
    sum_ += value;
    max_ = std::max(max_, value);
    min_ = std::min(min_, value);
  }
  void merge(const Histogram& other);

  uint64_t count() const { return count_; }
  uint64_t max() const { return max_; }
  uint64_t min() const { return count_ == 0 ? 0 : min_; }
  double mean() const {
    return count_ == 0 ? 0.0 : static_cast<double>(sum_) / static_cast<double>(count_);
  }
  // p in [0, 100].
  uint64_t percentile(double p) const;

 private:
  static constexpr int kSubBits = 6;
  static constexpr uint64_t kSub = 1ULL << kSubBits;
  // Values below kSub are their own bucket; above, the top bit's position
  // picks the group and the kSubBits bits under it the sub-bucket.
  static size_t index_of(uint64_t value) {
    if (value < kSub) return static_cast<size_t>(value);
    int top = 63 - std::countl_zero(value);  // >= kSubBits
    int shift = top - kSubBits;
    uint64_t sub = (value >> shift) & (kSub - 1);
    return static_cast<size_t>((top - kSubBits + 1) * kSub + sub);
  }
  static uint64_t upper_edge(size_t index);

  std::vector<uint64_t> buckets_;
  uint64_t count_ = 0;
  uint64_t max_ = 0;
  uint64_t min_ = UINT64_MAX;
  uint64_t sum_ = 0;  // ns sums stay far below 2^64 for any bounded run
};

}  // namespace zonelab
