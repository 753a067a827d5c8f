// A production drive's front end, the same for the ZNS and the conventional
// SSD: the write-back buffer, the firmware cores and their service times,
// the fixed controller overhead, the mapping table's work (a write's
// update, the bookkeeping of data leaving the table) and, with
// controller.read_dispatch = die, the firmware's queues of reads by die.
// Each device asks it for the timing of what it does; what a device keeps
// per zone or per flash page (which pages are still being programmed, what
// a power cut loses) stays in the device. docs/device-model.md, "A
// production drive".
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <nlohmann/json.hpp>
#include <queue>
#include <utility>
#include <vector>

#include "controller/drive.h"
#include "flash/flash.h"
#include "flash/timeline.h"
#include "sim/simulator.h"
#include "zonelab/config.h"
#include "zonelab/device.h"

namespace zonelab {

struct DriveCounters {
  uint64_t flushes = 0;           // Flush commands that had a cache to flush
  uint64_t flush_programs = 0;    // partly filled pages a Flush programmed
  uint64_t power_losses = 0;      // power cuts with a volatile cache
  uint64_t lost_zones = 0;        // zones that lost data at them
  uint64_t lost_bytes = 0;        // acknowledged bytes they lost
  uint64_t unmap_ns = 0;          // bookkeeping of data leaving the mapping table
  uint64_t die_queued_reads = 0;  // reads that waited for a read on their die
  uint64_t die_queue_ns = 0;      // the time they waited
};

class DriveFrontEnd {
 public:
  explicit DriveFrontEnd(const Config& config);

  WriteBuffer& buffer() { return buffer_; }
  const WriteBuffer& buffer() const { return buffer_; }
  FirmwareCores& cores() { return cores_; }
  bool volatile_cache() const { return volatile_cache_; }
  DriveCounters& counters() { return counters_; }
  const DriveCounters& counters() const { return counters_; }

  // A command taken at `start_ns`: the firmware first (the core free first,
  // for the command type's service time), then the fixed controller
  // overhead. Returns when the device begins the command's work.
  uint64_t take(const Command& command, uint64_t start_ns);
  // The firmware's service time of a command.
  uint64_t service_ns(const Command& command) const;

  // Whether a write's LBAs cost the mapping table time (controller.map_update).
  bool maps() const { return map_update_ns_ != 0; }
  // The table's update for a write of `bytes` ready at `ready_ns`: when its
  // LBAs are mapped (the table serves in the order it is asked).
  uint64_t map(uint64_t ready_ns, uint64_t bytes);
  // `mapped_bytes` leave the table (a zone reset, a trim): firmware does the
  // bookkeeping, one at a time, on a core, holding the table for its first
  // controller.unmap_lock share. Returns when it is done (`t0` when there is
  // none to do).
  uint64_t unmap(uint64_t t0, uint64_t mapped_bytes);

  // The `drive` section of `info --json`; `unmap_key` names the bookkeeping's
  // counter (what leaves the table: a zone reset's data, a trim's).
  void describe(const Flash& flash, const char* unmap_key, nlohmann::ordered_json& out) const;
  void reset_stats();

 private:
  const ControllerConfig controller_;
  const uint64_t overhead_ns_;
  const uint64_t map_update_ns_;
  const bool volatile_cache_;
  const bool power_loss_protection_;
  WriteBuffer buffer_;
  FirmwareCores cores_;
  Timeline mapping_;    // the mapping table: the writes' updates, bookkeeping
  Timeline unmapping_;  // the firmware's bookkeeping, one at a time
  DriveCounters counters_;
};

// controller.read_dispatch = die: the firmware keeps a queue of reads per
// die and takes a read (a core, the controller overhead, the flash) only
// when no other read is in flight on its die; when a core frees, the oldest
// read whose die is free takes it. Its events (a die's read has left it, a
// core may be free) are its own, apart from the device's completions.
class DieReadQueues final : private EventHandler {
 public:
  // `start` executes a read now on behalf of the device (which schedules its
  // completion) and returns when its flash reads end: its die is busy until
  // then.
  using Start = std::function<uint64_t(Command& read)>;
  DieReadQueues(Simulator& sim, DriveFrontEnd& front_end, uint32_t dies, Start start);

  // A read of `die` has arrived.
  void queue(Command& read, uint32_t die);
  // Another command is about to take a core: reads that could go before it
  // came take theirs first, in arrival order.
  void before_other_command() { dispatch(Dispatch::kEveryReady); }

 private:
  // Takes waiting reads whose die has no read in flight, oldest first: while
  // a core is free (kFreeCore); the first even if a core was taken since the
  // wake-up for it was set, then while one is free (kWoken); or all of them,
  // each queuing for a core, before another command takes one (kEveryReady),
  // so that commands behind a read never go before it.
  enum class Dispatch { kFreeCore, kWoken, kEveryReady };
  void dispatch(Dispatch how);
  // A die's first waiting read is ready when the die is free; otherwise an
  // event is set for when it is.
  void ready_or_wait(uint32_t die);
  void start(Command& read, uint32_t die);

  // The events: a die's read has left it (the die's index), or a core may
  // be free for a waiting read (kWake).
  static constexpr uint64_t kWake = ~uint64_t{0};
  void on_event(uint64_t event) override;

  Simulator& sim_;
  DriveFrontEnd& front_end_;
  Start start_;
  // Per die: the reads waiting for it (arrival order, each with its arrival
  // number), when its read in flight leaves it, and whether an event is set
  // for then.
  struct DieReads {
    std::deque<std::pair<uint64_t, Command*>> waiting;
    uint64_t busy_until_ns = 0;
    bool event_set = false;
  };
  std::vector<DieReads> dies_;
  // The first waiting read of each die that is free, oldest first.
  std::priority_queue<std::pair<uint64_t, uint32_t>, std::vector<std::pair<uint64_t, uint32_t>>,
                      std::greater<>>
      ready_;
  uint64_t arrivals_ = 0;
  uint64_t wake_ns_ = UINT64_MAX;  // the wake-up set for a core, if any
};

}  // namespace zonelab
