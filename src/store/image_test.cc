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

// A state of opaque sections, as the layers would give it: the image frames
// them and never reads them (the layers' own tests check their contents).
ImageState sample_state() {
  ImageState state;
  state.config = default_config();
  state.config.seed = 42;
  state.sections[2] = std::vector<uint8_t>(4 + 4 * 29, 0x11);
  state.sections[3] = {8, 0, 0, 0, 0, 0, 0, 0};
  state.sections[4] = std::vector<uint8_t>(4 + 8 * 4, 0x44);
  state.sections[5] = std::vector<uint8_t>(24, 0x55);
  return state;
}

void expect_same_state(const ImageState& a, const ImageState& b) {
  EXPECT_EQ(config_to_toml(a.config), config_to_toml(b.config));
  EXPECT_EQ(a.sections, b.sections);
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

// The sections of slot A of `state`'s image, as encode() writes them.
std::vector<Section> sections_of(const ImageState& state) {
  std::vector<uint8_t> image = Image::encode(state, 0).value();
  uint64_t payload_bytes = load_le(image, kSlotA + 16, 8);
  std::vector<Section> sections;
  for (uint64_t at = kSlotA + 32; at < kSlotA + 32 + payload_bytes;) {
    auto type = static_cast<uint32_t>(load_le(image, at, 4));
    uint64_t length = load_le(image, at + 4, 8);
    sections.push_back(Section{
        type, std::vector<uint8_t>(image.begin() + at + 12, image.begin() + at + 12 + length)});
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
    second.sections[2][4] = 64;
    second.sections[5][0] += 1;
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
  EXPECT_EQ(image.size(), data_offset + 8192 + 4096);  // an in-memory image's journal: 4 KiB
}

TEST(ImageFormatTest, SlotAHoldsSequenceOneAndSlotBIsUnwritten) {
  std::vector<uint8_t> image = Image::encode(sample_state(), 0).value();
  uint64_t slot_bytes = load_le(image, 16, 8);
  EXPECT_EQ(std::memcmp(image.data() + kSlotA, "ZLSLOT\0\0", 8), 0);
  EXPECT_EQ(load_le(image, kSlotA + 8, 8), 1u);
  for (uint64_t i = 0; i < 32; ++i) EXPECT_EQ(image[kSlotA + slot_bytes + i], 0) << i;
}

TEST(ImageFormatTest, PayloadHoldsTheConfigTheSectionsInTypeOrderAndTheJournal) {
  std::vector<Section> sections = sections_of(sample_state());
  ASSERT_EQ(sections.size(), 6u);
  std::vector<uint32_t> types;
  for (const Section& section : sections) types.push_back(section.type);
  EXPECT_EQ(types, (std::vector<uint32_t>{1, 2, 3, 4, 5, 8}));
  EXPECT_EQ(std::string(sections[0].body.begin(), sections[0].body.end()),
            config_to_toml(sample_state().config));
  for (uint32_t type = 2; type <= 5; ++type) {
    EXPECT_EQ(sections[type - 1].body, sample_state().sections.at(type)) << type;
  }
  EXPECT_EQ(sections[5].body.size(), 16u);  // the journal's offset and length
}

TEST(ImageFormatTest, EncodedImageDecodesToTheSameState) {
  auto decoded = Image::decode(Image::encode(sample_state(), 4096).value());
  ASSERT_TRUE(decoded.ok()) << decoded.error();
  expect_same_state(*decoded, sample_state());
}

TEST(ImageFormatTest, TheSlotLeavesTheRoomALayerAsksFor) {
  ImageState state = sample_state();
  uint64_t before = load_le(Image::encode(state, 0).value(), 16, 8);
  state.growth_bytes = 1 << 20;
  uint64_t after = load_le(Image::encode(state, 0).value(), 16, 8);
  EXPECT_GE(after - before, 1u << 20);
}

TEST(ImageFormatTest, RefusesTheImagesOwnSectionTypesFromALayer) {
  for (uint32_t type : {0u, Image::kSectionConfig, Image::kSectionJournal}) {
    ImageState state = sample_state();
    state.sections[type] = {1};
    EXPECT_FALSE(Image::encode(state, 0).ok()) << type;
  }
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
  EXPECT_EQ(static_cast<uint64_t>(st.st_size),
            image->data_offset_bytes() + (1ULL << 30) + Image::kJournalBytes);
  EXPECT_EQ(image->data_offset_bytes() % 4096, 0u);
  // Header, slots and journal are allocated; the data region is a hole.
  EXPECT_LT(static_cast<uint64_t>(st.st_blocks) * 512,
            image->data_offset_bytes() + Image::kJournalBytes + (1ULL << 20));
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
  state.sections[3][0] = 100;
  ASSERT_TRUE(image->save(state).ok());
  state.sections[3][0] = 200;
  ASSERT_TRUE(image->save(state).ok());
  image.reset();
  auto reopened = Image::open(path_);
  ASSERT_TRUE(reopened.ok()) << reopened.error();
  EXPECT_EQ((*reopened)->state().sections.at(3)[0], 200u);
  EXPECT_EQ((*reopened)->sequence(), 3u);
}

TEST_F(ImageTest, SaveRefusesMetadataLargerThanTheSlot) {
  auto image = create(sample_state());
  ImageState big = sample_state();
  big.sections[4].assign(image->slot_bytes(), 1);
  Outcome saved = image->save(big);
  ASSERT_FALSE(saved.ok());
  EXPECT_NE(saved.error().find("does not fit"), std::string::npos) << saved.error();
  EXPECT_EQ(image->sequence(), 1u);
  expect_same_state(image->state(), sample_state());
}

TEST_F(ImageTest, SaveRefusesAStateThatWouldNotReadBack) {
  auto image = create(sample_state());
  ImageState bad = sample_state();
  bad.config = Config{};  // zero page size: apply_toml would refuse it on open
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

TEST(ImageDecodeTest, RejectsASectionLongerThanThePayload) {
  std::vector<uint8_t> payload = payload_of(sections_of(sample_state()));
  store_le(payload, 4, 8, payload.size());  // the config section's length
  std::string error = decode_error(image_with_payload(payload));
  EXPECT_NE(error.find("claims"), std::string::npos) << error;
}

TEST(ImageDecodeTest, PassesOnSectionsItDoesNotKnow) {
  // A layer's section, or one a later version added: the image keeps it for
  // the layer, which decides what it means.
  std::vector<Section> sections = sections_of(sample_state());
  sections.insert(sections.begin() + 2, Section{99, {1, 2, 3}});
  auto decoded = Image::decode(image_with_payload(payload_of(sections)));
  ASSERT_TRUE(decoded.ok()) << decoded.error();
  ImageState want = sample_state();
  want.sections[99] = {1, 2, 3};
  expect_same_state(*decoded, want);
}

TEST(ImageDecodeTest, RejectsADuplicateSection) {
  std::vector<Section> sections = sections_of(sample_state());
  sections.push_back(sections[2]);
  std::string error = decode_error(image_with_payload(payload_of(sections)));
  EXPECT_NE(error.find("duplicate section of type 3"), std::string::npos) << error;
}

TEST(ImageDecodeTest, RejectsAMissingConfigAndSectionTypeZero) {
  std::vector<Section> sections = sections_of(sample_state());
  sections.erase(sections.begin());
  EXPECT_NE(decode_error(image_with_payload(payload_of(sections))).find("missing config section"),
            std::string::npos);
  sections = sections_of(sample_state());
  sections.push_back(Section{0, {}});
  EXPECT_NE(decode_error(image_with_payload(payload_of(sections))).find("type 0"),
            std::string::npos);
}

TEST(ImageDecodeTest, RejectsAJournalPlaceThatIsNotAllowed) {
  for (auto [offset, bytes] : {std::pair<uint64_t, uint64_t>{4096, 0},
                               {4096, 4097},
                               {4097, 4096},
                               {4096, Image::kJournalBytesMax + 4096},
                               {1ULL << 40, 4096},
                               {4096, 4096}}) {  // inside the header and slots
    std::vector<Section> sections = sections_of(sample_state());
    store_le(sections.back().body, 0, 8, offset);
    store_le(sections.back().body, 8, 8, bytes);
    std::string error = decode_error(image_with_payload(payload_of(sections)));
    EXPECT_NE(error.find("journal"), std::string::npos) << offset << " " << bytes << ": " << error;
  }
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

TEST(ImageDecodeTest, ErrorsFitOnOneLine) {
  std::vector<Section> sections = sections_of(sample_state());
  std::string text = "[flash\n\n";
  sections[0].body.assign(text.begin(), text.end());
  std::string error = decode_error(image_with_payload(payload_of(sections)));
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
}

// --- The journal --------------------------------------------------------------

std::vector<uint8_t> record(uint8_t value, size_t size = 18) {
  return std::vector<uint8_t>(size, value);
}

TEST_F(ImageTest, ANewImageHasAnEmptyJournal) {
  auto image = create(sample_state());
  EXPECT_TRUE(image->has_journal());
  EXPECT_TRUE(image->journal_found().empty());
  EXPECT_EQ(image->journal_records(), 0u);
  struct stat st;
  ASSERT_EQ(::stat(path_.c_str(), &st), 0);
  EXPECT_EQ(static_cast<uint64_t>(st.st_size),
            image->data_offset_bytes() + 16384 + Image::kJournalBytes);
}

TEST_F(ImageTest, FlushedRecordsAreFoundInOrderWithoutASave) {
  auto image = create(sample_state());
  for (uint8_t i = 0; i < 10; ++i) ASSERT_TRUE(image->journal_append(record(i, 10 + i)));
  ASSERT_TRUE(image->journal_flush().ok());
  // What a process killed now leaves: the file as it is.
  std::vector<std::vector<uint8_t>> found;
  auto decoded = Image::decode(read_file(path_).data(), read_file(path_).size(), &found);
  ASSERT_TRUE(decoded.ok()) << decoded.error();
  ASSERT_EQ(found.size(), 10u);
  for (uint8_t i = 0; i < 10; ++i) EXPECT_EQ(found[i], record(i, 10 + i));
}

TEST_F(ImageTest, UnflushedRecordsAreNotInTheFile) {
  auto image = create(sample_state());
  ASSERT_TRUE(image->journal_append(record(1)));
  ASSERT_TRUE(image->journal_flush().ok());
  ASSERT_TRUE(image->journal_append(record(2)));
  std::vector<uint8_t> bytes = read_file(path_);
  std::vector<std::vector<uint8_t>> found;
  ASSERT_TRUE(Image::decode(bytes.data(), bytes.size(), &found).ok());
  EXPECT_EQ(found.size(), 1u);
}

TEST_F(ImageTest, OpenFindsTheRecordsAndAppendsAfterThem) {
  {
    auto image = create(sample_state());
    ASSERT_TRUE(image->journal_append(record(1)));
    ASSERT_TRUE(image->journal_flush().ok());
  }
  {
    auto image = Image::open(path_);
    ASSERT_TRUE(image.ok()) << image.error();
    ASSERT_EQ((*image)->journal_found().size(), 1u);
    ASSERT_TRUE((*image)->journal_append(record(2)));
    ASSERT_TRUE((*image)->journal_flush().ok());
  }
  auto image = Image::open(path_);
  ASSERT_TRUE(image.ok());
  ASSERT_EQ((*image)->journal_found().size(), 2u);
  EXPECT_EQ((*image)->journal_found()[1], record(2));
}

TEST_F(ImageTest, ASaveEmptiesTheJournalAndOldRecordsNoLongerCount) {
  auto image = create(sample_state());
  for (uint8_t i = 0; i < 5; ++i) ASSERT_TRUE(image->journal_append(record(i)));
  ASSERT_TRUE(image->journal_flush().ok());
  ASSERT_TRUE(image->save(sample_state()).ok());
  EXPECT_EQ(image->journal_records(), 0u);
  ASSERT_TRUE(image->journal_append(record(9)));
  ASSERT_TRUE(image->journal_flush().ok());
  image.reset();
  auto reopened = Image::open(path_);
  ASSERT_TRUE(reopened.ok());
  // Records 1-4 of the old sequence still lie after the new one in the region.
  ASSERT_EQ((*reopened)->journal_found().size(), 1u);
  EXPECT_EQ((*reopened)->journal_found()[0], record(9));
}

TEST_F(ImageTest, ATornLastRecordEndsTheJournal) {
  auto image = create(sample_state());
  for (uint8_t i = 0; i < 3; ++i) ASSERT_TRUE(image->journal_append(record(i)));
  ASSERT_TRUE(image->journal_flush().ok());
  std::vector<uint8_t> bytes = read_file(path_);
  uint64_t journal = bytes.size() - Image::kJournalBytes;
  uint64_t record_bytes = 24 + 18 + 4;
  for (uint64_t at : {journal + 2 * record_bytes + 30, journal + 2 * record_bytes + 1,
                      journal + 2 * record_bytes + record_bytes - 1}) {
    std::vector<uint8_t> torn = bytes;
    torn[at] ^= 0x20;
    std::vector<std::vector<uint8_t>> found;
    ASSERT_TRUE(Image::decode(torn.data(), torn.size(), &found).ok());
    EXPECT_EQ(found.size(), 2u) << at - journal;
  }
}

TEST_F(ImageTest, AFullJournalRefusesTheNextRecord) {
  auto image = create(sample_state());
  std::vector<uint8_t> big = record(7, Image::kJournalRecordBytesMax);
  uint64_t appended = 0;
  while (image->journal_append(big)) ++appended;
  EXPECT_EQ(appended, Image::kJournalBytes / (Image::kJournalRecordBytesMax + 28));
  ASSERT_TRUE(image->save(sample_state()).ok());
  EXPECT_TRUE(image->journal_append(big));
}

TEST_F(ImageTest, AnImageWithoutAJournalGetsOneAtTheEnd) {
  // An image of the format before journals: slot A has no journal section.
  std::vector<uint8_t> old = image_with_payload(payload_of([] {
    std::vector<Section> sections = sections_of(sample_state());
    sections.pop_back();
    return sections;
  }()));
  write_file(path_, old);
  auto image = Image::open(path_);
  ASSERT_TRUE(image.ok()) << image.error();
  EXPECT_FALSE((*image)->has_journal());
  ASSERT_TRUE((*image)->add_journal().ok());
  EXPECT_TRUE((*image)->has_journal());
  EXPECT_EQ((*image)->sequence(), 2u);
  ASSERT_TRUE((*image)->journal_append(record(5)));
  ASSERT_TRUE((*image)->journal_flush().ok());
  image = Error{"closed"};
  auto reopened = Image::open(path_);
  ASSERT_TRUE(reopened.ok()) << reopened.error();
  EXPECT_EQ((*reopened)->journal_found().size(), 1u);
  expect_same_state((*reopened)->state(), sample_state());
}

TEST(ImageJournalRecordTest, HasTheDocumentedLayout) {
  std::vector<uint8_t> payload = {1, 2, 3};
  std::vector<uint8_t> bytes = Image::encode_journal_record(7, 2, payload);
  ASSERT_EQ(bytes.size(), 24 + 3 + 4u);
  EXPECT_EQ(load_le(bytes, 0, 4), 0x524A4C5Au);
  EXPECT_EQ(load_le(bytes, 4, 4), 3u);
  EXPECT_EQ(load_le(bytes, 8, 8), 7u);
  EXPECT_EQ(load_le(bytes, 16, 8), 2u);
  EXPECT_EQ(load_le(bytes, 27, 4), crc32c(bytes.data(), 27));
}

// --- Readers ---------------------------------------------------------------

TEST_F(ImageTest, ReadersShareTheImageAndExcludeAWriter) {
  create(sample_state()).reset();
  auto first = Image::open(path_, Image::Access::kReadOnly);
  auto second = Image::open(path_, Image::Access::kReadOnly);
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_TRUE((*first)->read_only());
  EXPECT_EQ(open_error(), path_ + ": image is in use by another process");
  EXPECT_FALSE((*first)->save(sample_state()).ok());
}

TEST_F(ImageTest, AReadOnlyFileOpensForReading) {
  create(sample_state()).reset();
  ASSERT_EQ(::chmod(path_.c_str(), 0444), 0);
  if (::geteuid() != 0) {  // root writes anyway
    std::string error = open_error();
    EXPECT_NE(error.find("read-only"), std::string::npos) << error;
  }
  EXPECT_TRUE(Image::open(path_, Image::Access::kReadOnly).ok());
}

TEST_F(ImageTest, AFallbackToTheOlderSlotIsNoted) {
  ImageState second;
  create_with_two_saves(second);
  {
    auto image = Image::open(path_);
    ASSERT_TRUE(image.ok());
    EXPECT_TRUE((*image)->fallback_note().empty());
  }
  std::vector<uint8_t> bytes = read_file(path_);
  uint64_t slot_b = kSlotA + load_le(bytes, 16, 8);
  bytes[slot_b + 40] ^= 0x01;
  write_file(path_, bytes);
  auto image = Image::open(path_);
  ASSERT_TRUE(image.ok());
  EXPECT_NE((*image)->fallback_note().find("slot B"), std::string::npos)
      << (*image)->fallback_note();
  EXPECT_NE((*image)->fallback_note().find("sequence 1"), std::string::npos);
}

}  // namespace
}  // namespace zonelab
