// The sections both devices keep: zone records, the next open sequence and
// the lifetime counters. Round trips, and every shape a decoder refuses.
#include "controller/device_state.h"

#include <gtest/gtest.h>

namespace zonelab {
namespace {

std::vector<ZoneRecord> sample_zones() {
  return {ZoneRecord{0, 0, 0, 0, 0}, ZoneRecord{1, 100, 96, 3, 7},
          ZoneRecord{4, 12288, 12288, 384, 2}, ZoneRecord{6, 0, 0, 0, 0}};
}

void store_le(std::vector<uint8_t>& bytes, uint64_t offset, int width, uint64_t value) {
  for (int i = 0; i < width; ++i) bytes[offset + i] = static_cast<uint8_t>(value >> (8 * i));
}

TEST(DeviceState, ZoneRecordsRoundTripAt29BytesEach) {
  ImageState state;
  put_zone_records(state, sample_zones());
  EXPECT_EQ(state.sections.at(kSectionZones).size(), 4 + 4 * 29u);
  auto zones = get_zone_records(state);
  ASSERT_TRUE(zones.ok()) << zones.error();
  EXPECT_EQ(*zones, sample_zones());
}

TEST(DeviceState, RefusesZoneCountsAboveTheLimitOrBeyondTheBytes) {
  ImageState state;
  put_zone_records(state, sample_zones());
  std::vector<uint8_t>& body = state.sections[kSectionZones];
  store_le(body, 0, 4, kImageZoneCountMax + 1);
  auto zones = get_zone_records(state);
  ASSERT_FALSE(zones.ok());
  EXPECT_NE(zones.error().find("16777217 zones (limit 16777216)"), std::string::npos);
  store_le(body, 0, 4, 1000);
  zones = get_zone_records(state);
  ASSERT_FALSE(zones.ok());
  EXPECT_NE(zones.error().find("zones section: 120 bytes for 1000 zones"), std::string::npos)
      << zones.error();
  body.resize(3);
  EXPECT_FALSE(get_zone_records(state).ok());
  EXPECT_EQ(get_zone_records(ImageState{}).error(), "missing zones section");
}

TEST(DeviceState, RefusesARecordNoDeviceCouldHave) {
  ImageState state;
  put_zone_records(state, sample_zones());
  std::vector<uint8_t> good = state.sections[kSectionZones];
  state.sections[kSectionZones][4 + 29] = 9;  // zone 1's state
  EXPECT_NE(get_zone_records(state).error().find("zone 1: state 9 is not a zone state"),
            std::string::npos);
  state.sections[kSectionZones] = good;
  store_le(state.sections[kSectionZones], 4 + 29 + 9, 8, 101);  // zone 1's data end, wp 100
  EXPECT_NE(
      get_zone_records(state).error().find("zone 1: data end 101 is beyond the write pointer 100"),
      std::string::npos);
}

TEST(DeviceState, NextOpenSeqAndLifetimeHaveFixedSizes) {
  ImageState state;
  put_next_open_seq(state, 99);
  put_lifetime(state, LifetimeCounters{1ULL << 40, (1ULL << 41) + 3, 123456789});
  EXPECT_EQ(*get_next_open_seq(state), 99u);
  LifetimeCounters lifetime = *get_lifetime(state);
  EXPECT_EQ(lifetime.host_write_bytes, 1ULL << 40);
  EXPECT_EQ(lifetime.host_read_bytes, (1ULL << 41) + 3);
  EXPECT_EQ(lifetime.commands, 123456789u);
  state.sections[kSectionNextOpenSeq].push_back(0);
  state.sections[kSectionLifetime].pop_back();
  EXPECT_NE(get_next_open_seq(state).error().find("9 bytes (expected 8)"), std::string::npos);
  EXPECT_NE(get_lifetime(state).error().find("23 bytes (expected 24)"), std::string::npos);
  EXPECT_EQ(get_lifetime(ImageState{}).error(), "missing lifetime section");
}

}  // namespace
}  // namespace zonelab
