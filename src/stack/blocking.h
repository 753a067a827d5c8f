// The one blocking way to run a command on a stack: submit and wait. Two
// implementations sit behind it (stack.cc): in virtual time a single caller
// runs the simulation until its command completes; in real time any number
// of threads wait while the device thread paces the simulation to the wall
// clock. File systems, tools and tests use this and never pump a simulator
// themselves.
#pragma once

#include <span>

#include "zonelab/device.h"

namespace zonelab {

class BlockingDevice {
 public:
  virtual ~BlockingDevice() = default;

  // Submits `command` and returns once it completed: status, result and
  // times are filled in; its sink and tag are the stack's while it runs.
  // False, with the command untouched, when the stack no longer takes
  // commands (it is closing).
  virtual bool submit_wait(Command& command) = 0;

  // Submits every command at once -- all of them in flight together -- and
  // returns once each has completed, with its status, result and times
  // filled in. False when the stack no longer takes commands: those it
  // refused are untouched (status kSuccess is not set on them; their
  // `completed_ns` stays 0) and the others completed.
  virtual bool submit_all(std::span<Command* const> commands) = 0;

  virtual const DeviceInfo& info() const = 0;
};

}  // namespace zonelab
