// One resource's busy time (a channel, a die or a plane): the time it is next
// free, and how long it has been busy in all. Work is served first come,
// first served, with no back-filling of idle gaps: ConfZNS's local clock
// (seed 002, Algorithm 1).
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace zonelab {

class Timeline {
 public:
  // Occupies the resource for `duration_ns` from the later of `ready_ns` and
  // the time it is next free; returns when that work ends.
  uint64_t reserve(uint64_t ready_ns, uint64_t duration_ns) {
    uint64_t start = std::max(ready_ns, free_at_ns_);
    free_at_ns_ = start + duration_ns;
    busy_ns_ += duration_ns;
    return free_at_ns_;
  }
  uint64_t free_at_ns() const { return free_at_ns_; }
  // Work already reserved takes `duration_ns` longer (it was suspended).
  void extend(uint64_t duration_ns) {
    free_at_ns_ += duration_ns;
    busy_ns_ += duration_ns;
  }
  // Restores when the resource is next free (a device image reloaded).
  void set_free_at_ns(uint64_t time_ns) { free_at_ns_ = time_ns; }
  uint64_t busy_ns() const { return busy_ns_; }
  void reset_stats() { busy_ns_ = 0; }

 private:
  uint64_t free_at_ns_ = 0;
  uint64_t busy_ns_ = 0;
};

// A channel's busy time, optionally back-filled. Off, it is a Timeline: work
// starts no earlier than the end of all work booked before it. On, work
// booked for later (a write's page transfers, booked when the command
// arrives for when its data will have crossed the host link) leaves the gap
// before it open: work ready earlier that fits in the gap takes it, as a
// controller sends whichever transfer is ready while the channel is idle.
// The last kKept intervals booked are kept; gaps before them are closed.
class ChannelTimeline {
 public:
  explicit ChannelTimeline(bool backfill = false) : backfill_(backfill) {}

  uint64_t reserve(uint64_t ready_ns, uint64_t duration_ns) {
    busy_ns_ += duration_ns;
    uint64_t start = std::max(ready_ns, floor_ns_);
    if (!backfill_) {
      floor_ns_ = start + duration_ns;
      return floor_ns_;
    }
    // Work that takes no time books nothing (an empty booking would push a
    // real one out of those kept).
    if (duration_ns == 0) return start;
    // The first gap at or after `start` that holds the work.
    size_t at = 0;
    for (; at < booked_.size(); ++at) {
      const auto& [from, to] = booked_[at];
      if (to <= start) continue;
      if (start + duration_ns <= from) break;
      start = to;
    }
    const uint64_t end = start + duration_ns;
    // Joined to a neighbour it touches, or inserted.
    if (at > 0 && booked_[at - 1].second == start) {
      booked_[at - 1].second = end;
      if (at < booked_.size() && booked_[at].first == end) {
        booked_[at - 1].second = booked_[at].second;
        booked_.erase(booked_.begin() + static_cast<std::ptrdiff_t>(at));
      }
    } else if (at < booked_.size() && booked_[at].first == end) {
      booked_[at].first = start;
    } else {
      booked_.insert(booked_.begin() + static_cast<std::ptrdiff_t>(at), {start, end});
      if (booked_.size() > kKept) {
        floor_ns_ = booked_.front().second;
        booked_.erase(booked_.begin());
      }
    }
    return end;
  }
  uint64_t free_at_ns() const {
    return booked_.empty() ? floor_ns_ : std::max(floor_ns_, booked_.back().second);
  }
  // Restores when the channel is next free (a device image reloaded): no
  // gap before it.
  void set_free_at_ns(uint64_t time_ns) {
    booked_.clear();
    floor_ns_ = time_ns;
  }
  uint64_t busy_ns() const { return busy_ns_; }
  void reset_stats() { busy_ns_ = 0; }

 private:
  static constexpr size_t kKept = 32;
  bool backfill_;
  uint64_t floor_ns_ = 0;                              // nothing starts before this
  std::vector<std::pair<uint64_t, uint64_t>> booked_;  // [from, to), in time order
  uint64_t busy_ns_ = 0;
};

// Busy time of a group of resources (a die's planes): the time at least one
// member works. Intervals arrive in reservation order, which is not time
// order, so overlap is counted against the latest end seen; the figure is
// exact when reservations are monotonic and an upper bound otherwise.
class UnionBusy {
 public:
  void add(uint64_t start_ns, uint64_t end_ns) {
    if (start_ns >= last_end_ns_) {
      busy_ns_ += end_ns - start_ns;
    } else if (end_ns > last_end_ns_) {
      busy_ns_ += end_ns - last_end_ns_;
    }
    last_end_ns_ = std::max(last_end_ns_, end_ns);
  }
  uint64_t busy_ns() const { return busy_ns_; }
  void reset_stats() { busy_ns_ = 0; }

 private:
  uint64_t last_end_ns_ = 0;
  uint64_t busy_ns_ = 0;
};

}  // namespace zonelab
