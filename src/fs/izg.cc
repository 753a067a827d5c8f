// The IZG map's text and the probe; see izg.h.
#include "fs/izg.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <list>
#include <map>
#include <set>

namespace zonelab::fs {
namespace {

constexpr uint32_t kGroupsMax = 1 << 20;

std::string group_text(uint32_t g) { return g == kNoGroup ? "-" : std::to_string(g); }

// Runs of equal groups as "g" or "g*n", joined by '.'.
std::string runs_text(const std::vector<uint32_t>& groups, size_t begin, size_t end) {
  std::string out;
  for (size_t i = begin; i < end;) {
    size_t j = i;
    while (j < end && groups[j] == groups[i]) ++j;
    if (!out.empty()) out += '.';
    out += group_text(groups[i]);
    if (j - i > 1) out += fmt::format("*{}", j - i);
    i = j;
  }
  return out;
}

bool parse_u32(std::string_view text, uint32_t& out) {
  if (text.empty() || text.size() > 10) return false;
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v > UINT32_MAX) return false;
  out = static_cast<uint32_t>(v);
  return true;
}

// "g.g*n...." into at most `limit` groups.
FsStatus parse_runs(std::string_view text, size_t limit, std::vector<uint32_t>& out) {
  auto bad = [&](std::string_view what) {
    return FsStatus(Code::kInvalid, fmt::format("IZG map: {}", what));
  };
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('.', at);
    if (end == std::string_view::npos) end = text.size();
    std::string_view item = text.substr(at, end - at);
    at = end + 1;
    uint32_t count = 1;
    if (size_t star = item.find('*'); star != std::string_view::npos) {
      if (!parse_u32(item.substr(star + 1), count) || count == 0) return bad("a bad run length");
      item = item.substr(0, star);
    }
    uint32_t g = kNoGroup;
    if (item != "-" && (!parse_u32(item, g) || g >= kGroupsMax)) return bad("a bad group number");
    if (count > limit - out.size()) return bad("more groups than zones");
    out.insert(out.end(), count, g);
  }
  return {};
}

}  // namespace

std::string IzgMap::encode() const {
  const size_t n = group.size();
  // The smallest period that repeats at least twice, else every zone.
  for (size_t p = 1; p * 2 <= n; ++p) {
    bool periodic = true;
    for (size_t z = p; z < n && periodic; ++z) periodic = group[z] == group[z - p];
    if (periodic) return fmt::format("{}:p={}:{}", n, p, runs_text(group, 0, p));
  }
  return fmt::format("{}:z={}", n, runs_text(group, 0, n));
}

FsResult<IzgMap> IzgMap::decode(std::string_view text, uint32_t zone_count) {
  auto bad = [](std::string_view what) {
    return FsStatus(Code::kInvalid, fmt::format("IZG map: {}", what));
  };
  size_t colon = text.find(':');
  uint32_t zones = 0;
  if (colon == std::string_view::npos || !parse_u32(text.substr(0, colon), zones)) {
    return bad("no zone count");
  }
  if (zones != zone_count) {
    return bad(fmt::format("made for {} zones, the device has {}", zones, zone_count));
  }
  std::string_view rest = text.substr(colon + 1);
  IzgMap map;
  if (rest.starts_with("p=")) {
    size_t second = rest.find(':');
    uint32_t period = 0;
    if (second == std::string_view::npos || !parse_u32(rest.substr(2, second - 2), period) ||
        period == 0 || period > zones) {
      return bad("a bad period");
    }
    std::vector<uint32_t> first;
    if (FsStatus ok = parse_runs(rest.substr(second + 1), period, first); !ok) return ok;
    if (first.size() != period) return bad("a period of the wrong length");
    map.group.resize(zones);
    for (uint32_t z = 0; z < zones; ++z) map.group[z] = first[z % period];
  } else if (rest.starts_with("z=")) {
    if (FsStatus ok = parse_runs(rest.substr(2), zones, map.group); !ok) return ok;
    if (map.group.size() != zones) return bad("fewer groups than zones");
  } else {
    return bad("neither p= nor z=");
  }
  std::set<uint32_t> distinct;
  for (uint32_t g : map.group) {
    if (g != kNoGroup) distinct.insert(g);
  }
  map.groups = static_cast<uint32_t>(distinct.size());
  return map;
}

std::vector<std::vector<uint32_t>> IzgMap::members() const {
  std::map<uint32_t, std::vector<uint32_t>> by_group;
  for (uint32_t z = 0; z < group.size(); ++z) {
    if (group[z] != kNoGroup) by_group[group[z]].push_back(z);
  }
  std::vector<std::vector<uint32_t>> out;
  for (auto& [g, zones] : by_group) out.push_back(std::move(zones));
  return out;
}

namespace {

class Prober final : public CompletionSink {
 public:
  Prober(Stack& stack, const IzgProbeOptions& options) : stack_(stack), options_(options) {
    const DeviceInfo& info = stack.info();
    read_lbas_ = std::max<uint64_t>(1, options.read_bytes / info.lba_size_bytes);
    uint32_t active = 0;
    for (uint32_t z = 0; z < info.zone_count; ++z) active += zone_is_active(stack.zone(z).state);
    // Zones the probe may keep written at once: the device's active limit
    // less what is active already, less one for the zone being written.
    if (info.max_active != 0) {
      keep_ = info.max_active > active + 1 ? info.max_active - active - 1 : 0;
    }
  }

  // The zone holds `read_lbas_` blocks from its start (written now if it
  // was empty); false: it cannot be read for timing (offline, or written
  // part way below the read).
  FsResult<bool> prepare(uint32_t zone, uint32_t in_use_a, uint32_t in_use_b) {
    if (auto it = std::find(written_.begin(), written_.end(), zone); it != written_.end()) {
      written_.splice(written_.end(), written_, it);  // most recently used last
      return true;
    }
    ZoneDescriptor d = stack_.zone(zone);
    if (d.state == ZoneState::kOffline) return false;
    if (d.state == ZoneState::kFull || d.state == ZoneState::kReadOnly) {
      return d.capacity_lbas >= read_lbas_;
    }
    if (d.state != ZoneState::kEmpty) return d.wp_lba - d.start_lba >= read_lbas_;
    if (d.capacity_lbas < read_lbas_) return false;
    // Room under the active limit: reset the least recently used zone the
    // probe wrote that is not in use.
    while (keep_ != UINT32_MAX && written_.size() >= std::max<uint32_t>(keep_, 1)) {
      auto victim = std::find_if(written_.begin(), written_.end(),
                                 [&](uint32_t z) { return z != in_use_a && z != in_use_b; });
      if (victim == written_.end()) {
        return FsStatus(Code::kInvalid,
                        "the device's active zone limit leaves no room for the probe");
      }
      if (FsStatus ok = manage(*victim, ZoneAction::kReset); !ok) return ok;
      stack_.drive();  // an erase the reset left running ends before anything is timed
      written_.erase(victim);
    }
    // In commands of at most 256 KiB.
    const uint64_t chunk = std::max<uint64_t>(1, (256 << 10) / stack_.info().lba_size_bytes);
    for (uint64_t done = 0; done < read_lbas_;) {
      Command c;
      c.opcode = Opcode::kWrite;
      c.slba = d.start_lba + done;
      c.nlb = static_cast<uint32_t>(std::min(chunk, read_lbas_ - done));
      if (FsStatus ok = run(c, "probe write"); !ok) return ok;
      done += c.nlb;
    }
    // Closed, it holds no open resource; and whatever the device does in
    // the background after writes (a write buffer draining to flash) is
    // done before anything is timed.
    if (FsStatus ok = manage(zone, ZoneAction::kClose); !ok) return ok;
    stack_.drive();
    written_.push_back(zone);
    return true;
  }

  // Reads of `lbas` blocks from now on (the zones written for smaller ones
  // are reset, to be written again as needed).
  FsStatus set_read_lbas(uint64_t lbas) {
    if (FsStatus ok = clean_up(); !ok) return ok;
    read_lbas_ = lbas;
    return {};
  }
  uint64_t read_lbas() const { return read_lbas_; }

  // Resets every zone the probe wrote.
  FsStatus clean_up() {
    for (uint32_t z : written_) {
      if (FsStatus ok = manage(z, ZoneAction::kReset); !ok) return ok;
    }
    written_.clear();
    return {};
  }

  // The needle's read latency alone (the second of two reads).
  FsResult<uint64_t> alone(uint32_t zone) {
    uint64_t latency = 0;
    for (int i = 0; i < 2; ++i) {
      Command c = read_command(zone);
      if (FsStatus ok = run(c, "probe read"); !ok) return ok;
      latency = c.latency_ns();
    }
    ++reads_;
    return latency;
  }

  // The needle's mean read latency while the pivot reads without pause
  // (`pivot_depth` reads in flight).
  FsResult<uint64_t> beside(uint32_t pivot, uint32_t needle) {
    pivots_.assign(options_.pivot_depth, read_command(pivot));
    needle_ = read_command(needle);
    for (Command& c : pivots_) c.sink = this;
    needle_.sink = this;
    left_ = options_.repeats;
    sum_ns_ = 0;
    failed_ = false;
    for (Command& c : pivots_) stack_.device().submit(c);
    stack_.device().submit(needle_);
    stack_.drive();
    if (failed_) {
      return FsStatus(
          Code::kIoError,
          fmt::format("probe read of zone {} or {}: the device answered an error", pivot, needle));
    }
    reads_ += options_.repeats;
    return sum_ns_ / options_.repeats;
  }

  void on_complete(Command& c) override {
    if (c.status != Status::kSuccess) failed_ = true;
    if (&c != &needle_) {
      if (left_ > 0 && !failed_) resubmit(c);
      return;
    }
    sum_ns_ += c.latency_ns();
    if (--left_ > 0 && !failed_) resubmit(needle_);
  }

  uint64_t reads() const { return reads_; }

 private:
  Command read_command(uint32_t zone) const {
    Command c;
    c.opcode = Opcode::kRead;
    c.slba = stack_.zone(zone).start_lba;
    c.nlb = static_cast<uint32_t>(read_lbas_);
    return c;
  }
  void resubmit(Command& c) {
    c.status = Status::kSuccess;
    c.queue_next = nullptr;
    stack_.device().submit(c);
  }
  FsStatus manage(uint32_t zone, ZoneAction action) {
    Command c;
    c.opcode = Opcode::kZoneManagementSend;
    c.action = action;
    c.slba = stack_.zone(zone).start_lba;
    return run(c, "probe zone management");
  }
  FsStatus run(Command& c, const char* what) {
    if (!stack_.io().submit_wait(c)) {
      return FsStatus(Code::kIoError, fmt::format("{}: the device takes no more commands", what));
    }
    if (c.status != Status::kSuccess) {
      return FsStatus(Code::kIoError, fmt::format("{} at LBA {}: the device answered {}", what,
                                                  c.slba, status_name(c.status)));
    }
    return {};
  }

  Stack& stack_;
  const IzgProbeOptions& options_;
  uint64_t read_lbas_ = 1;
  uint32_t keep_ = UINT32_MAX;
  std::list<uint32_t> written_;  // zones the probe wrote, least recently used first
  std::vector<Command> pivots_;
  Command needle_;
  uint32_t left_ = 0;
  uint64_t sum_ns_ = 0;
  bool failed_ = false;
  uint64_t reads_ = 0;
};

// The rise of a contended read over its baseline, in basis points.
uint64_t rise_bp(uint64_t contended, uint64_t baseline) {
  if (baseline == 0 || contended <= baseline) return 0;
  return (contended - baseline) * 10'000 / baseline;
}

// Smallest rise, in basis points, that alone says "one group" when the
// first pivot's scan shows no gap (every needle slowed alike).
constexpr uint64_t kAloneRiseBp = 1'500;
// The widest gap between the rises of the first pivot's needles must be
// at least this wide to split them into two bands.
constexpr uint64_t kGapMinBp = 500;

// The threshold the first pivot's rises call for. Every needle slowed by
// kAloneRiseBp or more: they all share the pivot's hardware (one group).
// Otherwise the middle of the widest gap below a rise of at least
// kAloneRiseBp -- the band of small rises (a shared link, a shared channel)
// stays apart from the pivot's group -- or, when no needle rose that much,
// a threshold above them all.
uint64_t choose_threshold_bp(std::vector<uint64_t> rises) {
  if (rises.empty()) return kAloneRiseBp;
  std::sort(rises.begin(), rises.end());
  if (rises.front() >= kAloneRiseBp) return rises.front() / 2;
  uint64_t gap = 0;
  uint64_t at = 0;
  for (size_t i = 1; i < rises.size(); ++i) {
    if (rises[i] < kAloneRiseBp) continue;
    if (rises[i] - rises[i - 1] > gap) {
      gap = rises[i] - rises[i - 1];
      at = (rises[i] + rises[i - 1]) / 2;
    }
  }
  if (gap >= kGapMinBp) return at;
  return rises.back() + 1;
}

}  // namespace

FsResult<IzgProbeResult> probe_izg(Stack& stack, const IzgProbeOptions& options) {
  if (stack.realtime()) return FsStatus(Code::kInvalid, "the IZG probe runs in virtual time");
  const DeviceInfo& info = stack.info();
  if (info.interface != "zns") {
    return FsStatus(Code::kInvalid,
                    "the IZG probe needs a zoned device (interface = zns); this one is a block "
                    "device");
  }
  if (options.threshold_pct > 1000) {
    return FsStatus(Code::kInvalid, "probe threshold: 0 (chosen from the rises) to 1000 percent");
  }
  if (options.samples < 2 || options.repeats == 0 || options.read_bytes < info.lba_size_bytes ||
      options.pivot_depth == 0 || options.pivot_depth > 64) {
    return FsStatus(Code::kInvalid,
                    "probe: at least 2 samples, 1 repeat, one block per read and 1 to 64 pivot "
                    "reads in flight");
  }
  const uint32_t n = info.zone_count;
  IzgProbeResult out;
  out.map.group.assign(n, kNoGroup);
  const uint64_t start_ns = stack.sim().now_ns();
  const auto started = std::chrono::steady_clock::now();
  Prober prober(stack, options);
  std::vector<uint64_t> baseline(n, 0);
  std::vector<uint32_t> pivots;  // each group's pivot, by group number

  auto measure_alone = [&](uint32_t zone) -> FsResult<bool> {
    auto ready = prober.prepare(zone, UINT32_MAX, UINT32_MAX);
    if (!ready || !*ready) return ready;
    auto alone = prober.alone(zone);
    if (!alone) return alone.status();
    baseline[zone] = *alone;
    out.baseline_min_ns = out.baseline_min_ns == 0 ? *alone : std::min(out.baseline_min_ns, *alone);
    out.baseline_max_ns = std::max(out.baseline_max_ns, *alone);
    return true;
  };
  auto note_band = [&](uint64_t ns, bool same) {
    uint64_t& lo = same ? out.same_min_ns : out.other_min_ns;
    uint64_t& hi = same ? out.same_max_ns : out.other_max_ns;
    lo = lo == 0 ? ns : std::min(lo, ns);
    hi = std::max(hi, ns);
  };
  uint64_t threshold_bp = uint64_t{options.threshold_pct} * 100;
  // Does `needle` slow down beside `pivot`?
  auto interferes = [&](uint32_t pivot, uint32_t needle) -> FsResult<bool> {
    auto ready = prober.prepare(pivot, pivot, needle);
    if (!ready) return ready;
    ready = prober.prepare(needle, pivot, needle);
    if (!ready) return ready;
    // The baseline again, now: a device whose state drifts (a buffer, a
    // reset's bookkeeping) is compared with itself.
    auto alone = prober.alone(needle);
    if (!alone) return alone.status();
    auto contended = prober.beside(pivot, needle);
    if (!contended) return contended.status();
    bool same = rise_bp(*contended, *alone) > threshold_bp;
    note_band(*contended, same);
    return same;
  };
  auto over_budget = [&] { return prober.reads() >= options.read_budget; };

  // 1. The first `samples` zones, pivot by pivot. The first pivot's scan
  // measures every needle; unless a threshold was given, it is taken from
  // the gap in their rises. When they all rose alike and little, the reads
  // may be too small to meet on shared hardware: the scan is made again
  // with reads four times larger (up to three times, within a zone).
  const uint32_t window = std::min(n, options.samples);
  std::vector<uint32_t> left;
  std::vector<uint64_t> contended;
  std::vector<uint64_t> rises;
  uint64_t capacity_min = UINT64_MAX;
  for (uint32_t z = 0; z < window; ++z) {
    capacity_min = std::min(capacity_min, stack.zone(z).capacity_lbas);
  }
  for (int attempt = 0;; ++attempt) {
    left.clear();
    for (uint32_t z = 0; z < window; ++z) {
      auto usable = measure_alone(z);
      if (!usable) return usable.status();
      if (*usable) left.push_back(z);
    }
    if (left.empty()) break;
    const uint32_t pivot = left.front();
    contended.assign(left.size(), 0);
    rises.clear();
    for (size_t i = 1; i < left.size(); ++i) {
      auto ready = prober.prepare(pivot, pivot, left[i]);
      if (ready) ready = prober.prepare(left[i], pivot, left[i]);
      if (!ready) return ready.status();
      auto alone = prober.alone(left[i]);
      if (!alone) return alone.status();
      baseline[left[i]] = *alone;
      auto c = prober.beside(pivot, left[i]);
      if (!c) return c.status();
      contended[i] = *c;
      rises.push_back(rise_bp(*c, *alone));
    }
    const auto [lo, hi] = std::minmax_element(rises.begin(), rises.end());
    const bool uniform_and_small = !rises.empty() && *hi - *lo < kGapMinBp && *hi < kAloneRiseBp;
    const uint64_t larger = prober.read_lbas() * 4;
    if (threshold_bp != 0 || !uniform_and_small || attempt == 3 || larger > capacity_min) break;
    if (FsStatus ok = prober.set_read_lbas(larger); !ok) return ok;
    out.baseline_min_ns = out.baseline_max_ns = 0;
  }
  out.read_bytes = prober.read_lbas() * info.lba_size_bytes;
  if (!left.empty()) {
    const uint32_t pivot = left.front();
    if (threshold_bp == 0) threshold_bp = choose_threshold_bp(rises);
    out.threshold_bp = threshold_bp;
    pivots.push_back(pivot);
    out.map.group[pivot] = 0;
    std::vector<uint32_t> rest;
    for (size_t i = 1; i < left.size(); ++i) {
      bool same = rise_bp(contended[i], baseline[left[i]]) > threshold_bp;
      note_band(contended[i], same);
      if (out.samples.size() < 4096) {
        out.samples.push_back({pivot, left[i], baseline[left[i]], contended[i], same});
      }
      if (same) {
        out.map.group[left[i]] = 0;
      } else {
        rest.push_back(left[i]);
      }
    }
    left = std::move(rest);
  }
  while (!left.empty() && !over_budget()) {
    const uint32_t pivot = left.front();
    const uint32_t group = static_cast<uint32_t>(pivots.size());
    pivots.push_back(pivot);
    out.map.group[pivot] = group;
    std::vector<uint32_t> rest;
    for (size_t i = 1; i < left.size(); ++i) {
      auto same = interferes(pivot, left[i]);
      if (!same) return same.status();
      if (*same) {
        out.map.group[left[i]] = group;
      } else {
        rest.push_back(left[i]);
      }
    }
    left = std::move(rest);
  }
  out.measured_zones =
      static_cast<uint32_t>(std::count_if(out.map.group.begin(), out.map.group.begin() + window,
                                          [](uint32_t g) { return g != kNoGroup; }));

  // 2. The rest of the device: a period, checked; else zone by zone.
  bool measure_rest = window < n;
  if (window < n && pivots.size() > 1) {
    uint32_t period = 0;
    for (uint32_t p = 1; p * 2 <= window && period == 0; ++p) {
      bool periodic = true;
      for (uint32_t z = p; z < window && periodic; ++z) {
        periodic = out.map.group[z] == out.map.group[z - p] && out.map.group[z] != kNoGroup;
      }
      if (periodic) period = p;
    }
    if (period != 0) {
      const uint32_t checks = std::min(options.verify, n - window);
      bool held = true;
      for (uint32_t i = 0; i < checks && held; ++i) {
        // Spread over the rest, the last zone included.
        uint32_t z = window + static_cast<uint32_t>(uint64_t{n - window - 1} * (i + 1) /
                                                    std::max<uint32_t>(checks, 1));
        uint32_t expect = out.map.group[z % period];
        auto usable = measure_alone(z);
        if (!usable) return usable.status();
        if (!*usable) continue;
        auto same = interferes(pivots[expect], z);
        if (!same) return same.status();
        auto other = interferes(pivots[(expect + 1) % pivots.size()], z);
        if (!other) return other.status();
        held = *same && !*other;
        ++(held ? out.verified : out.verify_failures);
      }
      if (held) {
        out.period = period;
        for (uint32_t z = window; z < n; ++z) {
          if (stack.zone(z).state == ZoneState::kOffline) continue;
          out.map.group[z] = out.map.group[z % period];
          ++out.inferred_zones;
        }
        measure_rest = false;
      } else {
        out.warnings.push_back(fmt::format(
            "the groups of the first {} zones repeat every {} zones, but a zone past them did "
            "not follow: every zone is measured",
            window, period));
      }
    }
  }
  if (measure_rest) {
    for (uint32_t z = window; z < n && !over_budget(); ++z) {
      auto usable = measure_alone(z);
      if (!usable) return usable.status();
      if (!*usable) continue;
      uint32_t found = kNoGroup;
      for (uint32_t g = 0; g < pivots.size() && found == kNoGroup && !over_budget(); ++g) {
        auto same = interferes(pivots[g], z);
        if (!same) return same.status();
        if (*same) found = g;
      }
      if (found == kNoGroup && !over_budget()) {
        found = static_cast<uint32_t>(pivots.size());
        pivots.push_back(z);
      }
      out.map.group[z] = found;
      if (found != kNoGroup) ++out.measured_zones;
    }
  }
  if (FsStatus ok = prober.clean_up(); !ok) return ok;

  std::set<uint32_t> distinct;
  for (uint32_t g : out.map.group) {
    if (g == kNoGroup) {
      ++out.unknown_zones;
    } else {
      distinct.insert(g);
    }
  }
  out.map.groups = static_cast<uint32_t>(distinct.size());
  out.needle_reads = prober.reads();
  out.device_ns = stack.sim().now_ns() - start_ns;
  out.wall_ns = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                          std::chrono::steady_clock::now() - started)
                                          .count());
  if (over_budget() && out.unknown_zones > 0) {
    out.warnings.push_back(fmt::format("the probe stopped after {} reads: {} zones have no group",
                                       out.needle_reads, out.unknown_zones));
  }
  if (out.map.groups == 1 && n > 1 && out.measured_zones > 1) {
    out.all_interfere = true;
    out.warnings.push_back(
        "every zone interferes with every other: the device has one independent zone group");
  }
  return out;
}

FsResult<IzgProbeResult> probe_izg_of(const Config& config, const IzgProbeOptions& options) {
  Config scratch_config = config;
  scratch_config.store.backing = "none";
  auto scratch = Stack::make(scratch_config);
  if (!scratch) return FsStatus(Code::kInvalid, scratch.error());
  return probe_izg(**scratch, options);
}

}  // namespace zonelab::fs
