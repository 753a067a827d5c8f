// Event queue as a binary heap ordered by (time, sequence); see simulator.h.
#include "sim/simulator.h"

#include <algorithm>

#include "zonelab/assert.h"

namespace zonelab {

void Simulator::schedule_at(uint64_t time_ns, EventHandler* handler, uint64_t tag) {
  ZL_ASSERT(handler != nullptr);
  ZL_ASSERT(time_ns >= now_ns_);
  heap_.push_back(Event{time_ns, next_seq_++, handler, tag});
  std::push_heap(heap_.begin(), heap_.end(), later);
}

bool Simulator::step() {
  if (heap_.empty()) return false;
  std::pop_heap(heap_.begin(), heap_.end(), later);
  Event event = heap_.back();
  heap_.pop_back();
  ZL_ASSERT(event.time_ns >= now_ns_);
  now_ns_ = event.time_ns;
  ++events_run_;
  event.handler->on_event(event.tag);
  return true;
}

void Simulator::run_until(uint64_t limit_ns) {
  while (!heap_.empty() && heap_.front().time_ns <= limit_ns) step();
}

void Simulator::run() {
  while (step()) {
  }
}

void Simulator::advance_to(uint64_t time_ns) {
  ZL_ASSERT(time_ns >= now_ns_);
  now_ns_ = time_ns;
}

}  // namespace zonelab
