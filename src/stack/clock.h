// A stack's clock: the device's time, and timers for background work (a
// file system's periodic garbage collection). In virtual time the clock is
// the simulator's and timers run at safe points only -- when their owner
// calls poll() or advance(), never inside a command; in real time it follows
// the wall clock through the driver's mapping and timers run on a timer
// thread of their own. Either way a timer runs with no lock of its owner's
// held, so it may submit commands and wait for them.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

namespace zonelab {

class Clock {
 public:
  using TimerFn = std::function<void()>;

  virtual ~Clock() = default;
  // Device time now, in nanoseconds.
  virtual uint64_t now_ns() const = 0;
  // Runs `fn` once, `delay_ns` of device time from now. Returns an id for
  // cancel().
  virtual uint64_t add_timer(uint64_t delay_ns, TimerFn fn) = 0;
  // The timer never runs after this returns: one not yet run is dropped;
  // one running on another thread is waited for (a timer must not cancel
  // itself).
  virtual void cancel(uint64_t id) = 0;
  // Runs the timers that are due (virtual time; nothing in real time, where
  // the timer thread does it).
  virtual void poll() = 0;
  // No timer runs after this returns (the stack is closing); one running
  // finishes first.
  virtual void stop() = 0;
};

// Timers by due time, shared by both clocks; not thread-safe by itself.
class TimerList {
 public:
  uint64_t add(uint64_t due_ns, Clock::TimerFn fn);
  bool cancel(uint64_t id);
  // The earliest timer due at or before `now_ns`, removed (its id in `id`
  // when not null); or no function.
  Clock::TimerFn take_due(uint64_t now_ns, uint64_t* id = nullptr);
  // UINT64_MAX when there is none.
  uint64_t next_due_ns() const;
  bool empty() const { return by_due_.empty(); }

 private:
  std::map<std::pair<uint64_t, uint64_t>, Clock::TimerFn> by_due_;  // (due, id)
  std::map<uint64_t, uint64_t> due_of_;                             // id -> due
  uint64_t next_id_ = 1;
};

}  // namespace zonelab
