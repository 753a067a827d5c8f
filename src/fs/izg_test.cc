// The IZG map's text and the probe, checked against the truth each
// configuration implies (zone z -> its channel and die), which the probe
// itself never reads.
#include "fs/izg.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

#include "stack/stack.h"
#include "zonelab/config.h"

namespace zonelab::fs {
namespace {

Config config_of(const std::string& preset, const std::vector<std::string>& overrides = {}) {
  auto c = preset_config(preset);
  EXPECT_TRUE(c.ok());
  Config config = *c;
  EXPECT_TRUE(apply_override(config, "store.backing=none").ok());
  for (const std::string& o : overrides) EXPECT_TRUE(apply_override(config, o).ok()) << o;
  return config;
}

// The hardware a zone uses, from the configuration: zones of one group take
// the same channels and dies (zns/zone_layout.h: group g takes channel group
// g mod channel_groups and die group (g / channel_groups) mod die_groups).
uint32_t true_group(const Config& c, uint32_t zone) {
  const uint64_t channel_groups = c.flash.channels / c.zns.channels_per_zone;
  const uint64_t die_groups = c.flash.dies_per_channel / c.zns.dies_per_zone;
  return static_cast<uint32_t>(zone % (channel_groups * die_groups));
}

// The probe's partition equals the true one: two zones share a probe group
// exactly when they share hardware.
void expect_true_partition(const Config& c, const IzgMap& map, uint32_t expected_groups) {
  ASSERT_EQ(map.groups, expected_groups);
  std::map<uint32_t, uint32_t> probe_to_truth;
  std::map<uint32_t, uint32_t> truth_to_probe;
  for (uint32_t z = 0; z < map.group.size(); ++z) {
    ASSERT_NE(map.group[z], kNoGroup) << "zone " << z;
    uint32_t truth = true_group(c, z);
    auto [a, fresh_a] = probe_to_truth.emplace(map.group[z], truth);
    auto [b, fresh_b] = truth_to_probe.emplace(truth, map.group[z]);
    ASSERT_EQ(a->second, truth) << "zone " << z << " joined a group of other hardware";
    ASSERT_EQ(b->second, map.group[z]) << "zone " << z << " was split from its hardware's group";
  }
}

IzgProbeResult probe(const Config& c, IzgProbeOptions options = {}) {
  auto stack = Stack::make(c);
  EXPECT_TRUE(stack.ok()) << stack.error();
  auto result = probe_izg(**stack, options);
  EXPECT_TRUE(result.ok()) << result.status().message();
  // The probe leaves every zone as it found it (all empty here).
  for (uint32_t z = 0; z < (*stack)->info().zone_count; ++z) {
    EXPECT_EQ((*stack)->zone(z).state, ZoneState::kEmpty) << "zone " << z;
  }
  return *result;
}

TEST(IzgProbe, FindsSeed004sThirtyTwoGroupsOnThousandsOfZones) {
  Config c = config_of("zenfsplus");
  IzgProbeResult r = probe(c);
  expect_true_partition(c, r.map, 32);
  EXPECT_EQ(r.period, 32u);
  EXPECT_GT(r.verified, 0u);
  EXPECT_EQ(r.verify_failures, 0u);
  EXPECT_EQ(r.measured_zones + r.inferred_zones, c.zns.zone_count);
  EXPECT_TRUE(r.warnings.empty());
  // Fig. 3's three bands: a needle on another channel reads at its
  // baseline; on zone 0's channel a little slower; on its die much slower.
  std::map<uint32_t, IzgSample> scan;
  for (const IzgSample& s : r.samples) scan[s.needle] = s;
  ASSERT_TRUE(scan.count(1) && scan.count(8) && scan.count(32));
  EXPECT_LT(scan[1].contended_ns, scan[8].contended_ns);   // other channel < same channel
  EXPECT_LT(scan[8].contended_ns, scan[32].contended_ns);  // same channel < same die
  EXPECT_FALSE(scan[8].same_group);
  EXPECT_TRUE(scan[32].same_group);
}

TEST(IzgProbe, FindsSeed002sSixteenGroups) {
  Config c = config_of("zssd-small", {"zns.zone_count=2000"});
  expect_true_partition(c, probe(c).map, 16);
}

TEST(IzgProbe, FindsGroupsOfZonesSpanningSeveralUnits) {
  // Two channels per zone: 4 channel groups x 2 dies.
  Config c = config_of("zssd-small", {"zns.channels_per_zone=2", "zns.zone_count=1000"});
  expect_true_partition(c, probe(c).map, 8);
  // Both dies of one channel per zone: 8 channel groups.
  Config d = config_of("zssd-small", {"zns.dies_per_zone=2", "zns.zone_count=600"});
  expect_true_partition(d, probe(d).map, 8);
}

TEST(IzgProbe, MeasuresEveryZoneWhenTheSamplesCoverTheDevice) {
  Config c = config_of("zssd-small", {"zns.zone_count=100"});
  IzgProbeResult r = probe(c);
  expect_true_partition(c, r.map, 16);
  EXPECT_EQ(r.measured_zones, 100u);
  EXPECT_EQ(r.inferred_zones, 0u);
}

TEST(IzgProbe, MeasuresTheRestWhenNoPeriodShows) {
  // Fewer samples than two periods: every zone past them is measured.
  Config c = config_of("zssd-small", {"zns.zone_count=60"});
  IzgProbeOptions o;
  o.samples = 20;
  IzgProbeResult r = probe(c, o);
  expect_true_partition(c, r.map, 16);
  EXPECT_EQ(r.period, 0u);
  EXPECT_EQ(r.measured_zones, 60u);
}

TEST(IzgProbe, SaysSoWhenEveryZoneInterferesWithEveryOther) {
  // Zones that span every unit: confznspp (a 14-zone active limit the probe
  // keeps within), small (reads that must grow before they meet), zn540 (a
  // write buffer and reset bookkeeping that drift), flexzns.
  for (const char* preset : {"confznspp", "small", "zn540", "flexzns"}) {
    IzgProbeResult r = probe(config_of(preset));
    EXPECT_TRUE(r.all_interfere) << preset;
    EXPECT_EQ(r.map.groups, 1u) << preset;
    EXPECT_EQ(r.unknown_zones, 0u) << preset;
    EXPECT_FALSE(r.warnings.empty()) << preset;
  }
}

TEST(IzgProbe, RefusesABlockDeviceAndBadOptions) {
  auto block = Stack::make(config_of("small", {"interface=block"}));
  ASSERT_TRUE(block.ok()) << block.error();
  auto r = probe_izg(**block, {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("zoned device"), std::string::npos);
  auto zns = Stack::make(config_of("small"));
  ASSERT_TRUE(zns.ok());
  IzgProbeOptions bad;
  bad.threshold_pct = 2000;
  EXPECT_FALSE(probe_izg(**zns, bad).ok());
}

TEST(IzgMapText, RoundTripsPeriodicAndIrregularMaps) {
  IzgMap periodic;
  for (uint32_t z = 0; z < 1000; ++z) periodic.group.push_back(z % 32);
  periodic.groups = 32;
  std::string text = periodic.encode();
  EXPECT_EQ(text.rfind("1000:p=32:", 0), 0u) << text;
  auto back = IzgMap::decode(text, 1000);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->group, periodic.group);
  EXPECT_EQ(back->groups, 32u);

  IzgMap irregular;
  irregular.group = {0, 0, 0, 1, kNoGroup, 2, 2, 1, 0};
  auto again = IzgMap::decode(irregular.encode(), 9);
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(again->group, irregular.group);
  EXPECT_EQ(again->groups, 3u);
  EXPECT_EQ(again->members().size(), 3u);
}

TEST(IzgMapText, RefusesWhatDoesNotDescribeTheDevice) {
  for (const char* bad :
       {"", "9", "9:", "10:p=3:0.1.2", "9:p=0:", "9:p=3:0.1", "9:z=0*8", "9:z=0*10", "9:z=a",
        "9:q=1", "9:p=3:0.1.2.3", "9:z=0*4294967295", "9:z=1048576*9", "99999999999:z=0"}) {
    EXPECT_FALSE(IzgMap::decode(bad, 9).ok()) << bad;
  }
  // Random text never crashes the decoder.
  std::mt19937_64 rng(7);
  const std::string alphabet = "0123456789:.*pz=-";
  for (int i = 0; i < 20000; ++i) {
    std::string text;
    for (size_t n = rng() % 24; n > 0; --n) text += alphabet[rng() % alphabet.size()];
    (void)IzgMap::decode(text, static_cast<uint32_t>(rng() % 64));
  }
}

}  // namespace
}  // namespace zonelab::fs
