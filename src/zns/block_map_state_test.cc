// The block mapping's section of a ZNS image (section 6).
#include "zns/block_map_state.h"

#include <gtest/gtest.h>

namespace zonelab {
namespace {

BlockMapState sample_map() {
  return BlockMapState{{UINT32_MAX, 4, 1, 3}, {{0, 0}, {16, 2}, {0, 0}, {3, 1}, {0, 0}, {7, 0}}, 3};
}

void store_le(std::vector<uint8_t>& bytes, uint64_t offset, int width, uint64_t value) {
  for (int i = 0; i < width; ++i) bytes[offset + i] = static_cast<uint8_t>(value >> (8 * i));
}

TEST(BlockMapState, AbsentIsNothingAndPresentRoundTrips) {
  auto none = get_block_map(ImageState{});
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  ImageState state;
  put_block_map(state, sample_map());
  EXPECT_EQ(state.sections.at(kSectionBlockMap).size(), 4 + 4 * 4 + 4 + 6 * 12 + 8u);
  auto map = get_block_map(state);
  ASSERT_TRUE(map.ok() && map->has_value()) << map.error();
  EXPECT_EQ((*map)->zone_slots, sample_map().zone_slots);
  EXPECT_EQ((*map)->slots.size(), 6u);
  EXPECT_EQ((*map)->slots[1].stale_pages, 16u);
  EXPECT_EQ((*map)->slots[1].released_seq, 2u);
  EXPECT_EQ((*map)->next_released_seq, 3u);
}

TEST(BlockMapState, RefusesCountsThatDisagreeWithTheLength) {
  for (auto [offset, value] :
       {std::pair<uint64_t, uint64_t>{0, 5}, {0, 0xFFFFFFFF}, {20, 7}, {20, 0}}) {
    ImageState state;
    put_block_map(state, sample_map());
    store_le(state.sections[kSectionBlockMap], offset, 4, value);
    auto map = get_block_map(state);
    ASSERT_FALSE(map.ok()) << offset;
    EXPECT_NE(map.error().find("block-map section"), std::string::npos) << map.error();
  }
  ImageState state;
  put_block_map(state, sample_map());
  state.sections[kSectionBlockMap].resize(3);
  EXPECT_NE(get_block_map(state).error().find("block-map section"), std::string::npos);
}

}  // namespace
}  // namespace zonelab
