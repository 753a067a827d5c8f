// First-write latency under direct and lazy mapping on a small flash: 2
// channels x 1 die x 1 plane, 8 blocks of 4 pages of 16 KiB per plane,
// zones of 2 blocks per unit (4 physical zones, 16 pages a zone). Expected
// times come from the configuration.
#include "experiments/first_write.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "zns/small_flash_test_config.h"

namespace zonelab {
namespace {

Config small_flash(std::vector<std::string> overrides = {}) {
  overrides.insert(overrides.begin(), "zns.zasl=64KiB");
  return small_flash_config(overrides);
}

uint64_t plain_write(const Config& c) {
  return c.host.command_overhead_ns + c.flash.transfer_latency_ns + c.flash.program_latency_ns;
}

// The page crosses the channel while its plane erases the zone's 2 blocks.
uint64_t erase_then_write(const Config& c) {
  return c.host.command_overhead_ns + 2 * c.flash.erase_latency_ns + c.flash.program_latency_ns;
}

Result<FirstWriteRun> run(const Config& c, FillWorkload workload) {
  return measure_first_writes(c, {.workload = workload, .fills = 0, .sample_pages = 2});
}

TEST(FirstWrite, DirectRepeatZoneWritesAlikeAndWearsZoneZeroOnly) {
  Config c = small_flash({"zns.reset.mode=sync"});
  auto r = run(c, FillWorkload::kRepeatZone);
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->physical_zones, 4u);
  ASSERT_EQ(r->fills.size(), 8u);  // twice the physical zones
  for (const ZoneFill& f : r->fills) {
    EXPECT_EQ(f.zone, 0u);
    EXPECT_EQ(f.physical_zone, 0u);
    EXPECT_LT(f.first_write_ns, plain_write(c) + 20'000) << f.fill;
    EXPECT_EQ(f.first_write_erases, 0u);
    EXPECT_EQ(f.other_writes, 3u);
    EXPECT_EQ(f.reset_ns,
              f.fill == 1 ? 0 : c.host.command_overhead_ns + 2 * c.flash.erase_latency_ns);
  }
  EXPECT_EQ(r->fills.back().erase_min, 0u);
  EXPECT_EQ(r->fills.back().erase_max, 7u);  // a reset between consecutive fills
  EXPECT_EQ(r->erases, 7u * 4);
}

TEST(FirstWrite, LazyRepeatZoneErasesAtTheFirstWriteOnceNoPhysicalZoneIsFree) {
  Config c = small_flash({"zns.mapping.blocks=lazy", "zns.reset.mode=async"});
  auto r = run(c, FillWorkload::kRepeatZone);
  ASSERT_TRUE(r.ok()) << r.error();
  ASSERT_EQ(r->fills.size(), 8u);
  for (const ZoneFill& f : r->fills) {
    EXPECT_EQ(f.physical_zone, (f.fill - 1) % 4) << f.fill;
    EXPECT_EQ(f.reset_ns, f.fill == 1 ? 0 : c.host.command_overhead_ns);  // metadata only
    if (f.fill <= 4) {
      EXPECT_LT(f.first_write_ns, plain_write(c) + 20'000) << f.fill;
      EXPECT_EQ(f.clean_free_physical_zones, 5u - f.fill);
    } else {
      EXPECT_EQ(f.first_write_ns, erase_then_write(c)) << f.fill;
      EXPECT_EQ(f.first_write_erases, 4u);
      EXPECT_EQ(f.clean_free_physical_zones, 0u);
    }
  }
  EXPECT_EQ(r->fills.back().erase_min, 1u);
  EXPECT_EQ(r->fills.back().erase_max, 1u);
  EXPECT_LT(nearest_rank_percentile(r->other_write_ns, 95), plain_write(c) + 20'000);
}

TEST(FirstWrite, SequentialFillTwiceDirectVersusLazy) {
  Config direct = small_flash({"zns.reset.mode=sync"});
  Config lazy = small_flash({"zns.mapping.blocks=lazy", "zns.reset.mode=async"});
  auto d = run(direct, FillWorkload::kSequentialFill);
  auto l = run(lazy, FillWorkload::kSequentialFill);
  ASSERT_TRUE(d.ok()) << d.error();
  ASSERT_TRUE(l.ok()) << l.error();
  ASSERT_EQ(d->fills.size(), 8u);
  ASSERT_EQ(l->fills.size(), 8u);
  for (size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(d->fills[i].zone, i % 4);
    EXPECT_LT(d->fills[i].first_write_ns, plain_write(direct) + 20'000) << i;
    if (i < 4) {
      EXPECT_LT(l->fills[i].first_write_ns, plain_write(lazy) + 20'000) << i;
      EXPECT_EQ(d->fills[i].reset_ns, 0u);
    } else {
      EXPECT_EQ(l->fills[i].first_write_ns, erase_then_write(lazy)) << i;
      EXPECT_EQ(d->fills[i].reset_ns,
                direct.host.command_overhead_ns + 2 * direct.flash.erase_latency_ns);
      EXPECT_EQ(l->fills[i].reset_ns, lazy.host.command_overhead_ns);
    }
  }
  for (const FirstWriteRun* r : {&*d, &*l}) {
    EXPECT_EQ(r->fills.back().erase_min, 1u);
    EXPECT_EQ(r->fills.back().erase_max, 1u);
  }
}

TEST(FirstWrite, RefusesSamplesLargerThanTheZone) {
  EXPECT_FALSE(measure_first_writes(small_flash(), {.sample_pages = 9}).ok());
  EXPECT_FALSE(measure_first_writes(small_flash(), {.sample_pages = 0}).ok());
}

TEST(FirstWrite, NearestRankPercentile) {
  EXPECT_EQ(nearest_rank_percentile({}, 95), 0u);
  EXPECT_EQ(nearest_rank_percentile({5}, 95), 5u);
  std::vector<uint64_t> v;
  for (uint64_t i = 100; i >= 1; --i) v.push_back(i);
  EXPECT_EQ(nearest_rank_percentile(v, 95), 95u);
  EXPECT_EQ(nearest_rank_percentile(v, 100), 100u);
}

}  // namespace
}  // namespace zonelab
