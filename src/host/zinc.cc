// ZINC; see zinc.h.
#include "host/zinc.h"

#include <algorithm>

namespace zonelab {

Zinc::Zinc(const HostConfig& host, const DeviceInfo& info)
    : io_(host, info),
      epoch_ns_(host.zinc_epoch_ns),
      write_tokens_(host.zinc_write_tokens),
      max_holds_(host.zinc_max_holds),
      min_concurrency_(host.zinc_min_concurrency) {}

void Zinc::arm(uint64_t now_ns) {
  ready_ = false;
  holds_ = 0;
  if (concurrency() < min_concurrency_) {
    ready_ = true;
    ++counters_.immediate;
    return;
  }
  uint64_t window_end = dispatched_any_ ? last_dispatch_ns_ + epoch_ns_ : now_ns + epoch_ns_;
  eval_at_ns_ = std::max(now_ns, window_end);
}

void Zinc::insert(Command& c, uint64_t now_ns) {
  if (!is_management(c)) {
    io_.insert(c, now_ns);
    return;
  }
  management_.push_back(&c);
  if (management_.size() == 1 && !management_inflight_) arm(now_ns);
}

Command* Zinc::dispatch(uint64_t now_ns) {
  if (!management_.empty() && !management_inflight_ && !ready_ && now_ns >= eval_at_ns_) {
    // The end of an epoch: let the head go, or hold it one epoch more.
    if (concurrency() < min_concurrency_) {
      ready_ = true;
      ++counters_.immediate;
    } else if (tokens_ >= write_tokens_) {
      ready_ = true;
      ++counters_.by_tokens;
    } else if (holds_ >= max_holds_) {
      ready_ = true;
      ++counters_.by_max_holds;
    } else {
      ++holds_;
      ++counters_.holds;
      eval_at_ns_ += epoch_ns_;
    }
  }
  if (ready_ && !management_inflight_ && !management_.empty()) {
    Command* c = management_.front();
    management_.pop_front();
    ready_ = false;
    eval_at_ns_ = UINT64_MAX;
    management_inflight_ = true;
    dispatched_any_ = true;
    last_dispatch_ns_ = now_ns;
    tokens_ = 0;
    ++counters_.management;
    return c;
  }
  Command* c = io_.dispatch(now_ns);
  if (c != nullptr && is_data_io(*c)) {
    ++io_inflight_;
    ++tokens_;
  }
  return c;
}

void Zinc::completed(const Command& c, uint64_t now_ns) {
  if (is_management(c)) {
    management_inflight_ = false;
    if (!management_.empty()) arm(now_ns);
    return;
  }
  if (is_data_io(c)) --io_inflight_;
  io_.completed(c, now_ns);
}

uint64_t Zinc::next_timer_ns() const {
  if (management_.empty() || management_inflight_ || ready_) return UINT64_MAX;
  return eval_at_ns_;
}

}  // namespace zonelab
