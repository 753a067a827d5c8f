// The host block layer: a Device in front of a device, holding submitted
// commands in a scheduler (scheduler.h) and sending them on while the
// device has room (host.queue_depth commands, as blk-mq's tags). Submitters
// see the same seam; a command's latency then includes its time in the
// scheduler, as an application's would.
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>

#include "host/scheduler.h"
#include "sim/simulator.h"

namespace zonelab {

struct HostQueueCounters {
  uint64_t submitted = 0;
  uint64_t dispatched = 0;
  uint64_t completed = 0;
  uint64_t max_queued = 0;
};

class HostQueue final : public Device, private CompletionSink, private EventHandler {
 public:
  HostQueue(Device& device, Simulator& sim, std::unique_ptr<Scheduler> scheduler, uint64_t tags);

  void submit(Command& command) override;
  const DeviceInfo& info() const override { return device_.info(); }
  ZoneDescriptor zone(uint32_t index) const override { return device_.zone(index); }

  const Scheduler& scheduler() const { return *scheduler_; }
  const HostQueueCounters& counters() const { return counters_; }
  uint64_t inflight() const { return inflight_; }

 private:
  void on_complete(Command& command) override;
  void on_event(uint64_t tag) override;
  void pump();

  struct Owner {
    CompletionSink* sink;
    uint64_t submit_ns;
  };

  Device& device_;
  Simulator& sim_;
  std::unique_ptr<Scheduler> scheduler_;
  uint64_t tags_;
  uint64_t inflight_ = 0;
  std::unordered_map<Command*, Owner> owners_;
  uint64_t timer_at_ns_ = UINT64_MAX;  // the scheduler's wake-up already set
  HostQueueCounters counters_;
};

// The device behind host.scheduler: `device` itself for "none", else a
// HostQueue over it (kept in `holder`).
Result<Device*> with_scheduler(Device& device, Simulator& sim, const HostConfig& host,
                               std::unique_ptr<HostQueue>& holder);

}  // namespace zonelab
