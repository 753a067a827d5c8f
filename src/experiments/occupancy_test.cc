// Management latency at an occupancy, on the confznspp preset: the numbers
// follow from the configuration (tPROG, transfer, tBERS, overhead).
#include "experiments/occupancy.h"

#include <gtest/gtest.h>

namespace zonelab {
namespace {

Config confznspp(std::initializer_list<std::string_view> overrides) {
  Config config = *preset_config("confznspp");
  EXPECT_TRUE(apply_override(config, "store.backing=none").ok());
  for (std::string_view o : overrides) EXPECT_TRUE(apply_override(config, o).ok()) << o;
  return config;
}

TEST(Occupancy, ZoneCapacityInPages) {
  EXPECT_EQ(zone_capacity_pages(confznspp({})), 67584u);  // 1056 MiB of 16 KiB pages
}

TEST(Occupancy, FinishWithOnePageLeftProgramsThatPage) {
  Config c = confznspp({"zns.finish.granularity=16KiB"});
  auto point = measure_at_occupancy(c, ZoneAction::kFinish, 67583);
  ASSERT_TRUE(point.ok()) << point.error();
  EXPECT_EQ(point->pages_written, 67583u);
  EXPECT_EQ(point->finish_program_pages, 1u);
  EXPECT_EQ(point->latency_ns,
            c.host.command_overhead_ns + c.flash.transfer_latency_ns + c.flash.program_latency_ns);
}

TEST(Occupancy, FullEraseResetOfAOnePageZoneErasesEveryBlock) {
  Config c = confznspp({"zns.reset.erase=full"});
  auto point = measure_at_occupancy(c, ZoneAction::kReset, 1);
  ASSERT_TRUE(point.ok()) << point.error();
  EXPECT_EQ(point->reset_erases, 88u);
  EXPECT_EQ(point->latency_ns, c.host.command_overhead_ns + 22 * c.flash.erase_latency_ns);
}

TEST(Occupancy, RefusesMorePagesThanTheZoneHolds) {
  EXPECT_FALSE(measure_at_occupancy(confznspp({}), ZoneAction::kReset, 67585).ok());
}

TEST(Occupancy, MeasuresOnlyFinishAndReset) {
  EXPECT_FALSE(measure_at_occupancy(confznspp({}), ZoneAction::kOpen, 1).ok());
}

}  // namespace
}  // namespace zonelab
