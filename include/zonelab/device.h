// The device seam: a command goes in, a completion comes out. The ZNS model
// implements it today; the host layer, workloads and tools only use it.
//
// Commands are asynchronous. `submit` takes a Command that the caller owns
// and keeps alive until the device calls `on_complete` on the command's
// sink, at the modeled completion time in the simulator's virtual time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "zonelab/status.h"

namespace zonelab {

// kDeallocate is Dataset Management with the deallocate attribute (TRIM):
// the block interface unmaps the range; a ZNS namespace refuses it.
// kFlush is NVMe's Flush: what the volatile write cache holds is made
// durable (a no-op success on a device without one).
enum class Opcode : uint8_t { kRead, kWrite, kAppend, kZoneManagementSend, kDeallocate, kFlush };
inline constexpr size_t kOpcodeCount = 6;

// Zone Send Action values of the NVMe ZNS command set.
enum class ZoneAction : uint8_t {
  kNone = 0,
  kClose = 1,
  kFinish = 2,
  kOpen = 3,
  kReset = 4,
  kOffline = 5,
};

enum class ZoneState : uint8_t {
  kEmpty,
  kImplicitlyOpened,
  kExplicitlyOpened,
  kClosed,
  kFull,
  kReadOnly,
  kOffline,
};
inline constexpr int kZoneStateCount = 7;

std::string_view opcode_name(Opcode opcode);        // "read", "write", "append", ...
std::string_view zone_state_name(ZoneState state);  // "implicitly-opened", ...
std::optional<ZoneState> zone_state_from_name(std::string_view name);
std::string_view zone_action_name(ZoneAction action);  // "open", ...
std::optional<ZoneAction> zone_action_from_name(std::string_view name);
// Implicitly or explicitly opened: the zone holds an open resource.
bool zone_is_open(ZoneState state);
// Opened or closed: the zone holds an active resource.
bool zone_is_active(ZoneState state);

class Command;

class CompletionSink {
 public:
  virtual void on_complete(Command& command) = 0;

 protected:
  ~CompletionSink() = default;
};

class Command {
 public:
  // What the host asks.
  Opcode opcode = Opcode::kRead;
  ZoneAction action = ZoneAction::kNone;
  bool select_all = false;
  uint64_t slba = 0;
  uint32_t nlb = 0;         // logical blocks (1-based, unlike the NVMe field)
  uint8_t* data = nullptr;  // nlb * lba_size bytes, or null: no data moves
  CompletionSink* sink = nullptr;
  uint64_t user_tag = 0;
  // Streams directive: the write stream a write belongs to (the block
  // interface keeps each stream in its own blocks; ZNS ignores it).
  uint16_t stream = 0;

  // What the device answers.
  Status status = Status::kSuccess;
  uint64_t result_lba = 0;  // zone append: the LBA the data went to
  uint64_t submit_ns = 0;
  uint64_t complete_ns = 0;

  // Device-private link for its submission queue.
  Command* queue_next = nullptr;

  uint64_t latency_ns() const { return complete_ns - submit_ns; }
};

// Zones of one size: a namespace formatted with several sizes (FlexZNS's
// zone sets, seed 001 §III-B) lays its sets out one after another, in LBA
// and zone order.
struct ZoneSetInfo {
  uint64_t zone_size_lbas = 0;
  uint64_t zone_capacity_lbas = 0;
  uint32_t zone_count = 0;
  uint32_t first_zone = 0;
  uint64_t first_lba = 0;

  // The zone of the set holding `lba`, and where zone `zone` of the set
  // starts.
  uint32_t zone_of(uint64_t lba) const {
    return first_zone + static_cast<uint32_t>((lba - first_lba) / zone_size_lbas);
  }
  uint64_t start_of(uint32_t zone) const {
    return first_lba + uint64_t{zone - first_zone} * zone_size_lbas;
  }
};

// Where zones lie when there are several sizes: `sets` in LBA order, none
// empty. Zone and LBA must be in range.
uint32_t zone_set_of_zone(const std::vector<ZoneSetInfo>& sets, uint32_t zone);
uint32_t zone_set_of_lba(const std::vector<ZoneSetInfo>& sets, uint64_t lba);
inline uint32_t zone_of_lba(const std::vector<ZoneSetInfo>& sets, uint64_t lba) {
  return sets[zone_set_of_lba(sets, lba)].zone_of(lba);
}
inline uint64_t zone_start_lba(const std::vector<ZoneSetInfo>& sets, uint32_t zone) {
  return sets[zone_set_of_zone(sets, zone)].start_of(zone);
}
// The sets of a namespace of `count` zones of one size.
std::vector<ZoneSetInfo> uniform_zone_sets(uint64_t size_lbas, uint64_t capacity_lbas,
                                           uint32_t count);

struct DeviceInfo {
  std::string_view interface;
  uint64_t lba_size_bytes = 0;
  // The first zone set's zone size and capacity: every zone's, unless the
  // namespace is formatted with several sizes (see zone_sets).
  uint64_t zone_size_lbas = 0;
  uint64_t zone_capacity_lbas = 0;
  uint32_t zone_count = 0;
  uint64_t capacity_lbas = 0;
  uint32_t max_open = 0;    // 0: no limit
  uint32_t max_active = 0;  // 0: no limit
  uint64_t zasl_lbas = 0;
  // The zone sets, in LBA order (one for a namespace of equal zones).
  std::vector<ZoneSetInfo> zone_sets;
  // LBAs of data the device keeps in its backing: the namespace's and, with
  // die-level parity, the parity pages after them (0: capacity_lbas).
  uint64_t stored_lbas = 0;
  // A volatile write cache (NVMe VWC): acknowledged writes survive a power
  // cut only once a Flush completed.
  bool volatile_write_cache = false;
  uint64_t backing_lbas() const { return stored_lbas != 0 ? stored_lbas : capacity_lbas; }

  bool uniform_zones() const { return zone_sets.size() <= 1; }
  uint32_t zone_of_lba(uint64_t lba) const {
    if (uniform_zones()) return static_cast<uint32_t>(lba / zone_size_lbas);
    return zonelab::zone_of_lba(zone_sets, lba);
  }
  uint64_t zone_start_lba(uint32_t zone) const {
    if (uniform_zones()) return uint64_t{zone} * zone_size_lbas;
    return zonelab::zone_start_lba(zone_sets, zone);
  }
  uint64_t zone_size_of(uint32_t zone) const {
    return uniform_zones() ? zone_size_lbas
                           : zone_sets[zone_set_of_zone(zone_sets, zone)].zone_size_lbas;
  }
  uint64_t zone_capacity_of(uint32_t zone) const {
    return uniform_zones() ? zone_capacity_lbas
                           : zone_sets[zone_set_of_zone(zone_sets, zone)].zone_capacity_lbas;
  }
};

struct ZoneDescriptor {
  uint32_t zone = 0;
  uint64_t start_lba = 0;
  uint64_t capacity_lbas = 0;
  uint64_t wp_lba = 0;  // full zones report start + zone size, as Linux does
  ZoneState state = ZoneState::kEmpty;
};

class Device {
 public:
  virtual ~Device() = default;
  virtual void submit(Command& command) = 0;
  virtual const DeviceInfo& info() const = 0;
  virtual ZoneDescriptor zone(uint32_t index) const = 0;
};

}  // namespace zonelab
