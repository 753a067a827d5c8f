// softfinish (seed 003 §3.1): finish done by the host, as writes of zeros
// from the zone's write pointer to its capacity, `host.softfinish.chunk`
// bytes each, one at a time, `host.softfinish.pause` apart. The writes go
// through whatever device they are given, so a scheduler in front (a
// HostQueue) orders them like any write. The zone ends full when its write
// pointer reaches the capacity; no finish command is sent.
#pragma once

#include <cstdint>
#include <functional>

#include "sim/simulator.h"
#include "zonelab/config.h"
#include "zonelab/device.h"
#include "zonelab/result.h"

namespace zonelab {

class SoftFinish final : private CompletionSink, private EventHandler {
 public:
  // Called once the zone is full (SUCCESS) or a write failed (its status),
  // with the time from start() to then.
  using Done = std::function<void(Status status, uint64_t latency_ns)>;

  SoftFinish(Device& device, Simulator& sim, const HostConfig& host);
  // Checks the chunk against the device (a multiple of its LBA size).
  static Outcome check(const HostConfig& host, const DeviceInfo& info);

  // Fills `zone` from its write pointer; one zone at a time.
  void start(uint32_t zone, Done done);
  bool busy() const { return busy_; }
  uint64_t writes() const { return writes_; }  // issued, over the object's life

 private:
  void on_complete(Command& command) override;
  void on_event(uint64_t tag) override;
  void next();
  void finish(Status status);

  Device& device_;
  Simulator& sim_;
  uint64_t chunk_lbas_;
  uint64_t pause_ns_;
  Command write_;
  Done done_;
  bool busy_ = false;
  uint64_t start_ns_ = 0;
  uint64_t cursor_ = 0;  // next LBA to write
  uint64_t end_ = 0;     // the zone's capacity end
  uint64_t writes_ = 0;
};

}  // namespace zonelab
