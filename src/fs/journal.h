// The superblock and the metadata journal of the zoned file system, on the
// dedicated metadata zones (the first `meta_zones` zones of the device).
//
// A metadata zone begins with a header: a sequence number (one more each
// time a zone is started), the superblock, and a snapshot of the whole
// metadata (as records, metadata.h). Record groups follow, each one device
// write: a checksummed list of records, padded to a block. The active zone
// is the one with the newest valid header; when a group no longer fits, the
// next metadata zone is reset and started with a new header whose snapshot
// holds everything so far (the old zone is reset only when its turn comes
// again, so a valid header always exists).
//
// Recovery reads the header of every metadata zone, takes the newest that
// checks, and replays the groups after it up to the zone's write pointer --
// the device's write pointer, not any length the journal claims, says where
// the journal ends. docs/fs-format.md has the bytes.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "fs/device_io.h"
#include "fs/metadata.h"

namespace zonelab::fs {

inline constexpr uint32_t kMetaZonesMin = 2;
inline constexpr uint32_t kMetaZonesMax = 8;
inline constexpr uint64_t kPolicyNameBytes = 16;

// The file system's record of one zone set of the namespace it was made on
// (FlexZNS's zone_format, seed 001 §III-B): zones of one size, in LBA order.
struct SuperZoneSet {
  uint64_t size_lbas = 0;
  uint64_t capacity_lbas = 0;
  uint32_t count = 0;

  bool operator==(const SuperZoneSet&) const = default;
};
inline constexpr size_t kSuperZoneSetsMax = 16;
inline constexpr uint32_t kNoHotSet = UINT32_MAX;

// A tenant (seed 001 §IV-D): a name and the zone sets its files are
// confined to (bit i: set i). Its files are those under the directory
// /NAME; no two tenants share a set.
struct SuperTenant {
  std::string name;  // 1 to kTenantNameBytes of [A-Za-z0-9_.-], not "." or ".."
  uint32_t sets = 0;

  bool operator==(const SuperTenant&) const = default;
};
inline constexpr size_t kTenantNameBytes = 16;
inline constexpr size_t kTenantsMax = kSuperZoneSetsMax;
// Why a tenant name cannot be one (empty when it can).
std::string tenant_name_problem(std::string_view name);

// What mkfs chose, kept in every header.
struct Superblock {
  std::array<uint8_t, 16> uuid{};
  uint32_t block_bytes = 0;
  uint64_t zone_size_lbas = 0;
  uint64_t zone_capacity_lbas = 0;
  uint32_t zone_count = 0;
  uint32_t meta_zones = 0;
  // Finish a data zone when a file closes with less than this share of the
  // zone's capacity left (ZenFS's finish threshold), in percent.
  uint32_t finish_threshold_pct = 0;
  // Garbage collection starts when fewer than this share of the data zones
  // are free, in percent.
  uint32_t gc_free_pct = 0;
  std::string policy;  // at most kPolicyNameBytes
  // A namespace of several zone sizes: every set, in LBA order (the first
  // set's size and capacity are the fields above; the counts add up to
  // zone_count). Empty on a namespace of equal zones.
  std::vector<SuperZoneSet> zone_sets;
  // With zone sets, the set the hot levels' data goes to (seed 001 §IV-C),
  // and those levels (placement.h's DataLevel bits); the rest goes to the
  // other sets. kNoHotSet: every level in every set.
  uint32_t hot_set = kNoHotSet;
  uint32_t hot_levels = 0;
  // With a hot set: the other levels' data also goes to the hot set while
  // the hot set holds a smaller share of its capacity in live data than the
  // others do (0 off, 1 on), so that the sets fill alike.
  uint32_t spill_cold = 0;
  // With zone sets, the tenants (none: every file may use every set).
  std::vector<SuperTenant> tenants;

  bool operator==(const Superblock&) const = default;
};

// The superblock as bytes, and back; the decoder checks every field. On a
// namespace of equal zones it is 128 bytes (magic, fields, CRC-32C): format
// version 1. With zone sets it is version 2: the same 128 bytes, then the
// sets, the tenants and a CRC-32C of them (superblock_bytes()).
std::vector<uint8_t> encode_superblock(const Superblock& sb);
uint64_t superblock_bytes(const Superblock& sb);
std::vector<uint8_t> encode_superblock(const Superblock& sb);
FsResult<Superblock> decode_superblock(const uint8_t* bytes, size_t size);
// The device's zone sets as a superblock records them (empty on a
// namespace of equal zones).
std::vector<SuperZoneSet> super_zone_sets(const DeviceIo& io);
// Zone geometry for messages: "COUNTxSIZE/CAPACITY,... blocks".
std::string zone_sets_text(const std::vector<SuperZoneSet>& sets, uint64_t size_lbas,
                           uint64_t capacity_lbas, uint32_t count);
std::string zone_sets_text(const Superblock& sb);
std::string zone_sets_text(const std::vector<SuperZoneSet>& sets, const DeviceInfo& info);
// A UUID as text (8-4-4-4-12 hex digits).
std::string uuid_text(const std::array<uint8_t, 16>& uuid);

// A metadata zone's header as bytes, padded to whole blocks.
std::vector<uint8_t> encode_meta_header(uint64_t sequence, FileId next_file_id,
                                        const Superblock& sb, const std::vector<Record>& snapshot,
                                        uint64_t block_bytes);
struct MetaHeader {
  uint64_t sequence = 0;
  FileId next_file_id = 1;
  Superblock superblock;
  std::vector<Record> snapshot;
  uint64_t blocks = 0;  // the header's length in blocks
};
// `bytes` holds at least the header's first block; `*needed_blocks` is set
// to the blocks the whole header takes when more must be read.
FsResult<MetaHeader> decode_meta_header(const uint8_t* bytes, size_t size, uint64_t block_bytes,
                                        uint64_t* needed_blocks);

// One group of records as bytes, padded to whole blocks.
std::vector<uint8_t> encode_group(uint64_t sequence, uint64_t index,
                                  const std::vector<uint8_t>& records, uint64_t block_bytes);

// What recovery found.
struct Recovered {
  MetaHeader header;
  uint32_t zone = 0;                  // the active metadata zone
  uint64_t next_lba = 0;              // after the last group replayed
  uint64_t groups = 0;                // groups replayed
  std::vector<Record> records;        // the groups' records, in order
  std::vector<std::string> problems;  // what did not check (a torn tail, an older zone)
  // The next group cannot go at next_lba: the zone holds blocks past it
  // that are no group (a torn write), or it is full. The journal starts a
  // new metadata zone before it writes again.
  bool needs_roll = false;
  // Damage, as opposed to a torn tail: a group that lies wholly below the
  // write pointer and does not check. A device command is atomic and the
  // journal writes a group at the write pointer, so no crash leaves that;
  // the records from there on were written and may have been acknowledged.
  // Empty when the journal is whole.
  std::string damage;
  // The groups after the damage that still check (found by scanning the
  // blocks up to the write pointer), and their records: what replaying
  // up to the damage drops.
  uint64_t groups_after_damage = 0;
  std::vector<Record> records_after_damage;
};

class Journal {
 public:
  static constexpr uint64_t kGroupBytesMax = 16 << 20;

  // Resets every metadata zone and starts zone 0 with an empty snapshot.
  // `snapshot`: the records the first header starts from (the policy's).
  static FsStatus format(DeviceIo& io, const Superblock& sb,
                         const std::vector<Record>& snapshot = {});
  // Reads the metadata zones and the records after the newest header.
  static FsResult<Recovered> recover(DeviceIo& io);

  Journal(DeviceIo& io, const Superblock& sb, const Recovered& recovered);

  // What a commit writes, taken from the file system in one step (under its
  // lock) so that the journal's order is the order the records were applied:
  // the encoded records waiting, or -- when they do not fit the `room_bytes`
  // the active zone has left -- a snapshot of the metadata that already
  // includes them.
  struct Batch {
    std::vector<uint8_t> records;  // encoded, empty: nothing to write
    bool snapshot_taken = false;
    std::vector<Record> snapshot;
    FileId next_file_id = 1;
    uint64_t token = 0;  // the taker's; handed to `durable` once written
  };
  using TakeFn = std::function<Batch(uint64_t room_bytes)>;
  using DurableFn = std::function<void(uint64_t token)>;

  // Writes what `take` gives: a group, or a new metadata zone, then calls
  // `durable` with the batch's token (still in order: one commit at a
  // time). Whoever applied records before calling it finds them durable
  // when it returns (written by this commit or by one before).
  FsStatus commit(const TakeFn& take, const DurableFn& durable);
  // Starts the next metadata zone with this snapshot now (after recovery:
  // a torn tail, or records recovery added).
  FsStatus roll(const std::vector<Record>& snapshot, FileId next_file_id);
  bool needs_roll() const { return needs_roll_; }

  // The device bytes a group of `payload_bytes` takes.
  static uint64_t group_bytes(uint64_t payload_bytes, uint64_t block_bytes);

  uint32_t active_zone() const { return zone_; }
  uint64_t sequence() const { return sequence_; }
  uint64_t rolls() const { return rolls_; }
  uint64_t groups() const { return groups_; }

 private:
  // Writes a header holding `snapshot` into the next metadata zone that
  // takes writes, then finishes the zone it leaves (so that only one
  // metadata zone holds an active resource).
  FsStatus start_next_zone(const std::vector<Record>& snapshot, FileId next_file_id);
  FsStatus start_zone(uint32_t zone, const std::vector<Record>& snapshot, FileId next_file_id);

  DeviceIo& io_;
  Superblock sb_;
  std::mutex mutex_;  // one commit at a time
  uint32_t zone_ = 0;
  uint64_t sequence_ = 0;
  uint64_t next_lba_ = 0;
  uint64_t index_ = 0;  // of the next group in the active zone
  uint64_t rolls_ = 0;
  uint64_t groups_ = 0;
  bool needs_roll_ = false;
};

}  // namespace zonelab::fs
