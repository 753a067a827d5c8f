// The FTL's section of a block-interface image (section 7): its byte
// layout, and every shape a decoder must refuse.
#include "conv/ftl_state.h"

#include <gtest/gtest.h>

#include <tuple>

namespace zonelab {
namespace {

// A small, hand-made FTL: 2 planes of 2 blocks of 2 pages of 2 LBAs (the
// section decoder checks shapes, not geometry).
FtlState sample_ftl() {
  FtlState ftl;
  ftl.l2p = {0, 0xFFFFFFFFu, 0xF0000000u, 5};
  ftl.blocks = {{2, 2, 1, 100}, {1, 1, 1, 200}, {0, 0, 0, 0}, {0, 2, 0, 7}};
  ftl.planes = {{{}, {1, 0xFFFFFFFFu}}, {{0, 1}, {0xFFFFFFFFu, 0xFFFFFFFFu}}};
  ftl.buffers = {{2}, {}, {}};
  ftl.cursors = {1};
  ftl.gc_runs = 3;
  ftl.gc_moved_lbas = 4;
  ftl.trimmed_lbas = 5;
  ftl.skipped_planes = 6;
  ftl.clock_ns = 123456789;
  ftl.plane_free_at_ns = {123456790, 0};
  ftl.channel_free_at_ns = {1};
  return ftl;
}

std::vector<uint8_t> body_of(const FtlState& ftl) {
  ImageState state;
  put_ftl(state, ftl);
  return state.sections.at(kSectionFtl);
}

Result<FtlState> decode(const std::vector<uint8_t>& body) {
  ImageState state;
  state.sections[kSectionFtl] = body;
  return get_ftl(state);
}

void store_le(std::vector<uint8_t>& bytes, uint64_t offset, int width, uint64_t value) {
  for (int i = 0; i < width; ++i) bytes[offset + i] = static_cast<uint8_t>(value >> (8 * i));
}

TEST(FtlState, HasTheDocumentedSizeAndRoundTrips) {
  uint64_t expected = 4 + 4 * 4                                // map
                      + 4 + 4 * 17                             // blocks
                      + 4 + (4 + 0 + 4 + 8) + (4 + 8 + 4 + 8)  // planes
                      + 4 + (4 + 4) + 4 + 4                    // buffers
                      + 4 + 4                                  // cursors
                      + 4 * 8 + 8                              // counters, clock
                      + 4 + 2 * 8 + 4 + 8;                     // free times
  std::vector<uint8_t> body = body_of(sample_ftl());
  EXPECT_EQ(body.size(), expected);
  auto decoded = decode(body);
  ASSERT_TRUE(decoded.ok()) << decoded.error();
  EXPECT_EQ(*decoded, sample_ftl());
}

TEST(FtlState, AMissingSectionIsNamed) {
  auto decoded = get_ftl(ImageState{});
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.error(), "missing ftl section");
}

TEST(FtlState, RefusesASectionCutShortOrPadded) {
  std::vector<uint8_t> whole = body_of(sample_ftl());
  for (size_t length = 0; length < whole.size(); ++length) {
    auto decoded = decode(std::vector<uint8_t>(whole.begin(), whole.begin() + length));
    ASSERT_FALSE(decoded.ok()) << length;
    EXPECT_NE(decoded.error().find("ftl section"), std::string::npos) << decoded.error();
  }
  std::vector<uint8_t> padded = whole;
  padded.push_back(0);
  auto decoded = decode(padded);
  ASSERT_FALSE(decoded.ok());
  EXPECT_NE(decoded.error().find("after its end"), std::string::npos) << decoded.error();
}

TEST(FtlState, RefusesCountsBeyondTheBytesOrLimits) {
  // Offsets into the section: the map count, the block count, a block's
  // state, the plane count, the buffer count.
  const uint64_t blocks_at = 4 + 16;
  const uint64_t planes_at = blocks_at + 4 + 4 * 17;
  const uint64_t buffers_at = planes_at + 4 + 16 + 24;
  for (auto [offset, width, value] : {std::tuple<uint64_t, int, uint64_t>{0, 4, 0xFFFFFFFF},
                                      {0, 4, 5},
                                      {blocks_at, 4, 1 << 30},
                                      {blocks_at, 4, 5},
                                      {blocks_at + 4, 1, 3},
                                      {planes_at, 4, 5},
                                      {planes_at, 4, 0xFFFFFFFF},
                                      {buffers_at, 4, 0x10000000},
                                      {buffers_at + 4, 4, 9}}) {
    std::vector<uint8_t> body = body_of(sample_ftl());
    store_le(body, offset, width, value);
    auto decoded = decode(body);
    ASSERT_FALSE(decoded.ok()) << offset;
    EXPECT_NE(decoded.error().find("ftl section"), std::string::npos) << decoded.error();
  }
}

TEST(FtlState, GrowthIsWhatThePageBuffersMayStillTake) {
  FtlState ftl = sample_ftl();  // buffers of 1, 0 and 0 LBAs
  EXPECT_EQ(ftl_growth_bytes(ftl, 4), (2 + 3 + 3) * 4u);
  ftl.buffers.resize(3 + 2048);
  EXPECT_EQ(ftl_growth_bytes(ftl, 4), (2 + 3 + 3 + 2048 * 3) * 4u);
  EXPECT_EQ(ftl_growth_bytes(ftl, 1), 0u);
}

TEST(FtlState, TheImageSlotLeavesRoomForTheBuffersToFill) {
  ImageState state;
  state.config = default_config();
  FtlState ftl = sample_ftl();
  ftl.buffers.resize(3 + 2048);
  put_ftl(state, ftl);
  uint64_t before = 0;
  {
    std::vector<uint8_t> image = Image::encode(state, 0).value();
    for (int i = 7; i >= 0; --i) before = (before << 8) | image[16 + i];
  }
  state.growth_bytes = ftl_growth_bytes(ftl, 4);
  std::vector<uint8_t> image = Image::encode(state, 0).value();
  uint64_t after = 0;
  for (int i = 7; i >= 0; --i) after = (after << 8) | image[16 + i];
  EXPECT_GE(after - before, 2048 * 3 * 4u);
}

}  // namespace
}  // namespace zonelab
