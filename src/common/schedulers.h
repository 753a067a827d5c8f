// The host I/O schedulers by name, in one table: the configuration
// (host.scheduler), the host queue's factory (host/host_queue.cc), the
// CLI's --scheduler options, the zonelab:// URI, job files and the docs
// read it, so a new scheduler is a class and a row here.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace zonelab {

struct SchedulerEntry {
  std::string_view name;
  std::string_view summary;  // what it does, for help texts and docs
};

std::span<const SchedulerEntry> schedulers();
bool known_scheduler(std::string_view name);
std::vector<std::string> scheduler_names();
// The names joined for messages: "none, mq-deadline or zinc" (`last` " or "),
// or with ", " throughout.
std::string scheduler_list(std::string_view last = ", ");

}  // namespace zonelab
