// The benchmark runner: jobs do what their options say, on the device seam.
#include "workload/runner.h"

#include <gtest/gtest.h>

#include "sim/realtime.h"
#include "zns/zns_device.h"

namespace zonelab {
namespace {

struct Rig {
  explicit Rig(std::vector<std::string> overrides = {}) {
    Config config = default_config();
    config.store.backing = "none";
    for (const auto& o : overrides) EXPECT_TRUE(apply_override(config, o).ok()) << o;
    device = std::move(make_zns_device(config, sim)).value();
  }
  RunResult run(const std::vector<JobSpec>& jobs, uint64_t seed = 1) {
    EXPECT_TRUE(check_jobs(jobs, device->info()).ok());
    return run_jobs(*device, sim, jobs, seed);
  }
  uint64_t zone_bytes() const {
    return device->info().zone_capacity_lbas * device->info().lba_size_bytes;
  }
  Simulator sim;
  std::unique_ptr<ZnsDevice> device;
};

JobSpec job(JobKind kind, uint64_t bs, uint32_t iodepth) {
  JobSpec spec;
  spec.kind = kind;
  spec.block_size_bytes = bs;
  spec.iodepth = iodepth;
  return spec;
}

TEST(Runner, WriteJobWritesExactlyItsSize) {
  Rig rig;
  JobSpec w = job(JobKind::kWrite, 64 << 10, 4);
  w.size_bytes = 10 << 20;
  RunResult run = rig.run({w});
  ASSERT_EQ(run.errors, 0u) << run.jobs[0].first_error;
  EXPECT_EQ(run.jobs[0].bytes, 10u << 20);
  EXPECT_EQ(run.jobs[0].ops, 160u);
  EXPECT_EQ(rig.device->counters().host_write_bytes, 10u << 20);
  EXPECT_EQ(rig.device->zone(0).wp_lba, (10u << 20) / 4096);
}

TEST(Runner, DefaultWriteSizeIsOnePassOverTheRange) {
  Rig rig;
  JobSpec w = job(JobKind::kWrite, 1 << 20, 4);
  w.zones = {{2, 4}};
  RunResult run = rig.run({w});
  EXPECT_EQ(run.jobs[0].bytes, 3 * rig.zone_bytes());
  for (uint32_t z = 2; z <= 4; ++z) EXPECT_EQ(rig.device->zone(z).state, ZoneState::kFull);
  EXPECT_EQ(rig.device->zone(1).state, ZoneState::kEmpty);
  EXPECT_EQ(rig.device->zone(5).state, ZoneState::kEmpty);
}

TEST(Runner, WritingPastTheRangeResetsReusedZones) {
  Rig rig;
  JobSpec w = job(JobKind::kWrite, 1 << 20, 2);
  w.zones = {{0, 1}};
  w.size_percent = 300;  // each zone written three times
  RunResult run = rig.run({w});
  ASSERT_EQ(run.errors, 0u) << run.jobs[0].first_error;
  EXPECT_EQ(run.jobs[0].resets, 4u);
  EXPECT_EQ(run.jobs[0].bytes, 6 * rig.zone_bytes());
  uint64_t erases = 0;
  for (uint64_t e : rig.device->flash().counters().erases) erases += e;
  EXPECT_EQ(erases, 4u * 16u);  // one block on each of 16 planes per reset
}

TEST(Runner, RandomZoneOrderStillWritesWholeZonesWithoutErrors) {
  Rig rig;
  JobSpec w = job(JobKind::kWrite, 1 << 20, 2);
  w.zones = {{0, 7}};
  w.random_zones = true;
  w.size_percent = 300;
  RunResult run = rig.run({w});
  ASSERT_EQ(run.errors, 0u) << run.jobs[0].first_error;
  EXPECT_EQ(run.jobs[0].bytes, 24 * rig.zone_bytes());
  EXPECT_GT(run.jobs[0].resets, 0u);
  // Unlike the sequential order, a random one leaves zones unwritten or
  // writes some more often than others: the zones' write pointers differ.
  Rig sequential;
  w.random_zones = false;
  sequential.run({w});
  bool differs = false;
  for (uint32_t z = 0; z < 8; ++z) {
    differs = differs || rig.device->zone(z).wp_lba != sequential.device->zone(z).wp_lba ||
              rig.device->zone(z).state != sequential.device->zone(z).state;
  }
  EXPECT_TRUE(differs);
}

TEST(Runner, BandwidthLogAddsUpToTheBytesWritten) {
  Rig rig;
  JobSpec w = job(JobKind::kWrite, 256 << 10, 4);
  w.size_bytes = 64 << 20;
  w.log_interval_ns = 10'000'000;  // 10 ms
  RunResult run = rig.run({w});
  const auto& log = run.jobs[0].bw_log;
  ASSERT_GT(log.size(), 3u);
  uint64_t sum = 0;
  for (uint64_t b : log) sum += b;
  EXPECT_EQ(sum, run.jobs[0].bytes);
  EXPECT_EQ(log.size(), (run.jobs[0].end_ns - run.jobs[0].start_ns) / w.log_interval_ns + 1);
}

TEST(Runner, ClonesWriteDisjointZones) {
  Rig rig;
  JobSpec w = job(JobKind::kWrite, 256 << 10, 4);
  w.numjobs = 4;
  w.zones = {{0, 7}};
  w.size_bytes = 4 * rig.zone_bytes();
  RunResult run = rig.run({w});
  ASSERT_EQ(run.errors, 0u) << run.jobs[0].first_error;
  for (uint32_t z = 0; z < 4; ++z) EXPECT_EQ(rig.device->zone(z).state, ZoneState::kFull) << z;
  for (uint32_t z = 4; z < 8; ++z) EXPECT_EQ(rig.device->zone(z).state, ZoneState::kEmpty) << z;
}

TEST(Runner, AppendJobFillsZonesWithoutErrors) {
  Rig rig;
  JobSpec a = job(JobKind::kAppend, 64 << 10, 16);
  a.zones = {{3, 4}};
  RunResult run = rig.run({a});
  ASSERT_EQ(run.errors, 0u) << run.jobs[0].first_error;
  EXPECT_EQ(rig.device->zone(3).state, ZoneState::kFull);
  EXPECT_EQ(rig.device->zone(4).state, ZoneState::kFull);
}

TEST(Runner, ReadsNeedWrittenData) {
  Rig rig;
  RunResult run = rig.run({job(JobKind::kRandRead, 4096, 8)});
  EXPECT_EQ(run.jobs[0].errors, 1u);
  EXPECT_EQ(run.jobs[0].first_status, Status::kSuccess);  // a planning failure
  EXPECT_EQ(run.jobs[0].ops, 0u);
}

TEST(Runner, RandomReadsStayInsideWrittenData) {
  Rig rig;
  JobSpec w = job(JobKind::kWrite, 1 << 20, 4);
  w.zones = {{0, 0}};
  w.size_bytes = 8 << 20;
  rig.run({w});
  JobSpec r = job(JobKind::kRandRead, 4096, 32);
  r.size_bytes = 40 << 20;
  rig.device->reset_stats();
  RunResult run = rig.run({r});
  ASSERT_EQ(run.errors, 0u) << run.jobs[0].first_error;
  EXPECT_EQ(run.jobs[0].ops, 10240u);
  // Every read hit programmed flash: one page read each.
  EXPECT_EQ(rig.device->flash().counters().read_pages, 10240u);
}

TEST(Runner, RateLimitHoldsTheBandwidth) {
  Rig rig;
  JobSpec w = job(JobKind::kWrite, 64 << 10, 8);
  w.rate_bytes_per_s = 100ULL << 20;
  w.size_bytes = 50ULL << 20;
  RunResult run = rig.run({w});
  double bw = run.jobs[0].bandwidth_bytes_per_s();
  EXPECT_NEAR(bw, 100.0 * (1 << 20), 2.0 * (1 << 20));
}

TEST(Runner, RuntimeStopsIssuing) {
  Rig rig;
  JobSpec w = job(JobKind::kWrite, 64 << 10, 4);
  w.runtime_ns = 20'000'000;  // 20 ms
  RunResult run = rig.run({w});
  EXPECT_GT(run.jobs[0].ops, 0u);
  EXPECT_LE(run.end_ns - run.start_ns, 20'000'000u + 5'000'000u);
}

TEST(Runner, StonewallRunsGroupsOneAfterAnother) {
  Rig rig;
  JobSpec w = job(JobKind::kWrite, 1 << 20, 4);
  w.zones = {{0, 0}};
  JobSpec r = job(JobKind::kRead, 1 << 20, 4);
  r.zones = {{0, 0}};
  r.stonewall = true;
  RunResult run = rig.run({w, r});
  ASSERT_EQ(run.errors, 0u);
  EXPECT_GE(run.jobs[1].start_ns, run.jobs[0].end_ns);
  EXPECT_EQ(run.jobs[1].bytes, rig.zone_bytes());
}

TEST(Runner, QueueDepthBoundsConcurrency) {
  // At iodepth 1, reads never overlap: the run takes ops x latency.
  Rig rig;
  JobSpec w = job(JobKind::kWrite, 1 << 20, 4);
  w.zones = {{0, 0}};
  rig.run({w});
  JobSpec r = job(JobKind::kRandRead, 4096, 1);
  r.size_bytes = 1000 * 4096;
  RunResult run = rig.run({r});
  const JobResult& jr = run.jobs[0];
  EXPECT_EQ(jr.end_ns - jr.start_ns,
            static_cast<uint64_t>(jr.latency_ns.mean() * static_cast<double>(jr.ops) + 0.5));
}

TEST(Runner, SameSeedSameResult) {
  auto once = [](uint64_t seed) {
    Rig rig;
    JobSpec w = job(JobKind::kWrite, 128 << 10, 8);
    w.numjobs = 2;
    w.zones = {{0, 3}};
    JobSpec r = job(JobKind::kRandRead, 4096, 16);
    r.size_bytes = 4 << 20;
    r.stonewall = true;
    RunResult run = rig.run({w, r}, seed);
    return std::vector<uint64_t>{run.end_ns, run.jobs[1].latency_ns.percentile(99),
                                 run.jobs[1].latency_ns.max(), run.jobs[0].end_ns};
  };
  EXPECT_EQ(once(7), once(7));
  EXPECT_NE(once(7), once(8));
}

TEST(Runner, CheckJobsRejectsBadRanges) {
  Rig rig;
  JobSpec w = job(JobKind::kWrite, 4096, 1);
  w.zones = {{0, 64}};
  EXPECT_FALSE(check_jobs({w}, rig.device->info()).ok());
  JobSpec a = job(JobKind::kAppend, 1 << 20, 1);  // above zasl (512 KiB)
  EXPECT_FALSE(check_jobs({a}, rig.device->info()).ok());
  JobSpec odd = job(JobKind::kRead, 1000, 1);  // not a multiple of the LBA size
  EXPECT_FALSE(check_jobs({odd}, rig.device->info()).ok());
}

// The same jobs through the real-time driver, with the engine running in
// the driver's loop on this thread (as `bench --realtime` does): the same
// work gets done, and every completion is paced and measured.
RunResult run_realtime(Rig& rig, const std::vector<JobSpec>& jobs, Timing timing,
                       RealtimeStats& stats) {
  RealtimeOptions options;
  options.timing = timing;
  RealtimeDriver driver(*rig.device, rig.sim, options);
  RunResult run =
      run_jobs(driver.device(), rig.sim, jobs, 1, nullptr, [&driver] { driver.run_until_idle(); });
  driver.stop();
  stats = driver.stats();
  return run;
}

std::vector<JobSpec> write_then_read() {
  JobSpec w = job(JobKind::kWrite, 64 << 10, 4);
  w.zones = {{0, 0}};
  w.size_bytes = 4 << 20;
  JobSpec r = job(JobKind::kRandRead, 4096, 8);
  r.zones = {{0, 0}};
  r.size_bytes = 1 << 20;
  r.stonewall = true;
  return {w, r};
}

TEST(Runner, RealTimeRunDoesTheWorkOfTheVirtualRun) {
  Rig virtual_rig;
  RunResult expected = virtual_rig.run(write_then_read());
  Rig rig;
  RealtimeStats stats;
  RunResult run = run_realtime(rig, write_then_read(), Timing::kModeled, stats);
  ASSERT_EQ(run.errors, 0u) << run.jobs[0].first_error << run.jobs[1].first_error;
  for (size_t j = 0; j < 2; ++j) {
    EXPECT_EQ(run.jobs[j].ops, expected.jobs[j].ops);
    EXPECT_EQ(run.jobs[j].bytes, expected.jobs[j].bytes);
  }
  EXPECT_EQ(rig.device->zone(0).wp_lba, virtual_rig.device->zone(0).wp_lba);
  EXPECT_EQ(stats.completions, run.commands);
  EXPECT_EQ(stats.completion_error_ns.count(), run.commands);
  EXPECT_EQ(stats.drained, 0u);
  // Modeled latencies stay what the device says (a write: at least tPROG).
  EXPECT_GE(run.jobs[0].latency_ns.min(), 500'000u);
}

TEST(Runner, RealTimeRunWithTimingOff) {
  Rig rig;
  RealtimeStats stats;
  RunResult run = run_realtime(rig, write_then_read(), Timing::kOff, stats);
  ASSERT_EQ(run.errors, 0u);
  EXPECT_EQ(run.jobs[1].ops, 256u);
  EXPECT_EQ(stats.completions, run.commands);
  EXPECT_EQ(stats.completion_error_ns.count(), 0u);
}

}  // namespace
}  // namespace zonelab
