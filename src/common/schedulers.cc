// See schedulers.h.
#include "common/schedulers.h"

#include <array>

namespace zonelab {
namespace {

constexpr std::array<SchedulerEntry, 3> kSchedulers = {{
    {"none", "arrival order"},
    {"mq-deadline", "zone write locking"},
    {"zinc", "mq-deadline + throttled reset/finish, seed 003 3.2"},
}};

}  // namespace

std::span<const SchedulerEntry> schedulers() { return kSchedulers; }

bool known_scheduler(std::string_view name) {
  for (const SchedulerEntry& s : kSchedulers) {
    if (s.name == name) return true;
  }
  return false;
}

std::vector<std::string> scheduler_names() {
  std::vector<std::string> out;
  for (const SchedulerEntry& s : kSchedulers) out.emplace_back(s.name);
  return out;
}

std::string scheduler_list(std::string_view last) {
  std::string out;
  for (size_t i = 0; i < kSchedulers.size(); ++i) {
    if (i > 0) out += i + 1 == kSchedulers.size() ? std::string(last) : std::string(", ");
    out += kSchedulers[i].name;
  }
  return out;
}

}  // namespace zonelab
