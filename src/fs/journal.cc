// The superblock, metadata-zone headers, record groups and recovery; see
// journal.h. Byte layouts in docs/fs-format.md.
#include "fs/journal.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <optional>

#include "fs/placement.h"
#include "store/bytes.h"

namespace zonelab::fs {
namespace {

constexpr uint8_t kSuperMagic[8] = {'Z', 'L', 'F', 'S', 'S', 'U', 'P', 'R'};
constexpr uint8_t kMetaMagic[8] = {'Z', 'L', 'F', 'S', 'M', 'E', 'T', 'A'};
constexpr uint32_t kGroupMagic = 0x47524C5A;  // "ZLRG"
constexpr uint32_t kFormatVersion = 1;        // a namespace of equal zones
constexpr uint32_t kFormatVersionSets = 2;    // zone sets of several sizes
constexpr uint64_t kSuperblockBytes = 128;    // version 1; version 2's first part
constexpr uint64_t kSuperZoneSetBytes = 20;
constexpr uint64_t kSuperTenantBytes = kTenantNameBytes + 4;
// A metadata header's fields before the superblock (magic, version, length,
// sequence, next file id), and after it (the snapshot's length).
constexpr uint64_t kMetaBeforeSuperBytes = 32;
constexpr uint64_t kMetaAfterSuperBytes = 8;
constexpr uint64_t kMetaFixedBytes = 168;  // version 1: header fields through snapshot_bytes
constexpr uint64_t kGroupHeaderBytes = 24;
constexpr uint64_t kCrcBytes = 4;

uint64_t round_up(uint64_t value, uint64_t align) { return (value + align - 1) / align * align; }

bool power_of_two(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

}  // namespace

std::vector<SuperZoneSet> super_zone_sets(const DeviceIo& io) {
  std::vector<SuperZoneSet> out;
  if (io.info().uniform_zones()) return out;
  for (const ZoneSetInfo& set : io.info().zone_sets) {
    out.push_back(SuperZoneSet{set.zone_size_lbas, set.zone_capacity_lbas, set.zone_count});
  }
  return out;
}

std::string zone_sets_text(const std::vector<SuperZoneSet>& sets, uint64_t size_lbas,
                           uint64_t capacity_lbas, uint32_t count) {
  if (sets.empty()) return fmt::format("{}x{}/{} blocks", count, size_lbas, capacity_lbas);
  std::string out;
  for (const SuperZoneSet& set : sets) {
    if (!out.empty()) out += ",";
    out += fmt::format("{}x{}/{}", set.count, set.size_lbas, set.capacity_lbas);
  }
  return out + " blocks";
}

std::string zone_sets_text(const Superblock& sb) {
  return zone_sets_text(sb.zone_sets, sb.zone_size_lbas, sb.zone_capacity_lbas, sb.zone_count);
}

std::string zone_sets_text(const std::vector<SuperZoneSet>& sets, const DeviceInfo& info) {
  return zone_sets_text(sets, info.zone_size_lbas, info.zone_capacity_lbas, info.zone_count);
}

std::string uuid_text(const std::array<uint8_t, 16>& uuid) {
  std::string out;
  for (size_t i = 0; i < uuid.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += fmt::format("{:02x}", uuid[i]);
  }
  return out;
}

namespace {

uint32_t format_version(const Superblock& sb) {
  return sb.zone_sets.empty() ? kFormatVersion : kFormatVersionSets;
}

}  // namespace

namespace {

// A version-2 superblock's length from its set and tenant counts.
uint64_t superblock_v2_bytes(uint64_t sets, uint64_t tenants) {
  return kSuperblockBytes + sets * kSuperZoneSetBytes + tenants * kSuperTenantBytes + kCrcBytes;
}

}  // namespace

uint64_t superblock_bytes(const Superblock& sb) {
  if (sb.zone_sets.empty()) return kSuperblockBytes;
  return superblock_v2_bytes(sb.zone_sets.size(), sb.tenants.size());
}

std::string tenant_name_problem(std::string_view name) {
  if (name.empty()) return "a tenant needs a name";
  if (name.size() > kTenantNameBytes) {
    return fmt::format("tenant name '{}': at most {} characters", one_line(name, 40),
                       kTenantNameBytes);
  }
  if (name == "." || name == "..")
    return fmt::format("tenant name '{}': not a directory name", name);
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.') {
      return fmt::format("tenant name '{}': only letters, digits, '_', '-' and '.'",
                         one_line(name, 40));
    }
  }
  return {};
}

std::vector<uint8_t> encode_superblock(const Superblock& sb) {
  ZL_ASSERT(sb.policy.size() <= kPolicyNameBytes);
  ZL_ASSERT(sb.zone_sets.size() != 1 && sb.zone_sets.size() <= kSuperZoneSetsMax);
  std::vector<uint8_t> out;
  ByteWriter w(out);
  w.bytes(kSuperMagic, sizeof kSuperMagic);
  w.u32(format_version(sb));
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
  ZL_ASSERT(!sb.zone_sets.empty() ||
            (sb.hot_set == kNoHotSet && sb.hot_levels == 0 && sb.spill_cold == 0));
  if (!sb.zone_sets.empty()) {
    w.u32(static_cast<uint32_t>(sb.zone_sets.size()));
    w.u32(sb.hot_set);
    w.u32(sb.hot_levels);
    w.u32(static_cast<uint32_t>(sb.tenants.size()));
    w.u32(sb.spill_cold);
  }
  ZL_ASSERT(sb.tenants.size() <= kTenantsMax && (sb.tenants.empty() || !sb.zone_sets.empty()));
  out.resize(kSuperblockBytes - kCrcBytes, 0);
  ByteWriter(out).u32(crc32c(out.data(), out.size()));
  ZL_ASSERT(out.size() == kSuperblockBytes);
  if (!sb.zone_sets.empty()) {
    ByteWriter sets(out);
    for (const SuperZoneSet& set : sb.zone_sets) {
      sets.u64(set.size_lbas);
      sets.u64(set.capacity_lbas);
      sets.u32(set.count);
    }
    for (const SuperTenant& t : sb.tenants) {
      ZL_ASSERT(t.name.size() <= kTenantNameBytes);
      std::array<uint8_t, kTenantNameBytes> name{};
      std::memcpy(name.data(), t.name.data(), t.name.size());
      sets.bytes(name.data(), name.size());
      sets.u32(t.sets);
    }
    sets.u32(crc32c(out.data() + kSuperblockBytes, out.size() - kSuperblockBytes));
  }
  ZL_ASSERT(out.size() == superblock_bytes(sb));
  return out;
}

namespace {

// A version-2 superblock's zone sets, after its first 128 bytes: `count`
// sets and their CRC-32C, each checked.
FsStatus decode_zone_sets(const uint8_t* bytes, size_t size, uint32_t count, uint32_t tenants,
                          Superblock& sb) {
  auto corrupt = [](const std::string& what) {
    return FsStatus(Code::kCorruption, "superblock: " + what);
  };
  const uint64_t table =
      uint64_t{count} * kSuperZoneSetBytes + uint64_t{tenants} * kSuperTenantBytes;
  if (size < table + kCrcBytes) return corrupt("zone sets cut short");
  if (load_u32(bytes + table) != crc32c(bytes, table))
    return corrupt("zone sets checksum mismatch");
  ByteReader r(bytes, table);
  uint64_t zones = 0;
  for (uint32_t i = 0; i < count; ++i) {
    SuperZoneSet set;
    set.size_lbas = r.u64();
    set.capacity_lbas = r.u64();
    set.count = r.u32();
    if (set.size_lbas == 0 || set.capacity_lbas == 0 || set.capacity_lbas > set.size_lbas ||
        set.count == 0) {
      return corrupt(fmt::format("zone set {}: {} zones of size {} / capacity {}", i, set.count,
                                 set.size_lbas, set.capacity_lbas));
    }
    zones += set.count;
    sb.zone_sets.push_back(set);
  }
  if (zones != sb.zone_count) {
    return corrupt(fmt::format("zone sets of {} zones in all, of {}", zones, sb.zone_count));
  }
  if (sb.zone_sets.front().size_lbas != sb.zone_size_lbas ||
      sb.zone_sets.front().capacity_lbas != sb.zone_capacity_lbas) {
    return corrupt("the first zone set is not the superblock's zone size and capacity");
  }
  uint32_t owned = 0;
  for (uint32_t i = 0; i < tenants; ++i) {
    SuperTenant t;
    const uint8_t* name = r.take(kTenantNameBytes);
    size_t name_bytes = 0;
    while (name_bytes < kTenantNameBytes && name[name_bytes] != 0) ++name_bytes;
    if (!std::all_of(name + name_bytes, name + kTenantNameBytes,
                     [](uint8_t b) { return b == 0; })) {
      return corrupt(fmt::format("tenant {}: name not NUL-padded", i));
    }
    t.name.assign(reinterpret_cast<const char*>(name), name_bytes);
    t.sets = r.u32();
    if (std::string why = tenant_name_problem(t.name); !why.empty()) {
      return corrupt(fmt::format("tenant {}: {}", i, why));
    }
    if (t.sets == 0 || (t.sets >> count) != 0 || (t.sets & owned) != 0) {
      return corrupt(fmt::format("tenant {}: zone sets {:#x} of {} ({:#x} taken)", t.name, t.sets,
                                 count, owned));
    }
    owned |= t.sets;
    for (const SuperTenant& other : sb.tenants) {
      if (other.name == t.name) return corrupt(fmt::format("tenant {} twice", t.name));
    }
    sb.tenants.push_back(std::move(t));
  }
  return {};
}

}  // namespace

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
  if (version != kFormatVersion && version != kFormatVersionSets) {
    return corrupt(fmt::format("format version {} (this zonelab reads {} and {})", version,
                               kFormatVersion, kFormatVersionSets));
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
  uint32_t set_count = 0;
  uint32_t tenant_count = 0;
  if (version == kFormatVersionSets) {
    set_count = r.u32();
    if (set_count < 2 || set_count > kSuperZoneSetsMax) {
      return corrupt(fmt::format("{} zone sets (2 to {})", set_count, kSuperZoneSetsMax));
    }
    sb.hot_set = r.u32();
    sb.hot_levels = r.u32();
    if (sb.hot_set != kNoHotSet && sb.hot_set >= set_count) {
      return corrupt(fmt::format("hot set {} of {} zone sets", sb.hot_set, set_count));
    }
    if ((sb.hot_levels & ~kAllLevels) != 0 || (sb.hot_set == kNoHotSet && sb.hot_levels != 0)) {
      return corrupt(fmt::format("hot levels {:#x}", sb.hot_levels));
    }
    tenant_count = r.u32();
    if (tenant_count > kTenantsMax) {
      return corrupt(fmt::format("{} tenants (at most {})", tenant_count, kTenantsMax));
    }
    sb.spill_cold = r.u32();
    if (sb.spill_cold > 1 || (sb.hot_set == kNoHotSet && sb.spill_cold != 0)) {
      return corrupt(fmt::format("spill cold {}", sb.spill_cold));
    }
  }
  const size_t reserved_bytes = r.remaining() - kCrcBytes;
  const uint8_t* reserved = r.take(reserved_bytes);
  if (!std::all_of(reserved, reserved + reserved_bytes, [](uint8_t b) { return b == 0; })) {
    return corrupt(version == kFormatVersion ? "reserved bytes 80..123 not zero"
                                             : "reserved bytes 100..123 not zero");
  }
  if (set_count != 0) {
    if (FsStatus ok = decode_zone_sets(bytes + kSuperblockBytes, size - kSuperblockBytes, set_count,
                                       tenant_count, sb);
        !ok) {
      return ok;
    }
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
  w.u32(format_version(sb));
  const uint64_t fixed = kMetaBeforeSuperBytes + superblock_bytes(sb) + kMetaAfterSuperBytes;
  uint64_t total = round_up(fixed + records.size() + kCrcBytes, block_bytes);
  w.u32(static_cast<uint32_t>(total / block_bytes));
  w.u64(sequence);
  w.u64(next_file_id);
  std::vector<uint8_t> super = encode_superblock(sb);
  w.bytes(super.data(), super.size());
  w.u64(records.size());
  ZL_ASSERT(out.size() == fixed);
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
  uint32_t version = load_u32(bytes + 8);
  if (version != kFormatVersion && version != kFormatVersionSets) {
    return corrupt(fmt::format("format version {}", version));
  }
  // Version 2's superblock is longer by its zone sets and tenants (counts at
  // its bytes 80 and 92, checked with the rest of it below).
  uint64_t super_bytes = kSuperblockBytes;
  if (version == kFormatVersionSets) {
    const uint32_t sets = load_u32(bytes + kMetaBeforeSuperBytes + 80);
    const uint32_t tenants = load_u32(bytes + kMetaBeforeSuperBytes + 92);
    if (sets < 2 || sets > kSuperZoneSetsMax) {
      return corrupt(fmt::format("{} zone sets (2 to {})", sets, kSuperZoneSetsMax));
    }
    if (tenants > kTenantsMax) {
      return corrupt(fmt::format("{} tenants (at most {})", tenants, kTenantsMax));
    }
    super_bytes = superblock_v2_bytes(sets, tenants);
  }
  const uint64_t fixed = kMetaBeforeSuperBytes + super_bytes + kMetaAfterSuperBytes;
  if (size < fixed) return corrupt("cut short");
  ByteReader r(bytes + 12, fixed - 12);
  MetaHeader header;
  header.blocks = r.u32();
  header.sequence = r.u64();
  header.next_file_id = r.u64();
  const uint8_t* super = r.take(super_bytes);
  uint64_t snapshot_bytes = r.u64();
  if (header.blocks == 0 || snapshot_bytes > header.blocks * block_bytes ||
      fixed + snapshot_bytes + kCrcBytes > header.blocks * block_bytes) {
    return corrupt(
        fmt::format("{} blocks for a snapshot of {} bytes", header.blocks, snapshot_bytes));
  }
  if (size < header.blocks * block_bytes) {
    *needed_blocks = header.blocks;
    return FsStatus(Code::kInvalid, "metadata header: more blocks needed");
  }
  uint64_t crc_at = fixed + snapshot_bytes;
  if (load_u32(bytes + crc_at) != crc32c(bytes, crc_at)) return corrupt("checksum mismatch");
  auto sb = decode_superblock(super, super_bytes);
  if (!sb) return sb.status();
  if (format_version(*sb) != version) {
    return corrupt(fmt::format("format version {} beside a superblock of version {}", version,
                               format_version(*sb)));
  }
  header.superblock = *sb;
  if (header.superblock.block_bytes != block_bytes) {
    return corrupt(
        fmt::format("block size {} on a device of {}", header.superblock.block_bytes, block_bytes));
  }
  auto records = decode_records(bytes + fixed, snapshot_bytes);
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
  const std::vector<SuperZoneSet> device_sets = super_zone_sets(io);
  if (sb.zone_count != io.zone_count() || sb.zone_size_lbas != io.info().zone_size_lbas ||
      sb.zone_capacity_lbas != io.info().zone_capacity_lbas || sb.zone_sets != device_sets) {
    return FsStatus(Code::kCorruption,
                    fmt::format("superblock: made for zones {}, the device has {}",
                                zone_sets_text(sb), zone_sets_text(device_sets, io.info())));
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
  out.needs_roll = lba != end || end == io.zone_start(out.zone) + io.zone_capacity_of(out.zone) ||
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
  if (blocks > io_.zone_capacity_of(zone)) {
    return FsStatus(Code::kNoSpace,
                    fmt::format("the metadata ({} bytes) no longer fits a metadata zone ({} bytes)",
                                header.size(), io_.zone_capacity_of(zone) * bs));
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
  uint64_t zone_end = io_.zone_start(zone_) + io_.zone_capacity_of(zone_);
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
