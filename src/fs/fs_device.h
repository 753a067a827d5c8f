// The device as the file system reaches it: blocking commands, several
// commands in flight at once (a batch that returns when all completed, each
// with its status and latency), the zone report, the clock its background
// work runs on, and the geometry of the zone sets. The file system, its
// tools and the IZG probe at mkfs see only this, so its tests can put a
// scripted or fault-injecting device (fs_test_util.h) where the stack goes.
//
// StackDevice is the implementation over a device stack (stack/stack.h), in
// virtual time (one caller at a time; each call runs the simulation until
// its commands complete) or in real time (any number of callers).
#pragma once

#include <span>
#include <string>

#include "stack/stack.h"

namespace zonelab::fs {

class FsDevice {
 public:
  virtual ~FsDevice() = default;

  virtual const DeviceInfo& info() const = 0;
  // The device keeps the data written (a backing store), so reads return it.
  virtual bool stores_data() const = 0;
  // Commands may come from several threads at once (real time); otherwise
  // one caller at a time, which the file system arranges.
  virtual bool concurrent() const = 0;
  // Device time and timers (garbage collection's period).
  virtual Clock& clock() = 0;
  // One zone's report.
  virtual ZoneDescriptor zone(uint32_t zone) const = 0;

  // Runs one command to its completion. False when the device takes no
  // more commands (closing, or powered off): the command's completion
  // never reached the host.
  virtual bool submit_wait(Command& command) = 0;
  // Runs every command with all of them in flight at once; returns when
  // each has completed. False as for submit_wait.
  virtual bool submit_all(std::span<Command* const> commands) = 0;

  // Why the device failed a data command, when it knows (a backing store's
  // I/O error); empty otherwise.
  virtual std::string data_error() const = 0;
  // The device's configuration, for the IZG probe (which times a scratch
  // device made from it, never this one); null when there is none to give.
  virtual const Config* config() const = 0;
};

class StackDevice final : public FsDevice {
 public:
  explicit StackDevice(Stack& stack) : stack_(stack) {}

  const DeviceInfo& info() const override { return stack_.info(); }
  bool stores_data() const override { return stack_.stores_data(); }
  bool concurrent() const override { return stack_.realtime(); }
  Clock& clock() override { return stack_.clock(); }
  ZoneDescriptor zone(uint32_t zone) const override { return stack_.zone(zone); }
  bool submit_wait(Command& command) override { return stack_.io().submit_wait(command); }
  bool submit_all(std::span<Command* const> commands) override {
    return stack_.io().submit_all(commands);
  }
  std::string data_error() const override { return stack_.data_error(); }
  const Config* config() const override { return &stack_.config(); }

  Stack& stack() { return stack_; }

 private:
  Stack& stack_;
};

}  // namespace zonelab::fs
