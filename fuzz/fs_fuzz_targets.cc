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

#include "fs/journal.h"
#include "fs/metadata.h"
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

int fuzz_fs_journal(const uint8_t* data, size_t size) {
  // The first byte: how many of the records open the snapshot; the rest:
  // records, in groups of `group` records each.
  if (size < 2) return 0;
  const size_t in_snapshot = data[0];
  const size_t group = 1 + data[1] % 8;
  auto records = fs::decode_records(data + 2, size - 2);
  if (!records) return 0;
  auto stack = Stack::make(fuzz_device_config());
  if (!stack) fuzz_violated("fs-journal", "no device: " + stack.error());
  fs::MkfsOptions mkfs;
  mkfs.uuid_seed = 1;
  if (!fs::ZonedFs::mkfs(**stack, mkfs)) fuzz_violated("fs-journal", "mkfs failed");
  fs::DeviceIo io(**stack);
  // Some data for extents to point at: the first data zone half written.
  std::vector<uint8_t> blocks(8 * kBlockBytes, 0x5a);
  if (!io.write(io.zone_start(2), blocks.data(), 8, fs::WriteCause::kData)) {
    fuzz_violated("fs-journal", "data write failed");
  }
  // The journal: a header with the first records, then groups.
  auto found = fs::Journal::recover(io);
  if (!found) fuzz_violated("fs-journal", "no journal after mkfs");
  const fs::Superblock sb = found->header.superblock;
  if (!io.reset(0)) fuzz_violated("fs-journal", "reset failed");
  size_t split = std::min(in_snapshot, records->size());
  std::vector<fs::Record> snapshot(records->begin(), records->begin() + static_cast<long>(split));
  std::vector<uint8_t> header = fs::encode_meta_header(2, 1, sb, snapshot, kBlockBytes);
  uint64_t lba = io.zone_start(0);
  const uint64_t end = lba + io.zone_capacity_lbas();
  if (header.size() / kBlockBytes > io.zone_capacity_lbas()) return 0;
  if (!io.write(lba, header.data(), header.size() / kBlockBytes, fs::WriteCause::kMeta)) return 0;
  lba += header.size() / kBlockBytes;
  uint64_t index = 0;
  for (size_t i = split; i < records->size(); i += group) {
    std::vector<uint8_t> payload;
    for (size_t j = i; j < std::min(records->size(), i + group); ++j) {
      fs::encode_record((*records)[j], payload);
    }
    std::vector<uint8_t> bytes = fs::encode_group(2, index++, payload, kBlockBytes);
    if (lba + bytes.size() / kBlockBytes > end) break;
    if (!io.write(lba, bytes.data(), bytes.size() / kBlockBytes, fs::WriteCause::kMeta)) break;
    lba += bytes.size() / kBlockBytes;
  }
  // Recovery takes it or refuses it in one line; what it takes is usable.
  auto mounted = fs::ZonedFs::mount(**stack);
  if (!mounted) {
    fuzz_check_message("fs-journal", mounted.status().message());
    return 0;
  }
  fs::ZonedFs& zfs = **mounted;
  for (const std::string& note : zfs.recovery_notes()) fuzz_check_message("fs-journal", note);
  auto report = zfs.fsck(false);
  for (const std::string& p : report.problems) fuzz_check_message("fs-journal", p);
  auto names = zfs.list("/");
  if (names) {
    for (const std::string& name : *names) {
      auto file = zfs.open_read("/" + name);
      if (!file) continue;
      std::vector<uint8_t> out(std::min<uint64_t>((*file)->size(), 1 << 20));
      (void)(*file)->read(0, out.size(), out.data());
    }
  }
  std::vector<uint8_t> small(100, 1);
  auto w = zfs.open_write("/fuzz-after", {});
  if (w) {
    (void)(*w)->append(small.data(), small.size());
    (void)(*w)->close();
  }
  (void)zfs.unmount();
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
  for (const char* sub : {"fs_records", "fs_superblock", "fs_journal"}) {
    stdfs::create_directories(base / sub, error);
  }
  std::vector<fs::Record> records = seed_records();
  write_seed(base / "fs_records" / "journal", encoded(records), written);
  for (size_t i = 0; i < records.size(); ++i) {
    write_seed(base / "fs_records" / ("one-" + std::to_string(i)), encoded({records[i]}), written);
  }
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
  for (int in_snapshot : {0, 4, 12, 255}) {
    std::vector<uint8_t> input = {static_cast<uint8_t>(in_snapshot), 3};
    std::vector<uint8_t> body = encoded(records);
    input.insert(input.end(), body.begin(), body.end());
    write_seed(base / "fs_journal" / ("journal-" + std::to_string(in_snapshot)), input, written);
  }
}

}  // namespace zonelab
