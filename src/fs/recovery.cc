// Mounting: the journal replayed onto its snapshot, the zones loaded from
// the device's write pointers, the tails of files a crash cut short given
// back, and -- on a writable mount -- a fresh metadata zone when the old
// one cannot take more groups. See zoned_fs.h and docs/fs.md.
#include <fmt/format.h>

#include <map>

#include "fs/zoned_fs.h"

namespace zonelab::fs {
namespace {

// The tokens the file system may use for data: the device's limits less the
// active metadata zone's, or a default when the device sets none.
ZoneLimits data_zone_limits(const DeviceInfo& info, uint32_t data_zones) {
  uint32_t active = info.max_active == 0 ? kActiveZonesDefault : info.max_active - 1;
  active = std::min(active, data_zones);
  uint32_t open = info.max_open == 0 ? active : std::min(active, info.max_open - 1);
  return {open, active};
}

}  // namespace

FsStatus ZonedFs::recover() {
  auto recovered = Journal::recover(io_);
  if (!recovered) return recovered.status();
  const Recovered& rec = *recovered;
  if (!rec.damage.empty() && !options_.read_only && !options_.cut_damaged_journal) {
    // Mounting would drop what the records after the damage hold -- data
    // that may have been acknowledged -- and write over it.
    return FsStatus(
        Code::kCorruption,
        fmt::format("{} (after it {} groups that check hold {} records); not "
                    "mounted for writing: zonelab fs fsck says more, fsck --repair "
                    "cuts the journal there and lists what is lost",
                    rec.damage, rec.groups_after_damage, rec.records_after_damage.size()));
  }
  superblock_ = rec.header.superblock;
  const uint32_t data_zones = superblock_.zone_count - superblock_.meta_zones;
  ZoneLimits limits = data_zone_limits(io_.info(), data_zones);
  if (limits.open < 2 || limits.active < 2) {
    return FsStatus(Code::kInvalid,
                    fmt::format("the device allows {} open and {} active zones; the file system "
                                "needs 3 of each",
                                io_.info().max_open, io_.info().max_active));
  }
  zones_ = std::make_unique<ZoneManager>(superblock_.meta_zones, io_.zone_sets(), limits);

  std::unique_lock lock(mutex_);
  const uint64_t bs = io_.block_bytes();
  size_t index = 0;
  for (const auto* list : {&rec.header.snapshot, &rec.records}) {
    for (const Record& r : *list) {
      if (FsStatus ok = meta_.apply(r, bs); !ok) {
        return FsStatus(Code::kCorruption,
                        fmt::format("journal record {} ({}) does not apply: {}", index,
                                    record_type_name(r.type), ok.message()));
      }
      ++index;
    }
  }
  meta_.reserve_ids(rec.header.next_file_id);
  // The policy, with the options and state mkfs stored (or, on a file
  // system made without them, its defaults).
  if (!meta_.policy_name().empty() && meta_.policy_name() != superblock_.policy) {
    return FsStatus(Code::kCorruption,
                    fmt::format("the policy record names '{}', the superblock '{}'",
                                meta_.policy_name(), superblock_.policy));
  }
  auto policy =
      make_placement_policy(superblock_.policy, meta_.policy_state(),
                            PolicyContext{superblock_.zone_count, superblock_.meta_zones});
  if (!policy) {
    return FsStatus(Code::kCorruption, fmt::format("placement policy {}: {}", superblock_.policy,
                                                   policy.status().message()));
  }
  policy_ = std::move(*policy);
  zones_->set_groups(policy_->zone_groups());
  if (io_.info().max_active == 0 && policy_->active_zones_wanted() > kActiveZonesDefault) {
    // The device sets no limit and the policy stripes: as many as it wants.
    ZoneLimits wanted = limits;
    wanted.active = std::min(policy_->active_zones_wanted(), data_zones);
    wanted.open =
        io_.info().max_open == 0 ? wanted.active : std::min(wanted.active, io_.info().max_open - 1);
    zones_->set_limits(wanted);
  }
  counters_ = counters_of(meta_.counters());
  // Files a crash left without a name (open, deleted) are gone.
  std::vector<FileId> nameless;
  for (const auto& [id, node] : meta_.files()) {
    if (node.nlink == 0) nameless.push_back(id);
  }
  for (FileId id : nameless) {
    meta_.hold(id);
    meta_.release(id, bs, nullptr);
  }
  // The device's write pointers say what each data zone holds. A full
  // zone's write pointer says nothing: it counts as written to capacity.
  for (uint32_t z = superblock_.meta_zones; z < superblock_.zone_count; ++z) {
    ZoneDescriptor d = io_.zone(z);
    bool finished = d.state == ZoneState::kFull || d.state == ZoneState::kReadOnly ||
                    d.state == ZoneState::kOffline;
    uint64_t wp = d.state == ZoneState::kFull || d.state == ZoneState::kReadOnly ? d.capacity_lbas
                  : d.state == ZoneState::kOffline                               ? 0
                                                   : d.wp_lba - d.start_lba;
    zones_->load(z, wp, finished);
  }
  if (!rec.damage.empty()) cut_at_journal_damage(rec);
  if (options_.cut_lost_data) cut_lost_data();
  if (FsStatus ok = check_extents_against_zones(); !ok) return ok;
  // Past damage the last zone-taken records may be among those lost: a
  // zone's tail cannot be told to belong to anyone.
  if (rec.damage.empty()) recover_tails();
  journal_ = std::make_unique<Journal>(io_, superblock_, rec);
  // The journal's findings first; damage is reported once, among the cuts,
  // with what it loses.
  std::vector<std::string> found;
  for (const std::string& p : rec.problems) {
    if (p != rec.damage) found.push_back(p);
  }
  notes_.insert(notes_.begin(), found.begin(), found.end());
  if (options_.read_only) return {};

  // From here on the device changes: the metadata zones left behind hold
  // no active resource, the journal continues in a zone that can take it,
  // and zones that hold nothing are reset.
  bool roll = journal_->needs_roll() || !pending_.empty();
  for (uint32_t z = 0; z < superblock_.meta_zones; ++z) {
    if (z == journal_->active_zone() || !zone_is_active(io_.zone(z).state)) continue;
    if (FsStatus ok = io_.finish(z); !ok) return ok;
  }
  if (roll) {
    ++counters_.journal_rolls;
    const std::vector<Record> snapshot = meta_.snapshot();
    const FileId next_id = meta_.next_id();
    // The journal's lock is taken before this one everywhere else (a
    // commit takes its batch under both); nobody else uses the file system
    // while it mounts.
    lock.unlock();
    if (FsStatus ok = journal_->roll(snapshot, next_id); !ok) return ok;
    lock.lock();
    pending_.clear();
    durable_seq_ = applied_seq_;
  }
  return {};
}

FsStatus ZonedFs::check_extents_against_zones() {
  const uint64_t bs = io_.block_bytes();
  for (const auto& [id, node] : meta_.files()) {
    for (const Extent& e : node.extents) {
      if (!zones_->is_data_zone(e.zone) || io_.zone_of(e.lba) != e.zone) {
        return FsStatus(
            Code::kCorruption,
            fmt::format("file {}: an extent at LBA {} outside data zone {}", id, e.lba, e.zone));
      }
      const DataZone& z = zones_->zone(e.zone);
      if (e.lba < z.start_lba || e.end_lba(bs) > z.start_lba + z.wp_lbas) {
        return FsStatus(Code::kCorruption,
                        fmt::format("file {}: an extent at LBA {} of {} blocks beyond zone {}'s "
                                    "write pointer",
                                    id, e.lba, e.blocks(bs), e.zone));
      }
      if (z.live_blocks + e.blocks(bs) > z.wp_lbas) {
        return FsStatus(
            Code::kCorruption,
            fmt::format("zone {}: its files hold more blocks than it has written", e.zone));
      }
      zones_->add_live(Extent{e.zone, e.lba, e.blocks(bs) * bs}, bs);
    }
  }
  return {};
}

// A file's first name, for reports ("file 12 (/db/000012.sst)").
std::string ZonedFs::file_label_locked(FileId id) const {
  for (const auto& [path, file] : meta_.names()) {
    if (file == id) return fmt::format("file {} ({})", id, path);
  }
  return fmt::format("file {}", id);
}

void ZonedFs::cut_files(const std::function<bool(const Extent&)>& gone, const std::string& why) {
  const uint64_t bs = io_.block_bytes();
  std::vector<Record> cuts;
  for (const auto& [id, node] : meta_.files()) {
    uint64_t kept = 0;
    bool lost = false;
    for (const Extent& e : node.extents) {
      if (gone(e)) {
        lost = true;
        break;
      }
      kept += e.length;
    }
    if (!lost) continue;
    Record r;
    r.type = RecordType::kSizeSet;
    r.id = id;
    r.size = kept;
    r.mtime_ns = node.mtime_ns;
    cuts.push_back(r);
    cuts_.push_back(fmt::format("{}: its data past byte {} of {} {}; cut to {} bytes",
                                file_label_locked(id), kept, node.size, why, kept));
  }
  // Applied before any zone counts live blocks: the space a cut frees was
  // never counted.
  for (const Record& r : cuts) {
    FsStatus ok = meta_.apply(r, bs);
    ZL_ASSERT(ok.is_ok());
    const FileNode* node = meta_.file(r.id);
    if (!options_.read_only && node != nullptr && node->nlink != 0) {
      ++applied_seq_;
      encode_record(r, pending_);
    }
  }
}

void ZonedFs::cut_lost_data() {
  const uint64_t bs = io_.block_bytes();
  cut_files(
      [&](const Extent& e) {
        if (!zones_->is_data_zone(e.zone) || io_.zone_of(e.lba) != e.zone) return true;
        const DataZone& z = zones_->zone(e.zone);
        return e.lba < z.start_lba || e.end_lba(bs) > z.start_lba + z.wp_lbas;
      },
      "is not on the device");
}

void ZonedFs::cut_at_journal_damage(const Recovered& rec) {
  const uint64_t bs = io_.block_bytes();
  // What the later records would have made of the metadata (without the
  // damaged group's records, some do not apply: counted, not guessed).
  Metadata later = meta_;
  uint64_t unapplied = 0;
  // A zone a lost record says was taken at an LBA below the end of an
  // extent the journal still holds there was reset and written again
  // since: that extent's blocks hold other data now.
  std::map<uint32_t, uint64_t> retaken;  // zone -> lowest LBA taken at
  for (const Record& r : rec.records_after_damage) {
    if (!later.apply(r, bs)) ++unapplied;
    if (r.type == RecordType::kZoneTaken) {
      auto [it, fresh] = retaken.emplace(r.zone, r.lba);
      if (!fresh) it->second = std::min(it->second, r.lba);
    }
  }
  cuts_.push_back(
      fmt::format("{}: the journal ends there; {} later groups that check ({} "
                  "records, {} of which do not apply without the damaged group) "
                  "are lost, and what the damaged group held is not known",
                  rec.damage, rec.groups_after_damage, rec.records_after_damage.size(), unapplied));
  for (const auto& [path, id] : later.names()) {
    const FileNode* now = meta_.lookup(path);
    const FileNode* then = later.file(id);
    if (now == nullptr) {
      cuts_.push_back(fmt::format("{}: made by the lost records ({} bytes); gone", path,
                                  then == nullptr ? 0 : then->size));
    } else if (then != nullptr && (now->id != id || now->size != then->size)) {
      cuts_.push_back(
          fmt::format("{}: {} bytes by the lost records, {} kept", path, then->size, now->size));
    }
  }
  for (const auto& [path, id] : meta_.names()) {
    if (later.lookup(path) == nullptr) {
      cuts_.push_back(fmt::format("{}: removed by the lost records; still there", path));
    }
  }
  cut_files(
      [&](const Extent& e) {
        auto it = retaken.find(e.zone);
        return it != retaken.end() && e.end_lba(bs) > it->second;
      },
      "lies in a zone the lost records show reset and written again");
  forget_zone_owners();
}

void ZonedFs::forget_zone_owners() {
  const uint64_t bs = io_.block_bytes();
  std::vector<uint32_t> owned;
  for (const auto& [zone, owner] : meta_.owners()) {
    if (owner.id != 0) owned.push_back(zone);
  }
  for (uint32_t zone : owned) {
    Record r;
    r.type = RecordType::kZoneTaken;
    r.zone = zone;
    r.id = 0;
    r.lba = meta_.owners().at(zone).lba;
    FsStatus ok = meta_.apply(r, bs);
    ZL_ASSERT(ok.is_ok());
    if (!options_.read_only) {
      ++applied_seq_;
      encode_record(r, pending_);
    }
  }
}

void ZonedFs::recover_tails() {
  const uint64_t bs = io_.block_bytes();
  for (const auto& [zone, owner] : meta_.owners()) {
    if (owner.id == 0 || !zones_->is_data_zone(zone)) continue;
    const FileNode* node = meta_.file(owner.id);
    if (node == nullptr || node->nlink == 0) continue;
    const DataZone& z = zones_->zone(zone);
    // A full zone's write pointer does not say where its data ends.
    if (z.finished) continue;
    const uint64_t wp = z.start_lba + z.wp_lbas;
    uint64_t from = owner.lba;
    if (from < z.start_lba || from >= wp) continue;
    for (const Extent& e : node->extents) {
      if (e.zone == zone && e.lba >= owner.lba) from = std::max(from, e.end_lba(bs));
    }
    // The last block written may be a sync's padding whose record never
    // came: only the blocks before it are certainly the file's bytes (a
    // padded write is the last before a commit, so nothing else in the
    // tail is padded). Unsynced data may be lost; bytes never given may
    // not be gained.
    const uint64_t end = wp - 1;
    if (from >= end) continue;
    // The blocks must be nobody's: the writer held the zone from owner.lba
    // on, so no other file can have recorded an extent there.
    bool claimed = false;
    for (const auto& [id, other] : meta_.files()) {
      for (const Extent& e : other.extents) {
        claimed = claimed || (e.zone == zone && e.lba < wp && e.end_lba(bs) > from);
      }
    }
    // Files whose extents overlap (a journal no writer of this code makes,
    // but one that checks) already count some blocks twice: the zone
    // cannot hold more.
    claimed = claimed || z.live_blocks + (end - from) > z.wp_lbas;
    if (claimed) {
      notes_.push_back(
          fmt::format("zone {}: blocks {}..{} past file {}'s last record hold "
                      "another file's extent; not given to it",
                      zone, from, end, owner.id));
      continue;
    }
    Record r;
    r.type = RecordType::kExtentAdded;
    r.id = owner.id;
    r.extent = Extent{zone, from, (end - from) * bs};
    if (FsStatus ok = apply_locked(r, !options_.read_only); !ok) {
      notes_.push_back(
          fmt::format("zone {}: file {}'s tail not recovered: {}", zone, owner.id, ok.message()));
      continue;
    }
    counters_.recovered_tail_bytes += (end - from) * bs;
    notes_.push_back(
        fmt::format("file {}: {} blocks written past its last journal record "
                    "recovered from zone {}'s write pointer",
                    owner.id, end - from, zone));
  }
}

}  // namespace zonelab::fs
