#include "serve/block_file.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <numeric>
#include <thread>
#include <vector>

#include "stack/stack.h"

namespace zonelab::serve {
namespace {

Config block_config(const std::string& backing = "memory") {
  Config c = *preset_config("small");
  EXPECT_TRUE(apply_override(c, "interface=block").ok());
  EXPECT_TRUE(apply_override(c, "store.backing=" + backing).ok());
  return c;
}

std::unique_ptr<Stack> make_stack(bool realtime = false) {
  StackOptions so;
  so.realtime = realtime;
  so.realtime_options.timing = Timing::kOff;
  auto stack = Stack::make(block_config(), so);
  EXPECT_TRUE(stack.ok()) << stack.error();
  return std::move(stack).value();
}

std::vector<uint8_t> bytes(size_t n, uint8_t first) {
  std::vector<uint8_t> v(n);
  std::iota(v.begin(), v.end(), first);
  return v;
}

uint64_t deallocated_bytes(Stack& stack) {
  uint64_t out = 0;
  stack.inspect([&](const ModeledDevice& d) { out = d.counters().deallocated_bytes; });
  return out;
}

TEST(BlockFile, SizeIsTheNamespaceCapacity) {
  auto stack = make_stack();
  BlockFile file(stack->io());
  EXPECT_EQ(file.block_bytes(), stack->info().lba_size_bytes);
  EXPECT_EQ(file.size_bytes(), stack->info().capacity_lbas * stack->info().lba_size_bytes);
}

TEST(BlockFile, AlignedWriteReadsBack) {
  auto stack = make_stack();
  BlockFile file(stack->io());
  auto data = bytes(3 * 4096, 7);
  ASSERT_EQ(file.write(8192, data), static_cast<int64_t>(data.size()));
  std::vector<uint8_t> back(data.size());
  ASSERT_EQ(file.read(8192, back), static_cast<int64_t>(back.size()));
  EXPECT_EQ(back, data);
  EXPECT_EQ(file.counters().partial_lbas, 0u);
}

TEST(BlockFile, UnalignedWriteKeepsTheBytesAroundIt) {
  auto stack = make_stack();
  BlockFile file(stack->io());
  auto base = bytes(3 * 4096, 1);
  ASSERT_EQ(file.write(0, base), static_cast<int64_t>(base.size()));
  // 512-byte sectors, as a kernel's block layer sends them: across the
  // first LBA's end, all of the second, into the third.
  auto patch = bytes(4096 + 1024, 200);
  ASSERT_EQ(file.write(3584, patch), static_cast<int64_t>(patch.size()));
  std::copy(patch.begin(), patch.end(), base.begin() + 3584);
  std::vector<uint8_t> back(base.size());
  ASSERT_EQ(file.read(0, back), static_cast<int64_t>(back.size()));
  EXPECT_EQ(back, base);
  EXPECT_EQ(file.counters().partial_lbas, 2u);
  // An unaligned read of a few bytes inside one LBA.
  std::vector<uint8_t> few(10);
  ASSERT_EQ(file.read(4097, few), 10);
  EXPECT_TRUE(std::equal(few.begin(), few.end(), base.begin() + 4097));
}

TEST(BlockFile, ReadPastTheEndIsShortAndWritePastItIsRefused) {
  auto stack = make_stack();
  BlockFile file(stack->io());
  std::vector<uint8_t> buffer(8192);
  EXPECT_EQ(file.read(file.size_bytes() - 100, buffer), 100);
  EXPECT_EQ(file.read(file.size_bytes(), buffer), 0);
  EXPECT_EQ(file.read(UINT64_MAX - 5, buffer), 0);
  EXPECT_EQ(file.write(file.size_bytes() - 100, buffer), -ENOSPC);
  EXPECT_EQ(file.write(UINT64_MAX - 5, buffer), -ENOSPC);
  // Nothing was written by the refused write.
  std::vector<uint8_t> tail(100);
  ASSERT_EQ(file.read(file.size_bytes() - 100, tail), 100);
  EXPECT_EQ(tail, std::vector<uint8_t>(100, 0));
  EXPECT_EQ(file.counters().errors, 2u);
}

TEST(BlockFile, OversizedRequestIsRefused) {
  auto stack = make_stack();
  BlockFile file(stack->io());
  std::vector<uint8_t> huge(kMaxRequestBytes + 4096);
  EXPECT_EQ(file.read(0, huge), -EINVAL);
  EXPECT_EQ(file.write(0, huge), -EINVAL);
}

TEST(BlockFile, HoleReadsZerosAndDeallocatesWholeLbasOnly) {
  auto stack = make_stack();
  BlockFile file(stack->io());
  auto data = bytes(4 * 4096, 9);
  ASSERT_EQ(file.write(0, data), static_cast<int64_t>(data.size()));
  // From the middle of LBA 0 to the middle of LBA 3: LBAs 1 and 2 go whole.
  ASSERT_EQ(file.hole(2048, 3 * 4096), 0);
  std::fill(data.begin() + 2048, data.begin() + 2048 + 3 * 4096, 0);
  std::vector<uint8_t> back(data.size());
  ASSERT_EQ(file.read(0, back), static_cast<int64_t>(back.size()));
  EXPECT_EQ(back, data);
  EXPECT_EQ(file.counters().deallocated_lbas, 2u);
  EXPECT_EQ(deallocated_bytes(*stack), 2u * 4096);
  EXPECT_EQ(file.counters().partial_lbas, 2u);
}

TEST(BlockFile, HoleInsideOneLbaAndPastTheEnd) {
  auto stack = make_stack();
  BlockFile file(stack->io());
  auto data = bytes(4096, 3);
  ASSERT_EQ(file.write(0, data), 4096);
  ASSERT_EQ(file.hole(100, 50), 0);
  std::fill(data.begin() + 100, data.begin() + 150, 0);
  std::vector<uint8_t> back(4096);
  ASSERT_EQ(file.read(0, back), 4096);
  EXPECT_EQ(back, data);
  EXPECT_EQ(file.counters().deallocated_lbas, 0u);
  // Past the end: nothing to punch, no error; an overflowing length is one.
  EXPECT_EQ(file.hole(file.size_bytes(), 4096), 0);
  EXPECT_EQ(file.hole(file.size_bytes() - 4096, UINT64_MAX - file.size_bytes()), 0);
  EXPECT_EQ(file.hole(UINT64_MAX - 1, 4096), -EINVAL);
}

TEST(BlockFile, WholeDeviceHoleGoesInPieces) {
  auto stack = make_stack();
  BlockFile file(stack->io());
  ASSERT_EQ(file.hole(0, file.size_bytes()), 0);
  EXPECT_EQ(file.counters().deallocated_lbas, stack->info().capacity_lbas);
  EXPECT_EQ(deallocated_bytes(*stack), file.size_bytes());
}

TEST(BlockFile, FlushIsAFlushCommand) {
  auto stack = make_stack();
  BlockFile file(stack->io());
  EXPECT_EQ(file.flush(), 0);
  uint64_t flushes = 0;
  stack->inspect([&](const ModeledDevice& d) {
    flushes = d.counters().commands[static_cast<size_t>(Opcode::kFlush)];
  });
  EXPECT_EQ(flushes, 1u);
  EXPECT_EQ(file.counters().flushes, 1u);
}

TEST(BlockFile, ClosedStackAnswersEio) {
  auto stack = make_stack();
  BlockFile file(stack->io());
  ASSERT_TRUE(stack->close().ok());
  std::vector<uint8_t> buffer(4096);
  EXPECT_EQ(file.read(0, buffer), -EIO);
  EXPECT_EQ(file.write(0, buffer), -EIO);
  EXPECT_EQ(file.hole(0, 4096), -EIO);
  EXPECT_EQ(file.flush(), -EIO);
}

// Threads writing different bytes of the same LBAs at once, as a guest's
// 512-byte sectors may: every byte ends as its writer left it.
TEST(BlockFile, ConcurrentPartialWritesOfOneLbaLoseNothing) {
  auto stack = make_stack(/*realtime=*/true);
  BlockFile file(stack->io());
  constexpr int kThreads = 8;
  constexpr int kLbas = 4;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&file, t] {
      for (int lba = 0; lba < kLbas; ++lba) {
        std::vector<uint8_t> sector(512, static_cast<uint8_t>(t + 1));
        EXPECT_EQ(file.write(uint64_t(lba) * 4096 + uint64_t(t) * 512, sector), 512);
      }
    });
  }
  for (auto& th : threads) th.join();
  std::vector<uint8_t> back(kLbas * 4096);
  ASSERT_EQ(file.read(0, back), static_cast<int64_t>(back.size()));
  for (int lba = 0; lba < kLbas; ++lba) {
    for (int t = 0; t < kThreads; ++t) {
      EXPECT_EQ(back[size_t(lba) * 4096 + size_t(t) * 512], t + 1) << "lba " << lba;
      EXPECT_EQ(back[size_t(lba) * 4096 + size_t(t) * 512 + 511], t + 1) << "lba " << lba;
    }
  }
  EXPECT_TRUE(stack->close().ok());
}

}  // namespace
}  // namespace zonelab::serve
