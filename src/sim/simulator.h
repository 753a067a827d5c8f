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

  bool empty() const { return pending() == 0; }
  size_t pending() const { return heap_.size() - (hole_ ? 1 : 0); }
  uint64_t events_run() const { return events_run_; }
  // Earliest pending event time; only valid when !empty().
  uint64_t next_time_ns() const;
  // Moves virtual time forward with no event (e.g. an idle driver).
  void advance_to(uint64_t time_ns);

 private:
  struct Event {
    uint64_t time_ns;
    uint64_t seq;
    EventHandler* handler;
    uint64_t tag;
  };
  // The order: (time, sequence) compared as one 128-bit key, with no branch
  // on equal times. Unique keys make the run order the same whatever the
  // heap's shape.
  static bool earlier(const Event& a, const Event& b) {
    __extension__ typedef unsigned __int128 Key;
    return (Key{a.time_ns} << 64 | a.seq) < (Key{b.time_ns} << 64 | b.seq);
  }
  // Binary min-heap moves: `event` into the hole at `index`, down (the
  // subtrees below it are heaps) or up (the heap above it is one).
  void sift_down(size_t index, const Event& event);
  void sift_up(size_t index, const Event& event);
  // The last event takes the hole, if there is one.
  void fill_hole();

  // While an event runs, its slot at the root is a hole (hole_): the first
  // event its handler schedules takes it with one sift down, instead of a
  // sift down to remove the old root and a sift up to add the new event
  // (most events schedule the next: a completion, the command after it).
  std::vector<Event> heap_;
  bool hole_ = false;
  uint64_t now_ns_ = 0;
  uint64_t next_seq_ = 0;
  uint64_t events_run_ = 0;
};

}  // namespace zonelab
