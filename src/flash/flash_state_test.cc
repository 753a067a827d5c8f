// The erase counts of a device image (section 4).
#include "flash/flash_state.h"

#include <gtest/gtest.h>

namespace zonelab {
namespace {

TEST(FlashState, EraseCountsRoundTrip) {
  ImageState state;
  std::vector<uint32_t> counts = {0, 1, 2, 3, 4000000000u, 5, 6, 7};
  put_erase_counts(state, counts);
  EXPECT_EQ(state.sections.at(kSectionEraseCounts).size(), 4 + 8 * 4u);
  EXPECT_EQ(*get_erase_counts(state), counts);
}

TEST(FlashState, RefusesACountAboveTheLimitOrBeyondTheBytes) {
  ImageState state;
  put_erase_counts(state, {1, 2, 3});
  std::vector<uint8_t>& body = state.sections[kSectionEraseCounts];
  uint64_t too_many = kImageEraseCountsMax + 1;
  for (int i = 0; i < 4; ++i) body[i] = static_cast<uint8_t>(too_many >> (8 * i));
  EXPECT_NE(get_erase_counts(state).error().find("(limit 67108864)"), std::string::npos);
  body[0] = 4;
  body[1] = body[2] = body[3] = 0;
  EXPECT_NE(get_erase_counts(state).error().find("16 bytes for 4 blocks"), std::string::npos);
  body.resize(2);
  EXPECT_FALSE(get_erase_counts(state).ok());
  EXPECT_EQ(get_erase_counts(ImageState{}).error(), "missing erase-counts section");
}

}  // namespace
}  // namespace zonelab
