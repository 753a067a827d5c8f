// The ZenFS+ policy (seed 004 §IV): ZenFS's lifetime matching, made aware of
// the device's independent zone groups (IZGs, izg.h), with flush and
// compaction kept apart and proactive garbage collection.
//
//   - Isolation (§IV-B, Algorithms 1-2): a group is busy while a writer
//     holds a zone in it or a read is in progress there. A flush takes a
//     zone in an idle group first, then one in a group only flushes use;
//     compaction likewise keeps off the groups flushes hold. The log keeps
//     ZenFS's placement (zones of its own).
//   - Proactive garbage collection (§IV-D): every `minor_gc_period` of
//     device time the zones that hold nothing are reset, without copying
//     (minor GC); when fewer than `full_gc_trigger` percent of the data
//     zones are empty, the zones with the smallest live share are emptied
//     (full GC, greedy). With minor_gc=off only the full collection runs.
// Without a map (the probe could not tell groups apart) it places as ZenFS
// does.
#include <fmt/format.h>

#include <algorithm>

#include "common/units.h"
#include "fs/izg.h"
#include "fs/placement.h"

namespace zonelab::fs {
namespace {

struct Options {
  uint32_t stripe_width = 16;  // W (§IV-C: the maximum striping width)
  bool stripe_width_given = false;
  uint64_t stripe_unit_bytes = 192 << 10;
  bool isolation = true;
  bool minor_gc = true;
  uint64_t minor_gc_period_ns = 10'000'000'000;
  uint32_t full_gc_trigger_pct = 10;
  uint32_t threshold_pct = 0;  // the probe's; 0: chosen from the rises
  uint32_t samples = 512;
  std::string izg;  // the map's text; empty: none
};

FsStatus parse_switch(const std::string& key, const std::string& value, bool& out) {
  if (value == "on" || value == "1" || value == "true") {
    out = true;
  } else if (value == "off" || value == "0" || value == "false") {
    out = false;
  } else {
    return FsStatus(Code::kInvalid, fmt::format("policy option {}={}: on or off", key, value));
  }
  return {};
}

FsStatus parse_number(const std::string& key, const std::string& value, uint64_t lo, uint64_t hi,
                      uint32_t& out) {
  auto n = parse_count(value);
  if (!n || *n < lo || *n > hi) {
    return FsStatus(Code::kInvalid,
                    fmt::format("policy option {}={}: a number from {} to {}", key, value, lo, hi));
  }
  out = static_cast<uint32_t>(*n);
  return {};
}

class ZenFsPlusPolicy final : public PlacementPolicy {
 public:
  ZenFsPlusPolicy(Options options, IzgMap map) : o_(std::move(options)), map_(std::move(map)) {
    groups_ = map_.group;
  }

  std::string_view name() const override { return "zenfs+"; }

  std::string state_text() const override {
    std::string out;
    for (const auto& [key, value] : describe()) {
      if (key == "groups") continue;  // derived from the map
      out += fmt::format("{}={}\n", key, value);
    }
    if (!o_.izg.empty()) out += fmt::format("izg={}\n", o_.izg);
    return out;
  }

  std::map<std::string, std::string> describe() const override {
    return {
        {"stripe_width", std::to_string(width())},
        {"stripe_unit", format_size(o_.stripe_unit_bytes)},
        {"isolation", o_.isolation ? "on" : "off"},
        {"minor_gc", o_.minor_gc ? "on" : "off"},
        {"minor_gc_period", format_duration(o_.minor_gc_period_ns)},
        {"full_gc_trigger", std::to_string(o_.full_gc_trigger_pct)},
        {"threshold", std::to_string(o_.threshold_pct)},
        {"samples", std::to_string(o_.samples)},
        {"groups", std::to_string(map_.groups)},
    };
  }

  Placement place(const ZoneTable& zones, const PlacementRequest& request) override {
    Placement out;
    std::optional<uint32_t> zone;
    mark_stripe_groups(request);
    if (isolating(request)) {
      refresh_busy(zones);
      // Not in a group the other side of flush/compaction holds (a zone
      // without a group, kNoGroup, is past every group), nor in one the
      // stripe has.
      zone = zenfs_continue_zone(zones, request, [&](const ZoneView& z) {
        return z.group >= busy_.size() ||
               (!busy_[z.group].busy_for(request.io_class, o_.isolation) && !in_stripe_[z.group]);
      });
    } else if (!request.stripe.empty() && !in_stripe_.empty()) {
      zone = zenfs_continue_zone(zones, request, [&](const ZoneView& z) {
        return z.group >= in_stripe_.size() || !in_stripe_[z.group];
      });
    } else {
      zone = zenfs_continue_zone(zones, request);
    }
    if (zone) {
      out.kind = Placement::Kind::kContinue;
      out.zone = *zone;
    }
    return out;
  }

  std::optional<uint32_t> choose_empty(const ZoneTable& zones,
                                       const PlacementRequest& request) override {
    const uint32_t n = zones.size();
    if (groups_.empty() || map_.groups == 0) return next_empty_zone(zones, next_empty_);
    refresh_busy(zones);
    mark_stripe_groups(request);
    // The first empty, free zone of each group, from the zone cursor on.
    std::vector<std::optional<uint32_t>> first(busy_.size());
    for (uint32_t step = 0; step < n; ++step) {
      const uint32_t index = (next_empty_ + step) % n;
      ZoneView z = zones.at(index);
      if (!z.empty() || !z.free() || z.group == kNoGroup || z.group >= first.size()) continue;
      if (!first[z.group]) first[z.group] = index;
    }
    // Tiers: an idle group; a group only this class uses; any group -- each
    // outside the stripe's groups first (tiers 0-2), then in them (3-5).
    const IoClass mine = request.io_class;
    for (int tier = 0; tier < 6; ++tier) {
      for (uint32_t step = 0; step < busy_.size(); ++step) {
        const uint32_t g = (next_group_ + step) % static_cast<uint32_t>(busy_.size());
        if (!first[g]) continue;
        if ((tier < 3) == (g < in_stripe_.size() && in_stripe_[g])) continue;
        const GroupUse& use = busy_[g];
        const int t = tier % 3;
        bool fits =
            t == 2 || (t == 0 && use.idle()) || (t == 1 && !use.busy_for(mine, o_.isolation));
        if (!fits) continue;
        next_group_ = (g + 1) % static_cast<uint32_t>(busy_.size());
        const uint32_t index = *first[g];
        next_empty_ = (index + 1) % n;
        return zones.at(index).zone;
      }
    }
    return next_empty_zone(zones, next_empty_);  // only zones without a group are left
  }

  uint32_t stripe_width(const PlacementRequest& request) const override {
    if (request.for_gc) return 1;
    if (request.io_class != IoClass::kFlush && request.io_class != IoClass::kCompaction) return 1;
    return width();
  }
  uint64_t stripe_unit_bytes() const override { return o_.stripe_unit_bytes; }
  uint32_t gc_unit() const override { return width(); }
  bool parallel_reads() const override { return width() > 1; }
  uint32_t active_zones_wanted() const override {
    // A flush and two compactions striped at once, the log, and collection.
    return width() > 1 ? 3 * width() + 4 : 0;
  }

  bool finish_on_release(const ZoneView& zone, uint32_t finish_threshold_pct) const override {
    return zone.room_lbas * 100 < zone.capacity_lbas * finish_threshold_pct;
  }

  uint64_t gc_period_ns(uint64_t /*mount_period_ns*/) const override {
    return o_.minor_gc_period_ns;
  }
  bool minor_gc() const override { return o_.minor_gc; }
  bool reset_when_freed() const override { return false; }
  uint32_t gc_free_target(uint32_t data_zones, uint32_t /*gc_free_pct*/) const override {
    uint64_t share = uint64_t{data_zones} * o_.full_gc_trigger_pct / 100;
    return static_cast<uint32_t>(std::max<uint64_t>(2, share));
  }

  const std::vector<uint32_t>& zone_groups() const override { return groups_; }
  std::optional<ProbeRequest> probe_request() const override {
    if (!o_.izg.empty()) return std::nullopt;
    return ProbeRequest{o_.threshold_pct, o_.samples};
  }

 private:
  // What holds a group now.
  struct GroupUse {
    uint32_t flush = 0;       // zones flushes hold
    uint32_t compaction = 0;  // zones compactions hold
    uint32_t other = 0;       // zones other writers hold
    uint32_t readers = 0;     // reads in progress
    bool idle() const { return flush + compaction + other + readers == 0; }
    // Busy for a writer of `mine`: the other side of flush/compaction holds
    // it (a flush also keeps off groups being read).
    bool busy_for(IoClass mine, bool isolation) const {
      if (!isolation) return false;
      if (mine == IoClass::kFlush) return compaction > 0 || readers > 0;
      if (mine == IoClass::kCompaction) return flush > 0;
      return false;
    }
  };

  // The stripe width in effect: at most the groups the map has (1 without
  // a map: zones of one group share their hardware, and striping over them
  // gains nothing).
  uint32_t width() const {
    if (groups_.empty() || map_.groups < 2) return 1;
    return std::min(o_.stripe_width, map_.groups);
  }

  void mark_stripe_groups(const PlacementRequest& request) {
    in_stripe_.assign(map_.groups, false);
    for (uint32_t zone : request.stripe) {
      if (zone < groups_.size() && groups_[zone] < in_stripe_.size()) {
        in_stripe_[groups_[zone]] = true;
      }
    }
  }

  bool isolating(const PlacementRequest& request) const {
    return o_.isolation && !groups_.empty() && map_.groups > 1 && !request.for_gc &&
           (request.io_class == IoClass::kFlush || request.io_class == IoClass::kCompaction);
  }

  void refresh_busy(const ZoneTable& zones) {
    busy_.assign(map_.groups, GroupUse{});
    for (uint32_t i = 0; i < zones.size(); ++i) {
      ZoneView z = zones.at(i);
      if (z.group == kNoGroup || z.group >= busy_.size()) continue;
      GroupUse& use = busy_[z.group];
      use.readers += z.readers;
      if (!z.held) continue;
      if (z.writer_class == IoClass::kFlush) {
        ++use.flush;
      } else if (z.writer_class == IoClass::kCompaction) {
        ++use.compaction;
      } else {
        ++use.other;
      }
    }
  }

  Options o_;
  IzgMap map_;
  std::vector<uint32_t> groups_;
  std::vector<GroupUse> busy_;
  std::vector<bool> in_stripe_;  // groups the asking writer's stripe holds
  uint32_t next_empty_ = 0;
  uint32_t next_group_ = 0;
};

}  // namespace

FsResult<std::unique_ptr<PlacementPolicy>> make_zenfs_plus_policy(std::string_view text,
                                                                  const PolicyContext& context) {
  auto pairs = parse_policy_options(text);
  if (!pairs) return pairs.status();
  Options o;
  for (const auto& [key, value] : *pairs) {
    FsStatus ok;
    if (key == "stripe_width") {
      ok = parse_number(key, value, 1, 1024, o.stripe_width);
      o.stripe_width_given = true;
    } else if (key == "stripe_unit") {
      auto bytes = parse_size_bytes(value);
      if (!bytes || *bytes < (4 << 10) || *bytes > (64 << 20) || *bytes % (4 << 10) != 0) {
        ok = FsStatus(Code::kInvalid,
                      fmt::format("policy option stripe_unit={}: a size from 4KiB to 64MiB, a "
                                  "multiple of 4KiB",
                                  value));
      } else {
        o.stripe_unit_bytes = *bytes;
      }
    } else if (key == "isolation") {
      ok = parse_switch(key, value, o.isolation);
    } else if (key == "minor_gc") {
      ok = parse_switch(key, value, o.minor_gc);
    } else if (key == "minor_gc_period") {
      auto ns = parse_time_ns(value);
      if (!ns || *ns < 1'000'000 || *ns > 3'600'000'000'000) {
        ok =
            FsStatus(Code::kInvalid,
                     fmt::format("policy option minor_gc_period={}: a time from 1ms to 1h", value));
      } else {
        o.minor_gc_period_ns = *ns;
      }
    } else if (key == "full_gc_trigger") {
      ok = parse_number(key, value, 0, 50, o.full_gc_trigger_pct);
    } else if (key == "threshold") {
      ok = parse_number(key, value, 0, 1000, o.threshold_pct);
    } else if (key == "samples") {
      ok = parse_number(key, value, 2, 1 << 20, o.samples);
    } else if (key == "izg") {
      o.izg = value;
    } else {
      ok = FsStatus(Code::kInvalid,
                    fmt::format("policy zenfs+ has no option {} (it takes stripe_width, "
                                "stripe_unit, isolation, minor_gc, minor_gc_period, "
                                "full_gc_trigger, threshold, samples)",
                                key));
    }
    if (!ok) return ok;
  }
  IzgMap map;
  if (!o.izg.empty()) {
    auto decoded = IzgMap::decode(o.izg, context.zone_count);
    if (!decoded) return decoded.status();
    map = std::move(*decoded);
    if (o.stripe_width_given && map.groups >= 2 && o.stripe_width > map.groups) {
      return FsStatus(Code::kInvalid,
                      fmt::format("policy option stripe_width={}: the device has {} independent "
                                  "zone groups (the IZG map), so at most {}",
                                  o.stripe_width, map.groups, map.groups));
    }
  }
  return std::unique_ptr<PlacementPolicy>(
      std::make_unique<ZenFsPlusPolicy>(std::move(o), std::move(map)));
}

}  // namespace zonelab::fs
