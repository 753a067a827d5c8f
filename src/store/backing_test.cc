// The backings as a specification: what a written LBA reads back as, what an
// unwritten or discarded one reads as, and where the file backing puts data.
#include "store/backing.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "store/image.h"

namespace zonelab {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kLbaBytes = 4096;
constexpr uint64_t kZoneSizeLbas = 16;
constexpr uint64_t kZoneCapacityLbas = 12;
constexpr uint32_t kZoneCount = 4;

std::vector<uint8_t> pattern(uint64_t blocks, uint8_t seed) {
  std::vector<uint8_t> bytes(blocks * kLbaBytes);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(seed + i * 7);
  return bytes;
}

std::vector<uint8_t> read_blocks(Backing& backing, uint64_t lba, uint32_t nlb) {
  std::vector<uint8_t> out(nlb * kLbaBytes, 0xEE);  // poison: a read must fill every byte
  EXPECT_TRUE(backing.read(lba, nlb, out.data()));
  return out;
}

std::vector<uint8_t> zeros(uint64_t blocks) { return std::vector<uint8_t>(blocks * kLbaBytes, 0); }

// --- memory ------------------------------------------------------------------

std::unique_ptr<Backing> memory() {
  return make_memory_backing(kLbaBytes, kZoneSizeLbas, kZoneCapacityLbas, kZoneCount);
}

TEST(MemoryBackingTest, StoresData) { EXPECT_TRUE(memory()->stores_data()); }

TEST(MemoryBackingTest, WriteThenReadReturnsTheData) {
  auto backing = memory();
  std::vector<uint8_t> data = pattern(3, 1);
  ASSERT_TRUE(backing->write(kZoneSizeLbas + 2, 3, data.data()));
  EXPECT_EQ(read_blocks(*backing, kZoneSizeLbas + 2, 3), data);
}

TEST(MemoryBackingTest, UnwrittenZoneReadsZeros) {
  auto backing = memory();
  EXPECT_EQ(read_blocks(*backing, 2 * kZoneSizeLbas, 4), zeros(4));
}

TEST(MemoryBackingTest, UnwrittenBlocksOfAWrittenZoneReadZeros) {
  auto backing = memory();
  std::vector<uint8_t> data = pattern(1, 2);
  ASSERT_TRUE(backing->write(0, 1, data.data()));
  EXPECT_EQ(read_blocks(*backing, 1, 2), zeros(2));
}

TEST(MemoryBackingTest, NullWriteStoresZeros) {
  auto backing = memory();
  std::vector<uint8_t> data = pattern(2, 3);
  ASSERT_TRUE(backing->write(4, 2, data.data()));
  ASSERT_TRUE(backing->write(4, 2, nullptr));
  EXPECT_EQ(read_blocks(*backing, 4, 2), zeros(2));
}

TEST(MemoryBackingTest, DiscardForgetsTheZone) {
  auto backing = memory();
  std::vector<uint8_t> data = pattern(2, 4);
  ASSERT_TRUE(backing->write(kZoneSizeLbas, 2, data.data()));
  backing->discard(kZoneSizeLbas, kZoneSizeLbas);
  EXPECT_EQ(read_blocks(*backing, kZoneSizeLbas, 2), zeros(2));
}

TEST(MemoryBackingTest, DiscardLeavesOtherZones) {
  auto backing = memory();
  std::vector<uint8_t> first = pattern(1, 5);
  std::vector<uint8_t> second = pattern(1, 6);
  ASSERT_TRUE(backing->write(0, 1, first.data()));
  ASSERT_TRUE(backing->write(kZoneSizeLbas, 1, second.data()));
  backing->discard(0, kZoneSizeLbas);
  EXPECT_EQ(read_blocks(*backing, kZoneSizeLbas, 1), second);
}

TEST(MemoryBackingTest, SyncSucceeds) { EXPECT_TRUE(memory()->sync()); }

TEST(NoneBackingTest, StoresNothing) {
  auto backing = make_none_backing();
  EXPECT_FALSE(backing->stores_data());
  std::vector<uint8_t> data = pattern(1, 7);
  ASSERT_TRUE(backing->write(0, 1, data.data()));
  backing->discard(0, kZoneSizeLbas);
  EXPECT_TRUE(backing->sync());
}

// --- file --------------------------------------------------------------------

class FileBackingTest : public ::testing::Test {
 protected:
  static constexpr uint64_t kDataBlocks = 64;

  void SetUp() override {
    std::string templ = (fs::path(::testing::TempDir()) / "zonelab-backing-XXXXXX").string();
    ASSERT_NE(::mkdtemp(templ.data()), nullptr);
    dir_ = templ;
    path_ = (fs::path(dir_) / "img.zl").string();
    state_.config = default_config();
    auto image = Image::create(path_, state_, kDataBlocks * kLbaBytes, false);
    ASSERT_TRUE(image.ok()) << image.error();
    image_ = std::move(image).value();
    backing_ = image_->file_backing(kLbaBytes);
  }
  void TearDown() override {
    backing_.reset();
    image_.reset();
    fs::remove_all(dir_);
  }

  std::string dir_;
  std::string path_;
  ImageState state_;
  std::unique_ptr<Image> image_;
  std::unique_ptr<Backing> backing_;
};

TEST_F(FileBackingTest, StoresData) { EXPECT_TRUE(backing_->stores_data()); }

TEST_F(FileBackingTest, WriteThenReadReturnsTheData) {
  std::vector<uint8_t> data = pattern(5, 8);
  ASSERT_TRUE(backing_->write(7, 5, data.data()));
  EXPECT_EQ(read_blocks(*backing_, 7, 5), data);
  EXPECT_TRUE(image_->data_error().empty()) << image_->data_error();
}

TEST_F(FileBackingTest, HoleReadsZeros) { EXPECT_EQ(read_blocks(*backing_, 20, 4), zeros(4)); }

TEST_F(FileBackingTest, DiscardReadsBackZeros) {
  std::vector<uint8_t> data = pattern(16, 9);
  ASSERT_TRUE(backing_->write(16, 16, data.data()));
  backing_->discard(16, 16);
  EXPECT_EQ(read_blocks(*backing_, 16, 16), zeros(16));
}

TEST_F(FileBackingTest, DiscardLeavesNeighboursAlone) {
  std::vector<uint8_t> data = pattern(3, 10);
  ASSERT_TRUE(backing_->write(15, 3, data.data()));
  backing_->discard(16, 1);
  std::vector<uint8_t> expected = data;
  std::fill(expected.begin() + kLbaBytes, expected.begin() + 2 * kLbaBytes, 0);
  EXPECT_EQ(read_blocks(*backing_, 15, 3), expected);
}

TEST_F(FileBackingTest, NullWriteStoresZeros) {
  std::vector<uint8_t> data = pattern(2, 11);
  ASSERT_TRUE(backing_->write(3, 2, data.data()));
  ASSERT_TRUE(backing_->write(3, 2, nullptr));
  EXPECT_EQ(read_blocks(*backing_, 3, 2), zeros(2));
}

TEST_F(FileBackingTest, LbaLivesAtDataOffsetPlusLbaTimesLbaSize) {
  std::vector<uint8_t> data = pattern(1, 12);
  ASSERT_TRUE(backing_->write(9, 1, data.data()));
  ASSERT_TRUE(backing_->sync());
  uint64_t offset = image_->data_offset_bytes() + 9 * kLbaBytes;
  std::ifstream in(path_, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(offset));
  std::vector<uint8_t> stored(kLbaBytes);
  in.read(reinterpret_cast<char*>(stored.data()), static_cast<std::streamsize>(stored.size()));
  ASSERT_TRUE(in.good());
  EXPECT_EQ(stored, data);
}

TEST_F(FileBackingTest, DataSurvivesSaveAndReopen) {
  std::vector<uint8_t> data = pattern(4, 13);
  ASSERT_TRUE(backing_->write(kDataBlocks - 4, 4, data.data()));
  ASSERT_TRUE(image_->save(state_).ok());
  backing_.reset();
  image_.reset();
  auto image = Image::open(path_);
  ASSERT_TRUE(image.ok()) << image.error();
  image_ = std::move(image).value();
  backing_ = image_->file_backing(kLbaBytes);
  EXPECT_EQ(read_blocks(*backing_, kDataBlocks - 4, 4), data);
}

TEST_F(FileBackingTest, OutOfRangeAccessIsAnsweredAndRecordedNotCrashed) {
  std::vector<uint8_t> data = pattern(2, 14);
  EXPECT_FALSE(backing_->write(kDataBlocks - 1, 2, data.data()));
  EXPECT_NE(image_->data_error().find("outside the data region"), std::string::npos)
      << image_->data_error();
  std::vector<uint8_t> out(4096);
  EXPECT_FALSE(backing_->read(kDataBlocks, 1, out.data()));
}

TEST_F(FileBackingTest, AFailedWriteIsTheCommandsAndTheImageStillSaves) {
  // The device answers the failed command and changes nothing, so the
  // state it saves afterwards describes only data that is there.
  std::vector<uint8_t> data = pattern(2, 14);
  EXPECT_FALSE(backing_->write(kDataBlocks, 2, data.data()));
  EXPECT_TRUE(image_->save(state_).ok());
  EXPECT_EQ(image_->sequence(), 2u);
}

TEST_F(FileBackingTest, WritesAndDiscardsAreSkippedWhileReplaying) {
  // A journal replayed resets a zone that later commands wrote again: the
  // data region already holds the later data, which must survive.
  std::vector<uint8_t> data = pattern(1, 3);
  ASSERT_TRUE(backing_->write(0, 1, data.data()));
  image_->set_replaying(true);
  std::vector<uint8_t> other = pattern(1, 9);
  EXPECT_TRUE(backing_->write(0, 1, other.data()));
  backing_->discard(0, 16);
  image_->set_replaying(false);
  EXPECT_EQ(read_blocks(*backing_, 0, 1), data);
}

TEST_F(FileBackingTest, SyncSucceeds) { EXPECT_TRUE(backing_->sync()); }

}  // namespace
}  // namespace zonelab
