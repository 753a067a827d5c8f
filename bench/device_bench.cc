// Speed of the model (wall clock, not virtual time): simulated commands per
// second for the core workloads; and the accuracy of the real-time driver
// (BM_Realtime*, run apart from the others since it needs both cores). Run
// by `make bench`, which also reports the medians against the targets in
// docs/benchmarks.md.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <queue>
#include <thread>
#include <utility>
#include <vector>

#include "common/histogram.h"
#include "common/rng.h"
#include "sim/realtime.h"
#include "sim/simulator.h"
#include "workload/runner.h"
#include "zns/zns_device.h"
#include "zonelab/config.h"

namespace zonelab {
namespace {

struct Bench {
  Simulator sim;
  std::unique_ptr<ZnsDevice> device;
};

std::unique_ptr<Bench> make_bench(const std::string& preset) {
  auto bench = std::make_unique<Bench>();
  Config config = *preset_config(preset);
  config.store.backing = "none";
  bench->device = std::move(make_zns_device(config, bench->sim)).value();
  return bench;
}

JobSpec job(JobKind kind, uint64_t bs, uint32_t iodepth, uint64_t size) {
  JobSpec spec;
  spec.name = "bench";
  spec.kind = kind;
  spec.block_size_bytes = bs;
  spec.iodepth = iodepth;
  spec.size_bytes = size;
  return spec;
}

// 4 KiB random reads at queue depth 32 on the small preset with backing
// none, over a device filled once before timing starts.
void BM_RandRead4KiBQd32(benchmark::State& state) {
  auto bench = make_bench("small");
  run_jobs(*bench->device, bench->sim, {job(JobKind::kWrite, 1 << 20, 4, 0)}, 1);
  const uint64_t reads = 200'000;
  JobSpec spec = job(JobKind::kRandRead, 4096, 32, reads * 4096);
  uint64_t seed = 1;
  for (auto _ : state) {
    RunResult run = run_jobs(*bench->device, bench->sim, {spec}, seed++);
    benchmark::DoNotOptimize(run.commands);
    if (run.commands != reads) state.SkipWithError("wrong command count");
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * reads));
}
BENCHMARK(BM_RandRead4KiBQd32)->Unit(benchmark::kMillisecond);

// Sequential 4 KiB writes at queue depth 32 (zone switching, page staging,
// resets when zones are reused).
void BM_SeqWrite4KiBQd32(benchmark::State& state) {
  auto bench = make_bench("small");
  const uint64_t writes = 200'000;
  JobSpec spec = job(JobKind::kWrite, 4096, 32, writes * 4096);
  for (auto _ : state) {
    RunResult run = run_jobs(*bench->device, bench->sim, {spec}, 1);
    benchmark::DoNotOptimize(run.commands);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * writes));
}
BENCHMARK(BM_SeqWrite4KiBQd32)->Unit(benchmark::kMillisecond);

// FlexZNS parity's cost to the model: sequential 4 KiB writes at queue
// depth 32 on the flexzns flash formatted 512MiB:64,2GiB:96, parity none or
// separate (the same jobs as BM_SeqWrite4KiBQd32). With memory backing the
// device also computes the XOR parity of every write.
void BM_FlexSeqWrite4KiBQd32(benchmark::State& state) {
  const bool parity = state.range(0) != 0;
  const bool memory = state.range(1) != 0;
  const uint64_t writes = 200'000;
  JobSpec spec = job(JobKind::kWrite, 4096, 32, writes * 4096);
  spec.zones = {{0, 63}};  // the 512 MiB set
  for (auto _ : state) {
    state.PauseTiming();
    auto bench = std::make_unique<Bench>();
    Config config = *preset_config("flexzns");
    config.store.backing = memory ? "memory" : "none";
    config.zns.format = "512MiB:64,2GiB:96";
    config.zns.parity_placement = parity ? "separate" : "none";
    bench->device = std::move(make_zns_device(config, bench->sim)).value();
    state.ResumeTiming();
    RunResult run = run_jobs(*bench->device, bench->sim, {spec}, 1);
    benchmark::DoNotOptimize(run.commands);
    if (run.commands < writes) state.SkipWithError("wrong command count");
    state.PauseTiming();
    bench.reset();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * writes));
}
BENCHMARK(BM_FlexSeqWrite4KiBQd32)
    ->ArgNames({"parity", "memory"})
    ->Args({0, 0})
    ->Args({1, 0})
    ->Args({0, 1})
    ->Args({1, 1})
    ->Unit(benchmark::kMillisecond);

// The production-drive features' cost to the model: on the small preset,
// 4 KiB sequential writes (zones 0-31) beside 4 KiB random reads (zones
// 32-63, filled first), each at queue depth 32, with the write buffer,
// program/erase suspend, firmware cores and the mapping table off (drive:0)
// or on as zn540 sets them (drive:1).
void BM_DriveMixed4KiBQd32(benchmark::State& state) {
  const bool drive = state.range(0) != 0;
  const uint64_t ops = 100'000;
  JobSpec writes = job(JobKind::kWrite, 4096, 32, ops * 4096);
  writes.zones = {{0, 31}};
  JobSpec reads = job(JobKind::kRandRead, 4096, 32, ops * 4096);
  reads.zones = {{32, 63}};
  JobSpec fill = job(JobKind::kWrite, 1 << 20, 4, 0);
  fill.zones = {{32, 63}};
  uint64_t seed = 1;
  for (auto _ : state) {
    state.PauseTiming();
    auto bench = std::make_unique<Bench>();
    Config config = *preset_config("small");
    config.store.backing = "none";
    if (drive) {
      config.buffer.size_bytes = 16 << 20;
      config.buffer.internal_share_bp = 1250;
      config.flash.suspend_program = 1;
      config.flash.suspend_erase = 1;
      config.flash.suspend_latency_ns = 30'000;
      config.flash.suspend_resume_ns = 20'000;
      config.flash.suspend_max = 4;
      config.controller.cores = 3;
      config.controller.read_ns = 10'000;
      config.controller.write_ns = 6'000;
      config.controller.management_ns = 10'000;
      config.controller.map_update_ns = 2'780;
      config.controller.unmap_ns_per_gib = 15'200'000;
      config.controller.read_dispatch = "die";
    }
    bench->device = std::move(make_zns_device(config, bench->sim)).value();
    run_jobs(*bench->device, bench->sim, {fill}, 1);
    state.ResumeTiming();
    RunResult run = run_jobs(*bench->device, bench->sim, {writes, reads}, seed++);
    benchmark::DoNotOptimize(run.commands);
    if (run.commands < 2 * ops) state.SkipWithError("wrong command count");
    state.PauseTiming();
    bench.reset();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * 2 * ops));
}
BENCHMARK(BM_DriveMixed4KiBQd32)
    ->ArgNames({"drive"})
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond);

// The yardstick for docs/benchmarks.md's reference ratios: the machine's
// speed at the model's kind of work, in code that is not the model's. A
// queue-depth-32 loop of events, each a random pick, a division and a
// busy-time update of one of 1,024 resources, through a binary heap --
// std:: only, so no change to zonelab moves it. `make bench` divides every
// other benchmark's rate by this one's from the same run. Changing it
// changes every ratio: bench/reference.json must be remade with it.
void BM_Calibration(benchmark::State& state) {
  constexpr uint64_t kEvents = 200'000;
  constexpr uint32_t kDepth = 32;
  constexpr size_t kResources = 1024;
  for (auto _ : state) {
    std::vector<uint64_t> free_at_ns(kResources, 0);
    using Event = std::pair<uint64_t, uint64_t>;  // (time, sequence)
    std::priority_queue<Event, std::vector<Event>, std::greater<>> heap;
    uint64_t rng = 1;
    uint64_t seq = 0;
    for (uint32_t i = 0; i < kDepth; ++i) heap.emplace(0, seq++);
    for (uint64_t n = 0; n < kEvents; ++n) {
      uint64_t now = heap.top().first;
      heap.pop();
      rng += 0x9E3779B97F4A7C15ULL;  // splitmix64
      uint64_t x = (rng ^ (rng >> 30)) * 0xBF58476D1CE4E5B9ULL;
      x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
      x ^= x >> 31;
      uint64_t& busy = free_at_ns[x % kResources];
      busy = std::max(busy, now) + 50'000 + (x >> 40) / (now % 7 + 1);
      heap.emplace(busy + 1'000, seq++);
    }
    benchmark::DoNotOptimize(heap.top());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * kEvents));
}
BENCHMARK(BM_Calibration)->Unit(benchmark::kMillisecond);

// Building the 29,172-zone zssd-small device in memory (metadata only).
void BM_MakeZssdSmall(benchmark::State& state) {
  for (auto _ : state) {
    auto bench = make_bench("zssd-small");
    benchmark::DoNotOptimize(bench->device.get());
  }
}
BENCHMARK(BM_MakeZssdSmall)->Unit(benchmark::kMicrosecond);

// Counts asynchronous completions; a client reuses its commands in a ring.
class ReadSink final : public CompletionSink {
 public:
  void on_complete(Command& command) override {
    if (command.status != Status::kSuccess) failed.fetch_add(1, std::memory_order_relaxed);
    done.fetch_add(1, std::memory_order_release);
  }
  std::atomic<uint64_t> done{0};
  std::atomic<uint64_t> failed{0};
};

// Real-time accuracy: 4 client threads each issue 4 KiB random reads on a
// fixed schedule of 12,500 a second (50,000 IOPS in all) for one second, on
// `small` with backing none, through the real-time driver at time scale 1.
// Args: the driver's spin time in us; 1 = synchronous reads (the error
// includes waking the client), 0 = asynchronous (the sink is called on the
// device thread); the driver's standby loop threads. Counters: the completion error (delivery minus
// the modeled completion's wall time) in microseconds, and the IOPS reached.
void BM_RealtimeRead50kIops(benchmark::State& state) {
  constexpr int kThreads = 4;
  constexpr uint64_t kIops = 50'000;
  constexpr uint64_t kReadsEach = kIops / kThreads;  // one second
  constexpr uint64_t kRing = 256;
  auto bench = make_bench("small");
  JobSpec fill = job(JobKind::kWrite, 1 << 20, 4, 0);
  fill.zones = {{0, 15}};
  run_jobs(*bench->device, bench->sim, {fill}, 1);
  const uint64_t blocks = 16 * bench->device->info().zone_capacity_lbas;
  const uint64_t zone_size = bench->device->info().zone_size_lbas;
  const uint64_t capacity = bench->device->info().zone_capacity_lbas;
  RealtimeOptions options;
  options.spin_ns = static_cast<uint64_t>(state.range(0)) * 1000;
  options.standby_threads = static_cast<uint32_t>(state.range(2));
  const bool sync = state.range(1) != 0;
  for (auto _ : state) {
    RealtimeDriver driver(*bench->device, bench->sim, options);
    driver.start();
    std::atomic<uint64_t> failed{0};
    const auto period = std::chrono::nanoseconds(1'000'000'000ULL * kThreads / kIops);
    const auto start = std::chrono::steady_clock::now() + std::chrono::milliseconds(1);
    std::vector<std::thread> clients;
    for (int t = 0; t < kThreads; ++t) {
      clients.emplace_back([&, t] {
        Rng rng(derive_seed(7, static_cast<uint64_t>(t)));
        std::vector<Command> ring(kRing);
        ReadSink sink;
        auto next = start + period * t / kThreads;  // the threads interleave
        for (uint64_t i = 0; i < kReadsEach; ++i) {
          std::this_thread::sleep_until(next);
          next += period;
          uint64_t block = rng.below(blocks);
          Command& read = ring[i % kRing];
          while (i >= kRing && sink.done.load(std::memory_order_acquire) <= i - kRing) {
            std::this_thread::yield();  // the ring slot is still in flight
          }
          read = Command{};
          read.opcode = Opcode::kRead;
          read.slba = block / capacity * zone_size + block % capacity;
          read.nlb = 1;
          read.sink = &sink;
          if (sync) {
            if (!driver.submit_sync(read) || read.status != Status::kSuccess) ++failed;
            sink.done.fetch_add(1, std::memory_order_relaxed);
          } else if (!driver.submit_async(read)) {
            ++failed;
          }
        }
        while (sink.done.load(std::memory_order_acquire) < kReadsEach) std::this_thread::yield();
        failed += sink.failed.load();
      });
    }
    for (auto& client : clients) client.join();
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    driver.stop();
    RealtimeStats stats = driver.stats();
    if (failed != 0) state.SkipWithError("a read failed");
    const Histogram& error = stats.completion_error_ns;
    state.counters["err_p50_us"] = static_cast<double>(error.percentile(50)) / 1e3;
    state.counters["err_p99_us"] = static_cast<double>(error.percentile(99)) / 1e3;
    state.counters["err_p999_us"] = static_cast<double>(error.percentile(99.9)) / 1e3;
    state.counters["err_max_us"] = static_cast<double>(error.max()) / 1e3;
    state.counters["err_mean_us"] = error.mean() / 1e3;
    state.counters["iops"] = static_cast<double>(stats.completions) / seconds;
    if (sync) {
      state.counters["wakeup_p50_us"] = static_cast<double>(stats.wakeup_ns.percentile(50)) / 1e3;
      state.counters["wakeup_p99_us"] = static_cast<double>(stats.wakeup_ns.percentile(99)) / 1e3;
    }
  }
}
BENCHMARK(BM_RealtimeRead50kIops)
    ->ArgNames({"spin_us", "sync", "standby"})
    ->ArgsProduct({{static_cast<int64_t>(RealtimeOptions{}.spin_ns / 1000)}, {1, 0}, {0, 1}})
    ->Iterations(1)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// The machine's floor for the benchmark above: no driver, no device; the
// same 4 client threads wake on the same schedule (and submit nothing),
// while one thread spins reading the clock and notes how late it sees each
// of a series of instants 10 us apart. That lateness is what any single
// thread delivering completions at those instants would at least show here:
// the time its CPU was taken from it (timer ticks, interrupts, other
// threads, the hypervisor). Counters as above, in microseconds.
void BM_RealtimeFloor(benchmark::State& state) {
  constexpr int kThreads = 4;
  constexpr uint64_t kIops = 50'000;
  constexpr uint64_t kWakesEach = kIops / kThreads;
  constexpr int64_t kInstantNs = 10'000;
  for (auto _ : state) {
    const auto period = std::chrono::nanoseconds(1'000'000'000ULL * kThreads / kIops);
    const auto start = std::chrono::steady_clock::now() + std::chrono::milliseconds(1);
    const auto end = start + period * kWakesEach;
    std::vector<std::thread> clients;
    for (int t = 0; t < kThreads; ++t) {
      clients.emplace_back([&, t] {
        auto next = start + period * t / kThreads;
        for (uint64_t i = 0; i < kWakesEach; ++i) {
          std::this_thread::sleep_until(next);
          next += period;
        }
      });
    }
    Histogram late;
    auto instant = start;
    for (auto now = std::chrono::steady_clock::now(); now < end;
         now = std::chrono::steady_clock::now()) {
      while (instant <= now) {
        late.record(static_cast<uint64_t>((now - instant).count()));
        instant += std::chrono::nanoseconds(kInstantNs);
      }
    }
    for (auto& client : clients) client.join();
    state.counters["err_p50_us"] = static_cast<double>(late.percentile(50)) / 1e3;
    state.counters["err_p99_us"] = static_cast<double>(late.percentile(99)) / 1e3;
    state.counters["err_p999_us"] = static_cast<double>(late.percentile(99.9)) / 1e3;
    state.counters["err_max_us"] = static_cast<double>(late.max()) / 1e3;
  }
}
BENCHMARK(BM_RealtimeFloor)->Iterations(1)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace zonelab

BENCHMARK_MAIN();
