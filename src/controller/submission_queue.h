// The controller's submission queue, shared by the ZNS and the conventional
// device: at most `host.queue_depth` commands are in the device at once; the
// rest wait, in submission order, linked through Command::queue_next, until a
// command leaves.
#pragma once

#include <cstdint>

#include "zonelab/device.h"

namespace zonelab {

class SubmissionQueue {
 public:
  explicit SubmissionQueue(uint64_t depth) : depth_(depth) {}

  // True when the command enters the device now; otherwise it waits.
  bool offer(Command& command) {
    command.queue_next = nullptr;
    if (inflight_ < depth_) {
      ++inflight_;
      return true;
    }
    if (tail_ != nullptr) {
      tail_->queue_next = &command;
    } else {
      head_ = &command;
    }
    tail_ = &command;
    ++queued_;
    return false;
  }
  // A command left the device.
  void release() { --inflight_; }
  // The next waiting command, now in the device, or null.
  Command* admit_next() {
    if (head_ == nullptr || inflight_ >= depth_) return nullptr;
    Command* next = head_;
    head_ = next->queue_next;
    if (head_ == nullptr) tail_ = nullptr;
    --queued_;
    ++inflight_;
    return next;
  }
  uint32_t inflight() const { return inflight_; }
  uint32_t queued() const { return queued_; }

 private:
  uint64_t depth_;
  uint32_t inflight_ = 0;
  uint32_t queued_ = 0;
  Command* head_ = nullptr;
  Command* tail_ = nullptr;
};

}  // namespace zonelab
