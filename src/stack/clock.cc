// The timer list both clocks keep; see clock.h.
#include "stack/clock.h"

#include "zonelab/assert.h"

namespace zonelab {

uint64_t TimerList::add(uint64_t due_ns, Clock::TimerFn fn) {
  ZL_ASSERT(fn != nullptr);
  uint64_t id = next_id_++;
  by_due_.emplace(std::pair{due_ns, id}, std::move(fn));
  due_of_.emplace(id, due_ns);
  return id;
}

bool TimerList::cancel(uint64_t id) {
  auto it = due_of_.find(id);
  if (it == due_of_.end()) return false;
  by_due_.erase({it->second, id});
  due_of_.erase(it);
  return true;
}

Clock::TimerFn TimerList::take_due(uint64_t now_ns, uint64_t* id) {
  if (by_due_.empty() || by_due_.begin()->first.first > now_ns) return nullptr;
  auto first = by_due_.begin();
  if (id != nullptr) *id = first->first.second;
  Clock::TimerFn fn = std::move(first->second);
  due_of_.erase(first->first.second);
  by_due_.erase(first);
  return fn;
}

uint64_t TimerList::next_due_ns() const {
  return by_due_.empty() ? UINT64_MAX : by_due_.begin()->first.first;
}

}  // namespace zonelab
