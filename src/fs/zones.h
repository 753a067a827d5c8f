// The data zones as the file system keeps them: what each holds, who writes
// to it, and the open and active zone tokens that keep the file system
// inside the device's limits (seed 000 §4.2, "Active Zone Limits").
//
// A data zone is empty, written part way (it holds one of the device's
// active resources), or finished (full, or finished early). A writer -- an
// open file, or garbage collection -- holds a zone while it writes to it,
// at the write pointer the file system tracks; that is its open token. A
// zone held but not yet written counts as active too, since its first write
// makes it so. Each zone counts the blocks files hold in it; a zone that
// holds none, has no writer and no reader, and has been written to, is
// reset -- and so reused.
//
// Tokens: at most `open_limit` zones held and `active_limit` zones active at
// once (the device's MOR and MAR less the metadata zone's, or a default when
// the device sets none). One of each is kept back for the write-ahead log
// and garbage collection, so a table file can never take the last one. A
// writer that holds a zone but is not writing to it (a log between syncs)
// lends its token: when another writer needs one and none is free, the idle
// writer's zone is taken back, and it takes a zone again at its next write.
// So a well-behaved file system never sees TOO_MANY_ACTIVE_ZONES, and
// writes (which open zones implicitly) never TOO_MANY_OPEN_ZONES.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "fs/metadata.h"
#include "fs/placement.h"
#include "zonelab/device.h"

namespace zonelab::fs {

// Who holds a zone: a file's id, garbage collection, or nobody.
using WriterId = uint64_t;
inline constexpr WriterId kNoWriter = 0;
inline constexpr WriterId kGcWriter = UINT64_MAX;

struct DataZone {
  uint32_t index = 0;
  uint32_t set = 0;  // zone set (FlexZNS zone_format; 0 on a namespace of equal zones)
  uint64_t start_lba = 0;
  uint64_t size_lbas = 0;
  uint64_t capacity_lbas = 0;
  uint64_t wp_lbas = 0;                    // zone-relative: blocks written
  uint64_t live_blocks = 0;                // blocks files hold
  Lifetime lifetime = Lifetime::kNotSet;   // the longest lifetime of data in it
  IoClass io_class = IoClass::kOther;      // of the writes that started it
  WriterId writer = kNoWriter;             // holds its open token
  IoClass writer_class = IoClass::kOther;  // of the writer holding it
  bool writing = false;                    // the writer is writing now: not taken back
  bool finished = false;                   // full, or finished early
  bool collecting = false;                 // being emptied, reset or finished: nobody takes it
  uint32_t readers = 0;
  // The file system's record count when the zone last lost a block: it may
  // be reset once the journal holds that many records (the records that
  // freed it are durable).
  uint64_t freed_seq = 0;

  bool empty() const { return wp_lbas == 0 && !finished; }
  bool held() const { return writer != kNoWriter; }
  bool written_part_way() const { return wp_lbas > 0 && !finished; }
  // Holds an active resource on the device, or will at its first write.
  bool active() const { return written_part_way() || (held() && !finished); }
  uint64_t room_lbas() const { return finished ? 0 : capacity_lbas - wp_lbas; }
  uint64_t garbage_blocks() const { return wp_lbas - live_blocks; }
};

// Zone sets, as a bit each (set s: bit s); a namespace has at most
// kMaxZoneSets.
using SetMask = uint32_t;
inline constexpr SetMask kAllSets = ~SetMask{0};
inline constexpr SetMask set_bit(uint32_t set) { return SetMask{1} << set; }
// The first `sets` sets.
inline constexpr SetMask set_mask_of(size_t sets) {
  return sets >= 32 ? kAllSets : (SetMask{1} << sets) - 1;
}

class ZoneManager;

// The data zones of some zone sets, as a policy sees them: the zones a
// writer confined to those sets may take -- the manager's own table, not a
// copy, when that is every data zone.
class SetZoneTable final : public ZoneTable {
 public:
  SetZoneTable(const ZoneManager& zones, SetMask sets);
  uint32_t size() const override;
  ZoneView at(uint32_t index) const override;

 private:
  const ZoneManager& zones_;
  bool every_zone_ = true;
  std::vector<uint32_t> indexes_;  // when not every zone
};

struct ZoneLimits {
  uint32_t open = 0;    // zones held at once
  uint32_t active = 0;  // zones active at once
};

class ZoneManager final : public ZoneTable {
 public:
  // Zones from `first_zone` to the end of the namespace laid out as `sets`
  // (in LBA order; one set on a namespace of equal zones).
  ZoneManager(uint32_t first_zone, const std::vector<ZoneSetInfo>& sets, ZoneLimits limits);

  // The device's view at mount: zone-relative write pointer and whether the
  // zone takes no more writes.
  void load(uint32_t zone, uint64_t wp_lbas, bool finished);

  // Space files take and give back (whole blocks).
  void add_live(const Extent& blocks, uint64_t block_bytes);
  // `seq`: the record count once the record freeing them is applied.
  void remove_live(const Extent& blocks, uint64_t block_bytes, uint64_t seq);

  bool is_data_zone(uint32_t zone) const { return zone >= first_ && zone - first_ < count(); }
  uint32_t count() const { return static_cast<uint32_t>(zones_.size()); }
  DataZone& zone(uint32_t index) { return zones_.at(index - first_); }
  const DataZone& zone(uint32_t index) const { return zones_.at(index - first_); }
  const std::vector<DataZone>& zones() const { return zones_; }
  // ZoneTable: what a policy sees of each data zone.
  uint32_t size() const override { return count(); }
  ZoneView at(uint32_t index) const override { return view(zones_[index]); }
  ZoneView view(const DataZone& z) const;
  ZoneView view_of(uint32_t zone) const { return view(this->zone(zone)); }
  // Each device zone's independent zone group (the policy's map; empty:
  // none known).
  // Set before any zone is held (at mount).
  void set_groups(std::vector<uint32_t> groups) { groups_ = std::move(groups); }
  // A zone's writer is writing to it now (DataZone::writing): every change
  // goes here, which keeps the count below.
  void set_writing(uint32_t zone, bool writing);
  // Zones a flush is writing to now in the group of `zone` (0 when its
  // group is not known): a compaction read there waits (seed 004
  // Algorithm 1).
  uint32_t flush_writing_in_group_of(uint32_t zone) const;

  // What a writer gets when it asks for a zone.
  struct Allocation {
    enum class Kind : uint8_t {
      kZone,     // `zone` is the writer's now (`fresh`: it was empty)
      kFinish,   // finish `zone` first, which frees an active token; then ask again
      kNoSpace,  // no empty zone: reset zones, or collect garbage, and ask again
      kWait,     // every token is held by a writer that is writing: wait for one
    };
    Kind kind = Kind::kWait;
    uint32_t zone = 0;
    bool fresh = false;
  };
  // Finds a zone for `writer`, whose data has this lifetime and class, and
  // makes the writer its holder -- or says what must happen first. The log
  // and garbage collection may use the tokens kept back; with
  // `keep_empty_for_gc` only garbage collection takes the last empty zone,
  // so that it can always move a zone's live data out and free it.
  // `stripe`: the zones a striped writer holds for its other slots.
  // `sets`: the zone sets the writer may use; each keeps its last empty zone
  // for garbage collection, which empties zones of one set into that set.
  Allocation allocate(PlacementPolicy& policy, Lifetime lifetime, IoClass io_class, WriterId writer,
                      bool keep_empty_for_gc, std::span<const uint32_t> stripe = {},
                      SetMask sets = kAllSets);

  // The last resort when no empty zone is left: the zone written part way
  // with the most room, whatever its data's lifetime -- one taken back from
  // an idle writer if need be -- made `writer`'s. Nothing if no zone has
  // room.
  std::optional<uint32_t> take_any_room(WriterId writer, Lifetime lifetime, IoClass io_class,
                                        SetMask sets = kAllSets);

  bool holds(uint32_t zone, WriterId writer) const { return this->zone(zone).writer == writer; }
  // The writer lets go of its zone; `finish` when the zone was (or is about
  // to be) finished on the device.
  void release(uint32_t zone, bool finish);
  void mark_reset(uint32_t zone);

  // Zones that may be reset now: they hold nothing, no writer or reader
  // has them, and the records that freed them are among the first
  // `durable_seq` records (in the journal).
  std::vector<uint32_t> resettable(uint64_t durable_seq) const;

  // Another writer is writing, a zone is being emptied, reset or finished,
  // or a dead zone waits for its readers: space may come free without
  // `writer` doing anything.
  bool busy_elsewhere(WriterId writer) const;
  uint32_t held_count() const;
  uint32_t active_count() const;
  // Empty zones nobody holds (in the sets given).
  uint32_t empty_count(SetMask sets = kAllSets) const;
  // The live blocks of the zones in `sets` over those zones' capacity (0
  // when the sets hold no zone).
  double live_share(SetMask sets) const;
  // Zone sets, and the data zones of each.
  uint32_t set_count() const { return static_cast<uint32_t>(set_zones_.size()); }
  uint32_t zones_in_set(uint32_t set) const { return set_zones_.at(set); }
  uint64_t set_capacity_lbas(uint32_t set) const { return set_capacity_.at(set); }
  const ZoneLimits& limits() const { return limits_; }
  void set_limits(ZoneLimits limits) { limits_ = limits; }
  uint64_t revocations() const { return revocations_; }

 private:
  // Takes back the token of a writer that is not writing (the zone with the
  // least room first; with `part_way`, only a zone written part way); false
  // when every holder is writing.
  bool revoke_idle(WriterId asking, bool part_way);
  void take(DataZone& z, WriterId writer, Lifetime lifetime, IoClass io_class);
  // Every change of a zone's writer goes here (it keeps flush_writing_).
  void set_writer(DataZone& z, WriterId writer, IoClass io_class);
  void change(DataZone& z, const std::function<void()>& fn);

  uint32_t first_;
  std::vector<DataZone> zones_;
  std::vector<uint32_t> set_zones_;     // data zones of each set
  std::vector<uint64_t> set_capacity_;  // a zone's capacity in each set
  std::vector<uint64_t> set_live_;      // live blocks in each set's zones
  ZoneLimits limits_;
  std::vector<uint32_t> groups_;
  std::vector<uint32_t> flush_writing_;  // by group: zones flushes are writing now
  uint64_t revocations_ = 0;
};

}  // namespace zonelab::fs
