// Host I/O schedulers (seed 003 §3): the policy that decides which waiting
// command goes to the device next. HostQueue (host_queue.h) holds the
// commands and calls these; a scheduler only orders them.
//
//   none         arrival order.
//   mq-deadline  Linux's deadline scheduler: reads and writes sorted by LBA
//                and dispatched in batches, reads preferred, a request past
//                its expiry served first; zone write locking (at most one
//                write in flight per zone, a zone's writes in LBA order).
//                Zone management commands pass straight through.
//   zinc         mq-deadline for reads and writes; resets and finishes wait
//                in a queue of their own and go one at a time, at the end of
//                an epoch, when enough I/O has gone since the last one, when
//                held too long, or at once when little I/O is in flight.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "zonelab/config.h"
#include "zonelab/device.h"
#include "zonelab/result.h"

namespace zonelab {

class Scheduler {
 public:
  virtual ~Scheduler() = default;
  virtual std::string_view name() const = 0;
  // A command from a submitter enters the scheduler.
  virtual void insert(Command& command, uint64_t now_ns) = 0;
  // The next command for the device, removed from the scheduler; null when
  // none may go now.
  virtual Command* dispatch(uint64_t now_ns) = 0;
  // The device completed a command this scheduler dispatched.
  virtual void completed(const Command& command, uint64_t now_ns) = 0;
  // When dispatch() may next have something to give without an insert or a
  // completion (a timer), or UINT64_MAX.
  virtual uint64_t next_timer_ns() const { return UINT64_MAX; }
  virtual size_t queued() const = 0;
};

// Reads, writes and appends; everything else (zone management, deallocate)
// is a management command to a scheduler.
inline bool is_data_io(const Command& c) {
  return c.opcode == Opcode::kRead || c.opcode == Opcode::kWrite || c.opcode == Opcode::kAppend;
}

// The scheduler host.scheduler names, set up from host.* and the device.
Result<std::unique_ptr<Scheduler>> make_scheduler(const HostConfig& host, const DeviceInfo& info);

}  // namespace zonelab
