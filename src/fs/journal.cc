// The superblock, metadata-zone headers, record groups and recovery; see
// journal.h. Byte layouts in docs/fs-format.md.
#include "fs/journal.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <optional>

#include "store/bytes.h"

namespace zonelab::fs {
namespace {

constexpr uint8_t kSuperMagic[8] = {'Z', 'L', 'F', 'S', 'S', 'U', 'P', 'R'};
constexpr uint8_t kMetaMagic[8] = {'Z', 'L', 'F', 'S', 'M', 'E', 'T', 'A'};
constexpr uint32_t kGroupMagic = 0x47524C5A;  // "ZLRG"
constexpr uint32_t kFormatVersion = 1;
constexpr uint64_t kSuperblockBytes = 128;
constexpr uint64_t kMetaFixedBytes = 168;  // header fields through snapshot_bytes
constexpr uint64_t kGroupHeaderBytes = 24;
constexpr uint64_t kCrcBytes = 4;

uint64_t round_up(uint64_t value, uint64_t align) { return (value + align - 1) / align * align; }

bool power_of_two(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

}  // namespace

std::string uuid_text(const std::array<uint8_t, 16>& uuid) {
  std::string out;
  for (size_t i = 0; i < uuid.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += fmt::format("{:02x}", uuid[i]);
  }
  return out;
}

std::vector<uint8_t> encode_superblock(const Superblock& sb) {
  ZL_ASSERT(sb.policy.size() <= kPolicyNameBytes);
  std::vector<uint8_t> out;
  ByteWriter w(out);
  w.bytes(kSuperMagic, sizeof kSuperMagic);
  w.u32(kFormatVersion);
  w.bytes(sb.uuid.data(), sb.uuid.size());
  w.u32(sb.block_bytes);
  w.u64(sb.zone_size_lbas);
  w.u64(sb.zone_capacity_lbas);
  w.u32(sb.zone_count);
  w.u32(sb.meta_zones);
  w.u32(sb.finish_threshold_pct);
  w.u32(sb.gc_free_pct);
  std::array<uint8_t, kPolicyNameBytes> policy{};
  std::memcpy(policy.data(), sb.policy.data(), sb.policy.size());
  w.bytes(policy.data(), policy.size());
  out.resize(kSuperblockBytes - kCrcBytes, 0);
  ByteWriter(out).u32(crc32c(out.data(), out.size()));
  ZL_ASSERT(out.size() == kSuperblockBytes);
  return out;
}

FsResult<Superblock> decode_superblock(const uint8_t* bytes, size_t size) {
  auto corrupt = [](const std::string& what) {
    return FsStatus(Code::kCorruption, "superblock: " + what);
  };
  if (size < kSuperblockBytes) return corrupt("cut short");
  if (std::memcmp(bytes, kSuperMagic, sizeof kSuperMagic) != 0) return corrupt("bad magic");
  if (load_u32(bytes + kSuperblockBytes - kCrcBytes) !=
      crc32c(bytes, kSuperblockBytes - kCrcBytes)) {
    return corrupt("checksum mismatch");
  }
  ByteReader r(bytes + 8, kSuperblockBytes - 8);
  uint32_t version = r.u32();
  if (version != kFormatVersion) {
    return corrupt(
        fmt::format("format version {} (this zonelab reads {})", version, kFormatVersion));
  }
  Superblock sb;
  std::memcpy(sb.uuid.data(), r.take(16), 16);
  sb.block_bytes = r.u32();
  sb.zone_size_lbas = r.u64();
  sb.zone_capacity_lbas = r.u64();
  sb.zone_count = r.u32();
  sb.meta_zones = r.u32();
  sb.finish_threshold_pct = r.u32();
  sb.gc_free_pct = r.u32();
  const uint8_t* policy = r.take(kPolicyNameBytes);
  size_t policy_bytes = 0;
  while (policy_bytes < kPolicyNameBytes && policy[policy_bytes] != 0) ++policy_bytes;
  for (size_t i = policy_bytes; i < kPolicyNameBytes; ++i) {
    if (policy[i] != 0) return corrupt("policy name not NUL-padded");
  }
  sb.policy.assign(reinterpret_cast<const char*>(policy), policy_bytes);
  for (char c : sb.policy) {
    if (c < 0x21 || c > 0x7e) return corrupt("policy name not printable");
  }
  if (!power_of_two(sb.block_bytes) || sb.block_bytes < 512 || sb.block_bytes > (1 << 16)) {
    return corrupt(fmt::format("block size {}", sb.block_bytes));
  }
  if (sb.zone_size_lbas == 0 || sb.zone_capacity_lbas == 0 ||
      sb.zone_capacity_lbas > sb.zone_size_lbas) {
    return corrupt(
        fmt::format("zone size {} / capacity {}", sb.zone_size_lbas, sb.zone_capacity_lbas));
  }
  if (sb.meta_zones < kMetaZonesMin || sb.meta_zones > kMetaZonesMax ||
      sb.zone_count <= sb.meta_zones) {
    return corrupt(fmt::format("{} metadata zones of {}", sb.meta_zones, sb.zone_count));
  }
  if (sb.finish_threshold_pct > 100 || sb.gc_free_pct > 100) {
    return corrupt("a percentage above 100");
  }
  const size_t reserved_bytes = r.remaining() - kCrcBytes;
  const uint8_t* reserved = r.take(reserved_bytes);
  if (!std::all_of(reserved, reserved + reserved_bytes, [](uint8_t b) { return b == 0; })) {
    return corrupt("reserved bytes 80..123 not zero");
  }
  return sb;
}

std::vector<uint8_t> encode_meta_header(uint64_t sequence, FileId next_file_id,
                                        const Superblock& sb, const std::vector<Record>& snapshot,
                                        uint64_t block_bytes) {
  std::vector<uint8_t> records;
  for (const Record& r : snapshot) encode_record(r, records);
  std::vector<uint8_t> out;
  ByteWriter w(out);
  w.bytes(kMetaMagic, sizeof kMetaMagic);
  w.u32(kFormatVersion);
  uint64_t total = round_up(kMetaFixedBytes + records.size() + kCrcBytes, block_bytes);
  w.u32(static_cast<uint32_t>(total / block_bytes));
  w.u64(sequence);
  w.u64(next_file_id);
  std::vector<uint8_t> super = encode_superblock(sb);
  w.bytes(super.data(), super.size());
  w.u64(records.size());
  ZL_ASSERT(out.size() == kMetaFixedBytes);
  w.bytes(records.data(), records.size());
  w.u32(crc32c(out.data(), out.size()));
  out.resize(total, 0);
  return out;
}

FsResult<MetaHeader> decode_meta_header(const uint8_t* bytes, size_t size, uint64_t block_bytes,
                                        uint64_t* needed_blocks) {
  auto corrupt = [](const std::string& what) {
    return FsStatus(Code::kCorruption, "metadata header: " + what);
  };
  *needed_blocks = 0;
  if (size < kMetaFixedBytes) return corrupt("cut short");
  if (std::memcmp(bytes, kMetaMagic, sizeof kMetaMagic) != 0) return corrupt("bad magic");
  ByteReader r(bytes + 8, kMetaFixedBytes - 8);
  uint32_t version = r.u32();
  if (version != kFormatVersion) return corrupt(fmt::format("format version {}", version));
  MetaHeader header;
  header.blocks = r.u32();
  header.sequence = r.u64();
  header.next_file_id = r.u64();
  const uint8_t* super = r.take(kSuperblockBytes);
  uint64_t snapshot_bytes = r.u64();
  if (header.blocks == 0 || snapshot_bytes > header.blocks * block_bytes ||
      kMetaFixedBytes + snapshot_bytes + kCrcBytes > header.blocks * block_bytes) {
    return corrupt(
        fmt::format("{} blocks for a snapshot of {} bytes", header.blocks, snapshot_bytes));
  }
  if (size < header.blocks * block_bytes) {
    *needed_blocks = header.blocks;
    return FsStatus(Code::kInvalid, "metadata header: more blocks needed");
  }
  uint64_t crc_at = kMetaFixedBytes + snapshot_bytes;
  if (load_u32(bytes + crc_at) != crc32c(bytes, crc_at)) return corrupt("checksum mismatch");
  auto sb = decode_superblock(super, kSuperblockBytes);
  if (!sb) return sb.status();
  header.superblock = *sb;
  if (header.superblock.block_bytes != block_bytes) {
    return corrupt(
        fmt::format("block size {} on a device of {}", header.superblock.block_bytes, block_bytes));
  }
  auto records = decode_records(bytes + kMetaFixedBytes, snapshot_bytes);
  if (!records) return records.status();
  header.snapshot = std::move(records).value();
  if (header.sequence == 0 || header.next_file_id == 0) return corrupt("sequence or file id 0");
  return header;
}

uint64_t Journal::group_bytes(uint64_t payload_bytes, uint64_t block_bytes) {
  return round_up(kGroupHeaderBytes + payload_bytes + kCrcBytes, block_bytes);
}

std::vector<uint8_t> encode_group(uint64_t sequence, uint64_t index,
                                  const std::vector<uint8_t>& records, uint64_t block_bytes) {
  std::vector<uint8_t> out;
  ByteWriter w(out);
  w.u32(kGroupMagic);
  w.u32(static_cast<uint32_t>(records.size()));
  w.u64(sequence);
  w.u64(index);
  w.bytes(records.data(), records.size());
  w.u32(crc32c(out.data(), out.size()));
  out.resize(Journal::group_bytes(records.size(), block_bytes), 0);
  return out;
}

FsStatus Journal::format(DeviceIo& io, const Superblock& sb, const std::vector<Record>& snapshot) {
  for (uint32_t z = 0; z < sb.meta_zones; ++z) {
    if (io.zone(z).state == ZoneState::kEmpty) continue;
    if (FsStatus ok = io.reset(z); !ok) return ok;
  }
  std::vector<uint8_t> header = encode_meta_header(1, 1, sb, snapshot, io.block_bytes());
  if (FsStatus ok = io.write(io.zone_start(0), header.data(), header.size() / io.block_bytes(),
                             WriteCause::kMeta);
      !ok) {
    return ok;
  }
  return io.flush();
}

namespace {

// The LBAs a zone holds data up to, as its write pointer says.
uint64_t written_end(DeviceIo& io, uint32_t zone) {
  ZoneDescriptor d = io.zone(zone);
  if (d.state == ZoneState::kFull) return d.start_lba + d.capacity_lbas;
  if (d.state == ZoneState::kEmpty || d.state == ZoneState::kOffline) return d.start_lba;
  return d.wp_lba;
}

// The header at the start of a metadata zone, if one checks.
FsResult<MetaHeader> read_header(DeviceIo& io, uint32_t zone) {
  uint64_t start = io.zone_start(zone);
  uint64_t end = written_end(io, zone);
  if (end == start) return FsStatus(Code::kNotFound, "empty");
  const uint64_t bs = io.block_bytes();
  std::vector<uint8_t> block(bs);
  if (FsStatus ok = io.read(start, block.data(), 1); !ok) return ok;
  if (std::memcmp(block.data(), kMetaMagic, sizeof kMetaMagic) != 0) {
    return FsStatus(Code::kNotFound, "no metadata header");
  }
  uint64_t needed = 0;
  auto header = decode_meta_header(block.data(), block.size(), bs, &needed);
  if (header.ok() || needed == 0) return header;
  if (start + needed > end) {
    return FsStatus(Code::kCorruption, "metadata header: longer than the zone's written data");
  }
  std::vector<uint8_t> whole(needed * bs);
  if (FsStatus ok = io.read(start, whole.data(), needed); !ok) return ok;
  return decode_meta_header(whole.data(), whole.size(), bs, &needed);
}

// One group read at `lba`, or why there is none there.
struct GroupRead {
  std::vector<Record> records;
  uint64_t index = 0;
  uint64_t blocks = 0;
  std::string problem;  // empty: the group checks
  bool blank = false;   // no group: the block is all zeros
  // The group runs past the write pointer: a write a crash cut short (a
  // group above one command's size goes in several). Anything else that
  // does not check below the write pointer is damage.
  bool torn = false;
};

// `index`: the group expected here, or nullopt to take any index (a scan).
FsResult<GroupRead> read_group(DeviceIo& io, uint64_t lba, uint64_t end, uint64_t sequence,
                               std::optional<uint64_t> index) {
  const uint64_t bs = io.block_bytes();
  GroupRead out;
  std::vector<uint8_t> block(bs);
  if (FsStatus ok = io.read(lba, block.data(), 1); !ok) return ok;
  ByteReader r(block.data(), block.size());
  uint32_t magic = r.u32();
  uint32_t payload = r.u32();
  uint64_t group_sequence = r.u64();
  out.index = r.u64();
  if (magic != kGroupMagic || group_sequence != sequence || (index && out.index != *index)) {
    out.problem = "no group";
    out.blank = std::all_of(block.begin(), block.end(), [](uint8_t b) { return b == 0; });
    return out;
  }
  uint64_t bytes = Journal::group_bytes(payload, bs);
  if (payload > Journal::kGroupBytesMax) {
    out.problem = fmt::format("a group of {} bytes", payload);
    return out;
  }
  if (lba + bytes / bs > end) {
    out.problem = fmt::format("a group of {} bytes past the write pointer", payload);
    out.torn = true;
    return out;
  }
  std::vector<uint8_t> group(bytes);
  if (FsStatus ok = io.read(lba, group.data(), bytes / bs); !ok) return ok;
  uint64_t crc_at = kGroupHeaderBytes + payload;
  if (load_u32(group.data() + crc_at) != crc32c(group.data(), crc_at)) {
    out.problem = "a group whose checksum does not match";
    return out;
  }
  auto records = decode_records(group.data() + kGroupHeaderBytes, payload);
  if (!records) {
    out.problem = records.status().message();
    return out;
  }
  out.records = std::move(records).value();
  out.blocks = bytes / bs;
  return out;
}

// After damage at some LBA: the groups of the same header that still check
// between `from` and the write pointer, block by block (a damaged group's
// length cannot be trusted). Bounded by the zone's written blocks.
FsStatus scan_after_damage(DeviceIo& io, uint64_t from, uint64_t end, Recovered& out) {
  std::optional<uint64_t> last_index;
  for (uint64_t lba = from; lba < end;) {
    auto group = read_group(io, lba, end, out.header.sequence, std::nullopt);
    if (!group) return group.status();
    bool after = !last_index || group->index > *last_index;
    if (!group->problem.empty() || !after || group->index < out.groups) {
      ++lba;
      continue;
    }
    last_index = group->index;
    ++out.groups_after_damage;
    for (Record& rec : group->records) out.records_after_damage.push_back(std::move(rec));
    lba += group->blocks;
  }
  return {};
}

}  // namespace

FsResult<Recovered> Journal::recover(DeviceIo& io) {
  Recovered out;
  // The superblock comes from zones 0 and 1, always metadata zones; it says
  // how many more there are.
  std::optional<std::pair<uint32_t, MetaHeader>> best;
  std::string why[2];
  bool any_header = false;  // a zone begins with a header's magic
  auto consider = [&](uint32_t zone, const FsResult<MetaHeader>& header) {
    if (!header) return;
    if (best && best->second.superblock.uuid != header->superblock.uuid) {
      out.problems.push_back(
          fmt::format("metadata zone {}: a header of another file system", zone));
      return;
    }
    if (!best || header->sequence > best->second.sequence) best = {zone, *header};
  };
  for (uint32_t z = 0; z < std::min<uint32_t>(2, io.zone_count()); ++z) {
    auto header = read_header(io, z);
    // The device failing a read is its error, not damage to the file system.
    if (!header && header.status().code() == Code::kIoError) return header.status();
    if (!header) why[z] = header.status().message();
    any_header = any_header || header.ok() || header.status().code() != Code::kNotFound;
    consider(z, header);
  }
  if (!best && !any_header) {
    return FsStatus(Code::kNotFound,
                    fmt::format("no zoned file system here (zone 0: {}; zone 1: {}); run zonelab "
                                "mkfs first",
                                why[0], why[1]));
  }
  if (!best) {
    return FsStatus(Code::kCorruption,
                    fmt::format("the zoned file system here is damaged: no metadata header checks "
                                "(zone 0: {}; zone 1: {})",
                                why[0], why[1]));
  }
  const Superblock sb = best->second.superblock;
  if (sb.zone_count != io.zone_count() || sb.zone_size_lbas != io.zone_size_lbas() ||
      sb.zone_capacity_lbas != io.zone_capacity_lbas()) {
    return FsStatus(Code::kCorruption,
                    fmt::format("superblock: made for {} zones of {}/{} LBAs, the device has {} "
                                "of {}/{}",
                                sb.zone_count, sb.zone_size_lbas, sb.zone_capacity_lbas,
                                io.zone_count(), io.zone_size_lbas(), io.zone_capacity_lbas()));
  }
  for (uint32_t z = 2; z < sb.meta_zones; ++z) {
    auto header = read_header(io, z);
    if (!header && header.status().code() == Code::kIoError) return header.status();
    consider(z, header);
  }
  out.zone = best->first;
  out.header = std::move(best->second);

  // The groups after the header, up to the write pointer.
  uint64_t lba = io.zone_start(out.zone) + out.header.blocks;
  const uint64_t end = written_end(io, out.zone);
  while (lba < end) {
    auto group = read_group(io, lba, end, out.header.sequence, out.groups);
    if (!group) return group.status();
    // A zone finished before the journal filled it reads as zeros past its
    // last group: the end of the journal, not damage.
    if (group->blank && io.zone(out.zone).state == ZoneState::kFull) break;
    if (!group->problem.empty()) {
      const std::string what = fmt::format(
          "journal: {} at LBA {} of metadata zone {}; {} blocks up to the write "
          "pointer are not replayed",
          group->problem, lba, out.zone, end - lba);
      out.problems.push_back(what);
      // A torn group is the last thing in the zone; a group that checks
      // after it says its length was damaged instead.
      if (FsStatus ok = scan_after_damage(io, lba + 1, end, out); !ok) return ok;
      if (!group->torn || out.groups_after_damage > 0) out.damage = what;
      break;
    }
    for (Record& rec : group->records) out.records.push_back(std::move(rec));
    ++out.groups;
    lba += group->blocks;
  }
  out.next_lba = lba;
  out.needs_roll = lba != end || end == io.zone_start(out.zone) + io.zone_capacity_lbas() ||
                   io.zone(out.zone).state == ZoneState::kFull;
  return out;
}

Journal::Journal(DeviceIo& io, const Superblock& sb, const Recovered& recovered)
    : io_(io),
      sb_(sb),
      zone_(recovered.zone),
      sequence_(recovered.header.sequence),
      next_lba_(recovered.next_lba),
      index_(recovered.groups),
      needs_roll_(recovered.needs_roll) {}

FsStatus Journal::start_zone(uint32_t zone, const std::vector<Record>& snapshot,
                             FileId next_file_id) {
  const uint64_t bs = io_.block_bytes();
  std::vector<uint8_t> header = encode_meta_header(sequence_ + 1, next_file_id, sb_, snapshot, bs);
  uint64_t blocks = header.size() / bs;
  if (blocks > io_.zone_capacity_lbas()) {
    return FsStatus(Code::kNoSpace,
                    fmt::format("the metadata ({} bytes) no longer fits a metadata zone ({} bytes)",
                                header.size(), io_.zone_capacity_lbas() * bs));
  }
  if (io_.zone(zone).state != ZoneState::kEmpty) {
    if (FsStatus ok = io_.reset(zone); !ok) return ok;
  }
  if (FsStatus ok = io_.write(io_.zone_start(zone), header.data(), blocks, WriteCause::kMeta);
      !ok) {
    return ok;
  }
  if (FsStatus ok = io_.flush(); !ok) return ok;
  zone_ = zone;
  ++sequence_;
  next_lba_ = io_.zone_start(zone) + blocks;
  index_ = 0;
  ++rolls_;
  needs_roll_ = false;
  return {};
}

FsStatus Journal::start_next_zone(const std::vector<Record>& snapshot, FileId next_file_id) {
  const uint32_t old = zone_;
  for (uint32_t step = 1; step <= sb_.meta_zones; ++step) {
    uint32_t zone = (zone_ + step) % sb_.meta_zones;
    ZoneState state = io_.zone(zone).state;
    if (state == ZoneState::kOffline || state == ZoneState::kReadOnly) continue;
    // The zone left is finished first: it keeps its header and groups (the
    // journal until the next zone's header is written, which a crash in
    // between leaves so) and gives back its active resource, which the next
    // zone needs when data zones hold every other one -- as a crash leaves
    // them, or writers at their limit.
    if (old != zone && zone_is_active(io_.zone(old).state)) {
      needs_roll_ = true;  // a full zone takes no more groups, whatever follows
      if (FsStatus ok = io_.finish(old); !ok) return ok;
    }
    return start_zone(zone, snapshot, next_file_id);
  }
  return FsStatus(Code::kIoError, "no metadata zone can take writes");
}

FsStatus Journal::roll(const std::vector<Record>& snapshot, FileId next_file_id) {
  std::lock_guard lock(mutex_);
  return start_next_zone(snapshot, next_file_id);
}

FsStatus Journal::commit(const TakeFn& take, const DurableFn& durable) {
  std::lock_guard lock(mutex_);
  const uint64_t bs = io_.block_bytes();
  uint64_t zone_end = io_.zone_start(zone_) + io_.zone_capacity_lbas();
  uint64_t room = (zone_end - next_lba_) * bs;
  if (needs_roll_) room = 0;
  Batch batch = take(std::min(room, kGroupBytesMax + kGroupHeaderBytes + kCrcBytes));
  // On a device with a volatile write cache, the data the records describe
  // is made durable before the records are written, and the records before
  // the batch counts as durable (each a Flush, only when something was
  // written since the last).
  if (FsStatus ok = io_.flush(); !ok) return ok;
  if (batch.snapshot_taken) {
    FsStatus ok = start_next_zone(batch.snapshot, batch.next_file_id);  // flushed
    if (ok) durable(batch.token);
    return ok;
  }
  if (batch.records.empty()) {
    durable(batch.token);
    return {};
  }
  std::vector<uint8_t> group = encode_group(sequence_, index_, batch.records, bs);
  ZL_ASSERT(group.size() <= room);
  if (FsStatus ok = io_.write(next_lba_, group.data(), group.size() / bs, WriteCause::kMeta); !ok) {
    return ok;
  }
  next_lba_ += group.size() / bs;
  ++index_;
  ++groups_;
  if (FsStatus ok = io_.flush(); !ok) return ok;
  durable(batch.token);
  return {};
}

}  // namespace zonelab::fs
