// FlexZNS's layout plan against what the geometry implies: Table I's
// utilization and seed 001 §III-B's example come out of the plan, and every
// parity chunk is where Algorithm 1 may put it.
#include "flash/flex_layout.h"

#include <gtest/gtest.h>

#include <set>
#include <utility>

namespace zonelab {
namespace {

constexpr uint64_t kMiB = 1ULL << 20;
constexpr uint64_t kGiB = 1ULL << 30;

// The flexzns preset (seed 001 Table II): 8 channels x 8 dies, a die's part
// of a superblock 4 planes x 2048 pages x 4 KiB, 128 superblocks.
FlexGeometry table_ii() {
  const FlexGeometry g = flex_geometry(preset_config("flexzns")->flash);
  EXPECT_EQ(g.dies, 64U);
  EXPECT_EQ(g.chunk_bytes, 4 * 2048 * 4096ULL);
  EXPECT_EQ(g.superblocks, 128U);
  EXPECT_EQ(g.flash_bytes(), 256 * kGiB);
  return g;
}

// Every parity chunk on a die outside its FBG (or, for a superblock-wide
// FBG, two on different dies), inside the parity area, no chunk twice.
void expect_parity_well_placed(const FlexLayout& layout) {
  std::set<std::pair<uint32_t, uint32_t>> taken;
  uint64_t chunks = 0;
  for (const ZoneSetLayout& set : layout.sets) {
    ASSERT_EQ(set.parity.size(), set.count);
    for (uint32_t k = 0; k < set.count; ++k) {
      const Fbg& fbg = set.fbgs[k];
      const bool whole = fbg.dies == layout.geometry.dies;
      ASSERT_EQ(set.parity[k].size(), whole ? 2U : 1U);
      for (const ParityChunk& c : set.parity[k]) {
        EXPECT_TRUE(whole || !fbg.holds(c.die)) << "FBG " << k << " die " << c.die;
        EXPECT_GE(c.superblock, layout.data_superblocks);
        EXPECT_LT(c.superblock, layout.data_superblocks + layout.parity_superblocks);
        EXPECT_LT(c.die, layout.geometry.dies);
        EXPECT_TRUE(taken.insert({c.superblock, c.die}).second) << "a chunk taken twice";
        ++chunks;
      }
      if (whole) {
        EXPECT_NE(set.parity[k][0].die, set.parity[k][1].die);
      }
    }
  }
  EXPECT_EQ(chunks, layout.parity_chunks);
}

TEST(FlexLayout, InZoneParityGivesTableOnesUtilization) {
  const FlexGeometry g = table_ii();
  for (uint64_t zone : {2048 * kMiB, 1024 * kMiB, 512 * kMiB, 256 * kMiB, 128 * kMiB}) {
    const ZoneSetSpec spec{zone, 1};
    auto layout = plan_flex_layout(g, {&spec, 1}, ParityPlacement::kInZone);
    ASSERT_TRUE(layout.ok()) << layout.error();
    const ZoneSetLayout& set = layout->sets[0];
    // A stripe of n dies: n - 1 data chunks and one parity chunk.
    const uint64_t n = zone / g.chunk_bytes;
    EXPECT_EQ(set.dies_per_fbg, n);
    EXPECT_EQ(set.capacity_bytes, (n - 1) * g.chunk_bytes);
    EXPECT_DOUBLE_EQ(static_cast<double>(set.capacity_bytes) / static_cast<double>(zone),
                     static_cast<double>(n - 1) / static_cast<double>(n));
    EXPECT_EQ(layout->parity_superblocks, 0U);
  }
}

TEST(FlexLayout, TheExampleOfSectionThreeB) {
  // 1 TiB of flash: 512 superblocks of 64 dies x 32 MiB; 64 zones of 512 MiB
  // and 480 of 2 GiB, parity apart.
  const FlexGeometry g{64, 32 * kMiB, 512};
  const ZoneSetSpec sets[] = {{512 * kMiB, 64}, {2 * kGiB, 480}};
  auto layout = plan_flex_layout(g, sets, ParityPlacement::kSeparate);
  ASSERT_TRUE(layout.ok()) << layout.error();
  // Data area: the sum of the zones; every zone's capacity is its size.
  EXPECT_EQ(layout->zone_bytes(), 64 * 512 * kMiB + 480 * 2 * kGiB);
  EXPECT_EQ(layout->capacity_bytes(), layout->zone_bytes());
  // Parity area: S_p x (N_sb + sum N_i), the superblock-wide zones twice.
  const uint64_t chunks = 480 + 64 + 480;
  EXPECT_EQ(layout->parity_chunks, chunks);
  EXPECT_EQ(layout->parity_bytes(), chunks * g.chunk_bytes);
  // Algorithm 1 packs the chunks without a hole: the data and parity areas
  // fill the flash exactly.
  EXPECT_EQ(layout->parity_superblocks, chunks / g.dies);
  EXPECT_EQ(layout->data_superblocks, 64 * 512 * kMiB / g.superblock_bytes() + 480);
  EXPECT_EQ(layout->data_superblocks + layout->parity_superblocks, g.superblocks);
  EXPECT_DOUBLE_EQ(layout->parity_share(), static_cast<double>(chunks * g.chunk_bytes) /
                                               static_cast<double>(g.flash_bytes()));
  expect_parity_well_placed(*layout);

  // One more 2 GiB zone needs a data superblock and a parity superblock
  // more than the flash has.
  const ZoneSetSpec more[] = {{512 * kMiB, 64}, {2 * kGiB, 481}};
  auto refused = plan_flex_layout(g, more, ParityPlacement::kSeparate);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().find("does not fit"), std::string::npos) << refused.error();
  EXPECT_NE(refused.error().find("4GiB short"), std::string::npos) << refused.error();
}

TEST(FlexLayout, ZonesOfOneSetFillSuperblocksOfTheirOwn) {
  const FlexGeometry g = table_ii();
  const ZoneSetSpec sets[] = {{256 * kMiB, 10}, {1 * kGiB, 3}, {2 * kGiB, 2}};
  auto layout = plan_flex_layout(g, sets, ParityPlacement::kSeparate);
  ASSERT_TRUE(layout.ok()) << layout.error();
  // 8 FBGs of 8 dies to a superblock: 10 take 2; 2 of 32 dies: 3 take 2.
  EXPECT_EQ(layout->sets[0].superblocks, 2U);
  EXPECT_EQ(layout->sets[1].first_superblock, 2U);
  EXPECT_EQ(layout->sets[1].superblocks, 2U);
  EXPECT_EQ(layout->sets[2].first_superblock, 4U);
  EXPECT_EQ(layout->data_superblocks, 6U);
  const Fbg& ninth = layout->sets[0].fbgs[9];
  EXPECT_EQ(ninth.superblock, 1U);
  EXPECT_EQ(ninth.first_die, 8U);
  EXPECT_EQ(ninth.dies, 8U);
  EXPECT_EQ(layout->parity_chunks, 10U + 3U + 2U * 2U);
  EXPECT_EQ(layout->parity_superblocks, 1U);
  expect_parity_well_placed(*layout);
}

TEST(FlexLayout, EveryWidthPacksItsParityTight) {
  const FlexGeometry g = table_ii();
  for (uint64_t zone = g.chunk_bytes; zone < g.superblock_bytes(); zone *= 2) {
    const uint32_t per_superblock = static_cast<uint32_t>(g.superblock_bytes() / zone);
    // As many zones as fit beside their parity: d data superblocks need
    // d x per_superblock chunks of parity, 1 / dies of a superblock each.
    const uint32_t data = g.superblocks * g.dies / (g.dies + per_superblock);
    const uint32_t count = per_superblock * data;
    const ZoneSetSpec spec{zone, count};
    auto layout = plan_flex_layout(g, {&spec, 1}, ParityPlacement::kSeparate);
    ASSERT_TRUE(layout.ok()) << zone << ": " << layout.error();
    EXPECT_EQ(layout->parity_superblocks, (count + g.dies - 1) / g.dies) << zone;
    expect_parity_well_placed(*layout);
  }
}

TEST(FlexLayout, BadFormatsAreRefusedByName) {
  const FlexGeometry g = table_ii();
  auto refuse = [&](ZoneSetSpec spec, ParityPlacement p = ParityPlacement::kSeparate) {
    auto layout = plan_flex_layout(g, {&spec, 1}, p);
    EXPECT_FALSE(layout.ok());
    return layout.ok() ? std::string() : layout.error();
  };
  EXPECT_NE(refuse({768 * kMiB, 1}).find("not a power of two"), std::string::npos);
  EXPECT_NE(refuse({16 * kMiB, 1}).find("not a multiple"), std::string::npos);
  EXPECT_NE(refuse({4 * kGiB, 1}).find("larger than a superblock"), std::string::npos);
  EXPECT_NE(refuse({512 * kMiB, 0}).find("a count of 0"), std::string::npos);
  EXPECT_NE(refuse({32 * kMiB, 1}, ParityPlacement::kInZone).find("one die"), std::string::npos);
  EXPECT_NE(refuse({2 * kGiB, 128}).find("short"), std::string::npos);
  EXPECT_FALSE(plan_flex_layout(g, {}, ParityPlacement::kNone).ok());
  // Without parity the whole flash is zones.
  const ZoneSetSpec all{2 * kGiB, 128};
  auto none = plan_flex_layout(g, {&all, 1}, ParityPlacement::kNone);
  ASSERT_TRUE(none.ok()) << none.error();
  EXPECT_EQ(none->capacity_bytes(), g.flash_bytes());
  EXPECT_EQ(none->parity_chunks, 0U);
  EXPECT_EQ(parse_parity_placement("separate").value(), ParityPlacement::kSeparate);
  EXPECT_FALSE(parse_parity_placement("raid5").ok());
}

TEST(FlexLayout, SetsBoundToDiesShareSuperblocksAndKeepToTheirDies) {
  const FlexGeometry g = table_ii();
  // Two tenants' sets on halves of the dies (§IV-D), each FBG of 8 dies,
  // then a set on every die after both.
  const std::vector<ZoneSetSpec> specs{
      {256 * kMiB, 40, 0, 32}, {256 * kMiB, 12, 32, 32}, {512 * kMiB, 8}};
  auto layout = plan_flex_layout(g, specs, ParityPlacement::kSeparate);
  ASSERT_TRUE(layout.ok()) << layout.error();
  const ZoneSetLayout& a = layout->sets[0];
  const ZoneSetLayout& b = layout->sets[1];
  EXPECT_TRUE(a.bound);
  EXPECT_FALSE(layout->sets[2].bound);
  EXPECT_EQ(layout->sets[2].dies, 64U);
  // Four FBGs a superblock on 32 dies: 40 zones take 10 superblocks, 12 take 3,
  // both from superblock 0; the unbound set begins after the longer one.
  EXPECT_EQ(a.first_superblock, 0U);
  EXPECT_EQ(a.superblocks, 10U);
  EXPECT_EQ(b.first_superblock, 0U);
  EXPECT_EQ(b.superblocks, 3U);
  EXPECT_EQ(layout->sets[2].first_superblock, 10U);
  for (uint32_t i = 0; i < 2; ++i) {
    const ZoneSetLayout& set = layout->sets[i];
    for (uint32_t k = 0; k < set.count; ++k) {
      const Fbg& fbg = set.fbgs[k];
      EXPECT_GE(fbg.first_die, set.first_die);
      EXPECT_LE(fbg.first_die + fbg.dies, set.first_die + set.dies);
      // The parity of a bound set's FBG stays on its dies too.
      for (const ParityChunk& c : set.parity[k]) {
        EXPECT_GE(c.die, set.first_die);
        EXPECT_LT(c.die, set.first_die + set.dies);
      }
    }
  }
  expect_parity_well_placed(*layout);

  // Without bindings the plan is the one it always was: set after set.
  const std::vector<ZoneSetSpec> free_specs{{256 * kMiB, 40}, {256 * kMiB, 12}, {512 * kMiB, 8}};
  auto unbound = plan_flex_layout(g, free_specs, ParityPlacement::kSeparate);
  ASSERT_TRUE(unbound.ok()) << unbound.error();
  EXPECT_EQ(unbound->sets[1].first_superblock, 5U);
  EXPECT_EQ(unbound->sets[2].first_superblock, 7U);
}

TEST(FlexLayout, BadDieBindingsAreRefusedByName) {
  const FlexGeometry g = table_ii();
  auto refuse = [&](std::vector<ZoneSetSpec> specs) {
    auto layout = plan_flex_layout(g, specs, ParityPlacement::kNone);
    EXPECT_FALSE(layout.ok());
    return layout.ok() ? std::string() : layout.error();
  };
  EXPECT_NE(refuse({{256 * kMiB, 4, 60, 8}}).find("the flash has dies 0-63"), std::string::npos);
  EXPECT_NE(refuse({{256 * kMiB, 4, 0, 32}, {256 * kMiB, 4, 16, 32}}).find("overlap zone set 0"),
            std::string::npos);
  EXPECT_NE(refuse({{512 * kMiB, 4, 0, 8}}).find("wider than its dies 0-7"), std::string::npos);
  EXPECT_NE(refuse({{256 * kMiB, 4, 0, 12}}).find("do not split"), std::string::npos);
  // The format text carries the binding and reads back.
  auto sets = parse_zone_format("256MiB:40@0-31,256MiB:12@32-63,512MiB:8");
  ASSERT_TRUE(sets.ok()) << sets.error();
  EXPECT_EQ((*sets)[1].first_die, 32U);
  EXPECT_EQ((*sets)[1].dies, 32U);
  EXPECT_EQ((*sets)[2].dies, 0U);
  EXPECT_EQ(zone_format_text(*sets), "256MiB:40@0-31,256MiB:12@32-63,512MiB:8");
  EXPECT_EQ(zone_format_text(*parse_zone_format("1MiB:4@5")), "1MiB:4@5");
  for (const char* bad : {"1MiB:4@", "1MiB:4@3-1", "1MiB:4@a-b", "1MiB:4@1-2-3", "1MiB:4@-1"}) {
    EXPECT_FALSE(parse_zone_format(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace zonelab
