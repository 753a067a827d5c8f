// The discrete-event kernel: an event queue in virtual nanoseconds. Events
// at the same time run in the order they were scheduled (a sequence number
// breaks ties), so a run is a pure function of its inputs. The queue never
// reads the wall clock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace zonelab {

// Anything that receives events implements this; `tag` is the handler's own.
class EventHandler {
 public:
  virtual void on_event(uint64_t tag) = 0;

 protected:
  ~EventHandler() = default;
};

class Simulator {
 public:
  uint64_t now_ns() const { return now_ns_; }

  // Schedules `handler->on_event(tag)` at `time_ns` (>= now).
  void schedule_at(uint64_t time_ns, EventHandler* handler, uint64_t tag);
  void schedule_after(uint64_t delay_ns, EventHandler* handler, uint64_t tag) {
    schedule_at(now_ns_ + delay_ns, handler, tag);
  }

  // Runs the earliest event; false if there is none.
  bool step();
  // Runs events until none is left or the next is later than `limit_ns`;
  // virtual time then stands at the last event run (never past limit_ns).
  void run_until(uint64_t limit_ns);
  // Runs until the queue is empty. Callers bound it by what they schedule.
  void run();

  bool empty() const { return heap_.empty(); }
  size_t pending() const { return heap_.size(); }
  uint64_t events_run() const { return events_run_; }
  // Earliest pending event time; only valid when !empty().
  uint64_t next_time_ns() const { return heap_.front().time_ns; }
  // Moves virtual time forward with no event (e.g. an idle driver).
  void advance_to(uint64_t time_ns);

 private:
  struct Event {
    uint64_t time_ns;
    uint64_t seq;
    EventHandler* handler;
    uint64_t tag;
  };
  static bool later(const Event& a, const Event& b) {
    return a.time_ns != b.time_ns ? a.time_ns > b.time_ns : a.seq > b.seq;
  }

  std::vector<Event> heap_;
  uint64_t now_ns_ = 0;
  uint64_t next_seq_ = 0;
  uint64_t events_run_ = 0;
};

}  // namespace zonelab
