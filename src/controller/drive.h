// What a production drive has in front of its flash and an emulator does
// not: a write-back buffer, firmware cores, and a mapping table that writes
// and reset bookkeeping share. Each is off (0) in the emulator presets;
// docs/device-model.md, "A production drive", tells how they are timed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "flash/timeline.h"
#include "zonelab/config.h"
#include "zonelab/result.h"

namespace zonelab {

// The features' configuration, checked as a whole (the keys' own ranges are
// checked when they are read): a buffer holds at least one flash page, a
// suspend is shorter than what it suspends, service times need cores, and
// the conventional device's buffer is power-safe.
Outcome check_drive_config(const Config& config);

// Whether the configuration turns on any production-drive feature that
// changes what a device does: a buffer, suspend, firmware cores, the
// mapping table's work, or reads queued by die. (controller.unmap_lock and
// the service times matter only with these.)
bool drive_features_on(const Config& config);

// Whether the configuration's buffer is a volatile write cache (NVMe VWC).
inline bool has_volatile_write_cache(const Config& config) {
  return config.buffer.size_bytes != 0 && config.buffer.power_loss_protection == "off";
}

// The write-back buffer's space over time. Data enters when a write is
// admitted (held) and leaves when the program of its page ends (release_at,
// a time the flash timelines already know). A write that finds the buffer
// full waits for the earliest release that makes room: writes are admitted
// in the order the controller takes them.
class WriteBuffer {
 public:
  explicit WriteBuffer(uint64_t size_bytes) : size_(size_bytes) {}
  bool enabled() const { return size_ != 0; }
  uint64_t size_bytes() const { return size_; }

  // When `bytes` arriving at `ready_ns` are in the buffer (`now_ns`: the
  // simulator's time, before which every release has happened). A write
  // larger than the buffer needs it all.
  uint64_t admit(uint64_t now_ns, uint64_t ready_ns, uint64_t bytes);
  // Held data leaves when its program ends.
  void release_at(uint64_t at_ns, uint64_t bytes);
  // Held data that will never be programmed (a reset zone's partial page,
  // data a power cut lost).
  void drop(uint64_t bytes);
  // Data found in the buffer when the device is opened (partly written
  // pages kept by the image).
  void hold(uint64_t bytes) { held_ += bytes; }

  struct Counters {
    uint64_t admitted_bytes = 0;
    uint64_t waits = 0;    // writes that found the buffer full
    uint64_t wait_ns = 0;  // their time waiting for space
    uint64_t peak_bytes = 0;
    // Writes admitted although partly written pages alone filled the buffer
    // (only possible with more active zones than pages in the buffer).
    uint64_t overcommits = 0;
    uint64_t read_hits = 0;  // flash pages a read took from the buffer
  };
  const Counters& counters() const { return counters_; }
  Counters& mutable_counters() { return counters_; }
  void reset_stats() { counters_ = Counters{}; }
  // Bytes in the buffer at `now_ns` (held and not yet programmed).
  uint64_t used_bytes(uint64_t now_ns);

 private:
  void retire(uint64_t now_ns);

  uint64_t size_;
  uint64_t held_ = 0;                      // admitted, page not yet programmed
  uint64_t scheduled_ = 0;                 // sum of releases_
  std::map<uint64_t, uint64_t> releases_;  // program end -> bytes leaving then
  Counters counters_;
};

// The firmware: `cores` cores, each a timeline; a command takes the one
// free first (no cores: no service).
class FirmwareCores {
 public:
  explicit FirmwareCores(uint64_t cores) : cores_(cores) {}
  bool enabled() const { return !cores_.empty(); }
  // When a command arriving at `ready_ns` that needs `service_ns` is done.
  uint64_t serve(uint64_t ready_ns, uint64_t service_ns);
  // When the first core is next free (0 with no cores).
  uint64_t free_at_ns() const;
  uint64_t busy_ns() const;
  void reset_stats() {
    for (Timeline& core : cores_) core.reset_stats();
  }

 private:
  // The index of the core free first (cores_ not empty).
  size_t earliest() const;

  std::vector<Timeline> cores_;
};

}  // namespace zonelab
