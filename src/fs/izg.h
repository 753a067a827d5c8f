// Independent zone groups (IZGs, seed 004 §IV-A, Fig. 5): zones that share
// hardware (a die, a channel) slow each other down; zones in different
// groups do not. The probe finds the groups by timing alone, through the
// normal command path: a pivot "thread" reads its zone without pause while
// a needle reads another zone (the pivot keeps `pivot_depth` reads in
// flight); when the needle's read latency rises above
// its baseline (alone) by more than a threshold, the needle joins the
// pivot's group. The next pivot is the first zone left without a group, and
// so on until every zone has one.
//
// Bounded: the probe measures the first `samples` zones. When their groups
// repeat with a period (group(z) = group(z - P), two periods at least), the
// rest of the device is taken to follow it, and `verify` zones spread over
// the rest are checked against the inferred group (the needle slows beside
// its group's pivot, and not beside another's); if any check fails, or
// there is no period, every remaining zone is measured against each
// group's pivot, up to a budget of reads, after which zones are left
// without a group and the result says so.
//
// The probe writes only into empty zones (a read above the write pointer
// returns zeros without touching the flash, and would time nothing) and
// resets each zone it wrote when it is done, keeping within the device's
// active zone limit; zones that hold data are read as they are.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fs/placement.h"
#include "fs/status.h"
#include "stack/stack.h"

namespace zonelab::fs {

// Each device zone's group, in a text the policy state keeps: the zone
// count, then either a period ("p=P:g0.g1...") or every zone's group
// ("z=g0.g1..." with runs as "g*n"); kNoGroup is "-".
struct IzgMap {
  std::vector<uint32_t> group;  // per device zone
  uint32_t groups = 0;          // distinct groups (kNoGroup not counted)

  std::string encode() const;
  // Checks the text against `zone_count`; the message says what is wrong.
  static FsResult<IzgMap> decode(std::string_view text, uint32_t zone_count);
  // The zones of each group, in zone order.
  std::vector<std::vector<uint32_t>> members() const;
};

struct IzgProbeOptions {
  // The rise over the baseline that means "same group", in percent; 0: the
  // middle of the widest gap between the rises the first pivot's needles
  // show (seed 004 Fig. 3's bands), or, with no gap, one group when every
  // needle slowed by 15 % or more and none otherwise (after the reads grew
  // to show a rise, if they could: see probe_izg).
  uint32_t threshold_pct = 0;
  uint32_t samples = 512;           // zones measured before a period is looked for
  uint32_t verify = 64;             // zones past the samples checked against the period
  uint64_t read_bytes = 192 << 10;  // each read (seed 004 Fig. 3: 192 KB)
  uint32_t repeats = 4;             // needle reads per pair, averaged
  // The pivot's reads in flight: enough to keep its hardware busy, so that
  // a zone sharing any of it waits (seed 004 Fig. 3's scan is 1).
  uint32_t pivot_depth = 1;
  uint64_t read_budget = 400'000;  // needle reads at most
};

// One needle measurement.
struct IzgSample {
  uint32_t pivot = 0;
  uint32_t needle = 0;
  uint64_t baseline_ns = 0;   // the needle's read alone
  uint64_t contended_ns = 0;  // beside the pivot's reads (mean)
  bool same_group = false;
};

struct IzgProbeResult {
  IzgMap map;
  uint32_t measured_zones = 0;  // zones given a group by measurement
  uint32_t period = 0;          // 0: none found (or not needed)
  uint32_t inferred_zones = 0;  // given a group by the period
  uint32_t verified = 0;        // checks of the period that passed
  uint32_t verify_failures = 0;
  uint32_t unknown_zones = 0;  // left without a group (offline, or past the budget)
  uint64_t needle_reads = 0;
  uint64_t threshold_bp = 0;  // the threshold used, in basis points of the baseline
  uint64_t read_bytes = 0;    // each read, as the probe settled on it
  uint64_t device_ns = 0;     // device time the probe took
  uint64_t wall_ns = 0;       // and the time here
  uint64_t baseline_min_ns = 0, baseline_max_ns = 0;
  // The latency bands seen: same-group needles, and the rest (min, max of
  // the contended means).
  uint64_t same_min_ns = 0, same_max_ns = 0, other_min_ns = 0, other_max_ns = 0;
  std::vector<IzgSample> samples;  // the first pivot's needles (Fig. 3's scan)
  // Findings a user must hear: every zone interferes with every other, the
  // budget ran out, the period failed its checks.
  std::vector<std::string> warnings;
  bool all_interfere = false;
};

// Runs the probe on a virtual-time stack of a zoned device.
FsResult<IzgProbeResult> probe_izg(Stack& stack, const IzgProbeOptions& options);
// Runs it on a device built from `config` that keeps no data: timing alone,
// and the device the configuration came from is never changed (mkfs, which
// must refuse before it changes anything, and fs probe).
FsResult<IzgProbeResult> probe_izg_of(const Config& config, const IzgProbeOptions& options);

}  // namespace zonelab::fs
