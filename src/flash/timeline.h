// One resource's busy time (a channel, a die or a plane): the time it is next
// free, and how long it has been busy in all. Work is served first come,
// first served, with no back-filling of idle gaps: ConfZNS's local clock
// (seed 002, Algorithm 1).
#pragma once

#include <algorithm>
#include <cstdint>

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
