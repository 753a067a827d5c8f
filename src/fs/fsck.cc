// fsck: every invariant of the file system, checked against the journal
// and the device; see zoned_fs.h. It reports and changes nothing, unless
// asked to repair (a writable mount).
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "fs/zoned_fs.h"

namespace zonelab::fs {
namespace {

// Where a data zone's written blocks end, as the device says; a full zone
// counts as written to capacity.
uint64_t device_written_end(const ZoneDescriptor& d) {
  if (d.state == ZoneState::kFull || d.state == ZoneState::kReadOnly) {
    return d.start_lba + d.capacity_lbas;
  }
  if (d.state == ZoneState::kEmpty || d.state == ZoneState::kOffline) return d.start_lba;
  return d.wp_lba;
}

}  // namespace

ZonedFs::FsckReport ZonedFs::fsck(bool repair) {
  // No collection moves data while the checks compare the journal, the
  // metadata and the device (fsck is for a file system nobody else writes).
  std::lock_guard gc(gc_mutex_);
  FsckReport report;
  if (repair && !options_.read_only) {
    if (FsStatus ok = commit(); !ok) report.problems.push_back(ok.message());
  }
  // The journal as the device holds it: every group up to the write
  // pointer must check, and replayed it must give the metadata in memory.
  auto recovered = Journal::recover(io_);
  std::optional<Metadata> replayed;
  if (!recovered) {
    report.problems.push_back(recovered.status().message());
  } else {
    report.journal_groups = recovered->groups;
    // Damage comes with what it loses among the mount's cuts (below).
    for (const std::string& p : recovered->problems) {
      if (p != recovered->damage) report.problems.push_back(p);
    }
    replayed.emplace();
    for (const auto* list : {&recovered->header.snapshot, &recovered->records}) {
      for (const Record& r : *list) {
        if (FsStatus ok = replayed->apply(r, io_.block_bytes()); !ok) {
          report.problems.push_back(fmt::format("journal: a {} record does not apply: {}",
                                                record_type_name(r.type), ok.message()));
          replayed.reset();
          break;
        }
      }
      if (!replayed) break;
    }
  }

  std::lock_guard lock(mutex_);
  const uint64_t bs = io_.block_bytes();
  // What the mount cut (MountOptions::cut_lost_data, cut_damaged_journal):
  // damage, and once the cut is journaled a loss -- never a clean repair.
  for (const std::string& cut : cuts_) {
    (options_.read_only ? report.problems : report.losses).push_back(cut);
  }
  // (A read-only mount holds recovered tails and cuts the journal does not.)
  bool comparable = pending_.empty() &&
                    (!options_.read_only || (counters_.recovered_tail_bytes == 0 && cuts_.empty()));
  if (replayed && comparable && replayed->snapshot() != meta_.snapshot()) {
    report.problems.push_back(
        "journal: replayed, it does not give the metadata the file system holds");
  }
  std::map<uint32_t, uint64_t> live;  // zone -> blocks the files hold
  struct Owned {
    uint64_t end;
    FileId id;
  };
  std::map<uint64_t, Owned> owned;  // first LBA -> (end, file): for overlaps
  std::vector<std::pair<FileId, uint64_t>> truncations;
  for (const auto& [id, node] : meta_.files()) {
    ++report.files;
    uint64_t total = 0;
    uint64_t valid_prefix = 0;
    bool cut = false;
    for (const Extent& e : node.extents) {
      ++report.extents;
      total += e.length;
      bool inside = zones_->is_data_zone(e.zone) && io_.zone_of(e.lba) == e.zone && e.length > 0;
      if (inside) inside = e.end_lba(bs) <= device_written_end(io_.zone(e.zone));
      if (!inside) {
        report.problems.push_back(fmt::format(
            "file {}: an extent at LBA {} of {} blocks lies outside zone {}'s written data", id,
            e.lba, e.blocks(bs), e.zone));
        cut = true;
      }
      if (!cut) valid_prefix += e.length;
      if (inside) {
        live[e.zone] += e.blocks(bs);
        auto [it, inserted] = owned.emplace(e.lba, Owned{e.end_lba(bs), id});
        if (!inserted) {
          report.problems.push_back(
              fmt::format("files {} and {} both own LBA {}", it->second.id, id, e.lba));
        }
      }
    }
    if (total != node.size) {
      report.problems.push_back(
          fmt::format("file {}: size {} but its extents hold {} bytes", id, node.size, total));
    }
    uint32_t names = 0;
    for (const auto& [path, file] : meta_.names()) names += file == id ? 1 : 0;
    if (names != node.nlink) {
      report.problems.push_back(
          fmt::format("file {}: {} links counted, {} names", id, node.nlink, names));
    }
    if (cut) truncations.emplace_back(id, valid_prefix);
  }
  // No block owned twice: each run ends before the next begins.
  uint64_t last_end = 0;
  FileId last_id = 0;
  for (const auto& [start, o] : owned) {
    if (start < last_end) {
      report.problems.push_back(
          fmt::format("files {} and {} overlap at LBA {}", last_id, o.id, start));
    }
    if (o.end > last_end) {
      last_end = o.end;
      last_id = o.id;
    }
  }
  for (const auto& [path, id] : meta_.names()) {
    if (!meta_.is_dir(parent_of(path))) {
      report.problems.push_back(fmt::format("{}: its directory does not exist", path));
    }
    // Tenants (seed 001 §IV-D): a file's data only in its tenant's sets.
    const FileNode* node = meta_.file(id);
    if (superblock_.tenants.empty() || node == nullptr) continue;
    const uint32_t tenant = tenant_of(path);
    const SetMask room = tenant_sets(tenant);
    for (const Extent& e : node->extents) {
      if (!zones_->is_data_zone(e.zone)) continue;
      const uint32_t set = zones_->zone(e.zone).set;
      if ((room & set_bit(set)) == 0) {
        report.problems.push_back(fmt::format(
            "{}: data in zone {} of zone set {}, outside {}'s sets ({})", path, e.zone, set,
            tenant == kNoTenant ? std::string("the tenantless files")
                                : "tenant " + superblock_.tenants[tenant].name,
            set_mask_text(room & set_mask_of(superblock_.zone_sets.size()))));
        break;
      }
    }
  }
  for (const SuperTenant& t : superblock_.tenants) {
    if (!meta_.is_dir("/" + t.name)) {
      report.problems.push_back(fmt::format("tenant {}: no directory /{}", t.name, t.name));
    }
  }
  for (const std::string& dir : meta_.dirs()) {
    if (dir != "/" && !meta_.is_dir(parent_of(dir))) {
      report.problems.push_back(fmt::format("{}: its parent directory does not exist", dir));
    }
  }
  for (const DataZone& z : zones_->zones()) {
    uint64_t counted = live.count(z.index) != 0 ? live[z.index] : 0;
    if (counted != z.live_blocks) {
      report.problems.push_back(fmt::format("zone {}: {} blocks counted live, the files hold {}",
                                            z.index, z.live_blocks, counted));
    }
    // A zone being reset or finished right now is between two states.
    if (z.collecting) continue;
    ZoneDescriptor d = io_.zone(z.index);
    uint64_t device_end = device_written_end(d) - d.start_lba;
    bool device_done = d.state == ZoneState::kFull || d.state == ZoneState::kReadOnly ||
                       d.state == ZoneState::kOffline;
    if (!z.finished && (device_done || device_end != z.wp_lbas)) {
      report.problems.push_back(
          fmt::format("zone {}: the file system has written {} blocks, the device says {} ({})",
                      z.index, z.wp_lbas, device_end, zone_state_name(d.state)));
    }
    if (z.finished && !device_done) {
      report.problems.push_back(
          fmt::format("zone {}: finished for the file system, {} on the "
                      "device",
                      z.index, zone_state_name(d.state)));
    }
  }
  for (uint32_t z = 0; z < superblock_.meta_zones; ++z) {
    ZoneState state = io_.zone(z).state;
    if (z != journal_->active_zone() && zone_is_active(state)) {
      report.problems.push_back(fmt::format("metadata zone {}: {} but not the journal's zone", z,
                                            zone_state_name(state)));
    }
  }
  if (repair && !options_.read_only) {
    for (auto [id, size] : truncations) {
      Record r;
      r.type = RecordType::kSizeSet;
      r.id = id;
      r.size = size;
      r.mtime_ns = meta_.file(id)->mtime_ns;
      if (apply_for_file(r, id)) {
        report.losses.push_back(
            fmt::format("file {}: cut to {} bytes, the data the device holds", id, size));
      }
    }
  }
  return report;
}

}  // namespace zonelab::fs
