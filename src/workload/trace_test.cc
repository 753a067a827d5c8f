#include "workload/trace.h"

#include <gtest/gtest.h>

#include "stack/stack.h"
#include "workload/replay.h"

namespace zonelab {
namespace {

TEST(Trace, IologVersion2WithFileActionsWaitsAndSyncs) {
  auto t = parse_trace_text(
      "fio version 2 iolog\n/dev/a add\n/dev/a open\n/dev/a write 4096 8192\n"
      "/dev/a wait 250 0\n/dev/a read 0 4096\n/dev/a sync 0 0\n/dev/a datasync\n"
      "/dev/a trim 0 65536\n/dev/a close\n");
  ASSERT_TRUE(t.ok()) << t.error();
  EXPECT_EQ(t->format, TraceFormat::kIologV2);
  EXPECT_FALSE(t->timed);
  ASSERT_EQ(t->ops.size(), 6u);
  EXPECT_EQ(t->ops[0].kind, TraceOpKind::kWrite);
  EXPECT_EQ(t->ops[0].offset_bytes, 4096u);
  EXPECT_EQ(t->ops[0].length_bytes, 8192u);
  EXPECT_EQ(t->ops[0].line, 4u);
  EXPECT_EQ(t->ops[1].kind, TraceOpKind::kWait);
  EXPECT_EQ(t->ops[1].wait_ns, 250'000u);
  EXPECT_EQ(t->ops[3].kind, TraceOpKind::kFlush);
  EXPECT_EQ(t->ops[4].kind, TraceOpKind::kFlush);
  EXPECT_EQ(t->ops[5].kind, TraceOpKind::kTrim);
}

TEST(Trace, IologVersion3TimesAreMicrosecondsFromTheFirstOperation) {
  auto t = parse_trace_text(
      "fio version 3 iolog\n0 f add\n10 f open\n1500 f write 0 4096\n2500 f read 0 4096\n");
  ASSERT_TRUE(t.ok()) << t.error();
  EXPECT_TRUE(t->timed);
  ASSERT_EQ(t->ops.size(), 2u);
  EXPECT_EQ(t->ops[0].time_ns, 0u);
  EXPECT_EQ(t->ops[1].time_ns, 1'000'000u);
}

TEST(Trace, BlkparseQueuedRequestsInSectors) {
  auto t = parse_trace_text(
      "  8,0    3        1     0.000000000   697  Q   W 2048 + 8 [kjournald]\n"
      "  8,0    3        2     0.000001000   697  G   W 2048 + 8 [kjournald]\n"
      "  8,0    3        3     0.000250000   697  Q  RA 16 + 16 [cat]\n"
      "  8,0    3        4     0.000300000   697  Q  DS 4096 + 2048 [fstrim]\n"
      "  8,0    3        5     0.000400000   697  Q FWS 8 + 8 [sync]\n"
      "  8,0    3        6     0.000500000   697  Q FWS 0 + 0 [sync]\n"
      "CPU3 (8,0):\n Reads Queued:           1,        8KiB\n");
  ASSERT_TRUE(t.ok()) << t.error();
  EXPECT_EQ(t->format, TraceFormat::kBlkparse);
  ASSERT_EQ(t->ops.size(), 6u);
  EXPECT_EQ(t->ops[0].kind, TraceOpKind::kWrite);
  EXPECT_EQ(t->ops[0].offset_bytes, 2048u * 512);
  EXPECT_EQ(t->ops[0].length_bytes, 8u * 512);
  EXPECT_EQ(t->ops[1].kind, TraceOpKind::kRead);
  EXPECT_EQ(t->ops[1].time_ns, 250'000u);
  EXPECT_EQ(t->ops[2].kind, TraceOpKind::kTrim);
  EXPECT_EQ(t->ops[3].kind, TraceOpKind::kFlush);  // the preflush
  EXPECT_EQ(t->ops[4].kind, TraceOpKind::kWrite);
  EXPECT_EQ(t->ops[5].kind, TraceOpKind::kFlush);
  EXPECT_GE(t->skipped_lines, 3u);
}

TEST(Trace, BadInputIsRefusedWithItsLine) {
  struct Case {
    const char* text;
    const char* says;
  } cases[] = {
      {"", "the trace is empty"},
      {"fio version 9 iolog\n", "versions 2 and 3"},
      {"fio version 2 iolog\nf frobnicate 0 1\n", "line 2: 'frobnicate' is no iolog action"},
      {"fio version 2 iolog\nf read -4 1\n", "line 2: '-4' is not an offset"},
      {"fio version 2 iolog\nf read 0 99999999999999999999\n", "is not a length"},
      {"fio version 2 iolog\nf read 18446744073709551615 2\n", "does not fit in 64 bits"},
      {"fio version 2 iolog\nf read 0 0\n", "0 bytes"},
      {"fio version 2 iolog\nf read 0\n", "expected FILE ACTION OFFSET LENGTH"},
      {"fio version 2 iolog\nf add 7\n", "'add' takes no offset"},
      {"fio version 3 iolog\nsoon f read 0 1\n", "'soon' is not a time"},
      {"fio version 3 iolog\n5 f wait 1 0\n", "not part of iolog version 3"},
      {"  8,0 1 1 0.0 1 Q W 5 x 8 [p]\n", "expected SECTOR + COUNT"},
      {"  8,0 1 1 zero 1 Q W 5 + 8 [p]\n", "'zero' is not a time"},
      {"  8,0 1 1 0.0 1 Q W 99999999999999999999 + 8 [p]\n", "is not SECTOR + COUNT"},
      {"hello\nworld\n", "no queued request"},
      {"fio version 2 iolog\n", "no I/O in the iolog"},
      {"fio version 3 iolog\n0 f add\n0 f open\n0 f close\n", "no I/O in the iolog"},
      {"fio version 2 iolog\nf add\nf wait 0 5\n", "no I/O in the iolog"},
  };
  for (const Case& c : cases) {
    auto t = parse_trace_text(c.text);
    ASSERT_FALSE(t.ok()) << c.text;
    EXPECT_NE(t.error().find(c.says), std::string::npos) << c.text << " -> " << t.error();
  }
  std::string long_line = "fio version 2 iolog\n" + std::string(kTraceLineMax + 1, 'x') + "\n";
  auto t = parse_trace_text(long_line);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().find("line 2: longer than"), std::string::npos) << t.error();
}

std::unique_ptr<Stack> small_stack(const std::string& interface = "zns") {
  Config c = *preset_config("small");
  EXPECT_TRUE(apply_override(c, "interface=" + interface).ok());
  auto stack = Stack::make(c);
  EXPECT_TRUE(stack.ok()) << stack.error();
  return std::move(stack).value();
}

std::string sequential_writes(int n, uint64_t gap_us) {
  std::string text = "fio version 3 iolog\n";
  for (int i = 0; i < n; ++i) {
    text += std::to_string(i * gap_us) + " f write " + std::to_string(i * 65536) + " 65536\n";
  }
  return text;
}

TEST(Replay, TimestampsAreHonouredAndTheRunIsAPureFunctionOfItsInputs) {
  auto trace = parse_trace_text(sequential_writes(20, 10'000));  // every 10 ms
  ASSERT_TRUE(trace.ok());
  auto run = [&](bool timestamps) {
    auto stack = small_stack();
    EXPECT_TRUE(check_trace(*trace, stack->info(), stack->device()).ok());
    ReplayOptions o;
    o.timestamps = timestamps;
    return replay_trace(stack->device(), stack->sim(), *trace, o);
  };
  ReplayResult timed = run(true);
  ReplayResult again = run(true);
  ReplayResult asap = run(false);
  EXPECT_EQ(timed.write.ops, 20u);
  EXPECT_EQ(timed.write.bytes, 20u * 65536);
  // The last write is issued at 190 ms and completes after it.
  EXPECT_GT(timed.end_ns - timed.start_ns, 190'000'000u);
  EXPECT_LT(timed.end_ns - timed.start_ns, 200'000'000u);
  EXPECT_LT(asap.end_ns - asap.start_ns, 20'000'000u);
  EXPECT_EQ(timed.end_ns, again.end_ns);
  EXPECT_EQ(timed.write.latency_ns.percentile(99), again.write.latency_ns.percentile(99));
  EXPECT_EQ(timed.errors, 0u);
}

TEST(Replay, AFullQueueDelaysTimestampedOperationsAndCountsThem) {
  // 50 writes all at time 0, one in flight: 49 wait.
  auto trace = parse_trace_text(sequential_writes(50, 0));
  ASSERT_TRUE(trace.ok());
  auto stack = small_stack();
  ReplayOptions o;
  o.iodepth = 1;
  ReplayResult r = replay_trace(stack->device(), stack->sim(), *trace, o);
  EXPECT_EQ(r.write.ops, 50u);
  EXPECT_EQ(r.delayed, 49u);
  EXPECT_GT(r.delay_ns, 0u);
}

TEST(Replay, AZonedNamespaceTakesOnlyWritesAtItsWritePointers) {
  auto stack = small_stack();
  const DeviceInfo& info = stack->info();
  const uint64_t zone_bytes = info.zone_size_lbas * info.lba_size_bytes;
  auto random = parse_trace_text("fio version 2 iolog\nf write 0 4096\nf write 8192 4096\n");
  auto checked = check_trace(*random, info, stack->device());
  ASSERT_FALSE(checked.ok());
  EXPECT_NE(checked.error().find("line 3: a write at LBA 2 is not at zone 0's write pointer"),
            std::string::npos)
      << checked.error();
  // A whole-zone trim resets: writing from the zone's start again is fine.
  auto reset = parse_trace_text("fio version 2 iolog\nf write 0 4096\nf trim 0 " +
                                std::to_string(zone_bytes) + "\nf write 0 4096\n");
  ASSERT_TRUE(check_trace(*reset, info, stack->device()).ok());
  ReplayOptions o;
  o.iodepth = 1;
  ReplayResult r = replay_trace(stack->device(), stack->sim(), *reset, o);
  EXPECT_EQ(r.errors, 0u) << r.first_error;
  EXPECT_EQ(r.trim.ops, 1u);
  EXPECT_EQ(stack->zone(0).wp_lba, 1u);
  auto partial = parse_trace_text("fio version 2 iolog\nf trim 0 4096\n");
  EXPECT_FALSE(check_trace(*partial, info, stack->device()).ok());
  // The same random writes replay on a block device.
  auto block = small_stack("block");
  EXPECT_TRUE(check_trace(*random, block->info(), block->device()).ok());
}

TEST(Replay, OperationsPastTheEndAreRefusedAndPartLbasWidened) {
  auto stack = small_stack("block");
  const DeviceInfo& info = stack->info();
  const uint64_t end = info.capacity_lbas * info.lba_size_bytes;
  auto past =
      parse_trace_text("fio version 2 iolog\nf read " + std::to_string(end - 512) + " 1024\n");
  auto checked = check_trace(*past, info, stack->device());
  ASSERT_FALSE(checked.ok());
  EXPECT_NE(checked.error().find("line 2: read of bytes"), std::string::npos);
  auto part = parse_trace_text("  8,0 1 1 0.0 1 Q W 1 + 3 [p]\n  8,0 1 2 0.0 1 Q R 7 + 2 [p]\n");
  ASSERT_TRUE(part.ok()) << part.error();
  ASSERT_TRUE(check_trace(*part, info, stack->device()).ok());
  ReplayResult r = replay_trace(stack->device(), stack->sim(), *part, ReplayOptions{});
  EXPECT_EQ(r.widened, 2u);
  EXPECT_EQ(r.write.bytes, info.lba_size_bytes);
  EXPECT_EQ(r.read.bytes, 2 * info.lba_size_bytes);  // sectors 7-8 straddle LBAs 0 and 1
}

}  // namespace
}  // namespace zonelab
