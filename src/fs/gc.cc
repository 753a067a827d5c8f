// Garbage collection: the live extents of the zone with the smallest live
// share are copied to other zones (placed by the policy, as their files'
// lifetimes ask), each file's extent is moved in the metadata (journaled),
// and once those records are durable and no reader is left the zone is
// reset. See zoned_fs.h and docs/fs.md.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>

#include "fs/zoned_fs.h"

namespace zonelab::fs {

uint32_t ZonedFs::gc_target_zones(uint32_t set) const {
  return policy_->gc_free_target(zones_->zones_in_set(set), superblock_.gc_free_pct);
}

FsResult<uint32_t> ZonedFs::collect_garbage(uint32_t free_zones, SetMask sets) {
  uint32_t emptied = 0;
  for (uint32_t set = 0; set < zones_->set_count(); ++set) {
    if ((sets & set_bit(set)) == 0) continue;
    auto n = collect_garbage_in(set, free_zones);
    if (!n) return n.status();
    emptied += *n;
  }
  return emptied;
}

FsResult<uint32_t> ZonedFs::collect_garbage_in(uint32_t set, uint32_t free_zones) {
  std::lock_guard gc(gc_mutex_);
  // Victims and copies stay in the set: a zone's live data fits an empty
  // zone of its own set, which each set keeps for collection.
  gc_sets_ = set_bit(set);
  const SetMask sets = gc_sets_;
  const uint64_t capacity = zones_->set_capacity_lbas(set);
  uint32_t emptied = 0;
  const uint32_t unit = policy_->gc_unit();
  auto next_victim = [&] { return policy_->gc_victim(SetZoneTable(*zones_, sets)); };
  auto not_free = [&](uint32_t victim) {
    return !zones_->is_data_zone(victim) || zones_->zone(victim).held() ||
           zones_->zone(victim).collecting || zones_->zone(victim).set != set;
  };
  for (uint32_t round = 0; unit > 1 && round < zones_->count(); ++round) {
    // Victims by the policy's order, as many as a stripe, while their live
    // data fits the empty zones but one (all of it is copied before any
    // victim is reset), and no more than bring the empty zones to the
    // target once their live data has filled zones of its own: a zone
    // collected before it is needed is copied before more of it dies.
    std::vector<uint32_t> victims;
    {
      std::lock_guard lock(mutex_);
      if (FsStatus ok = check_writable(); !ok) return ok;
      if (zones_->empty_count(sets) >= free_zones) break;
      const uint32_t empty = zones_->empty_count(sets);
      const uint32_t missing = free_zones - empty;
      const uint64_t room = empty > 1 ? uint64_t{empty - 1} * capacity : 0;
      uint64_t live = 0;
      while (victims.size() < unit) {
        if (!victims.empty() && victims.size() >= missing + (live + capacity - 1) / capacity) {
          break;
        }
        std::optional<uint32_t> victim = next_victim();
        if (!victim) break;
        if (not_free(*victim)) {
          for (uint32_t v : victims) zones_->zone(v).collecting = false;
          return FsStatus(Code::kInvalid,
                          fmt::format("placement policy {} chose zone {} for garbage collection, "
                                      "which is not free",
                                      policy_->name(), *victim));
        }
        const uint64_t more = zones_->zone(*victim).live_blocks;
        if (!victims.empty() && live + more > room) break;
        live += more;
        zones_->zone(*victim).collecting = true;
        victims.push_back(*victim);
      }
    }
    if (victims.empty()) break;
    if (FsStatus ok = gc_zones(victims); !ok) {
      std::lock_guard lock(mutex_);
      for (uint32_t v : victims) zones_->zone(v).collecting = false;
      return ok;
    }
    emptied += static_cast<uint32_t>(victims.size());
  }
  for (uint32_t round = 0; unit <= 1 && round < zones_->count(); ++round) {
    std::optional<uint32_t> victim;
    {
      std::lock_guard lock(mutex_);
      if (FsStatus ok = check_writable(); !ok) return ok;
      if (zones_->empty_count(sets) >= free_zones) break;
      victim = next_victim();
      if (victim && not_free(*victim)) {
        return FsStatus(Code::kInvalid,
                        fmt::format("placement policy {} chose zone {} for garbage collection, "
                                    "which is not free",
                                    policy_->name(), *victim));
      }
      if (!victim) break;
      zones_->zone(*victim).collecting = true;
    }
    FsStatus ok = gc_one_zone(*victim);
    if (!ok) {
      std::lock_guard lock(mutex_);
      zones_->zone(*victim).collecting = false;
      return ok;
    }
    ++emptied;
  }
  return emptied;
}

FsStatus ZonedFs::gc_one_zone(uint32_t victim) {
  struct Move {
    FileId id;
    Extent extent;
    Lifetime lifetime;
  };
  std::vector<Move> moves;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [id, node] : meta_.files()) {
      for (const Extent& e : node.extents) {
        if (e.zone == victim) moves.push_back(Move{id, e, node.lifetime});
      }
    }
  }
  // The victim is ours (collecting): nobody writes or resets it, so its
  // blocks can be read without pins while files change.
  const uint64_t bs = io_.block_bytes();
  std::optional<uint32_t> dest;
  std::vector<uint8_t> data;
  uint64_t copied = 0;
  for (const Move& m : moves) {
    const uint64_t blocks = m.extent.blocks(bs);
    data.resize(blocks * bs);
    if (FsStatus ok = io_.read(m.extent.lba, data.data(), blocks); !ok) return fail(ok);
    // Until the move is recorded no file holds the copies: their zones are
    // pinned, so that nobody resets a destination that filled (and was let
    // go) or was lent to another writer meanwhile.
    std::vector<Extent> pieces;
    FsStatus written = write_blocks(kGcWriter, m.lifetime, IoClass::kOther, dest, data.data(),
                                    blocks, m.extent.length, WriteCause::kGc, [&](const Extent& e) {
                                      pieces.push_back(e);
                                      pin({e});
                                      return FsStatus();
                                    });
    std::lock_guard lock(mutex_);
    unpin(pieces);
    if (!written) return written;
    auto moved = move_extent_locked(m.id, m.extent, std::move(pieces));
    if (!moved) return moved.status();
    if (*moved) copied += m.extent.length;
  }
  if (dest) release_zone(*dest, kGcWriter);
  if (FsStatus ok = commit(); !ok) return ok;
  return reset_victim(victim, copied);
}

FsResult<bool> ZonedFs::move_extent_locked(FileId id, const Extent& from, std::vector<Extent> to) {
  // The file's extent moves -- unless the file went or changed meanwhile,
  // and the copy is garbage.
  const FileNode* node = meta_.file(id);
  if (node == nullptr ||
      std::find(node->extents.begin(), node->extents.end(), from) == node->extents.end()) {
    return false;
  }
  Record r;
  r.type = RecordType::kExtentMoved;
  r.id = id;
  r.extent = from;
  r.extents = std::move(to);
  if (FsStatus ok = apply_for_file(r, id); !ok) return ok;
  return true;
}

FsStatus ZonedFs::gc_zones(const std::vector<uint32_t>& victims) {
  struct Move {
    FileId id;
    Extent extent;
    Lifetime lifetime;
  };
  std::vector<Move> moves;
  std::map<uint32_t, uint64_t> copied;  // by victim
  {
    std::lock_guard lock(mutex_);
    for (const auto& [id, node] : meta_.files()) {
      for (const Extent& e : node.extents) {
        if (std::find(victims.begin(), victims.end(), e.zone) != victims.end()) {
          moves.push_back(Move{id, e, node.lifetime});
        }
      }
    }
  }
  // The copies of one lifetime go together (the policy places them by it).
  std::stable_sort(moves.begin(), moves.end(),
                   [](const Move& a, const Move& b) { return a.lifetime < b.lifetime; });
  const uint64_t bs = io_.block_bytes();
  const uint32_t width = static_cast<uint32_t>(victims.size());
  const uint64_t batch_bytes_max = std::max<uint64_t>(bs, policy_->stripe_unit_bytes()) * width * 4;
  Stripe stripe;
  std::optional<Lifetime> stripe_lifetime;
  auto let_go = [&] {
    for (auto& z : stripe.slots) {
      if (z) release_zone(*z, kGcWriter);
      z.reset();
    }
  };
  std::vector<uint8_t> data;
  std::vector<IoPiece> reads;
  for (size_t first = 0; first < moves.size();) {
    // A batch: moves of one lifetime, up to batch_bytes_max, read at once.
    size_t last = first;
    uint64_t blocks = 0;
    while (last < moves.size() && moves[last].lifetime == moves[first].lifetime &&
           (last == first || (blocks + moves[last].extent.blocks(bs)) * bs <= batch_bytes_max)) {
      blocks += moves[last].extent.blocks(bs);
      ++last;
    }
    data.resize(blocks * bs);
    reads.clear();
    uint64_t at = 0;
    for (size_t i = first; i < last; ++i) {
      const uint64_t n = moves[i].extent.blocks(bs);
      reads.push_back(IoPiece{moves[i].extent.lba, data.data() + at * bs, n, 0});
      at += n;
    }
    // The victims are ours (collecting): read without pins.
    if (FsStatus ok = io_.read_all(reads); !ok) return fail(ok);
    if (stripe_lifetime != moves[first].lifetime) {
      let_go();
      stripe = Stripe{};
      stripe.slots.resize(width);
      stripe_lifetime = moves[first].lifetime;
    }
    // Until the moves are recorded no file holds the copies: their zones
    // are pinned (see gc_one_zone).
    std::vector<Extent> pieces;
    FsStatus written =
        write_striped(kGcWriter, moves[first].lifetime, IoClass::kOther, stripe, data.data(),
                      blocks, blocks * bs, WriteCause::kGc, [&](const Extent& e) {
                        pieces.push_back(e);
                        pin({e});
                        return FsStatus();
                      });
    std::lock_guard lock(mutex_);
    unpin(pieces);
    if (!written) {
      // write_striped let the stripe's zones go.
      return written;
    }
    // The pieces, cut back into each move's extents.
    size_t p = 0;
    uint64_t used = 0;  // blocks of pieces[p] given out
    for (size_t i = first; i < last; ++i) {
      const Move& m = moves[i];
      uint64_t need = m.extent.blocks(bs);
      uint64_t length = m.extent.length;
      std::vector<Extent> parts;
      while (need > 0) {
        const Extent& piece = pieces.at(p);
        const uint64_t n = std::min(need, piece.blocks(bs) - used);
        const uint64_t bytes = std::min(length, n * bs);
        parts.push_back(Extent{piece.zone, piece.lba + used, bytes});
        length -= bytes;
        need -= n;
        used += n;
        if (used == piece.blocks(bs)) {
          ++p;
          used = 0;
        }
      }
      auto moved = move_extent_locked(m.id, m.extent, std::move(parts));
      if (!moved) return moved.status();
      if (*moved) copied[m.extent.zone] += m.extent.length;
    }
    first = last;
  }
  let_go();
  if (FsStatus ok = commit(); !ok) return ok;
  for (uint32_t victim : victims) {
    if (FsStatus ok = reset_victim(victim, copied[victim]); !ok) return ok;
  }
  return {};
}

FsStatus ZonedFs::reset_victim(uint32_t victim, uint64_t copied) {
  {
    std::unique_lock lock(mutex_);
    ++counters_.gc_runs;
    counters_.gc_copied_bytes += copied;
    // Readers of the old extents finish first (bounded: a read is one
    // device command at a time).
    changed_.wait_for(lock, std::chrono::seconds(30),
                      [&] { return zones_->zone(victim).readers == 0; });
    DataZone& z = zones_->zone(victim);
    if (z.live_blocks != 0 || z.readers != 0 || z.freed_seq > durable_seq_) {
      z.collecting = false;  // a file kept data here after all; try again later
      return {};
    }
  }
  FsStatus reset = io_.reset(victim);
  std::lock_guard lock(mutex_);
  DataZone& z = zones_->zone(victim);
  if (!reset) {
    z.collecting = false;
    if (failure_.empty()) failure_ = reset.message();
    changed_.notify_all();
    return reset;
  }
  zones_->mark_reset(victim);
  policy_->on_zone_reset(victim);
  ++counters_.zones_reset;
  if (copied == 0) ++counters_.zones_reset_without_copy;
  changed_.notify_all();
  return {};
}

void ZonedFs::schedule_background_gc() {
  // Under mutex_: unmount() cancels the timer set here (and waits for one
  // running), and no timer is set once it has begun.
  if (unmounted_ || !failure_.empty()) return;
  gc_timer_ = device_.clock().add_timer(policy_->gc_period_ns(options_.gc_period_ns),
                                        [this] { background_gc(); });
}

void ZonedFs::background_gc() {
  {
    std::lock_guard lock(mutex_);
    if (unmounted_ || !failure_.empty()) return;
  }
  // The minor collection: zones that hold nothing are reset, nothing copied.
  if (policy_->minor_gc()) (void)reclaim();
  // Each zone set keeps the policy's share of its zones empty.
  bool reclaimed = policy_->minor_gc();
  for (uint32_t set = 0; set < zones_->set_count(); ++set) {
    const uint32_t target = gc_target_zones(set);
    bool low = false;
    {
      std::lock_guard lock(mutex_);
      low = zones_->empty_count(set_bit(set)) < target;
    }
    if (!low) continue;
    if (!reclaimed) (void)reclaim();
    reclaimed = true;
    (void)collect_garbage_in(set, target);
  }
  std::lock_guard lock(mutex_);
  schedule_background_gc();
}

}  // namespace zonelab::fs
