#include "fio/fio_image.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <numeric>
#include <thread>

namespace zonelab::fio {
namespace {

// A private directory per test, removed afterwards.
class FioImage : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/zonelab-fio-test.XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string make_image(const std::string& name, const std::vector<std::string>& sets = {}) {
    Config c = *preset_config("small");
    EXPECT_TRUE(apply_override(c, "store.backing=memory").ok());
    for (const auto& s : sets) EXPECT_TRUE(apply_override(c, s).ok()) << s;
    std::string path = dir_ + "/" + name;
    auto made = Stack::create_image(path, c, false);
    EXPECT_TRUE(made.ok()) << made.error();
    return path;
  }

  static EngineOptions off() {
    EngineOptions o;
    o.timing = Timing::kOff;
    return o;
  }

  std::string dir_;
};

std::vector<uint8_t> bytes(size_t n, uint8_t first) {
  std::vector<uint8_t> v(n);
  std::iota(v.begin(), v.end(), first);
  return v;
}

TEST_F(FioImage, JobsOnOneImageShareItsStackAndAgreeOnTiming) {
  std::string path = make_image("a.img");
  auto opened = SharedImage::acquire(path, off());
  ASSERT_TRUE(opened.ok()) << opened.error();
  std::shared_ptr<SharedImage> first = std::move(opened).value();
  auto joined = SharedImage::acquire(dir_ + "/./a.img", off());
  ASSERT_TRUE(joined.ok()) << joined.error();
  std::shared_ptr<SharedImage> second = std::move(joined).value();
  EXPECT_EQ(first.get(), second.get());
  auto modeled = SharedImage::acquire(path, EngineOptions{});
  ASSERT_FALSE(modeled.ok());
  EXPECT_NE(modeled.error().find("already open in this fio with zonelab_timing=off"),
            std::string::npos)
      << modeled.error();
  // Let go of both: the image closes, and another process-wide open works.
  first.reset();
  second.reset();
  auto again = SharedImage::acquire(path, EngineOptions{});
  EXPECT_TRUE(again.ok()) << again.error();
}

TEST_F(FioImage, QueuedWritesStayInFlightTogetherAndReadBack) {
  auto image = SharedImage::acquire(make_image("z.img"), off());
  ASSERT_TRUE(image.ok()) << image.error();
  auto queue = (*image)->new_queue();
  const uint64_t lba = (*image)->info().lba_size_bytes;
  auto data = bytes(8 * lba, 3);
  int cookies[8];
  for (int i = 0; i < 8; ++i) {
    ASSERT_EQ(queue->queue(IoKind::kWrite, i * lba, lba, data.data() + i * lba, &cookies[i]), 0);
  }
  EXPECT_EQ(queue->outstanding(), 8u);
  queue->commit();
  unsigned got = 0;
  while (got < 8) {
    unsigned n = queue->reap(1, 8, std::nullopt);
    ASSERT_GT(n, 0u);
    for (unsigned i = 0; i < n; ++i) EXPECT_EQ(queue->event(i).error, 0);
    got += n;
  }
  EXPECT_EQ(queue->outstanding(), 0u);
  auto zones = (*image)->zones_from(0, 2);
  ASSERT_EQ(zones.size(), 2u);
  EXPECT_EQ(zones[0].wp_lba, 8u);
  EXPECT_EQ(zones[0].state, ZoneState::kImplicitlyOpened);
  std::vector<uint8_t> back(8 * lba);
  ASSERT_EQ(queue->queue(IoKind::kRead, 0, back.size(), back.data(), nullptr), 0);
  queue->commit();
  ASSERT_EQ(queue->reap(1, 1, std::nullopt), 1u);
  EXPECT_EQ(queue->event(0).error, 0);
  EXPECT_EQ(back, data);
}

TEST_F(FioImage, DeviceErrorsComeBackAsLinuxWouldGiveThem) {
  auto image = SharedImage::acquire(make_image("e.img"), off());
  ASSERT_TRUE(image.ok());
  auto queue = (*image)->new_queue();
  const uint64_t lba = (*image)->info().lba_size_bytes;
  auto data = bytes(lba, 1);
  // Not at the write pointer: an invalid zone write, EIO.
  ASSERT_EQ(queue->queue(IoKind::kWrite, 4 * lba, lba, data.data(), nullptr), 0);
  queue->commit();
  ASSERT_EQ(queue->reap(1, 1, std::nullopt), 1u);
  EXPECT_EQ(queue->event(0).error, EIO);
  EXPECT_EQ(queue->event(0).status, Status::kZoneInvalidWrite);
  // Refused before the device: not whole LBAs, past the end.
  EXPECT_EQ(queue->queue(IoKind::kRead, 1, lba, data.data(), nullptr), EINVAL);
  EXPECT_EQ(queue->queue(IoKind::kRead, 0, lba + 1, data.data(), nullptr), EINVAL);
  EXPECT_EQ(queue->queue(IoKind::kRead, (*image)->size_bytes(), lba, data.data(), nullptr), EINVAL);
  EXPECT_EQ(queue->outstanding(), 0u);
}

TEST_F(FioImage, ZoneResetCoversEveryZoneTheRangeTouches) {
  auto image = SharedImage::acquire(make_image("r.img"), off());
  ASSERT_TRUE(image.ok());
  auto& shared = **image;
  const uint64_t lba = shared.info().lba_size_bytes;
  const uint64_t zone_bytes = shared.info().zone_size_lbas * lba;
  auto queue = shared.new_queue();
  auto data = bytes(lba, 9);
  for (uint32_t z = 0; z < 3; ++z) {
    ASSERT_EQ(queue->queue(IoKind::kWrite, z * zone_bytes, lba, data.data(), nullptr), 0);
  }
  queue->commit();
  ASSERT_EQ(queue->reap(3, 3, std::nullopt), 3u);
  // From inside zone 0 to inside zone 1: zones 0 and 1, not 2.
  ASSERT_TRUE(shared.zone_action(ZoneAction::kReset, 0, zone_bytes + lba).ok());
  auto zones = shared.zones_from(0, 3);
  EXPECT_EQ(zones[0].state, ZoneState::kEmpty);
  EXPECT_EQ(zones[1].state, ZoneState::kEmpty);
  EXPECT_EQ(zones[2].wp_lba, zones[2].start_lba + 1);
  auto bad = shared.zone_action(ZoneAction::kReset, 1, lba);
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(shared.max_open_zones(), std::min(shared.info().max_open, shared.info().max_active));
}

TEST_F(FioImage, TrimsGoInDeallocatePiecesOnABlockImage) {
  auto image = SharedImage::acquire(
      make_image("b.img", {"interface=block", "store.backing=none", "flash.blocks_per_plane=128"}),
      off());
  ASSERT_TRUE(image.ok()) << image.error();
  auto queue = (*image)->new_queue();
  const uint64_t lba = (*image)->info().lba_size_bytes;
  const uint64_t length = ((uint64_t{1} << 20) + 5) * lba;  // two pieces
  ASSERT_EQ(queue->queue(IoKind::kTrim, 0, length, nullptr, nullptr), 0);
  ASSERT_EQ(queue->queue(IoKind::kFlush, 0, 0, nullptr, nullptr), 0);
  queue->commit();
  ASSERT_EQ(queue->reap(2, 2, std::nullopt), 2u);
  EXPECT_EQ(queue->event(0).error, 0);
  EXPECT_EQ(queue->event(1).error, 0);
  EXPECT_NE((*image)->stats_json().find("\"host_write_bytes\": 0"), std::string::npos);
}

TEST_F(FioImage, RealTimeQueuesFromSeveralThreads) {
  EngineOptions modeled;
  modeled.time_scale = 0.01;  // a hundred times faster than the model
  auto image = SharedImage::acquire(make_image("t.img"), modeled);
  ASSERT_TRUE(image.ok()) << image.error();
  const uint64_t lba = (*image)->info().lba_size_bytes;
  const uint64_t zone_bytes = (*image)->info().zone_size_lbas * lba;
  std::vector<std::thread> jobs;
  std::atomic<int> errors{0};
  for (int j = 0; j < 3; ++j) {
    jobs.emplace_back([&, j] {
      auto queue = (*image)->new_queue();
      auto data = bytes(lba, static_cast<uint8_t>(j));
      for (int round = 0; round < 20; ++round) {
        for (int k = 0; k < 4; ++k) {
          uint64_t at = j * zone_bytes + (round * 4 + k) * lba;
          if (queue->queue(IoKind::kWrite, at, lba, data.data(), nullptr) != 0) ++errors;
        }
        queue->commit();
        unsigned got = 0;
        while (got < 4) {
          unsigned n = queue->reap(1, 4, std::chrono::seconds(5));
          for (unsigned i = 0; i < n; ++i) errors += queue->event(i).error != 0;
          if (n == 0) {
            ++errors;
            return;
          }
          got += n;
        }
      }
    });
  }
  for (auto& t : jobs) t.join();
  EXPECT_EQ(errors.load(), 0);
  auto zones = (*image)->zones_from(0, 3);
  for (const auto& z : zones) EXPECT_EQ(z.wp_lba - z.start_lba, 80u);
  EXPECT_NE((*image)->stats_json().find("\"realtime\""), std::string::npos);
}

}  // namespace
}  // namespace zonelab::fio
