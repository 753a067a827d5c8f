// The host block layer; see host_queue.h.
#include "host/host_queue.h"

#include <fmt/format.h>

#include <algorithm>
#include <deque>

#include "common/schedulers.h"
#include "host/mq_deadline.h"
#include "host/zinc.h"
#include "zonelab/assert.h"

namespace zonelab {
namespace {

class NoneScheduler final : public Scheduler {
 public:
  std::string_view name() const override { return "none"; }
  void insert(Command& command, uint64_t) override { queue_.push_back(&command); }
  Command* dispatch(uint64_t) override {
    if (queue_.empty()) return nullptr;
    Command* c = queue_.front();
    queue_.pop_front();
    return c;
  }
  void completed(const Command&, uint64_t) override {}
  size_t queued() const override { return queue_.size(); }

 private:
  std::deque<Command*> queue_;
};

}  // namespace

Result<std::unique_ptr<Scheduler>> make_scheduler(const HostConfig& host, const DeviceInfo& info) {
  if (host.scheduler == "none") return std::unique_ptr<Scheduler>(new NoneScheduler());
  if (host.scheduler == "mq-deadline") {
    return std::unique_ptr<Scheduler>(new MqDeadline(host, info));
  }
  if (host.scheduler == "zinc") return std::unique_ptr<Scheduler>(new Zinc(host, info));
  // Every name in the table has its class above (host_queue_test).
  return Error{
      fmt::format("host.scheduler '{}' is not one of {}", host.scheduler, scheduler_list())};
}

HostQueue::HostQueue(Device& device, Simulator& sim, std::unique_ptr<Scheduler> scheduler,
                     uint64_t tags)
    : device_(device),
      sim_(sim),
      scheduler_(std::move(scheduler)),
      tags_(std::max<uint64_t>(1, tags)) {}

void HostQueue::submit(Command& command) {
  ZL_ASSERT(command.sink != nullptr);
  owners_[&command] = Owner{command.sink, sim_.now_ns()};
  ++counters_.submitted;
  scheduler_->insert(command, sim_.now_ns());
  counters_.max_queued = std::max<uint64_t>(counters_.max_queued, scheduler_->queued());
  pump();
}

void HostQueue::pump() {
  uint64_t now = sim_.now_ns();
  while (inflight_ < tags_) {
    Command* c = scheduler_->dispatch(now);
    if (c == nullptr) break;
    ++inflight_;
    ++counters_.dispatched;
    c->sink = this;
    device_.submit(*c);
  }
  uint64_t wake = scheduler_->next_timer_ns();
  if (wake != UINT64_MAX && wake < timer_at_ns_) {
    timer_at_ns_ = std::max(wake, now);
    sim_.schedule_at(timer_at_ns_, this, timer_at_ns_);
  }
}

void HostQueue::on_event(uint64_t tag) {
  if (tag != timer_at_ns_) return;  // superseded by an earlier wake-up
  timer_at_ns_ = UINT64_MAX;
  pump();
}

void HostQueue::on_complete(Command& command) {
  auto it = owners_.find(&command);
  ZL_ASSERT(it != owners_.end());
  Owner owner = it->second;
  owners_.erase(it);
  --inflight_;
  ++counters_.completed;
  scheduler_->completed(command, sim_.now_ns());
  command.sink = owner.sink;
  command.submit_ns = owner.submit_ns;
  pump();
  owner.sink->on_complete(command);
}

Result<Device*> with_scheduler(Device& device, Simulator& sim, const HostConfig& host,
                               std::unique_ptr<HostQueue>& holder) {
  if (host.scheduler == "none") return &device;
  auto scheduler = make_scheduler(host, device.info());
  if (!scheduler) return Error{scheduler.error()};
  holder = std::make_unique<HostQueue>(device, sim, std::move(scheduler).value(), host.queue_depth);
  return static_cast<Device*>(holder.get());
}

}  // namespace zonelab
