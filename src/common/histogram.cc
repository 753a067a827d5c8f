// Log-linear histogram; see histogram.h.
#include "common/histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace zonelab {

Histogram::Histogram() : buckets_((64 - kSubBits + 1) * kSub, 0) {}

uint64_t Histogram::upper_edge(size_t index) {
  if (index < kSub) return index;
  uint64_t group = index / kSub;  // >= 1
  uint64_t sub = index % kSub;
  int shift = static_cast<int>(group) - 1;  // group <= 58
  uint64_t base = (kSub + sub) << shift;
  return base + ((1ULL << shift) - 1);
}

void Histogram::merge(const Histogram& other) {
  for (size_t i = 0; i < buckets_.size(); ++i) buckets_[i] += other.buckets_[i];
  count_ += other.count_;
  sum_ += other.sum_;
  max_ = std::max(max_, other.max_);
  min_ = std::min(min_, other.min_);
}

uint64_t Histogram::percentile(double p) const {
  if (count_ == 0) return 0;
  double clamped = std::clamp(p, 0.0, 100.0);
  auto rank = static_cast<uint64_t>(std::ceil(clamped / 100.0 * static_cast<double>(count_)));
  rank = std::max<uint64_t>(rank, 1);
  uint64_t seen = 0;
  for (size_t i = 0; i < buckets_.size(); ++i) {
    seen += buckets_[i];
    if (seen >= rank) return std::min(upper_edge(i), max_);
  }
  return max_;
}

}  // namespace zonelab
