// ZINC (seed 003 §3.2): mq-deadline for reads and writes, and a queue of its
// own for resets and finishes that lets them go one at a time:
//   - at once while fewer than `min_concurrency` I/Os are in flight or
//     waiting (management does not interfere at low concurrency);
//   - otherwise only at the end of an epoch (`epoch` after the last one went,
//     then every `epoch`), and only if `write_tokens` I/Os have been
//     dispatched since the last one went, or it has been held `max_holds`
//     epochs already (no starvation).
// Other commands (deallocate) pass straight through.
#pragma once

#include <cstdint>
#include <deque>

#include "host/mq_deadline.h"

namespace zonelab {

struct ZincCounters {
  uint64_t management = 0;    // dispatched
  uint64_t immediate = 0;     // of those, at once (low concurrency)
  uint64_t by_tokens = 0;     // at an epoch end, enough I/O had gone
  uint64_t by_max_holds = 0;  // at an epoch end, held too long
  uint64_t holds = 0;         // epoch ends that held one back
};

class Zinc final : public Scheduler {
 public:
  Zinc(const HostConfig& host, const DeviceInfo& info);

  std::string_view name() const override { return "zinc"; }
  void insert(Command& command, uint64_t now_ns) override;
  Command* dispatch(uint64_t now_ns) override;
  void completed(const Command& command, uint64_t now_ns) override;
  uint64_t next_timer_ns() const override;
  size_t queued() const override { return io_.queued() + management_.size(); }
  const ZincCounters& counters() const { return counters_; }

 private:
  static bool is_management(const Command& c) {
    return c.opcode == Opcode::kZoneManagementSend &&
           (c.action == ZoneAction::kReset || c.action == ZoneAction::kFinish);
  }
  uint64_t concurrency() const { return io_inflight_ + io_.queued_io(); }
  // The head of the queue became the head: when to look at it.
  void arm(uint64_t now_ns);

  MqDeadline io_;
  uint64_t epoch_ns_;
  uint64_t write_tokens_;
  uint64_t max_holds_;
  uint64_t min_concurrency_;
  std::deque<Command*> management_;
  bool management_inflight_ = false;
  bool ready_ = false;  // the head may go now
  uint64_t eval_at_ns_ = UINT64_MAX;
  uint64_t holds_ = 0;
  uint64_t tokens_ = 0;  // I/O dispatched since the last management command went
  uint64_t last_dispatch_ns_ = 0;
  bool dispatched_any_ = false;
  uint64_t io_inflight_ = 0;
  ZincCounters counters_;
};

}  // namespace zonelab
