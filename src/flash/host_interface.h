// The host side of a modeled SSD, shared by the ZNS and the conventional
// device: the submission queue (at most `host.queue_depth` commands in the
// device, the rest wait in submission order), the counters of what the host
// asked, and what tools read off any modeled device besides the command
// seam (its flash, its counters, its configuration).
#pragma once

#include <array>
#include <cstdint>

#include "flash/flash.h"
#include "zonelab/config.h"
#include "zonelab/device.h"

namespace zonelab {

struct HostCounters {
  std::array<uint64_t, kOpcodeCount> commands{};
  std::array<uint64_t, kStatusCount> statuses{};
  std::array<uint64_t, 6> zone_actions{};  // successful, by ZoneAction
  uint64_t host_write_bytes = 0;
  uint64_t host_read_bytes = 0;
  uint64_t deallocated_bytes = 0;
  uint64_t link_in_busy_ns = 0;
  uint64_t link_out_busy_ns = 0;
};

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

// Link time of `bytes` at `bytes_per_s`, rounded up.
inline uint64_t link_time_ns(uint64_t bytes, uint64_t bytes_per_s) {
  __extension__ typedef unsigned __int128 Wide;
  return static_cast<uint64_t>((static_cast<Wide>(bytes) * 1'000'000'000ULL + bytes_per_s - 1) /
                               bytes_per_s);
}

class ModeledDevice : public Device {
 public:
  virtual const Config& config() const = 0;
  virtual const Flash& flash() const = 0;
  virtual const HostCounters& counters() const = 0;
  // Clears counters and busy times (not state) before a measured run.
  virtual void reset_stats() = 0;
  virtual uint64_t implicit_closes() const { return 0; }
};

}  // namespace zonelab
