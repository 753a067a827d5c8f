#include "serve/stream_hints.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>
#include <vector>

namespace zonelab::serve {
namespace {

using Piece = std::tuple<uint64_t, uint64_t, uint32_t>;

std::vector<Piece> pieces(StreamHints& h, uint64_t lba, uint64_t nlb) {
  std::vector<Piece> out;
  EXPECT_EQ(h.split(lba, nlb,
                    [&](uint64_t l, uint64_t n, uint32_t s) {
                      out.emplace_back(l, n, s);
                      return 0;
                    }),
            0);
  return out;
}

class HintsFile : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/zonelab-hints-test.XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    path_ = dir_ + "/hints";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void append(const std::string& text) { std::ofstream(path_, std::ios::app) << text; }
  std::string dir_, path_;
};

TEST(StreamHintRecord, ParsesOnlyWholeRecords) {
  auto r = parse_hint_record("8192 4096 3");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->offset, 8192u);
  EXPECT_EQ(r->length, 4096u);
  EXPECT_EQ(r->hint, 3u);
  for (const char* bad : {"", "1", "1 2", "1 2 3 4", "1 2 6", "1 0 3", "-1 2 3", "1  2 3", "1 2 3 ",
                          "a b c", "99999999999999999999999 1 1", "1\t2\t3"}) {
    EXPECT_FALSE(parse_hint_record(bad).has_value()) << bad;
  }
}

TEST(StreamHintRecord, HintsMapToStreamsTheDeviceHas) {
  EXPECT_EQ(stream_of_hint(0, 6), 0u);
  EXPECT_EQ(stream_of_hint(2, 6), 2u);
  EXPECT_EQ(stream_of_hint(5, 6), 5u);
  EXPECT_EQ(stream_of_hint(5, 4), 3u);
  EXPECT_EQ(stream_of_hint(3, 1), 0u);
}

TEST_F(HintsFile, WritesGoToTheStreamTheirLbasWereLastHintedFor) {
  StreamHints h(path_, 6, 4096, 1000);
  // Nothing hinted (and no file yet): one piece on stream 0.
  EXPECT_EQ(pieces(h, 10, 5), (std::vector<Piece>{{10, 5, 0}}));
  append("40960 40960 2\n");  // LBAs 10-19: the log
  append("81920 8192 4\n");   // LBAs 20-21
  EXPECT_EQ(pieces(h, 5, 20), (std::vector<Piece>{{5, 5, 0}, {10, 10, 2}, {20, 2, 4}, {22, 3, 0}}));
  // A later record over part of an earlier one wins there only.
  append("49152 8192 5\n");  // LBAs 12-13
  EXPECT_EQ(pieces(h, 10, 10), (std::vector<Piece>{{10, 2, 2}, {12, 2, 5}, {14, 6, 2}}));
  // Hint 0 (not set) gives the LBAs back to stream 0.
  append("40960 4096 0\n");
  EXPECT_EQ(h.stream_of(10), 0u);
  EXPECT_EQ(h.stream_of(11), 2u);
  // A byte range not on LBA boundaries covers every LBA it touches.
  append("409700 10 3\n");  // LBA 100
  EXPECT_EQ(h.stream_of(100), 3u);
  EXPECT_EQ(h.stream_of(101), 0u);
  StreamHintCounters c = h.counters();
  EXPECT_EQ(c.records, 5u);
  EXPECT_EQ(c.ignored, 0u);
  // The writes split above, by stream (stream_of asks without counting).
  EXPECT_EQ(c.write_bytes[0], (5 + 5 + 3) * 4096u);
  EXPECT_EQ(c.write_bytes[2], (10 + 2 + 6) * 4096u);
}

TEST_F(HintsFile, BadLinesAreCountedAndChangeNothing) {
  StreamHints h(path_, 6, 4096, 100);
  append("0 4096 9\n");                      // no such hint
  append("409600 4096 2\n");                 // LBA 100: past the disk
  append("405504 8192 2\n");                 // runs past the end
  append(std::string(300, '7') + " 1 2\n");  // over-long
  append("garbage\n\n");                     // not a record, and an empty line
  append("4096 4096 3\n");                   // a good one after them all
  EXPECT_EQ(h.stream_of(1), 3u);
  EXPECT_EQ(h.stream_of(0), 0u);
  EXPECT_EQ(h.stream_of(99), 0u);
  StreamHintCounters c = h.counters();
  EXPECT_EQ(c.records, 1u);
  EXPECT_EQ(c.ignored, 6u);
}

TEST_F(HintsFile, ALineWrittenInTwoPiecesIsTakenWhenItEnds) {
  StreamHints h(path_, 6, 4096, 100);
  append("8192 40");
  EXPECT_EQ(h.stream_of(2), 0u);
  append("96 4\n");
  EXPECT_EQ(h.stream_of(2), 4u);
  EXPECT_EQ(h.counters().records, 1u);
}

TEST_F(HintsFile, AFailedWriteStopsTheSplit) {
  StreamHints h(path_, 6, 4096, 100);
  append("8192 4096 2\n");
  std::vector<uint64_t> tried;
  int r = h.split(0, 4, [&](uint64_t lba, uint64_t, uint32_t) {
    tried.push_back(lba);
    return lba == 2 ? -5 : 0;
  });
  EXPECT_EQ(r, -5);
  EXPECT_EQ(tried, (std::vector<uint64_t>{0, 2}));
}

}  // namespace
}  // namespace zonelab::serve
