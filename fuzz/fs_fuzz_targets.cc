// The zoned file system's fuzz targets (see fuzz_targets.h): its journal
// records, its superblock and metadata-zone header, and recovery from a
// journal of arbitrary records on a real (memory-backed) device.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "fs/izg.h"
#include "fs/journal.h"
#include "fs/metadata.h"
#include "fs/placement.h"
#include "fs/zoned_fs.h"
#include "fuzz_targets.h"
#include "stack/stack.h"
#include "zonelab/config.h"

namespace zonelab {
namespace {

constexpr uint64_t kBlockBytes = 4096;

// A small zoned device in memory: 16 zones of 64 KiB.
Config fuzz_device_config() {
  Config c = *preset_config("small");
  for (const char* kv :
       {"store.backing=memory", "flash.channels=1", "flash.dies_per_channel=1",
        "flash.planes_per_die=1", "flash.blocks_per_plane=16", "flash.pages_per_block=4",
        "flash.page_size=16KiB", "host.lba_size=4KiB", "zns.channels_per_zone=1",
        "zns.dies_per_zone=1", "zns.zone_capacity=64KiB", "zns.zone_size=64KiB", "zns.zone_count=0",
        "zns.max_open=0", "zns.max_active=0", "zns.zasl=64KiB", "zns.finish.granularity=0"}) {
    if (!apply_override(c, kv).ok())
      fuzz_violated("fs-journal", std::string("bad test config ") + kv);
  }
  return c;
}

}  // namespace

int fuzz_fs_records(const uint8_t* data, size_t size) {
  auto records = fs::decode_records(data, size);
  if (!records) {
    fuzz_check_message("fs-records", records.status().message());
    return 0;
  }
  // What decodes encodes back to the same bytes.
  std::vector<uint8_t> again;
  for (const fs::Record& r : *records) fs::encode_record(r, again);
  if (again != std::vector<uint8_t>(data, data + size)) {
    fuzz_violated("fs-records", "records changed in a round trip");
  }
  // Applied in turn: each is taken or refused with one line; what is taken
  // is rebuilt exactly by its snapshot.
  fs::Metadata meta;
  for (const fs::Record& r : *records) {
    fs::FsStatus applied = meta.apply(r, kBlockBytes);
    if (!applied) fuzz_check_message("fs-records", applied.message());
  }
  fs::Metadata copy;
  for (const fs::Record& r : meta.snapshot()) {
    fs::FsStatus applied = copy.apply(r, kBlockBytes);
    if (!applied) fuzz_violated("fs-records", "a snapshot record is refused: " + applied.message());
  }
  if (copy.snapshot() != meta.snapshot())
    fuzz_violated("fs-records", "a snapshot rebuilt differently");
  return 0;
}

int fuzz_fs_policy(const uint8_t* data, size_t size) {
  if (size < 3) return 0;
  const auto& policies = fs::placement_policies();
  const fs::PolicyEntry& entry = policies[data[0] % policies.size()];
  const uint32_t zones = 1 + (uint32_t{data[1]} | uint32_t{data[2]} << 8);
  std::string_view text(reinterpret_cast<const char*>(data + 3), size - 3);
  fs::PolicyContext context{zones, 2};
  auto policy = fs::make_placement_policy(entry.name, text, context);
  if (!policy) {
    fuzz_check_message("fs-policy", policy.status().message());
  } else {
    std::string state = (*policy)->state_text();
    auto again = fs::make_placement_policy(entry.name, state, context);
    if (!again)
      fuzz_violated("fs-policy", "a stored state is refused: " + again.status().message());
    if ((*again)->state_text() != state) fuzz_violated("fs-policy", "a stored state changed");
  }
  auto map = fs::IzgMap::decode(text, zones);
  if (!map) {
    fuzz_check_message("fs-policy", map.status().message());
  } else {
    auto back = fs::IzgMap::decode(map->encode(), zones);
    if (!back || back->group != map->group || back->groups != map->groups) {
      fuzz_violated("fs-policy", "an IZG map changed in a round trip");
    }
  }
  return 0;
}

int fuzz_fs_superblock(const uint8_t* data, size_t size) {
  auto sb = fs::decode_superblock(data, size);
  if (!sb) {
    fuzz_check_message("fs-superblock", sb.status().message());
  } else {
    std::vector<uint8_t> again = fs::encode_superblock(*sb);
    if (again.size() > size || !std::equal(again.begin(), again.end(), data)) {
      fuzz_violated("fs-superblock", "a superblock changed in a round trip");
    }
  }
  uint64_t needed = 0;
  auto header = fs::decode_meta_header(data, size, kBlockBytes, &needed);
  if (!header) {
    fuzz_check_message("fs-superblock", header.status().message());
    if (needed != 0 && needed * kBlockBytes <= size) {
      fuzz_violated("fs-superblock", "more blocks asked for than the bytes hold");
    }
    return 0;
  }
  std::vector<uint8_t> again = fs::encode_meta_header(
      header->sequence, header->next_file_id, header->superblock, header->snapshot, kBlockBytes);
  if (again.size() != header->blocks * kBlockBytes) {
    fuzz_violated("fs-superblock", "a header's length changed in a round trip");
  }
  return 0;
}

namespace {

// A byte of the encoded journal (groups after the header) changed: XORed
// with `mask` at `offset`.
struct Flip {
  size_t offset = 0;
  uint8_t mask = 0;
};

// Writes, on a fresh file system of the fuzz device, a journal of the
// records `data` holds (byte 0: how many open the header's snapshot; byte
// 1: records per group; then encoded records) with `flips` applied to its
// groups' bytes. False when the input makes no journal.
bool write_journal(Stack& stack, const uint8_t* data, size_t size, const std::vector<Flip>& flips,
                   const char* target) {
  if (size < 2) return false;
  const size_t in_snapshot = data[0];
  const size_t group = 1 + data[1] % 8;
  auto records = fs::decode_records(data + 2, size - 2);
  if (!records) return false;
  fs::MkfsOptions mkfs;
  mkfs.uuid_seed = 1;
  if (!fs::ZonedFs::mkfs(stack, mkfs)) fuzz_violated(target, "mkfs failed");
  fs::StackDevice stack_device(stack);
  fs::DeviceIo io(stack_device);
  // Some data for extents to point at: the first data zone half written.
  std::vector<uint8_t> blocks(8 * kBlockBytes, 0x5a);
  if (!io.write(io.zone_start(2), blocks.data(), 8, fs::WriteCause::kData)) {
    fuzz_violated(target, "data write failed");
  }
  auto found = fs::Journal::recover(io);
  if (!found) fuzz_violated(target, "no journal after mkfs");
  const fs::Superblock sb = found->header.superblock;
  if (!io.reset(0)) fuzz_violated(target, "reset failed");
  size_t split = std::min(in_snapshot, records->size());
  std::vector<fs::Record> snapshot(records->begin(), records->begin() + static_cast<long>(split));
  std::vector<uint8_t> header = fs::encode_meta_header(2, 1, sb, snapshot, kBlockBytes);
  const uint64_t start = io.zone_start(0);
  const uint64_t end = start + io.zone_capacity_of(0);
  if (header.size() / kBlockBytes > io.zone_capacity_of(0)) return false;
  std::vector<uint8_t> groups;
  uint64_t index = 0;
  for (size_t i = split; i < records->size(); i += group) {
    std::vector<uint8_t> payload;
    for (size_t j = i; j < std::min(records->size(), i + group); ++j) {
      fs::encode_record((*records)[j], payload);
    }
    std::vector<uint8_t> bytes = fs::encode_group(2, index++, payload, kBlockBytes);
    if (start + (header.size() + groups.size() + bytes.size()) / kBlockBytes > end) break;
    groups.insert(groups.end(), bytes.begin(), bytes.end());
  }
  for (const Flip& f : flips) {
    if (!groups.empty()) groups[f.offset % groups.size()] ^= f.mask;
  }
  std::vector<uint8_t> zone = header;
  zone.insert(zone.end(), groups.begin(), groups.end());
  return io.write(start, zone.data(), zone.size() / kBlockBytes, fs::WriteCause::kMeta).is_ok();
}

// A mounted file system is usable: fsck, reads and a write work without a
// crash, and every message is one line.
void exercise(fs::ZonedFs& zfs, const char* target) {
  for (const std::string& note : zfs.recovery_notes()) fuzz_check_message(target, note);
  auto report = zfs.fsck(false);
  for (const std::string& p : report.problems) fuzz_check_message(target, p);
  auto names = zfs.list("/");
  if (names) {
    for (const std::string& name : *names) {
      auto file = zfs.open_read("/" + name);
      if (!file) continue;
      std::vector<uint8_t> out(std::min<uint64_t>((*file)->size(), 1 << 20));
      (void)(*file)->read(0, out.size(), out.data());
    }
  }
  if (zfs.read_only()) return;
  std::vector<uint8_t> small(100, 1);
  auto w = zfs.open_write("/fuzz-after", {});
  if (w) {
    (void)(*w)->append(small.data(), small.size());
    (void)(*w)->close();
  }
}

}  // namespace

int fuzz_fs_journal(const uint8_t* data, size_t size) {
  auto stack = Stack::make(fuzz_device_config());
  if (!stack) fuzz_violated("fs-journal", "no device: " + stack.error());
  if (!write_journal(**stack, data, size, {}, "fs-journal")) return 0;
  // Recovery takes it or refuses it in one line; what it takes is usable.
  auto mounted = fs::ZonedFs::mount(**stack);
  if (!mounted) {
    fuzz_check_message("fs-journal", mounted.status().message());
    return 0;
  }
  exercise(**mounted, "fs-journal");
  (void)(*mounted)->unmount();
  return 0;
}

int fuzz_fs_journal_damage(const uint8_t* data, size_t size) {
  // Byte 0: how many flips (at most 15) follow, 3 bytes each (offset into
  // the groups' bytes, little-endian u16; XOR mask); then fs_journal's input.
  if (size < 1) return 0;
  const size_t count = data[0] % 16;
  if (size < 1 + 3 * count) return 0;
  std::vector<Flip> flips;
  for (size_t i = 0; i < count; ++i) {
    const uint8_t* f = data + 1 + 3 * i;
    flips.push_back(Flip{size_t{f[0]} | size_t{f[1]} << 8, f[2]});
  }
  const uint8_t* rest = data + 1 + 3 * count;
  const size_t rest_size = size - 1 - 3 * count;
  auto stack = Stack::make(fuzz_device_config());
  if (!stack) fuzz_violated("fs-journal-damage", "no device: " + stack.error());
  if (!write_journal(**stack, rest, rest_size, flips, "fs-journal-damage")) return 0;
  {
    // Read-only: taken as far as it checks, or refused in one line.
    fs::MountOptions ro;
    ro.read_only = true;
    auto mounted = fs::ZonedFs::mount(**stack, ro);
    if (!mounted) {
      fuzz_check_message("fs-journal-damage", mounted.status().message());
    } else {
      exercise(**mounted, "fs-journal-damage");
    }
  }
  auto mounted = fs::ZonedFs::mount(**stack);
  if (mounted) {
    exercise(**mounted, "fs-journal-damage");
    (void)(*mounted)->unmount();
    return 0;
  }
  fuzz_check_message("fs-journal-damage", mounted.status().message());
  // fsck --repair's mount: what it takes, it leaves consistent -- every
  // cut journaled, a second check clean.
  fs::MountOptions repair;
  repair.cut_damaged_journal = true;
  repair.cut_lost_data = true;
  auto repaired = fs::ZonedFs::mount(**stack, repair);
  if (!repaired) {
    fuzz_check_message("fs-journal-damage", repaired.status().message());
    return 0;
  }
  auto report = (*repaired)->fsck(true);
  for (const std::string& l : report.losses) fuzz_check_message("fs-journal-damage", l);
  if ((*repaired)->sync_metadata()) {
    auto again = (*repaired)->fsck(false);
    if (!again.clean()) {
      fuzz_violated("fs-journal-damage", "not clean after a repair: " + again.problems[0]);
    }
  }
  exercise(**repaired, "fs-journal-damage");
  (void)(*repaired)->unmount();
  return 0;
}

}  // namespace zonelab

namespace zonelab {
namespace {

void write_seed(const std::filesystem::path& path, const std::vector<uint8_t>& bytes,
                size_t& written) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  if (out) ++written;
}

fs::Record path_record(fs::RecordType type, const std::string& path,
                       const std::string& path2 = "") {
  fs::Record r;
  r.type = type;
  r.path = path;
  r.path2 = path2;
  return r;
}

// A journal's worth of records over the fuzz device's geometry: the first
// data zone (2) holds 8 written blocks of 16 LBAs each.
std::vector<fs::Record> seed_records() {
  std::vector<fs::Record> out;
  fs::Record policy;
  policy.type = fs::RecordType::kPolicySet;
  policy.path = "zenfs";
  out.push_back(policy);
  out.push_back(path_record(fs::RecordType::kDirMade, "/db"));
  for (fs::FileId id = 1; id <= 3; ++id) {
    fs::Record created;
    created.type = fs::RecordType::kFileCreated;
    created.id = id;
    created.lifetime = static_cast<fs::Lifetime>(id + 1);
    created.io_class = static_cast<fs::IoClass>(id);
    out.push_back(created);
    fs::Record linked;
    linked.type = fs::RecordType::kNameLinked;
    linked.id = id;
    linked.path = "/db/f" + std::to_string(id);
    out.push_back(linked);
    fs::Record taken;
    taken.type = fs::RecordType::kZoneTaken;
    taken.zone = 2;
    taken.id = id;
    taken.lba = 2 * 16 + 2 * (id - 1);
    out.push_back(taken);
    fs::Record added;
    added.type = fs::RecordType::kExtentAdded;
    added.id = id;
    added.extent = fs::Extent{2, 2 * 16 + 2 * (id - 1), kBlockBytes + 100 * id};
    out.push_back(added);
  }
  out.push_back(path_record(fs::RecordType::kRenamed, "/db/f1", "/db/f2"));
  fs::Record size;
  size.type = fs::RecordType::kSizeSet;
  size.id = 3;
  size.size = 10;
  out.push_back(size);
  out.push_back(path_record(fs::RecordType::kNameUnlinked, "/db/f3"));
  fs::Record hints;
  hints.type = fs::RecordType::kHintsSet;
  hints.id = 1;
  hints.lifetime = fs::Lifetime::kExtreme;
  out.push_back(hints);
  fs::Record counters;
  counters.type = fs::RecordType::kCounters;
  counters.values = {1, 2, 3};
  out.push_back(counters);
  out.push_back(path_record(fs::RecordType::kDirMade, "/empty"));
  out.push_back(path_record(fs::RecordType::kDirRemoved, "/empty"));
  return out;
}

std::vector<uint8_t> encoded(const std::vector<fs::Record>& records) {
  std::vector<uint8_t> out;
  for (const fs::Record& r : records) fs::encode_record(r, out);
  return out;
}

}  // namespace

void write_fs_seeds(const char* dir, size_t& written) {
  namespace stdfs = std::filesystem;
  const stdfs::path base(dir);
  std::error_code error;
  for (const char* sub :
       {"fs_records", "fs_superblock", "fs_journal", "fs_journal_damage", "fs_policy"}) {
    stdfs::create_directories(base / sub, error);
  }
  std::vector<fs::Record> records = seed_records();
  write_seed(base / "fs_records" / "journal", encoded(records), written);
  for (size_t i = 0; i < records.size(); ++i) {
    write_seed(base / "fs_records" / ("one-" + std::to_string(i)), encoded({records[i]}), written);
  }
  auto policy_seed = [&](const char* name, uint8_t policy, uint16_t zones, std::string text) {
    std::vector<uint8_t> bytes = {policy, static_cast<uint8_t>((zones - 1) & 0xFF),
                                  static_cast<uint8_t>((zones - 1) >> 8)};
    bytes.insert(bytes.end(), text.begin(), text.end());
    write_seed(base / "fs_policy" / name, bytes, written);
  };
  policy_seed("zenfs", 0, 16, "");
  policy_seed("zenfs-plus", 1, 64,
              "isolation=on\nminor_gc=off\nminor_gc_period=2s\nfull_gc_trigger=20\n"
              "izg=64:p=32:0.1.2.3.4.5.6.7.8.9.10.11.12.13.14.15.16.17.18.19.20.21.22.23.24."
              "25.26.27.28.29.30.31\n");
  policy_seed("zenfs-plus-irregular", 1, 9, "izg=9:z=0*3.1.-.2*2.1.0");
  policy_seed("map-periodic", 1, 64, "64:p=4:0.1.2.3");
  policy_seed("map-runs", 1, 12, "12:z=0*3.1*2.-.2*6");
  fs::Superblock sb;
  sb.uuid = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  sb.block_bytes = kBlockBytes;
  sb.zone_size_lbas = 16;
  sb.zone_capacity_lbas = 16;
  sb.zone_count = 16;
  sb.meta_zones = 2;
  sb.finish_threshold_pct = 10;
  sb.gc_free_pct = 10;
  sb.policy = "zenfs";
  write_seed(base / "fs_superblock" / "superblock", fs::encode_superblock(sb), written);
  write_seed(base / "fs_superblock" / "header-empty",
             fs::encode_meta_header(1, 1, sb, {}, kBlockBytes), written);
  write_seed(base / "fs_superblock" / "header-snapshot",
             fs::encode_meta_header(9, 4, sb, records, kBlockBytes), written);
  // Version 2: zone sets, a hot set (the other levels spilling into it),
  // and tenants on sets of their own.
  fs::Superblock sets = sb;
  sets.zone_count = 24;
  sets.zone_sets = {{16, 16, 8}, {64, 64, 8}, {16, 16, 8}};
  sets.hot_set = 0;
  sets.hot_levels = 0x0d;
  write_seed(base / "fs_superblock" / "superblock-sets", fs::encode_superblock(sets), written);
  sets.spill_cold = 1;
  write_seed(base / "fs_superblock" / "superblock-spill", fs::encode_superblock(sets), written);
  sets.spill_cold = 0;
  sets.tenants = {{"a", 1}, {"tenant.b-2", 6}};
  write_seed(base / "fs_superblock" / "superblock-tenants", fs::encode_superblock(sets), written);
  write_seed(base / "fs_superblock" / "header-tenants",
             fs::encode_meta_header(5, 7, sets, records, kBlockBytes), written);
  for (int in_snapshot : {0, 4, 12, 255}) {
    std::vector<uint8_t> input = {static_cast<uint8_t>(in_snapshot), 3};
    std::vector<uint8_t> body = encoded(records);
    input.insert(input.end(), body.begin(), body.end());
    write_seed(base / "fs_journal" / ("journal-" + std::to_string(in_snapshot)), input, written);
    // The same journal with a byte flipped in its first, a middle and its
    // last group, and one with no damage.
    for (uint16_t at : {uint16_t{30}, uint16_t{4096 + 40}, uint16_t{12000}, uint16_t{0}}) {
      std::vector<uint8_t> damaged = {1, static_cast<uint8_t>(at), static_cast<uint8_t>(at >> 8),
                                      static_cast<uint8_t>(at == 0 ? 0 : 0x20)};
      damaged.insert(damaged.end(), input.begin(), input.end());
      write_seed(base / "fs_journal_damage" /
                     ("journal-" + std::to_string(in_snapshot) + "-at-" + std::to_string(at)),
                 damaged, written);
    }
  }
}

}  // namespace zonelab
