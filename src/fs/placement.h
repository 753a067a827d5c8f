// Where a file's data goes and which zones garbage collection empties: the
// placement policy, an object behind this seam so that each policy is a
// file of its own and the file system's core does not change per policy.
//
// The core keeps the zones' accounting, the open and active tokens and the
// journal; at each decision it shows the policy every data zone (ZoneTable)
// and does what the policy answers:
//   - place(): continue zone Z (written part way, nobody writing it), or
//     open an empty zone -- then, once the core holds an active token for
//     it, choose_empty() names which;
//   - stripe_width(): stripe the file over up to k zones -- the writer then
//     holds one zone per slot, each chosen by place()/choose_empty() with
//     the stripe's other zones in the request (so a policy can put them in
//     different groups), and writes stripe_unit_bytes() to each slot in
//     turn, the slots' writes in flight at once;
//   - finish_on_release(): a writer lets a zone go: finish it now?
//   - garbage collection: how often it runs in the background, how many
//     empty zones it keeps, and the victims, in order (copies go where
//     place() sends them, asked with `for_gc`);
//   - events: a zone filled, a zone was reset, a write or read completed.
// A policy's options and any state it keeps (an IZG map) are text the file
// system stores in its metadata (a policy record, metadata.h) at mkfs and
// gives back at every mount.
//
// "zenfs" (seed 000 §4.2, "Data Zone Selection" and "Writeable Capacity in
// Data Zones"): a file continues a zone only if the zone's data lives at
// least as long as the file's (so the file does not prolong the zone's
// life); the closest lifetime wins; otherwise it takes an empty zone, round
// robin over the zones (spreading wear). The write-ahead log never shares a
// zone with table files. A zone a writer lets go with less than the finish
// threshold of its capacity left is finished, so its active resource goes
// back to the pool. Garbage collection empties the zone with the smallest
// live share first, when fewer than the superblock's gc-free share of zones
// are empty.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fs/metadata.h"
#include "fs/status.h"

namespace zonelab::fs {

// A zone whose independent zone group is not known.
inline constexpr uint32_t kNoGroup = UINT32_MAX;

// The LSM-tree level a file's data belongs to, as the file system can tell
// it from what RocksDB passes (seed 001 §IV-C places the hot upper levels
// in small zones): the log and the manifest by I/O class, level 0 as a
// flush's output, and the levels below by the lifetime hint RocksDB gives
// each level's tables (level 1: medium, as level 0's; level 2: long;
// level 3 and deeper: extreme). Anything else is "other".
enum class DataLevel : uint8_t { kWal, kManifest, kL0, kL1, kL2, kL3, kOther, kCount };
inline constexpr size_t kDataLevelCount = static_cast<size_t>(DataLevel::kCount);
DataLevel data_level(Lifetime lifetime, IoClass io_class);
// Levels as a bit each; "wal,L0,L1" and back. The message names a word
// that is no level.
using LevelMask = uint32_t;
inline constexpr LevelMask level_bit(DataLevel level) {
  return LevelMask{1} << static_cast<uint32_t>(level);
}
inline constexpr LevelMask kAllLevels = (LevelMask{1} << kDataLevelCount) - 1;
FsResult<LevelMask> parse_data_levels(std::string_view text);
std::string data_levels_text(LevelMask levels);

// What a policy sees of a data zone.
struct ZoneView {
  uint32_t zone = 0;  // device zone index
  uint32_t set = 0;   // zone set (FlexZNS zone_format; 0 on a uniform device)
  uint64_t size_lbas = 0;
  uint64_t capacity_lbas = 0;
  uint64_t written_lbas = 0;               // zone-relative write pointer
  uint64_t room_lbas = 0;                  // blocks it can still take
  uint64_t live_lbas = 0;                  // blocks files hold
  Lifetime lifetime = Lifetime::kNotSet;   // the longest lifetime of data in it
  IoClass io_class = IoClass::kOther;      // of the writes that started it
  uint32_t group = kNoGroup;               // independent zone group (IZG), from the probe
  bool held = false;                       // a writer holds it (its open token)
  IoClass writer_class = IoClass::kOther;  // the holding writer's class
  uint32_t readers = 0;                    // reads in progress
  bool collecting = false;                 // being emptied, reset or finished: nobody takes it
  bool finished = false;                   // full, or finished early

  bool empty() const { return written_lbas == 0 && !finished; }
  bool written_part_way() const { return written_lbas > 0 && !finished; }
  // Nobody holds it and nobody is emptying it: a writer may take it.
  bool free() const { return !held && !collecting; }
};

// Every data zone, in device order.
class ZoneTable {
 public:
  virtual ~ZoneTable() = default;
  virtual uint32_t size() const = 0;
  virtual ZoneView at(uint32_t index) const = 0;  // index in [0, size())
};

// The IZG probe's settings a policy asks mkfs for (IzgProbeOptions).
struct ProbeRequest {
  uint32_t threshold_pct = 0;
  uint32_t samples = 512;
};

// What a writer is, for the decision.
struct PlacementRequest {
  Lifetime lifetime = Lifetime::kNotSet;
  IoClass io_class = IoClass::kOther;
  bool for_gc = false;  // garbage collection's copies
  // A striped writer's zones held by its other slots (empty otherwise).
  std::span<const uint32_t> stripe;
};

// A policy's answer to place().
struct Placement {
  enum class Kind : uint8_t {
    kContinue,   // `zone`, written part way, free, with room
    kOpenEmpty,  // an empty zone (choose_empty() picks it once a token is there)
  };
  Kind kind = Kind::kOpenEmpty;
  uint32_t zone = 0;
};

class PlacementPolicy {
 public:
  virtual ~PlacementPolicy() = default;
  virtual std::string_view name() const = 0;
  // The options in effect and the state kept, as the text the metadata
  // stores ("key=value" lines; empty when there is nothing to keep).
  virtual std::string state_text() const = 0;
  // The options for people: key -> value, for fs info, dump and df.
  virtual std::map<std::string, std::string> describe() const = 0;

  // Called under the file system's lock, one call at a time.
  virtual Placement place(const ZoneTable& zones, const PlacementRequest& request) = 0;
  // An empty, free zone for a new writer; none when there is none.
  virtual std::optional<uint32_t> choose_empty(const ZoneTable& zones,
                                               const PlacementRequest& request) = 0;
  // A writer lets go of a zone with data in it: finish it now? (Frees its
  // active resource; the room left is lost.)
  virtual bool finish_on_release(const ZoneView& zone, uint32_t finish_threshold_pct) const = 0;

  // Striping: how many zones a file of this kind is written over at once
  // (1: one zone at a time, as ZenFS), in units of stripe_unit_bytes(); a
  // narrower stripe is used when fewer zones can be had without waiting.
  virtual uint32_t stripe_width(const PlacementRequest& /*request*/) const { return 1; }
  virtual uint64_t stripe_unit_bytes() const { return 0; }
  // A read that spans extents in several zones sends their reads at once.
  virtual bool parallel_reads() const { return false; }
  // A compaction's read of a zone whose group a flush is writing waits for
  // the flush to let the group go (seed 004 Algorithm 1), at most this long
  // in real time; 0: it never waits.
  virtual uint64_t compaction_read_wait_ms() const { return 0; }
  // Data zones the policy wants active at once when the device sets no
  // limit (0: the file system's default, kActiveZonesDefault).
  virtual uint32_t active_zones_wanted() const { return 0; }

  // Garbage collection. The background period (`mount_period_ns`: what the
  // mount asked for), the empty zones to keep (`gc_free_pct`: the
  // superblock's share), and the next victim: a free zone with garbage.
  virtual uint64_t gc_period_ns(uint64_t mount_period_ns) const { return mount_period_ns; }
  // Each period, reset the zones that hold nothing (a minor collection, no
  // copying); without it they are reset when space runs short.
  virtual bool minor_gc() const { return true; }
  // Reset a zone as soon as the change that left it holding nothing is
  // durable (a file removed, renamed over or cut); else the minor
  // collection, or a writer finding no empty zone, resets it.
  virtual bool reset_when_freed() const { return true; }
  virtual uint32_t gc_free_target(uint32_t data_zones, uint32_t gc_free_pct) const;
  // Zones a collection empties together (seed 004 §IV-D: in units of a
  // stripe): their live data is read several extents at once and copied
  // over a stripe of that many zones. 1: one zone at a time.
  virtual uint32_t gc_unit() const { return 1; }
  virtual std::optional<uint32_t> gc_victim(const ZoneTable& zones) const;

  // Events (under the file system's lock).
  virtual void on_zone_full(uint32_t /*zone*/) {}
  virtual void on_zone_reset(uint32_t /*zone*/) {}
  virtual void on_io_complete(uint32_t /*zone*/, bool /*write*/, uint64_t /*bytes*/,
                              uint64_t /*latency_ns*/) {}

  // The independent zone group of each device zone (kNoGroup when not
  // known); empty when the policy keeps no map.
  virtual const std::vector<uint32_t>& zone_groups() const;
  // mkfs runs the IZG probe (izg.h) with these settings and makes the policy
  // again with the map it finds (option izg=); none: the policy wants no
  // map, or has one.
  virtual std::optional<ProbeRequest> probe_request() const { return std::nullopt; }
};

// What a policy is made from: its options as given (mkfs: "key=value" pairs
// separated by commas or newlines) or as stored (state_text()).
struct PolicyContext {
  uint32_t zone_count = 0;  // device zones
  uint32_t first_data_zone = 0;
};

struct PolicyEntry {
  std::string_view name;
  std::string_view summary;
  std::string_view options;  // for --help and docs: "key=default: meaning; ..."
  FsResult<std::unique_ptr<PlacementPolicy>> (*make)(std::string_view text,
                                                     const PolicyContext& context);
};

// Every policy, in one table: mkfs, mount, the CLI's help, the experiments
// and docs/fs.md read it.
std::span<const PolicyEntry> placement_policies();
const PolicyEntry* find_placement_policy(std::string_view name);
// Makes a policy from its options or stored state; kInvalid names the bad
// option, an unknown policy the known ones.
FsResult<std::unique_ptr<PlacementPolicy>> make_placement_policy(std::string_view name,
                                                                 std::string_view text,
                                                                 const PolicyContext& context);
bool known_placement_policy(std::string_view name);
// The names, for messages ("zenfs, zenfs+").
std::string placement_policy_names();

// "key=value" pairs, separated by commas or newlines, each key once; the
// message names a malformed pair.
FsResult<std::map<std::string, std::string>> parse_policy_options(std::string_view text);

// The ZenFS choice of a zone to continue (shared by the policies that keep
// ZenFS's lifetime matching): the free zone written part way with room
// whose data lives at least as long as the file's, the closest lifetime
// first, the log apart from everything else; none: open an empty zone.
// `eligible`, when given, narrows the candidates further.
std::optional<uint32_t> zenfs_continue_zone(
    const ZoneTable& zones, const PlacementRequest& request,
    const std::function<bool(const ZoneView&)>& eligible = nullptr);

// The first empty, free zone from table index `cursor` on, wrapping; the
// cursor then points past it (round robin over the zones spreads wear).
std::optional<uint32_t> next_empty_zone(const ZoneTable& zones, uint32_t& cursor);

// The policies (placement.cc, zenfs_plus.cc).
FsResult<std::unique_ptr<PlacementPolicy>> make_zenfs_policy(std::string_view text,
                                                             const PolicyContext& context);
FsResult<std::unique_ptr<PlacementPolicy>> make_zenfs_plus_policy(std::string_view text,
                                                                  const PolicyContext& context);

}  // namespace zonelab::fs
