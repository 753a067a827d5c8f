// The benchmark runner: jobs do what their options say, on the device seam.
#include "workload/runner.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <unordered_map>

#include "common/rng.h"
#include "conv/conv_device.h"
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

// A conventional SSD on a small flash (the block interface): 2 planes of 32
// blocks of 16 pages of 4 LBAs, zones of 256 KiB.
struct BlockRig {
  BlockRig() {
    Config config = default_config();
    for (const char* kv :
         {"interface=block", "store.backing=none", "flash.channels=1", "flash.dies_per_channel=1",
          "flash.planes_per_die=2", "flash.blocks_per_plane=32", "flash.pages_per_block=16",
          "flash.page_size=16KiB", "host.lba_size=4KiB", "zns.zone_capacity=256KiB",
          "block.overprovisioning=25%"}) {
      EXPECT_TRUE(apply_override(config, kv).ok()) << kv;
    }
    device = std::move(make_conv_device(config, sim)).value();
  }
  RunResult run(const std::vector<JobSpec>& jobs, Device* through = nullptr) {
    auto checked = check_jobs(jobs, device->info());
    EXPECT_TRUE(checked.ok()) << checked.error();
    return run_jobs(through != nullptr ? *through : *device, sim, jobs, 1);
  }
  Simulator sim;
  std::unique_ptr<ConvDevice> device;
};

JobSpec job(JobKind kind, uint64_t bs, uint32_t iodepth) {
  JobSpec spec;
  spec.kind = kind;
  spec.block_size_bytes = bs;
  spec.iodepth = iodepth;
  return spec;
}

// A device in front of the model that notes every command it is given: when
// it was submitted and completed, and how many others were then in flight.
class Spy final : public Device, public CompletionSink {
 public:
  struct Seen {
    Opcode opcode = Opcode::kRead;
    ZoneAction action = ZoneAction::kNone;
    uint64_t slba = 0;
    uint64_t submit_ns = 0;
    uint64_t complete_ns = 0;
    uint32_t inflight = 0;
  };

  Spy(Device& inner, Simulator& sim) : inner_(inner), sim_(sim) {}

  void submit(Command& command) override {
    seen.push_back({command.opcode, command.action, command.slba, sim_.now_ns(), 0, inflight_});
    owners_[&command] = {command.sink, seen.size() - 1};
    command.sink = this;
    ++inflight_;
    inner_.submit(command);
  }
  const DeviceInfo& info() const override { return inner_.info(); }
  ZoneDescriptor zone(uint32_t index) const override { return inner_.zone(index); }

  void on_complete(Command& command) override {
    auto it = owners_.find(&command);
    ASSERT_NE(it, owners_.end());
    auto [sink, index] = it->second;
    owners_.erase(it);
    --inflight_;
    seen[index].complete_ns = command.complete_ns;
    command.sink = sink;
    sink->on_complete(command);
  }

  std::vector<Seen> seen;

 private:
  Device& inner_;
  Simulator& sim_;
  uint32_t inflight_ = 0;
  std::unordered_map<Command*, std::pair<CompletionSink*, size_t>> owners_;
};

bool is_reset(const Spy::Seen& s) {
  return s.opcode == Opcode::kZoneManagementSend && s.action == ZoneAction::kReset;
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

TEST(Runner, CountWithinRuntimeLeavesLateOpsOut) {
  JobSpec w = job(JobKind::kWrite, 64 << 10, 8);
  w.zones = {{0, 3}};
  w.runtime_ns = 20'000'000;
  Rig all_rig;
  JobResult all = all_rig.run({w}).jobs[0];
  w.count_within_runtime = true;
  Rig window_rig;
  JobResult window = window_rig.run({w}).jobs[0];
  EXPECT_GT(all.late_ops, 0u);  // at queue depth 8, writes are in flight when the runtime ends
  EXPECT_EQ(window.late_ops, all.late_ops);
  EXPECT_EQ(window.ops + window.late_ops, all.ops);
  EXPECT_EQ(window.bytes, window.ops * (64 << 10));
  EXPECT_EQ(window.latency_ns.count(), window.ops);
}

// Appends at queue depth 8 to one zone, written three times over.
JobResult append_three_passes(bool drain, std::vector<Spy::Seen>& seen) {
  Rig rig;
  Spy spy(*rig.device, rig.sim);
  JobSpec a = job(JobKind::kAppend, 64 << 10, 8);
  a.zones = {{0, 0}};
  a.size_percent = 300;
  a.zone_reset_drain = drain;
  RunResult run = run_jobs(spy, rig.sim, {a}, 1);
  seen = spy.seen;
  EXPECT_EQ(run.errors, 0u) << run.jobs[0].first_error;
  EXPECT_EQ(run.jobs[0].bytes, 3 * rig.zone_bytes());
  return run.jobs[0];
}

TEST(Runner, ZoneResetDrainResetsAnIdleZoneAndWaitsForTheReset) {
  std::vector<Spy::Seen> seen;
  EXPECT_EQ(append_three_passes(true, seen).resets, 2u);
  size_t resets = 0;
  for (size_t i = 0; i < seen.size(); ++i) {
    if (!is_reset(seen[i])) continue;
    ++resets;
    EXPECT_EQ(seen[i].inflight, 0u) << i;
    ASSERT_LT(i + 1, seen.size());
    EXPECT_EQ(seen[i + 1].inflight, 0u) << i;
    EXPECT_GE(seen[i + 1].submit_ns, seen[i].complete_ns) << i;
  }
  EXPECT_EQ(resets, 2u);
}

TEST(Runner, WithoutZoneResetDrainTheResetQueuesBehindTheAppends) {
  std::vector<Spy::Seen> seen;
  EXPECT_EQ(append_three_passes(false, seen).resets, 2u);
  bool queued = false;
  for (const auto& s : seen) queued = queued || (is_reset(s) && s.inflight > 0);
  EXPECT_TRUE(queued);
}

TEST(Runner, ResetJobResetsOneZonePerOp) {
  Rig rig;
  JobSpec w = job(JobKind::kWrite, 1 << 20, 4);
  w.zones = {{2, 5}};
  rig.run({w});
  JobSpec r = job(JobKind::kReset, 4096, 1);
  r.zones = {{2, 5}};
  RunResult run = rig.run({r});
  ASSERT_EQ(run.errors, 0u) << run.jobs[0].first_error;
  EXPECT_EQ(run.jobs[0].ops, 4u);
  EXPECT_EQ(run.jobs[0].bytes, 0u);
  EXPECT_EQ(run.jobs[0].latency_ns.count(), 4u);
  EXPECT_EQ(run.commands, 4u);
  for (uint32_t z = 2; z <= 5; ++z) EXPECT_EQ(rig.device->zone(z).state, ZoneState::kEmpty) << z;
}

TEST(Runner, FinishJobWritesBsAndThenFinishesEachZone) {
  Rig rig;
  JobSpec f = job(JobKind::kFinish, 16 << 10, 1);
  f.zones = {{0, 2}};
  RunResult run = rig.run({f});
  ASSERT_EQ(run.errors, 0u) << run.jobs[0].first_error;
  EXPECT_EQ(run.jobs[0].ops, 3u);
  EXPECT_EQ(run.commands, 6u);  // a write and a finish per zone
  EXPECT_EQ(rig.device->counters().host_write_bytes, 3u * (16 << 10));
  for (uint32_t z = 0; z <= 2; ++z) EXPECT_EQ(rig.device->zone(z).state, ZoneState::kFull) << z;
  EXPECT_EQ(rig.device->zone(3).state, ZoneState::kEmpty);
}

TEST(Runner, SoftfinishJobFillsItsZonesWithHostWritesOnePerSlot) {
  Rig rig;
  JobSpec s = job(JobKind::kSoftfinish, 16 << 10, 2);
  s.zones = {{0, 3}};
  s.softfinish_chunk_bytes = 1 << 20;
  RunResult run = rig.run({s});
  ASSERT_EQ(run.errors, 0u) << run.jobs[0].first_error;
  EXPECT_EQ(run.jobs[0].ops, 4u);
  for (uint32_t z = 0; z <= 3; ++z) EXPECT_EQ(rig.device->zone(z).state, ZoneState::kFull) << z;
  EXPECT_EQ(rig.device->counters().host_write_bytes, 4 * rig.zone_bytes());
  uint64_t fills = (rig.zone_bytes() - (16 << 10) + (1 << 20) - 1) >> 20;
  EXPECT_EQ(run.commands, 4 * (1 + fills));
}

TEST(Runner, ManagementJobWithARuntimeMustNotRunOutOfZones) {
  Rig rig;
  JobSpec r = job(JobKind::kReset, 4096, 1);
  r.zones = {{0, 1}};
  RunResult pass = rig.run({r});
  EXPECT_EQ(pass.errors, 0u) << pass.jobs[0].first_error;  // one pass over the zones
  EXPECT_EQ(pass.jobs[0].ops, 2u);
  r.runtime_ns = 1'000'000'000;
  RunResult run = rig.run({r});
  EXPECT_EQ(run.jobs[0].ops, 2u);
  EXPECT_EQ(run.jobs[0].errors, 1u);
  EXPECT_EQ(run.jobs[0].first_status, Status::kSuccess);
  EXPECT_NE(run.jobs[0].first_error.find("no zone left"), std::string::npos);
  EXPECT_EQ(run.first_failed_job, 0u);
}

TEST(Runner, RateIopsStartsOpKAtKOverTheRateAndNoneAfterTheRuntime) {
  Rig rig;
  Spy spy(*rig.device, rig.sim);
  JobSpec w = job(JobKind::kWrite, 4096, 4);
  w.zones = {{0, 0}};
  w.rate_iops = 100;          // one op per 10 ms
  w.runtime_ns = 45'000'000;  // ops due at 0, 10, 20, 30 and 40 ms
  RunResult run = run_jobs(spy, rig.sim, {w}, 1);
  ASSERT_EQ(run.errors, 0u) << run.jobs[0].first_error;
  ASSERT_EQ(spy.seen.size(), 5u);
  for (size_t k = 0; k < spy.seen.size(); ++k) {
    EXPECT_EQ(spy.seen[k].submit_ns, run.start_ns + k * 10'000'000) << k;
  }
  // Op 5 falls due after the runtime: no wake-up waits for it.
  EXPECT_EQ(run.end_ns, spy.seen.back().complete_ns);
  EXPECT_LT(run.end_ns, run.start_ns + 50'000'000);
}

TEST(Runner, RandseedSeedsTheCloneWhateverTheRunSeed) {
  auto offsets = [](uint64_t run_seed, uint64_t randseed) {
    Rig rig;
    JobSpec w = job(JobKind::kWrite, 1 << 20, 4);
    w.zones = {{0, 0}};
    rig.run({w});
    Spy spy(*rig.device, rig.sim);
    JobSpec r = job(JobKind::kRandRead, 16 << 10, 1);
    r.zones = {{0, 0}};
    r.size_bytes = 8 * (16 << 10);
    r.randseed = randseed;
    run_jobs(spy, rig.sim, {r}, run_seed);
    std::vector<uint64_t> slbas;
    for (const auto& s : spy.seen) slbas.push_back(s.slba);
    return slbas;
  };
  std::vector<uint64_t> seeded = offsets(1, 42);
  EXPECT_EQ(offsets(2, 42), seeded);
  EXPECT_NE(offsets(1, 43), seeded);
  // Clone 0 draws from a generator seeded with randseed itself.
  Rig rig;
  uint64_t bs_lbas = (16 << 10) / rig.device->info().lba_size_bytes;
  Rng rng(42);
  ASSERT_EQ(seeded.size(), 8u);
  for (uint64_t slba : seeded) {
    EXPECT_EQ(slba, rng.below(rig.device->info().zone_capacity_lbas / bs_lbas) * bs_lbas);
  }
}

TEST(Runner, ExitallOnErrorStopsTheOtherJobs) {
  auto run_with = [](bool exitall) {
    Rig rig;
    JobSpec fill = job(JobKind::kWrite, 1 << 20, 4);
    fill.zones = {{5, 5}};
    rig.run({fill});
    JobSpec w = job(JobKind::kWrite, 64 << 10, 1);
    w.zones = {{0, 3}};
    w.runtime_ns = 50'000'000;
    JobSpec f = job(JobKind::kFinish, 16 << 10, 1);  // its write finds zone 5 full
    f.zones = {{5, 5}};
    f.exitall_on_error = exitall;
    return rig.run({w, f});
  };
  RunResult stopped = run_with(true);
  EXPECT_EQ(stopped.first_failed_job, 1u);
  EXPECT_EQ(stopped.jobs[1].errors, 1u);
  EXPECT_NE(stopped.jobs[1].first_status, Status::kSuccess);
  EXPECT_NE(stopped.jobs[1].first_error.find("(write)"), std::string::npos);
  EXPECT_EQ(stopped.jobs[0].errors, 0u);
  EXPECT_LE(stopped.jobs[0].ops, 2u);
  RunResult free = run_with(false);
  EXPECT_EQ(free.jobs[1].errors, 1u);
  EXPECT_GT(free.jobs[0].ops, 10u);
}

TEST(Runner, CheckJobsRejectsBadManagementJobsAndRates) {
  Rig rig;
  const DeviceInfo& info = rig.device->info();
  JobSpec s = job(JobKind::kSoftfinish, 16 << 10, 1);
  EXPECT_TRUE(check_jobs({s}, info).ok());
  s.softfinish_chunk_bytes = 1000;
  EXPECT_FALSE(check_jobs({s}, info).ok());
  EXPECT_FALSE(check_jobs({job(JobKind::kFinish, 0, 1)}, info).ok());
  JobSpec m = job(JobKind::kReset, 4096, 1);
  m.zones = {{0, 1}};
  m.numjobs = 3;  // a clone without a zone
  EXPECT_FALSE(check_jobs({m}, info).ok());
  JobSpec w = job(JobKind::kWrite, 4096, 1);
  w.rate_iops = -1;
  EXPECT_FALSE(check_jobs({w}, info).ok());
  w.rate_iops = std::nan("");
  EXPECT_FALSE(check_jobs({w}, info).ok());
  // Job files name only the data kinds.
  EXPECT_FALSE(job_kind_from_name("finish").has_value());
  EXPECT_EQ(job_kind_name(JobKind::kSoftfinish), "softfinish");
}

// --- fio's kinds, offsets and bounds ----------------------------------------

TEST(Runner, RandWriteVisitsEveryBlockOncePerPassInARandomOrder) {
  BlockRig rig;
  Spy spy(*rig.device, rig.sim);
  JobSpec w = job(JobKind::kRandWrite, 16 << 10, 4);
  w.zones = {{0, 3}};
  w.size_percent = 200;  // two passes
  RunResult run = rig.run({w}, &spy);
  ASSERT_EQ(run.errors, 0u) << run.jobs[0].first_error;
  uint64_t blocks = 4 * (256 << 10) / (16 << 10);
  ASSERT_EQ(spy.seen.size(), 2 * blocks);
  std::map<uint64_t, int> first_pass;
  std::map<uint64_t, int> both;
  bool in_order = true;
  for (size_t i = 0; i < spy.seen.size(); ++i) {
    EXPECT_EQ(spy.seen[i].opcode, Opcode::kWrite);
    EXPECT_EQ(spy.seen[i].slba % 4, 0u);  // bs-aligned
    EXPECT_LT(spy.seen[i].slba, 4u * 64u);
    if (i < blocks) ++first_pass[spy.seen[i].slba];
    ++both[spy.seen[i].slba];
    if (i > 0 && i < blocks && spy.seen[i].slba < spy.seen[i - 1].slba) in_order = false;
  }
  EXPECT_EQ(first_pass.size(), blocks);
  for (const auto& [lba, count] : both) EXPECT_EQ(count, 2) << lba;
  EXPECT_FALSE(in_order);
}

TEST(Runner, RandRwReadsRwmixreadPercentAndCountsEachDirection) {
  BlockRig rig;
  JobSpec w = job(JobKind::kRandRw, 4096, 2);
  w.rwmixread_percent = 70;
  w.size_bytes = 4 << 20;
  RunResult run = rig.run({w});
  const JobResult& r = run.jobs[0];
  ASSERT_EQ(r.errors, 0u) << r.first_error;
  EXPECT_EQ(r.reads.ops + r.writes.ops, r.ops);
  EXPECT_EQ(r.reads.bytes + r.writes.bytes, r.bytes);
  double read_share = static_cast<double>(r.reads.ops) / static_cast<double>(r.ops);
  EXPECT_NEAR(read_share, 0.70, 0.04);
  EXPECT_EQ(rig.device->counters().host_write_bytes, r.writes.bytes);
}

TEST(Runner, TrimDeallocatesTheClonesZonesInOrder) {
  BlockRig rig;
  Spy spy(*rig.device, rig.sim);
  JobSpec t = job(JobKind::kTrim, 64 << 10, 2);
  t.zones = {{1, 2}};
  RunResult run = rig.run({t}, &spy);
  ASSERT_EQ(run.errors, 0u) << run.jobs[0].first_error;
  ASSERT_EQ(spy.seen.size(), 8u);  // two zones of 256 KiB, 64 KiB at a time
  for (size_t i = 0; i < spy.seen.size(); ++i) {
    EXPECT_EQ(spy.seen[i].opcode, Opcode::kDeallocate);
    EXPECT_EQ(spy.seen[i].slba, 64 + 16 * i);
  }
  EXPECT_EQ(run.jobs[0].bytes, 512u << 10);
}

TEST(Runner, BlockOnlyKindsAreRefusedOnZnsAndAppendOnBlock) {
  Rig zns;
  BlockRig block;
  for (JobKind kind : {JobKind::kRandWrite, JobKind::kRandRw, JobKind::kTrim}) {
    auto checked = check_jobs({job(kind, 4096, 1)}, zns.device->info());
    ASSERT_FALSE(checked.ok()) << job_kind_name(kind);
    EXPECT_NE(checked.error().find("interface=block"), std::string::npos) << checked.error();
    EXPECT_TRUE(check_jobs({job(kind, 4096, 1)}, block.device->info()).ok());
  }
  auto append = check_jobs({job(JobKind::kAppend, 4096, 1)}, block.device->info());
  ASSERT_FALSE(append.ok());
  EXPECT_NE(append.error().find("Zone Append"), std::string::npos) << append.error();
}

TEST(Runner, AnOffsetStartsTheJobThatManyZonesIntoItsRange) {
  Rig rig;
  JobSpec w = job(JobKind::kWrite, 1 << 20, 2);
  w.zones = {{2, 9}};
  w.offset_bytes = 2 * rig.device->info().zone_size_lbas * 4096;
  w.size_bytes = 4 << 20;
  RunResult run = rig.run({w});
  ASSERT_EQ(run.errors, 0u) << run.jobs[0].first_error;
  EXPECT_EQ(rig.device->zone(3).wp_lba, rig.device->zone(3).start_lba);
  EXPECT_EQ(rig.device->zone(4).wp_lba, rig.device->zone(4).start_lba + 1024);
  JobSpec half = job(JobKind::kWrite, 1 << 20, 2);
  half.zones = {{0, 7}};
  half.offset_percent = 50;
  half.size_bytes = 1 << 20;
  rig.run({half});
  EXPECT_EQ(rig.device->zone(4).wp_lba, rig.device->zone(4).start_lba + 1280);
}

TEST(Runner, OffsetsOffAZoneOrPastTheRangeAreRefused) {
  Rig rig;
  const DeviceInfo& info = rig.device->info();
  JobSpec w = job(JobKind::kWrite, 4096, 1);
  w.offset_bytes = 1 << 20;
  auto unaligned = check_jobs({w}, info);
  ASSERT_FALSE(unaligned.ok());
  EXPECT_NE(unaligned.error().find("zone boundary"), std::string::npos) << unaligned.error();
  w.zones = {{0, 1}};
  w.offset_bytes = 2 * info.zone_size_lbas * info.lba_size_bytes;
  EXPECT_FALSE(check_jobs({w}, info).ok());
}

TEST(Runner, ABandwidthLogPastItsLimitDoublesItsInterval) {
  Rig rig;
  JobSpec w = job(JobKind::kWrite, 64 << 10, 4);
  w.size_bytes = 64 << 20;
  w.log_interval_ns = 1'000;  // 1 us over a run of about a tenth of a second
  RunResult run = rig.run({w});
  const JobResult& r = run.jobs[0];
  ASSERT_EQ(r.errors, 0u) << r.first_error;
  EXPECT_LE(r.bw_log.size(), kBwLogEntriesMax);
  EXPECT_GT(r.bw_log_interval_ns, w.log_interval_ns);
  EXPECT_EQ(r.bw_log_interval_ns % w.log_interval_ns, 0u);
  uint64_t ratio = r.bw_log_interval_ns / w.log_interval_ns;
  EXPECT_EQ(ratio & (ratio - 1), 0u);  // a power of two
  uint64_t sum = 0;
  for (uint64_t b : r.bw_log) sum += b;
  EXPECT_EQ(sum, r.bytes);
  EXPECT_EQ(r.bw_log.size(), (r.end_ns - r.start_ns) / r.bw_log_interval_ns + 1);
}

TEST(Runner, CheckJobsNamesTheLimitsOfRuntimeLogSizeAndCommandsInFlight) {
  Rig rig;
  const DeviceInfo& info = rig.device->info();
  auto refused_with = [&](const JobSpec& j, const char* words) {
    auto checked = check_jobs({j}, info);
    ASSERT_FALSE(checked.ok()) << words;
    EXPECT_NE(checked.error().find(words), std::string::npos) << checked.error();
  };
  JobSpec w = job(JobKind::kWrite, 4096, 1);
  w.runtime_ns = kJobRuntimeMaxNs + 1;
  refused_with(w, "3600s");
  w.runtime_ns = 10'000'000'000;
  w.log_interval_ns = 1'000;
  refused_with(w, "limit of 100000");
  w.log_interval_ns = 100'000;  // exactly the limit
  EXPECT_TRUE(check_jobs({w}, info).ok());
  JobSpec big = job(JobKind::kWrite, 4096, 1);
  big.size_bytes = UINT64_MAX;
  refused_with(big, "1000 passes");
  JobSpec based = job(JobKind::kWrite, 4096, 1);
  based.time_based = true;
  refused_with(based, "time_based needs a runtime");
  JobSpec deep = job(JobKind::kWrite, 4096, 65536);
  deep.numjobs = 16;
  deep.zones = {{0, 15}};
  JobSpec deeper = deep;
  deeper.zones = {{16, 31}};
  auto checked = check_jobs({deep, deeper}, info);
  ASSERT_FALSE(checked.ok());
  EXPECT_NE(checked.error().find("1048576"), std::string::npos) << checked.error();
}

TEST(Runner, TimeBasedRunsTheWholeRuntimeWhateverTheSize) {
  Rig rig;
  JobSpec w = job(JobKind::kWrite, 64 << 10, 4);
  w.size_bytes = 1 << 20;
  w.runtime_ns = 100'000'000;
  w.time_based = true;
  RunResult run = rig.run({w});
  EXPECT_GT(run.jobs[0].bytes, 1u << 20);
  EXPECT_GE(run.end_ns - run.start_ns, w.runtime_ns);
}

void open_zone(Rig& rig, uint32_t zone) {
  struct Sink final : CompletionSink {
    void on_complete(Command&) override {}
  } sink;
  Command c;
  c.opcode = Opcode::kZoneManagementSend;
  c.action = ZoneAction::kOpen;
  c.slba = rig.device->zone(zone).start_lba;
  c.sink = &sink;
  rig.device->submit(c);
  rig.sim.run();
  ASSERT_EQ(c.status, Status::kSuccess);
}

TEST(Runner, WritersBeyondTheActiveZoneLimitAreRefusedBeforeTheRun) {
  Rig rig;  // small: max_active 14, max_open 12
  JobSpec w = job(JobKind::kWrite, 64 << 10, 1);
  w.zones = {{0, 31}};
  w.numjobs = 14;
  EXPECT_TRUE(check_jobs_on_device({w}, *rig.device).ok());
  w.numjobs = 15;
  auto checked = check_jobs_on_device({w}, *rig.device);
  ASSERT_FALSE(checked.ok());
  EXPECT_NE(checked.error().find("zns.max_active"), std::string::npos) << checked.error();
  // Zones active already count; a writer whose first zone is one of them
  // adds none.
  open_zone(rig, 40);
  open_zone(rig, 0);
  w.numjobs = 14;
  EXPECT_FALSE(check_jobs_on_device({w}, *rig.device).ok());
  w.numjobs = 13;
  EXPECT_TRUE(check_jobs_on_device({w}, *rig.device).ok());
  // Two groups run one after the other: each counts on its own.
  JobSpec later = w;
  later.stonewall = true;
  EXPECT_TRUE(check_jobs_on_device({w, later}, *rig.device).ok());
  later.stonewall = false;
  EXPECT_FALSE(check_jobs_on_device({w, later}, *rig.device).ok());
}

TEST(Runner, WritersAreRefusedWhenEveryOpenZoneIsExplicitlyOpen) {
  Rig rig;
  for (uint32_t z = 30; z < 42; ++z) open_zone(rig, z);
  JobSpec w = job(JobKind::kWrite, 64 << 10, 1);
  w.zones = {{0, 3}};
  auto checked = check_jobs_on_device({w}, *rig.device);
  ASSERT_FALSE(checked.ok());
  EXPECT_NE(checked.error().find("zns.max_open"), std::string::npos) << checked.error();
  JobSpec r = job(JobKind::kRead, 64 << 10, 1);
  r.zones = {{30, 31}};
  EXPECT_TRUE(check_jobs_on_device({r}, *rig.device).ok());
}

TEST(Runner, APaceTheRunnerCannotCountIsRefused) {
  Rig rig;
  JobSpec w = job(JobKind::kWrite, 64 << 10, 1);
  w.size_bytes = 8ULL << 30;
  w.rate_bytes_per_s = 1;
  auto checked = check_jobs_on_device({w}, *rig.device);
  ASSERT_FALSE(checked.ok());
  EXPECT_NE(checked.error().find("146 years"), std::string::npos) << checked.error();
  w.runtime_ns = 1'000'000'000;  // a runtime ends it
  EXPECT_TRUE(check_jobs_on_device({w}, *rig.device).ok());
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
