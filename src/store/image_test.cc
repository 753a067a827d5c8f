// The device image as a specification: what create, open and save promise,
// how corruption and truncation are answered, and the byte layout of
// docs/image-format.md checked from the outside.
#include "store/image.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace zonelab {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kSlotA = Image::kHeaderBytes;

ImageState sample_state() {
  ImageState state;
  state.config = default_config();
  state.config.seed = 42;
  state.zones = {
      ImageZone{0, 0, 0, 0, 0},
      ImageZone{1, 100, 96, 3, 7},
      ImageZone{4, 12288, 12288, 384, 2},
      ImageZone{6, 0, 0, 0, 0},
  };
  state.next_open_seq = 8;
  state.erase_counts = {0, 1, 2, 3, 4000000000u, 5, 6, 7};
  state.lifetime_host_write_bytes = 1ULL << 40;
  state.lifetime_host_read_bytes = (1ULL << 41) + 3;
  state.lifetime_commands = 123456789;
  return state;
}

void expect_same_state(const ImageState& a, const ImageState& b) {
  EXPECT_EQ(config_to_toml(a.config), config_to_toml(b.config));
  EXPECT_EQ(a.zones, b.zones);
  EXPECT_EQ(a.next_open_seq, b.next_open_seq);
  EXPECT_EQ(a.erase_counts, b.erase_counts);
  EXPECT_EQ(a.lifetime_host_write_bytes, b.lifetime_host_write_bytes);
  EXPECT_EQ(a.lifetime_host_read_bytes, b.lifetime_host_read_bytes);
  EXPECT_EQ(a.lifetime_commands, b.lifetime_commands);
  EXPECT_EQ(a.zone_slots, b.zone_slots);
  EXPECT_EQ(a.slots, b.slots);
  EXPECT_EQ(a.next_released_seq, b.next_released_seq);
  EXPECT_EQ(a.ftl, b.ftl);
}

// A block-interface state with a small, hand-made FTL: 2 planes of 2 blocks
// of 2 pages of 2 LBAs (the image layer checks shapes, not geometry).
ImageState ftl_state() {
  ImageState state = sample_state();
  state.config.interface = "block";
  ImageFtl ftl;
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
  state.ftl = ftl;
  return state;
}

ImageState mapped_state() {
  ImageState state = sample_state();
  state.zone_slots = {UINT32_MAX, 4, 1, 3};
  state.slots = {{0, 0}, {16, 2}, {0, 0}, {3, 1}, {0, 0}, {7, 0}};
  state.next_released_seq = 3;
  return state;
}

uint64_t load_le(const std::vector<uint8_t>& bytes, uint64_t offset, int width) {
  uint64_t value = 0;
  for (int i = width - 1; i >= 0; --i) value = (value << 8) | bytes[offset + i];
  return value;
}

void store_le(std::vector<uint8_t>& bytes, uint64_t offset, int width, uint64_t value) {
  for (int i = 0; i < width; ++i) bytes[offset + i] = static_cast<uint8_t>(value >> (8 * i));
}

void append_le(std::vector<uint8_t>& bytes, int width, uint64_t value) {
  bytes.resize(bytes.size() + width);
  store_le(bytes, bytes.size() - width, width, value);
}

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  std::vector<uint8_t> bytes(static_cast<size_t>(in.tellg()));
  in.seekg(0);
  in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  return bytes;
}

void write_file(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

// One section of a slot payload, as the format describes it.
struct Section {
  uint32_t type;
  std::vector<uint8_t> body;
};

std::vector<Section> sections_of(const ImageState& state) {
  std::vector<uint8_t> slot = Image::encode_metadata(state, 1);
  std::vector<Section> sections;
  for (uint64_t at = 32; at < slot.size();) {
    auto type = static_cast<uint32_t>(load_le(slot, at, 4));
    uint64_t length = load_le(slot, at + 4, 8);
    sections.push_back(Section{
        type, std::vector<uint8_t>(slot.begin() + at + 12, slot.begin() + at + 12 + length)});
    at += 12 + length;
  }
  return sections;
}

std::vector<uint8_t> payload_of(const std::vector<Section>& sections) {
  std::vector<uint8_t> payload;
  for (const Section& section : sections) {
    append_le(payload, 4, section.type);
    append_le(payload, 8, section.body.size());
    payload.insert(payload.end(), section.body.begin(), section.body.end());
  }
  return payload;
}

// An in-memory image whose slot A holds `payload` under a valid checksum.
std::vector<uint8_t> image_with_payload(const std::vector<uint8_t>& payload) {
  std::vector<uint8_t> image = Image::encode(sample_state(), 0).value();
  uint64_t slot_bytes = load_le(image, 16, 8);
  EXPECT_LE(32 + payload.size(), slot_bytes);
  std::vector<uint8_t> slot = {'Z', 'L', 'S', 'L', 'O', 'T', 0, 0};
  append_le(slot, 8, 1);
  append_le(slot, 8, payload.size());
  append_le(slot, 4, 0);
  append_le(slot, 4, crc32c(payload.data(), payload.size(), crc32c(slot.data(), slot.size())));
  slot.insert(slot.end(), payload.begin(), payload.end());
  std::copy(slot.begin(), slot.end(), image.begin() + kSlotA);
  return image;
}

std::string decode_error(const std::vector<uint8_t>& image) {
  auto decoded = Image::decode(image);
  EXPECT_FALSE(decoded.ok());
  return decoded.ok() ? "" : decoded.error();
}

void refresh_header_crc(std::vector<uint8_t>& image) {
  store_le(image, 40, 4, crc32c(image.data(), 40));
}

class ImageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::path(::testing::TempDir()) / "zonelab-image-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    path_ = (fs::path(dir_) / "img.zl").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::unique_ptr<Image> create(const ImageState& state, uint64_t data_bytes = 16384) {
    auto image = Image::create(path_, state, data_bytes, false);
    EXPECT_TRUE(image.ok()) << image.error();
    return image.ok() ? std::move(image).value() : nullptr;
  }

  // Makes an image with sequences 1 and 2 (slot B newer) and closes it.
  void create_with_two_saves(ImageState& second) {
    auto image = create(sample_state());
    second = sample_state();
    second.zones[0].wp = 64;
    second.lifetime_commands += 1;
    ASSERT_TRUE(image->save(second).ok());
  }

  std::string open_error() {
    auto image = Image::open(path_);
    EXPECT_FALSE(image.ok());
    return image.ok() ? "" : image.error();
  }

  std::string dir_;
  std::string path_;
};

// --- Checksum and layout -------------------------------------------------

TEST(Crc32cTest, MatchesTheStandardCheckValue) {
  const std::string text = "123456789";
  EXPECT_EQ(crc32c(reinterpret_cast<const uint8_t*>(text.data()), text.size()), 0xE3069283u);
}

TEST(Crc32cTest, ContinuesAcrossPieces) {
  const std::string text = "123456789";
  const auto* bytes = reinterpret_cast<const uint8_t*>(text.data());
  EXPECT_EQ(crc32c(bytes + 4, 5, crc32c(bytes, 4)), crc32c(bytes, 9));
}

TEST(ImageFormatTest, HeaderHoldsMagicVersionAndAlignedLayout) {
  std::vector<uint8_t> image = Image::encode(sample_state(), 8192).value();
  EXPECT_EQ(std::memcmp(image.data(), "ZONELAB\0", 8), 0);
  EXPECT_EQ(load_le(image, 8, 4), Image::kFormatVersion);
  EXPECT_EQ(load_le(image, 12, 4), Image::kHeaderBytes);
  uint64_t slot_bytes = load_le(image, 16, 8);
  uint64_t data_offset = load_le(image, 24, 8);
  EXPECT_EQ(slot_bytes % 4096, 0u);
  EXPECT_EQ(data_offset, Image::kHeaderBytes + 2 * slot_bytes);
  EXPECT_EQ(load_le(image, 32, 8), 8192u);
  EXPECT_EQ(load_le(image, 40, 4), crc32c(image.data(), 40));
  EXPECT_EQ(image.size(), data_offset + 8192);
}

TEST(ImageFormatTest, SlotAHoldsSequenceOneAndSlotBIsUnwritten) {
  std::vector<uint8_t> image = Image::encode(sample_state(), 0).value();
  uint64_t slot_bytes = load_le(image, 16, 8);
  EXPECT_EQ(std::memcmp(image.data() + kSlotA, "ZLSLOT\0\0", 8), 0);
  EXPECT_EQ(load_le(image, kSlotA + 8, 8), 1u);
  for (uint64_t i = 0; i < 32; ++i) EXPECT_EQ(image[kSlotA + slot_bytes + i], 0) << i;
}

TEST(ImageFormatTest, PayloadHoldsTheFiveRequiredSectionsInOrder) {
  std::vector<Section> sections = sections_of(sample_state());
  ASSERT_EQ(sections.size(), 5u);
  for (uint32_t i = 0; i < 5; ++i) EXPECT_EQ(sections[i].type, i + 1);
  EXPECT_EQ(std::string(sections[0].body.begin(), sections[0].body.end()),
            config_to_toml(sample_state().config));
  EXPECT_EQ(sections[1].body.size(), 4 + 4 * 29u);
  EXPECT_EQ(sections[2].body.size(), 8u);
  EXPECT_EQ(sections[3].body.size(), 4 + 8 * 4u);
  EXPECT_EQ(sections[4].body.size(), 24u);
}

TEST(ImageFormatTest, EncodedImageDecodesToTheSameState) {
  auto decoded = Image::decode(Image::encode(sample_state(), 4096).value());
  ASSERT_TRUE(decoded.ok()) << decoded.error();
  expect_same_state(*decoded, sample_state());
}

TEST(ImageFormatTest, BlockMapIsASixthSectionOnlyWhenThereIsOne) {
  std::vector<Section> sections = sections_of(mapped_state());
  ASSERT_EQ(sections.size(), 6u);
  EXPECT_EQ(sections[5].type, 6u);
  EXPECT_EQ(sections[5].body.size(), 4 + 4 * 4 + 4 + 6 * 12 + 8u);
  auto decoded = Image::decode(Image::encode(mapped_state(), 0).value());
  ASSERT_TRUE(decoded.ok()) << decoded.error();
  expect_same_state(*decoded, mapped_state());
}

TEST(ImageDecodeTest, RejectsABlockMapWhoseCountsDisagreeWithTheLength) {
  for (auto [offset, value] :
       {std::pair<uint64_t, uint64_t>{0, 5}, {0, 0xFFFFFFFF}, {20, 7}, {20, 0}}) {
    std::vector<Section> sections = sections_of(mapped_state());
    store_le(sections[5].body, offset, 4, value);
    std::string error = decode_error(image_with_payload(payload_of(sections)));
    EXPECT_NE(error.find("block-map section"), std::string::npos) << error;
  }
  std::vector<Section> sections = sections_of(mapped_state());
  sections[5].body.resize(3);
  std::string error = decode_error(image_with_payload(payload_of(sections)));
  EXPECT_NE(error.find("block-map section"), std::string::npos) << error;
}

TEST(ImageDecodeTest, RejectsADuplicateBlockMap) {
  std::vector<Section> sections = sections_of(mapped_state());
  sections.push_back(sections[5]);
  std::string error = decode_error(image_with_payload(payload_of(sections)));
  EXPECT_NE(error.find("duplicate block-map section"), std::string::npos) << error;
}

TEST(ImageFormatTest, FtlIsASeventhSectionOnlyInBlockImages) {
  EXPECT_EQ(sections_of(sample_state()).size(), 5u);
  std::vector<Section> sections = sections_of(ftl_state());
  ASSERT_EQ(sections.size(), 6u);
  EXPECT_EQ(sections[5].type, 7u);
  uint64_t expected = 4 + 4 * 4                                // map
                      + 4 + 4 * 17                             // blocks
                      + 4 + (4 + 0 + 4 + 8) + (4 + 8 + 4 + 8)  // planes
                      + 4 + (4 + 4) + 4 + 4                    // buffers
                      + 4 + 4                                  // cursors
                      + 4 * 8 + 8                              // counters, clock
                      + 4 + 2 * 8 + 4 + 8;                     // free times
  EXPECT_EQ(sections[5].body.size(), expected);
  auto decoded = Image::decode(Image::encode(ftl_state(), 0).value());
  ASSERT_TRUE(decoded.ok()) << decoded.error();
  expect_same_state(*decoded, ftl_state());
}

TEST(ImageDecodeTest, RejectsAnFtlSectionCutShortOrPadded) {
  std::vector<Section> whole = sections_of(ftl_state());
  for (size_t length = 0; length < whole[5].body.size(); ++length) {
    std::vector<Section> sections = whole;
    sections[5].body.resize(length);
    std::string error = decode_error(image_with_payload(payload_of(sections)));
    EXPECT_NE(error.find("ftl section"), std::string::npos) << length << ": " << error;
  }
  std::vector<Section> sections = whole;
  sections[5].body.push_back(0);
  std::string error = decode_error(image_with_payload(payload_of(sections)));
  EXPECT_NE(error.find("ftl section"), std::string::npos) << error;
}

TEST(ImageDecodeTest, RejectsFtlCountsBeyondTheBytesOrLimits) {
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
    std::vector<Section> sections = sections_of(ftl_state());
    store_le(sections[5].body, offset, width, value);
    std::string error = decode_error(image_with_payload(payload_of(sections)));
    EXPECT_NE(error.find("ftl section"), std::string::npos) << offset << ": " << error;
  }
}

TEST(ImageDecodeTest, RejectsAnFtlWhereTheInterfaceHasNone) {
  ImageState zns = ftl_state();
  zns.config.interface = "zns";
  std::string error = decode_error(image_with_payload(payload_of(sections_of(zns))));
  EXPECT_NE(error.find("ftl section in an image of interface 'zns'"), std::string::npos) << error;

  ImageState missing = ftl_state();
  missing.ftl.reset();
  error = decode_error(image_with_payload(payload_of(sections_of(missing))));
  EXPECT_NE(error.find("without its ftl section"), std::string::npos) << error;

  ImageState mapped = ftl_state();
  mapped.zone_slots = {0};
  error = decode_error(image_with_payload(payload_of(sections_of(mapped))));
  EXPECT_NE(error.find("block-map section in a block-interface image"), std::string::npos) << error;
}

TEST(ImageDecodeTest, RejectsADuplicateFtl) {
  std::vector<Section> sections = sections_of(ftl_state());
  sections.push_back(sections[5]);
  std::string error = decode_error(image_with_payload(payload_of(sections)));
  EXPECT_NE(error.find("duplicate ftl section"), std::string::npos) << error;
}

TEST(ImageFormatTest, SlotLeavesRoomForTheFtlBuffersToFill) {
  ImageState state = ftl_state();  // 16 KiB pages of 4 KiB LBAs: 3 more per buffer
  uint64_t before = load_le(Image::encode(state, 0).value(), 16, 8);
  state.ftl->buffers.resize(3 + 2048);
  uint64_t after = load_le(Image::encode(state, 0).value(), 16, 8);
  EXPECT_GE(after - before, 2048 * (4 + 3 * 4u));
}

TEST(ImageFormatTest, RefusesBuffersThatCouldOutgrowAnySlot) {
  ImageState state = ftl_state();
  state.config.flash.page_size_bytes = 1 << 20;
  state.config.host.lba_size_bytes = 512;  // 2047 more LBAs per buffer
  state.ftl->buffers.resize(140'000);      // 140000 x 2047 x 4 bytes > 1 GiB
  auto encoded = Image::encode(state, 0);
  ASSERT_FALSE(encoded.ok());
  EXPECT_NE(encoded.error().find("could outgrow a slot"), std::string::npos) << encoded.error();
}

TEST_F(ImageTest, CreateRefusesABlockStateWithoutItsFtl) {
  ImageState state = ftl_state();
  state.ftl.reset();
  auto image = Image::create(path_, state, 0, false);
  ASSERT_FALSE(image.ok());
  EXPECT_NE(image.error().find("without its ftl section"), std::string::npos) << image.error();
  EXPECT_FALSE(fs::exists(path_));
}

TEST_F(ImageTest, BlockImageSavesAndReopensItsFtl) {
  auto image = create(ftl_state());
  ImageState second = ftl_state();
  second.ftl->l2p[1] = 3;
  second.ftl->clock_ns += 1000;
  ASSERT_TRUE(image->save(second).ok());
  image.reset();
  auto reopened = Image::open(path_);
  ASSERT_TRUE(reopened.ok()) << reopened.error();
  expect_same_state((*reopened)->state(), second);
}

// --- Create and open -----------------------------------------------------

TEST_F(ImageTest, CreateThenOpenRoundTripsEveryField) {
  create(sample_state()).reset();
  auto image = Image::open(path_);
  ASSERT_TRUE(image.ok()) << image.error();
  expect_same_state((*image)->state(), sample_state());
  EXPECT_EQ((*image)->sequence(), 1u);
  EXPECT_EQ((*image)->data_bytes(), 16384u);
  EXPECT_EQ((*image)->path(), path_);
}

TEST_F(ImageTest, CreateMakesASparseFileOfHeaderSlotsAndData) {
  auto image = create(sample_state(), 1ULL << 30);
  struct stat st;
  ASSERT_EQ(::stat(path_.c_str(), &st), 0);
  EXPECT_EQ(static_cast<uint64_t>(st.st_size), image->data_offset_bytes() + (1ULL << 30));
  EXPECT_EQ(image->data_offset_bytes() % 4096, 0u);
  EXPECT_LT(static_cast<uint64_t>(st.st_blocks) * 512, 1ULL << 20);
}

TEST_F(ImageTest, CreateRefusesAnExistingFileWithoutForce) {
  write_file(path_, {'k', 'e', 'e', 'p'});
  auto image = Image::create(path_, sample_state(), 0, false);
  ASSERT_FALSE(image.ok());
  EXPECT_EQ(image.error(), path_ + ": file exists; use --force to overwrite");
  EXPECT_EQ(read_file(path_), (std::vector<uint8_t>{'k', 'e', 'e', 'p'}));
}

TEST_F(ImageTest, CreateWithForceReplacesAnExistingFile) {
  write_file(path_, {'o', 'l', 'd'});
  auto image = Image::create(path_, sample_state(), 0, true);
  ASSERT_TRUE(image.ok()) << image.error();
  image.value().reset();
  auto reopened = Image::open(path_);
  ASSERT_TRUE(reopened.ok()) << reopened.error();
  expect_same_state((*reopened)->state(), sample_state());
}

TEST_F(ImageTest, CreateWithForceRefusesAnImageInUse) {
  auto first = create(sample_state());
  auto second = Image::create(path_, sample_state(), 0, true);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.error(), path_ + ": image is in use by another process");
}

TEST_F(ImageTest, CreateRefusesAStateThatWouldNotReadBack) {
  ImageState state = sample_state();
  state.config = Config{};  // zero page size: apply_toml would refuse it on open
  auto image = Image::create(path_, state, 0, false);
  ASSERT_FALSE(image.ok());
  EXPECT_NE(image.error().find("cannot create image"), std::string::npos) << image.error();
  EXPECT_FALSE(fs::exists(path_));
}

TEST_F(ImageTest, CreateRefusesAnInvalidZoneState) {
  ImageState state = sample_state();
  state.zones[1].state = 7;
  EXPECT_FALSE(Image::create(path_, state, 0, false).ok());
  EXPECT_FALSE(fs::exists(path_));
}

TEST_F(ImageTest, CreateLeavesNoTemporaryFiles) {
  create(sample_state());
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir_)) {
    names.push_back(entry.path().filename().string());
  }
  EXPECT_EQ(names, std::vector<std::string>{"img.zl"});
}

TEST_F(ImageTest, CreateRefusesADataRegionAboveTheLimit) {
  auto image = Image::create(path_, sample_state(), Image::kDataBytesMax + 1, false);
  ASSERT_FALSE(image.ok());
  EXPECT_FALSE(fs::exists(path_));
}

TEST_F(ImageTest, OpenRefusesAMissingFile) {
  std::string error = open_error();
  EXPECT_EQ(error.rfind(path_ + ": cannot open image:", 0), 0u) << error;
}

TEST_F(ImageTest, OpenRefusesADirectory) {
  fs::create_directory(path_);
  EXPECT_FALSE(Image::open(path_).ok());
}

// --- Locking -------------------------------------------------------------

TEST_F(ImageTest, SecondOpenWhileOpenSaysInUse) {
  auto first = create(sample_state());
  EXPECT_EQ(open_error(), path_ + ": image is in use by another process");
}

TEST_F(ImageTest, ClosingTheImageReleasesTheLock) {
  create(sample_state()).reset();
  auto first = Image::open(path_);
  ASSERT_TRUE(first.ok()) << first.error();
  first.value().reset();
  EXPECT_TRUE(Image::open(path_).ok());
}

// --- Save ----------------------------------------------------------------

TEST_F(ImageTest, SaveThenReopenGivesTheSavedState) {
  ImageState second;
  create_with_two_saves(second);
  auto image = Image::open(path_);
  ASSERT_TRUE(image.ok()) << image.error();
  expect_same_state((*image)->state(), second);
  EXPECT_EQ((*image)->sequence(), 2u);
}

TEST_F(ImageTest, SaveAlternatesSlotsWithRisingSequence) {
  auto image = create(sample_state());
  uint64_t slot_b = kSlotA + image->slot_bytes();
  ASSERT_TRUE(image->save(sample_state()).ok());
  std::vector<uint8_t> bytes = read_file(path_);
  EXPECT_EQ(load_le(bytes, kSlotA + 8, 8), 1u);
  EXPECT_EQ(load_le(bytes, slot_b + 8, 8), 2u);
  ASSERT_TRUE(image->save(sample_state()).ok());
  bytes = read_file(path_);
  EXPECT_EQ(load_le(bytes, kSlotA + 8, 8), 3u);
  EXPECT_EQ(load_le(bytes, slot_b + 8, 8), 2u);
  EXPECT_EQ(image->sequence(), 3u);
}

TEST_F(ImageTest, SaveTwiceThenReopenGivesTheNewest) {
  auto image = create(sample_state());
  ImageState state = sample_state();
  state.next_open_seq = 100;
  ASSERT_TRUE(image->save(state).ok());
  state.next_open_seq = 200;
  ASSERT_TRUE(image->save(state).ok());
  image.reset();
  auto reopened = Image::open(path_);
  ASSERT_TRUE(reopened.ok()) << reopened.error();
  EXPECT_EQ((*reopened)->state().next_open_seq, 200u);
  EXPECT_EQ((*reopened)->sequence(), 3u);
}

TEST_F(ImageTest, SaveRefusesMetadataLargerThanTheSlot) {
  auto image = create(sample_state());
  ImageState big = sample_state();
  big.erase_counts.assign(image->slot_bytes(), 1);
  Outcome saved = image->save(big);
  ASSERT_FALSE(saved.ok());
  EXPECT_NE(saved.error().find("does not fit"), std::string::npos) << saved.error();
  EXPECT_EQ(image->sequence(), 1u);
  expect_same_state(image->state(), sample_state());
}

TEST_F(ImageTest, SaveRefusesAStateThatWouldNotReadBack) {
  auto image = create(sample_state());
  ImageState bad = sample_state();
  bad.zones[0].data_end = bad.zones[0].wp + 1;
  EXPECT_FALSE(image->save(bad).ok());
  EXPECT_EQ(image->sequence(), 1u);
}

// --- Corruption and truncation ---------------------------------------------

TEST_F(ImageTest, OpenFallsBackToTheOlderSlotWhenTheNewestIsCorrupt) {
  ImageState second;
  create_with_two_saves(second);
  std::vector<uint8_t> bytes = read_file(path_);
  uint64_t slot_b = kSlotA + load_le(bytes, 16, 8);
  bytes[slot_b + 40] ^= 0x01;  // inside slot B's payload
  write_file(path_, bytes);
  auto image = Image::open(path_);
  ASSERT_TRUE(image.ok()) << image.error();
  EXPECT_EQ((*image)->sequence(), 1u);
  expect_same_state((*image)->state(), sample_state());
}

TEST_F(ImageTest, SaveAfterFallbackOverwritesTheCorruptSlot) {
  ImageState second;
  create_with_two_saves(second);
  std::vector<uint8_t> bytes = read_file(path_);
  uint64_t slot_b = kSlotA + load_le(bytes, 16, 8);
  bytes[slot_b + 28] ^= 0xFF;  // slot B's checksum
  write_file(path_, bytes);
  {
    auto image = Image::open(path_);
    ASSERT_TRUE(image.ok()) << image.error();
    ASSERT_TRUE((*image)->save(second).ok());
    EXPECT_EQ((*image)->sequence(), 2u);
  }
  auto image = Image::open(path_);
  ASSERT_TRUE(image.ok()) << image.error();
  expect_same_state((*image)->state(), second);
}

TEST_F(ImageTest, OpenRefusesWhenBothSlotsAreCorrupt) {
  ImageState second;
  create_with_two_saves(second);
  std::vector<uint8_t> bytes = read_file(path_);
  uint64_t slot_b = kSlotA + load_le(bytes, 16, 8);
  bytes[kSlotA + 28] ^= 0xFF;
  bytes[slot_b] = 'X';
  write_file(path_, bytes);
  EXPECT_EQ(open_error(), path_ +
                              ": corrupt image: no valid metadata slot (slot A: checksum "
                              "mismatch; slot B: bad magic)");
}

TEST_F(ImageTest, OpenRefusesBadMagic) {
  create(sample_state()).reset();
  std::vector<uint8_t> bytes = read_file(path_);
  bytes[0] = 'X';
  write_file(path_, bytes);
  EXPECT_EQ(open_error(), path_ + ": not a zonelab image (bad magic)");
}

TEST_F(ImageTest, OpenRefusesAFileThatIsNotAnImage) {
  write_file(path_, {'h', 'e', 'l', 'l', 'o', '\n'});
  EXPECT_EQ(open_error(), path_ + ": not a zonelab image (bad magic)");
}

TEST_F(ImageTest, OpenRefusesAnUnsupportedVersion) {
  create(sample_state()).reset();
  std::vector<uint8_t> bytes = read_file(path_);
  store_le(bytes, 8, 4, 7);
  refresh_header_crc(bytes);
  write_file(path_, bytes);
  EXPECT_EQ(open_error(),
            path_ + ": unsupported image format version 7 (this zonelab reads version 1)");
}

TEST_F(ImageTest, OpenRefusesAHeaderChecksumMismatch) {
  create(sample_state()).reset();
  std::vector<uint8_t> bytes = read_file(path_);
  bytes[33] ^= 0x10;  // data size
  write_file(path_, bytes);
  EXPECT_EQ(open_error(), path_ + ": corrupt image: header checksum mismatch");
}

TEST_F(ImageTest, OpenRefusesTruncatedFiles) {
  create(sample_state(), 8192).reset();
  const std::vector<uint8_t> whole = read_file(path_);
  uint64_t data_offset = load_le(whole, 24, 8);
  for (uint64_t length :
       {uint64_t{0}, uint64_t{5}, uint64_t{12}, uint64_t{100}, uint64_t{4095}, uint64_t{4096},
        uint64_t{4096 + 64}, data_offset - 1, data_offset, whole.size() - 1}) {
    write_file(path_, std::vector<uint8_t>(whole.begin(), whole.begin() + length));
    std::string error = open_error();
    EXPECT_EQ(error.rfind(path_ + ": truncated image (" + std::to_string(length) + " bytes", 0), 0u)
        << error;
  }
}

TEST_F(ImageTest, TruncatedHeaderMessageNamesTheSizes) {
  write_file(path_, {'Z', 'O', 'N', 'E', 'L', 'A', 'B', 0, 1, 0, 0, 0});
  EXPECT_EQ(open_error(), path_ + ": truncated image (12 bytes, header needs 4096)");
}

TEST_F(ImageTest, OpenNeverChangesARefusedFile) {
  create(sample_state()).reset();
  std::vector<uint8_t> bytes = read_file(path_);
  bytes[kSlotA + 28] ^= 0xFF;
  bytes[kSlotA + 1] ^= 0xFF;
  write_file(path_, bytes);
  struct stat before;
  ASSERT_EQ(::stat(path_.c_str(), &before), 0);
  EXPECT_FALSE(Image::open(path_).ok());
  struct stat after;
  ASSERT_EQ(::stat(path_.c_str(), &after), 0);
  EXPECT_EQ(read_file(path_), bytes);
  EXPECT_EQ(before.st_mtim.tv_sec, after.st_mtim.tv_sec);
  EXPECT_EQ(before.st_mtim.tv_nsec, after.st_mtim.tv_nsec);
}

// --- Bounds on what a slot may claim -----------------------------------------

TEST(ImageDecodeTest, RejectsASlotSizeOutOfRange) {
  std::vector<uint8_t> image = Image::encode(sample_state(), 0).value();
  store_le(image, 16, 8, 4096 + 1);
  refresh_header_crc(image);
  EXPECT_EQ(decode_error(image), "corrupt image: slot size 4097 is out of range");
}

TEST(ImageDecodeTest, RejectsADataOffsetThatDoesNotFollowTheSlots) {
  std::vector<uint8_t> image = Image::encode(sample_state(), 0).value();
  store_le(image, 24, 8, load_le(image, 24, 8) + 4096);
  refresh_header_crc(image);
  EXPECT_NE(decode_error(image).find("corrupt image: data offset"), std::string::npos);
}

TEST(ImageDecodeTest, RejectsAPayloadLongerThanItsSlot) {
  std::vector<uint8_t> image = Image::encode(sample_state(), 0).value();
  store_le(image, kSlotA + 16, 8, 1ULL << 62);
  EXPECT_NE(decode_error(image).find("overflows the slot"), std::string::npos);
}

TEST(ImageDecodeTest, RejectsAZoneCountAboveTheLimit) {
  std::vector<Section> sections = sections_of(sample_state());
  store_le(sections[1].body, 0, 4, Image::kZoneCountMax + 1);
  std::string error = decode_error(image_with_payload(payload_of(sections)));
  EXPECT_NE(error.find("16777217 zones (limit 16777216)"), std::string::npos) << error;
}

TEST(ImageDecodeTest, RejectsAZoneCountThatDisagreesWithTheLength) {
  std::vector<Section> sections = sections_of(sample_state());
  store_le(sections[1].body, 0, 4, 1000);
  std::string error = decode_error(image_with_payload(payload_of(sections)));
  EXPECT_NE(error.find("zones section: 120 bytes for 1000 zones"), std::string::npos) << error;
}

TEST(ImageDecodeTest, RejectsAnEraseCountAboveTheLimit) {
  std::vector<Section> sections = sections_of(sample_state());
  store_le(sections[3].body, 0, 4, Image::kEraseCountsMax + 1);
  std::string error = decode_error(image_with_payload(payload_of(sections)));
  EXPECT_NE(error.find("(limit 67108864)"), std::string::npos) << error;
}

TEST(ImageDecodeTest, RejectsASectionLongerThanThePayload) {
  std::vector<uint8_t> payload = payload_of(sections_of(sample_state()));
  store_le(payload, 4, 8, payload.size());  // the config section's length
  std::string error = decode_error(image_with_payload(payload));
  EXPECT_NE(error.find("claims"), std::string::npos) << error;
}

TEST(ImageDecodeTest, SkipsSectionsOfLaterVersions) {
  std::vector<Section> sections = sections_of(sample_state());
  sections.insert(sections.begin() + 2, Section{99, {1, 2, 3}});
  auto decoded = Image::decode(image_with_payload(payload_of(sections)));
  ASSERT_TRUE(decoded.ok()) << decoded.error();
  expect_same_state(*decoded, sample_state());
}

TEST(ImageDecodeTest, RejectsADuplicateSection) {
  std::vector<Section> sections = sections_of(sample_state());
  sections.push_back(sections[2]);
  std::string error = decode_error(image_with_payload(payload_of(sections)));
  EXPECT_NE(error.find("duplicate next-open-seq section"), std::string::npos) << error;
}

TEST(ImageDecodeTest, RejectsAMissingSection) {
  std::vector<Section> sections = sections_of(sample_state());
  sections.erase(sections.begin() + 3);
  std::string error = decode_error(image_with_payload(payload_of(sections)));
  EXPECT_NE(error.find("missing erase-counts section"), std::string::npos) << error;
}

TEST(ImageDecodeTest, RejectsAnUnknownConfigKey) {
  std::vector<Section> sections = sections_of(sample_state());
  std::string text = "bogus = 1\n";
  sections[0].body.insert(sections[0].body.begin(), text.begin(), text.end());
  std::string error = decode_error(image_with_payload(payload_of(sections)));
  EXPECT_NE(error.find("unknown configuration key 'bogus'"), std::string::npos) << error;
}

TEST(ImageDecodeTest, RejectsAConfigMissingAKey) {
  // Found by the fuzzer: a missing key keeps Config{}'s out-of-range zero,
  // and the state could be loaded but never saved again.
  std::vector<Section> sections = sections_of(sample_state());
  std::string text(sections[0].body.begin(), sections[0].body.end());
  size_t line = text.find("channels_per_zone");
  ASSERT_NE(line, std::string::npos);
  text.erase(line, text.find('\n', line) + 1 - line);
  sections[0].body.assign(text.begin(), text.end());
  std::string error = decode_error(image_with_payload(payload_of(sections)));
  EXPECT_NE(error.find("config section is incomplete"), std::string::npos) << error;
}

TEST(ImageDecodeTest, RejectsAnInvalidZoneState) {
  std::vector<Section> sections = sections_of(sample_state());
  sections[1].body[4 + 29] = 9;  // zone 1's state
  std::string error = decode_error(image_with_payload(payload_of(sections)));
  EXPECT_NE(error.find("zone 1: state 9 is not a zone state"), std::string::npos) << error;
}

TEST(ImageDecodeTest, RejectsDataEndBeyondTheWritePointer) {
  std::vector<Section> sections = sections_of(sample_state());
  store_le(sections[1].body, 4 + 29 + 9, 8, 101);  // zone 1's data end, wp 100
  std::string error = decode_error(image_with_payload(payload_of(sections)));
  EXPECT_NE(error.find("zone 1: data end 101 is beyond the write pointer 100"), std::string::npos)
      << error;
}

TEST(ImageDecodeTest, ErrorsFitOnOneLine) {
  std::vector<Section> sections = sections_of(sample_state());
  std::string text = "[flash\n\n";
  sections[0].body.assign(text.begin(), text.end());
  std::string error = decode_error(image_with_payload(payload_of(sections)));
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
}

}  // namespace
}  // namespace zonelab
