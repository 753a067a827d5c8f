// Speed of the model (wall clock, not virtual time): simulated commands per
// second for the core workloads. Run by `make bench`, which also reports the
// medians against the targets in docs/benchmarks.md.
#include <benchmark/benchmark.h>

#include <memory>

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

// Building the 29,172-zone zssd-small device in memory (metadata only).
void BM_MakeZssdSmall(benchmark::State& state) {
  for (auto _ : state) {
    auto bench = make_bench("zssd-small");
    benchmark::DoNotOptimize(bench->device.get());
  }
}
BENCHMARK(BM_MakeZssdSmall)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace zonelab

BENCHMARK_MAIN();
