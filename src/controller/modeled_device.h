// What the host side of any modeled SSD offers besides the command seam:
// the counters of what the host asked (HostCounters), and the flash, the
// counters and the configuration that tools and workloads read off a device
// whatever its interface. The ZNS and the conventional device implement it.
#pragma once

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>

#include "flash/flash.h"
#include "store/backing.h"
#include "store/image.h"
#include "zonelab/config.h"
#include "zonelab/device.h"
#include "zonelab/result.h"

namespace zonelab {

struct HostCounters {
  std::array<uint64_t, kOpcodeCount> commands{};
  std::array<uint64_t, kStatusCount> statuses{};
  std::array<uint64_t, 6> zone_actions{};  // successful, by ZoneAction
  uint64_t host_write_bytes = 0;
  uint64_t host_read_bytes = 0;
  uint64_t deallocated_bytes = 0;
  uint64_t link_in_busy_ns = 0;
  uint64_t link_out_busy_ns = 0;
};

// What a device has done since it was made, across images (a device image
// keeps these): never cleared by reset_stats().
struct LifetimeCounters {
  uint64_t host_write_bytes = 0;
  uint64_t host_read_bytes = 0;
  uint64_t commands = 0;
};

// Where a device records, in the order it takes them, the commands that
// changed its state -- the stack's journal over a device image. Data moves
// first (a write's data is in the backing before its command is recorded),
// and a command's record is made durable before any data it destroys goes
// (a reset's) and before its completion is reported, so a process killed at
// any instant leaves data and record in agreement.
class CommandLog {
 public:
  virtual ~CommandLog() = default;
  // A command that succeeded and changed the device's state.
  virtual void taken(const Command& command) = 0;
  // inject_zone (a test hook) changed a zone.
  virtual void injected(uint32_t zone, ZoneState state) = 0;
  // inject_die (a test hook) failed a die, or brought it back (flat index:
  // channel x dies_per_channel + way).
  virtual void die_changed(uint32_t die, bool failed) = 0;
  // Data a recorded command released is about to be destroyed: what was
  // recorded must be durable first. False when it could not be made so: the
  // data must then stay.
  virtual bool destroying() = 0;
  // A completion is about to be reported: what was recorded must be durable
  // first, unless whoever drives the device reports completions only later
  // (a benchmark, at its end). False when it could not be made so: the
  // command is then reported failed (WRITE_FAULT).
  virtual bool completing() = 0;
  // A power cut emptied a volatile write cache: the zone keeps its data
  // below `durable_lbas` (zone-relative) only.
  virtual void lost(uint32_t zone, uint64_t durable_lbas) = 0;
};

// Does a successful `command` change a device's state? (Reads do not.)
inline bool changes_state(const Command& command) { return command.opcode != Opcode::kRead; }

class ModeledDevice : public Device {
 public:
  // Null: nothing is recorded (a device without an image, or replaying).
  void set_command_log(CommandLog* log) { log_ = log; }

  virtual const Config& config() const = 0;
  virtual const Flash& flash() const = 0;
  virtual const HostCounters& counters() const = 0;
  virtual const Backing& backing() const = 0;
  // Clears counters and busy times (not state) before a measured run.
  virtual void reset_stats() = 0;
  virtual uint64_t implicit_closes() const { return 0; }
  virtual LifetimeCounters lifetime() const = 0;

  // Test hook: the media under a zone fails (read-only or offline). Devices
  // without zone states refuse it with a message.
  virtual Outcome inject_zone(uint32_t zone, ZoneState state) = 0;
  // Test hook: a die fails (every page on it is lost until it is back), or
  // comes back (`failed` false). Devices that cannot model it refuse with a
  // message.
  virtual Outcome inject_die(uint32_t channel, uint32_t way, bool failed) {
    (void)channel;
    (void)way;
    (void)failed;
    return Error{"this device does not model die failures"};
  }
  // The image's journal has been replayed: the device may settle state it
  // derives from the data (a FlexZNS zone's partial parity).
  virtual void recovered() {}
  // The power goes at the device's current time: with a volatile write
  // cache (buffer.power_loss_protection = off) every zone loses the data
  // that is neither on flash nor covered by a completed Flush; with
  // protection, or no buffer, nothing is lost. Returns the zones that lost
  // data; each is recorded (CommandLog::lost).
  // `keep_data`: the cut changes the state in memory only, nothing is
  // recorded or discarded (an image opened read-only).
  virtual uint32_t power_loss(bool keep_data = false) {
    (void)keep_data;
    return 0;
  }
  // Replays a recorded loss.
  virtual Outcome replay_loss(uint32_t zone, uint64_t durable_lbas) {
    (void)zone;
    (void)durable_lbas;
    return Error{"this device has no volatile write cache"};
  }

  // What this interface adds to `zonelab info --json` (the ZNS block map,
  // the conventional FTL) and to a benchmark's device statistics.
  virtual void describe_state(nlohmann::ordered_json& out) const = 0;
  virtual void describe_run(nlohmann::ordered_json& out) const = 0;
  // What lies under one zone beyond its descriptor (the ZNS block mapping's
  // physical zone); nothing for the conventional device.
  virtual void describe_zone(uint32_t zone, nlohmann::ordered_json& out) const = 0;

  // The device's persistent state, as a device image keeps it. import_state
  // refuses, changing nothing, a state this configuration could not have
  // produced.
  virtual void export_state(ImageState& state) const = 0;
  virtual Outcome import_state(const ImageState& state) = 0;

 protected:
  // Records a command the device took, if it succeeded and changed state.
  void log_taken(const Command& command) {
    if (log_ != nullptr && command.status == Status::kSuccess && changes_state(command)) {
      log_->taken(command);
    }
  }
  bool log_destroying() { return log_ == nullptr || log_->destroying(); }
  // Before `command`'s completion is reported: a command whose record could
  // not be made durable is reported as a write fault.
  void log_completing(Command& command) {
    if (log_ != nullptr && !log_->completing() && command.status == Status::kSuccess) {
      command.status = Status::kWriteFault;
    }
  }

  CommandLog* log_ = nullptr;
};

}  // namespace zonelab
