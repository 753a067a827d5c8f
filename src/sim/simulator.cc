// Event queue as a binary min-heap ordered by (time, sequence), whose root
// is a hole while its event runs; see simulator.h.
#include "sim/simulator.h"

#include <algorithm>

#include "zonelab/assert.h"

namespace zonelab {

void Simulator::sift_down(size_t index, const Event& event) {
  const size_t size = heap_.size();
  for (;;) {  // bounded: index at least doubles each pass
    size_t child = 2 * index + 1;
    if (child >= size) break;
    if (child + 1 < size && earlier(heap_[child + 1], heap_[child])) ++child;
    if (!earlier(heap_[child], event)) break;
    heap_[index] = heap_[child];
    index = child;
  }
  heap_[index] = event;
}

void Simulator::sift_up(size_t index, const Event& event) {
  while (index > 0) {
    size_t parent = (index - 1) / 2;
    if (!earlier(event, heap_[parent])) break;
    heap_[index] = heap_[parent];
    index = parent;
  }
  heap_[index] = event;
}

void Simulator::schedule_at(uint64_t time_ns, EventHandler* handler, uint64_t tag) {
  ZL_ASSERT(handler != nullptr);
  ZL_ASSERT(time_ns >= now_ns_);
  const Event event{time_ns, next_seq_++, handler, tag};
  if (hole_) {
    hole_ = false;
    sift_down(0, event);
    return;
  }
  heap_.push_back(event);
  sift_up(heap_.size() - 1, event);
}

uint64_t Simulator::next_time_ns() const {
  ZL_ASSERT(!empty());
  if (!hole_) return heap_.front().time_ns;
  // Asked from inside a handler: the earliest is one of the root's children.
  if (heap_.size() == 2 || earlier(heap_[1], heap_[2])) return heap_[1].time_ns;
  return heap_[2].time_ns;
}

void Simulator::fill_hole() {
  if (!hole_) return;
  hole_ = false;
  const Event last = heap_.back();
  heap_.pop_back();
  if (!heap_.empty()) sift_down(0, last);
}

bool Simulator::step() {
  fill_hole();  // a step from inside a handler (a blocking caller waiting)
  if (heap_.empty()) return false;
  const Event event = heap_.front();
  ZL_ASSERT(event.time_ns >= now_ns_);
  hole_ = true;
  now_ns_ = event.time_ns;
  ++events_run_;
  event.handler->on_event(event.tag);
  fill_hole();  // the handler scheduled nothing
  return true;
}

void Simulator::run_until(uint64_t limit_ns) {
  fill_hole();
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
