// ConfZNS's observations on software parallelism (seed 002, "Observations
// (6/9)-(8/9)"): threads reading a file that lives in one zone (intra-zone
// parallelism, Observation 3) or is spread over several zones (inter-zone
// parallelism, Observation 4), synchronously and with a deeper queue, and
// with requests larger than a zone's stripe (workload sensitivity).
//
// The configurations are ConfZNS's validation configurations (seed 002
// "ZNS SSD Emulator (5/8)", Table 2): SU, the small-zone ZSSD1, is the
// `zssd-small` preset (72 MiB zones, each on one of 16 units, 48 KiB
// pages, tPROG 450 us, tR 65 us, 1200 MT/s); MU^8, the stand-in for the
// large-zone ZSSD2, is the same flash with 1536 MiB zones (1.61 GB, whole
// 384 KiB stripes) striped over 8 units, one die on each channel.
//
// Each curve writes the file once, then reads it for a window of virtual
// time with 1, 2, ... threads in turn. A thread reads its part of the file
// in order in 128 KiB requests, one at a time (sync) or 16 at a time
// (async); throughput counts the bytes of the reads that completed within
// the window.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "experiments/experiment.h"
#include "stack/stack.h"
#include "workload/runner.h"
#include "zonelab/assert.h"

namespace zonelab {
namespace {

namespace paper {
// Observation 3, intra-zone, sync: ZSSD1 (small zone) "not scalable",
// ZSSD2 (large zone) "somewhat scalable (3X)".
constexpr double kIntraSmall_x = 1;
constexpr double kIntraLarge_x = 3;
// Observation 4, inter-zone, sync: ZSSD1 "good scalable (8X)", ZSSD2 3X.
constexpr double kInterSmall_x = 8;
constexpr double kInterLarge_x = 3;
// Workload sensitivity 1), inter-zone, 128 KB requests: the 1-to-1 mapping
// scales 8X "same under sync. & async."; the 1-to-all one is at its
// maximum with one thread under async.
constexpr double kAsyncSmall_x = 8;
constexpr double kAsyncLarge_x = 1;
// Workload sensitivity 2): "Request size > page size x PU: max even at 1
// thread on 1-to-all (sync)".
constexpr double kLargeRequestLarge_x = 1;
}  // namespace paper

// Why the model's number is what it is: each comes from the arithmetic of
// the mapping, tR (65 us), a page's transfer (41 us), the command overhead
// (2 us) and the 3.94 GB/s link (33 us for 128 KiB); docs/experiments.md
// works it out.
namespace why {
// A 128 KiB read at a 128 KiB-aligned offset covers 3 or 4 of the 48 KiB
// pages, 10 in 3 reads; on one die they are sensed one after another.
constexpr std::string_view kSmallOneThread =
    "2 us + 3-4 tR of 65 us + the last page's transfer + 33 us link: 279 us a read";
constexpr std::string_view kSmallIntra = "one thread's 279 us a read / the die's 217 us (10/3 tR)";
constexpr std::string_view kSmallIntraNote =
    "the paper: \"not scalable\"; one thread leaves its die idle while a read's last transfer "
    "and its link crossing run (62 of 279 us), and a second thread fills that time";
constexpr std::string_view kLargeOneThread =
    "2 us + 65 us tR + 41 us transfer + 33 us link = 141 us a 128 KiB read";
// In a 384 KiB stripe, reads [0,128), [128,256), [256,384) KiB read pages
// 0-2, 2-5 and 5-7: the units of pages 2 and 5 sense twice per 3 reads.
constexpr std::string_view kLargeIntra =
    "ceiling 3.26x: 3 reads per 2 tR on the 2 units read twice a stripe (2885 MiB/s)";
constexpr std::string_view kLargeIntraNote =
    "ZSSD2 (1-to-all) in the paper; 8 threads keep the two twice-read dies 92 % busy and reach "
    "92 % of the ceiling";
constexpr std::string_view kSmallInter =
    "a die and a channel each: 8 x one thread (link 94 % busy)";
constexpr std::string_view kLargeInter = "3.94 GB/s link (3757 MiB/s) / one thread's 885 MiB/s";
constexpr std::string_view kLargeInterNote =
    "ZSSD2 (1-to-all) in the paper; MU^8's zones alternate between two groups of 8 dies, so "
    "threads in two zones use all 16 and the link is the limit from 6 threads on";
constexpr std::string_view kSmallAsync = "link 3757 MiB/s / one die's 577 MiB/s (10/3 tR a read)";
constexpr std::string_view kSmallAsyncNote =
    "the paper: the same 8X as sync; with 16 reads queued one thread keeps its die busy (1.29x a "
    "sync thread), and 8 busy dies would need 4.5 GiB/s, past the link";
constexpr std::string_view kLargeAsync = "link 3757 MiB/s / one zone's ceiling of 2885 MiB/s";
constexpr std::string_view kLargeAsyncNote =
    "the paper: at its maximum with one thread; here one thread reaches its zone's ceiling (the "
    "two twice-read units), and a second thread's zone on the other 8 dies lifts it to the link";
constexpr std::string_view kLargeAsyncOne = "3 reads of 128 KiB per 2 tR of 65 us = 2885 MiB/s";
constexpr std::string_view kSmallAsyncOne = "128 KiB per 10/3 tR of 65 us = 577 MiB/s";
constexpr std::string_view kLargeRequest = "link 3757 MiB/s / one thread's 2013 MiB/s";
constexpr std::string_view kLargeRequestNote =
    "the paper: at its maximum with one thread; the model sends a read's data over the link "
    "after its last page leaves the flash, so one thread alternates 173 us of flash with 200 us "
    "of link";
constexpr std::string_view kLargeRequestOne =
    "2 us + 2 tR + 41 us transfer + 200 us link = 373 us a 768 KiB read";
}  // namespace why

constexpr std::string_view kPreset = "zssd-small";
using Json = nlohmann::ordered_json;

constexpr uint64_t kKiB = 1024;
constexpr uint64_t kMiB = 1024 * kKiB;
constexpr uint64_t kRequestBytes = 128 * kKiB;
constexpr uint32_t kAsyncDepth = 16;
// The file: 48 MiB, in one zone or 3 MiB in each of 16 zones (a whole
// number of pages and of MU^8's 384 KiB stripes either way).
constexpr uint64_t kFileBytes = 48 * kMiB;
constexpr uint32_t kFileZones = 16;
// The thread count the paper's speedups are compared at.
constexpr uint32_t kCompareThreads = 8;

struct Layout {
  std::string_view name;
  std::vector<std::string> overrides;
};

const Layout& small_zone() {
  static const Layout kSmall{"SU", {"store.backing=none"}};
  return kSmall;
}

const Layout& large_zone() {
  static const Layout kLarge{
      "MU^8",
      {"store.backing=none", "zns.channels_per_zone=8", "zns.zone_capacity=1536MiB",
       "zns.zone_size=1536MiB", "zns.zone_count=0"}};
  return kLarge;
}

// Where the threads read: all in the one zone holding the file, thread k
// in zone k (the file spread over 16 zones), or every thread anywhere in
// the 16 zones.
enum class Placement { kOneZone, kZonePerThread, kAnyZone };

std::string_view placement_name(Placement placement) {
  switch (placement) {
    case Placement::kOneZone:
      return "one zone";
    case Placement::kZonePerThread:
      return "a zone a thread";
    case Placement::kAnyZone:
      return "anywhere in 16 zones";
  }
  return "";
}

struct Reading {
  Placement placement = Placement::kOneZone;
  uint64_t request_bytes = kRequestBytes;
  uint32_t iodepth = 1;
};

struct Point {
  uint32_t threads = 0;
  double mib_s = 0;
  double link_busy_percent = 0;      // device to host
  double die_busy_max_percent = 0;   // the busiest die's
  double die_busy_mean_percent = 0;  // of the dies that worked
};

std::vector<uint32_t> thread_counts(bool quick) {
  if (quick) return {1, 2, 4, 8};
  return {1, 2, 3, 4, 5, 6, 7, 8, 12, 16};
}

uint64_t window_ns(bool quick) { return quick ? 50'000'000 : 1'000'000'000; }

uint32_t file_zones(Placement placement) {
  return placement == Placement::kOneZone ? 1 : kFileZones;
}

JobSpec file_writer(uint32_t zones) {
  JobSpec job;
  job.name = "file";
  job.kind = JobKind::kWrite;
  job.block_size_bytes = 384 * kKiB;
  job.iodepth = 4;
  job.numjobs = zones;
  job.zones = std::pair<uint32_t, uint32_t>{0, zones - 1};
  job.size_bytes = kFileBytes;
  return job;
}

// The readers of one point. In one zone, every thread reads the whole file
// from its start, as threads of fio's numjobs do; a thread per zone reads
// its zone from its start (clone k of a job takes the k-th zone); threads
// anywhere read at random 128 KiB-aligned offsets of all 16 zones. A
// sequential reader that comes to the end of its data starts over.
std::vector<JobSpec> readers(const Reading& reading, uint32_t threads, uint64_t window) {
  JobSpec job;
  job.name = "readers";
  job.kind = JobKind::kRead;
  job.block_size_bytes = reading.request_bytes;
  job.iodepth = reading.iodepth;
  job.runtime_ns = window;
  job.count_within_runtime = true;
  switch (reading.placement) {
    case Placement::kOneZone: {
      std::vector<JobSpec> jobs;
      job.zones = std::pair<uint32_t, uint32_t>{0, 0};
      for (uint32_t k = 0; k < threads; ++k) {
        job.name = fmt::format("reader{}", k);
        jobs.push_back(job);
      }
      return jobs;
    }
    case Placement::kZonePerThread:
      job.numjobs = threads;
      job.zones = std::pair<uint32_t, uint32_t>{0, threads - 1};
      return {job};
    case Placement::kAnyZone:
      job.kind = JobKind::kRandRead;
      job.numjobs = threads;
      job.zones = std::pair<uint32_t, uint32_t>{0, kFileZones - 1};
      return {job};
  }
  ZL_ASSERT(false);
  return {};
}

struct Busy {
  uint64_t read_bytes = 0;
  std::vector<uint64_t> die_ns;
};

Busy busy_of(const Stack& stack) {
  Busy busy;
  stack.inspect([&busy](const ModeledDevice& device) {
    busy.read_bytes = device.counters().host_read_bytes;
    const Flash& flash = device.flash();
    for (uint32_t die = 0; die < flash.dies(); ++die) busy.die_ns.push_back(flash.die_busy_ns(die));
  });
  return busy;
}

Result<Point> read_point(Stack& stack, const Config& config, const Reading& reading,
                         uint32_t threads, uint64_t window) {
  std::vector<JobSpec> jobs = readers(reading, threads, window);
  auto checked = check_jobs(jobs, stack.info());
  if (!checked) return Error{checked.error()};
  Busy before = busy_of(stack);
  RunResult run = run_jobs(stack.device(), stack.sim(), jobs, config.seed);
  Busy after = busy_of(stack);
  Point point;
  point.threads = threads;
  uint64_t bytes = 0;
  for (const JobResult& r : run.jobs) {
    if (r.errors != 0) return Error{fmt::format("{}: {}", r.spec.name, r.first_error)};
    bytes += r.bytes;
  }
  point.mib_s =
      static_cast<double>(bytes) / static_cast<double>(kMiB) / (static_cast<double>(window) / 1e9);
  // The run lasts the window and the reads still in flight at its end.
  // Every byte read crosses the link once, at its bandwidth.
  auto span = static_cast<double>(run.end_ns - run.start_ns);
  double link_ns = static_cast<double>(after.read_bytes - before.read_bytes) * 1e9 /
                   static_cast<double>(config.host.link_bandwidth_bytes_per_s);
  point.link_busy_percent = link_ns / span * 100;
  uint64_t die_max = 0;
  uint64_t die_sum = 0;
  uint32_t dies = 0;
  for (size_t die = 0; die < after.die_ns.size(); ++die) {
    uint64_t busy = after.die_ns[die] - before.die_ns[die];
    die_max = std::max(die_max, busy);
    die_sum += busy;
    dies += busy > 0 ? 1 : 0;
  }
  point.die_busy_max_percent = static_cast<double>(die_max) / span * 100;
  point.die_busy_mean_percent = dies == 0 ? 0 : static_cast<double>(die_sum) / dies / span * 100;
  return point;
}

// One configuration's curve: the file written, then read with each thread
// count in turn. Reads change nothing on the device, so every point reads
// the same file. Curves are kept: sync_async reuses inter_zone's.
Result<std::vector<Point>> read_curve(const RunOptions& options, const Layout& layout,
                                      const Reading& reading, std::string_view experiment) {
  static std::map<std::string, std::vector<Point>> cache;
  std::string key =
      fmt::format("{}/{}/{}/{}/{}/{}", layout.name, static_cast<int>(reading.placement),
                  reading.request_bytes, reading.iodepth, options.quick, preset_overrides_key());
  if (auto hit = cache.find(key); hit != cache.end()) return hit->second;
  options.report(fmt::format("{}: {}, {}, {} KiB requests, queue depth {}", experiment, layout.name,
                             placement_name(reading.placement), reading.request_bytes / kKiB,
                             reading.iodepth));
  auto config = preset_with(kPreset, layout.overrides);
  if (!config) return Error{config.error()};
  auto stack = Stack::make(*config);
  if (!stack) return Error{stack.error()};
  std::vector<JobSpec> fill = {file_writer(file_zones(reading.placement))};
  auto checked = check_jobs(fill, (*stack)->info());
  if (!checked) return Error{checked.error()};
  RunResult written = run_jobs((*stack)->device(), (*stack)->sim(), fill, config->seed);
  if (written.errors != 0) return Error{fmt::format("file: {}", written.jobs[0].first_error)};
  std::vector<Point> curve;
  for (uint32_t threads : thread_counts(options.quick)) {
    auto point = read_point(**stack, *config, reading, threads, window_ns(options.quick));
    if (!point) {
      return Error{fmt::format("{}, {} threads: {}", layout.name, threads, point.error())};
    }
    curve.push_back(*point);
  }
  cache[key] = curve;
  return curve;
}

struct Curve {
  std::string series;
  std::vector<Point> points;
};

double speedup_at(const Curve& curve, uint32_t threads) {
  ZL_ASSERT(!curve.points.empty() && curve.points.front().threads == 1);
  for (const Point& p : curve.points) {
    if (p.threads == threads) return p.mib_s / curve.points.front().mib_s;
  }
  ZL_ASSERT(false);
  return 0;
}

Table curve_table(const std::vector<Curve>& curves) {
  Table table({"config", "threads", "mib_s", "speedup", "link_busy_percent", "die_busy_max_percent",
               "die_busy_mean_percent"});
  for (const Curve& curve : curves) {
    for (const Point& p : curve.points) {
      table.add_row({curve.series, static_cast<uint64_t>(p.threads), p.mib_s,
                     p.mib_s / curve.points.front().mib_s, p.link_busy_percent,
                     p.die_busy_max_percent, p.die_busy_mean_percent});
    }
  }
  return table;
}

Json layout_parameters(const RunOptions& options) {
  Json p;
  p["preset"] = kPreset;
  Json layouts = Json::array();
  for (const Layout* layout : {&small_zone(), &large_zone()}) {
    layouts.push_back({{"name", layout->name}, {"overrides", layout->overrides}});
  }
  p["configs"] = layouts;
  p["file"] = {{"bytes", kFileBytes}, {"written_with", "384 KiB writes, queue depth 4"}};
  p["threads"] = thread_counts(options.quick);
  p["window_ns"] = window_ns(options.quick);
  p["reads"] = {{"rw", "read (in order; randread for threads anywhere)"},
                {"count", "reads completed within the window"}};
  return p;
}

PlotSpec speedup_plot(std::string title, std::vector<double> references) {
  return {.x = "threads",
          .y = "speedup",
          .series = "config",
          .xlabel = "reading threads",
          .ylabel = "throughput / one thread's",
          .series_label = "configuration",
          .title = std::move(title),
          .references = std::move(references)};
}

// The curves of `readings`, one per (series name, layout, reading).
struct CurveSpec {
  std::string series;
  const Layout* layout;
  Reading reading;
};

Result<std::vector<Curve>> curves_of(const RunOptions& options, std::string_view experiment,
                                     const std::vector<CurveSpec>& specs) {
  std::vector<Curve> curves;
  for (const CurveSpec& spec : specs) {
    auto points = read_curve(options, *spec.layout, spec.reading, experiment);
    if (!points) return Error{points.error()};
    curves.push_back({spec.series, *std::move(points)});
  }
  return curves;
}

// --- Observation 3: intra-zone parallelism -----------------------------------

Result<ExperimentResult> run_intra_zone(const RunOptions& options) {
  const Reading one_zone{Placement::kOneZone, kRequestBytes, 1};
  auto curves = curves_of(
      options, "intra_zone",
      {{"SU (1-to-1)", &small_zone(), one_zone}, {"MU^8 (1-to-all)", &large_zone(), one_zone}});
  if (!curves) return Error{curves.error()};
  ExperimentResult result;
  result.table = curve_table(*curves);
  result.parameters = layout_parameters(options);
  result.parameters["placement"] = "the file in zone 0; every thread reads all of it";
  result.parameters["request_bytes"] = kRequestBytes;
  result.parameters["iodepth"] = 1;
  result.plot = speedup_plot("Intra-zone parallelism, sync (seed 002 Observation 3)",
                             {paper::kIntraSmall_x, paper::kIntraLarge_x});
  const Curve& su = (*curves)[0];
  const Curve& mu = (*curves)[1];
  result.comparisons = {
      closed_form(std::string(why::kSmallIntra),
                  {"SU intra-zone speedup, 8 threads", "x", paper::kIntraSmall_x,
                   speedup_at(su, kCompareThreads), std::string(why::kSmallIntraNote)}),
      closed_form(std::string(why::kLargeIntra),
                  {"MU^8 intra-zone speedup, 8 threads", "x", paper::kIntraLarge_x,
                   speedup_at(mu, kCompareThreads), std::string(why::kLargeIntraNote)}),
      closed_form(std::string(why::kSmallOneThread),
                  {"SU one thread", "MiB/s", std::nullopt, su.points.front().mib_s, ""}),
      closed_form(std::string(why::kLargeOneThread),
                  {"MU^8 one thread", "MiB/s", std::nullopt, mu.points.front().mib_s, ""}),
  };
  return result;
}

// --- Observation 4: inter-zone parallelism -----------------------------------

Result<ExperimentResult> run_inter_zone(const RunOptions& options) {
  const Reading per_thread{Placement::kZonePerThread, kRequestBytes, 1};
  const Reading any_zone{Placement::kAnyZone, kRequestBytes, 1};
  auto curves = curves_of(options, "inter_zone",
                          {{"SU (1-to-1)", &small_zone(), per_thread},
                           {"MU^8 (1-to-all)", &large_zone(), per_thread},
                           {"SU, threads anywhere in the 16 zones", &small_zone(), any_zone}});
  if (!curves) return Error{curves.error()};
  ExperimentResult result;
  result.table = curve_table(*curves);
  result.parameters = layout_parameters(options);
  result.parameters["placement"] =
      "the file as 3 MiB in each of zones 0-15; thread k reads zone k (the third curve: every "
      "thread reads at random anywhere in the 16 zones)";
  result.parameters["request_bytes"] = kRequestBytes;
  result.parameters["iodepth"] = 1;
  result.plot = speedup_plot("Inter-zone parallelism, sync (seed 002 Observation 4)",
                             {paper::kInterSmall_x, paper::kInterLarge_x});
  result.comparisons = {
      closed_form(std::string(why::kSmallInter),
                  {"SU inter-zone speedup, 8 threads", "x", paper::kInterSmall_x,
                   speedup_at((*curves)[0], kCompareThreads), ""}),
      closed_form(std::string(why::kLargeInter),
                  {"MU^8 inter-zone speedup, 8 threads", "x", paper::kInterLarge_x,
                   speedup_at((*curves)[1], kCompareThreads), std::string(why::kLargeInterNote)}),
      emerged({"SU speedup, 8 threads anywhere in the 16 zones", "x", std::nullopt,
               speedup_at((*curves)[2], kCompareThreads),
               "threads that meet on a die wait for each other's reads"}),
  };
  return result;
}

// --- Workload sensitivity 1): sync against async -----------------------------

Result<ExperimentResult> run_sync_async(const RunOptions& options) {
  const Reading sync{Placement::kZonePerThread, kRequestBytes, 1};
  const Reading async{Placement::kZonePerThread, kRequestBytes, kAsyncDepth};
  const std::string qd = fmt::format("async (queue depth {})", kAsyncDepth);
  auto curves = curves_of(options, "sync_async",
                          {{"SU, sync", &small_zone(), sync},
                           {"SU, " + qd, &small_zone(), async},
                           {"MU^8, sync", &large_zone(), sync},
                           {"MU^8, " + qd, &large_zone(), async}});
  if (!curves) return Error{curves.error()};
  ExperimentResult result;
  result.table = curve_table(*curves);
  result.parameters = layout_parameters(options);
  result.parameters["placement"] = "the file as 3 MiB in each of zones 0-15; thread k reads zone k";
  result.parameters["request_bytes"] = kRequestBytes;
  result.parameters["iodepth"] = {{"sync", 1}, {"async", kAsyncDepth}};
  result.plot = speedup_plot("Inter-zone parallelism, sync and async (seed 002, sensitivity 1)",
                             {paper::kAsyncSmall_x, paper::kAsyncLarge_x});
  const Curve& su_async = (*curves)[1];
  const Curve& mu_async = (*curves)[3];
  result.comparisons = {
      closed_form(std::string(why::kSmallAsync),
                  {"SU async speedup, 8 threads", "x", paper::kAsyncSmall_x,
                   speedup_at(su_async, kCompareThreads), std::string(why::kSmallAsyncNote)}),
      closed_form(std::string(why::kLargeAsync),
                  {"MU^8 async speedup, 8 threads", "x", paper::kAsyncLarge_x,
                   speedup_at(mu_async, kCompareThreads), std::string(why::kLargeAsyncNote)}),
      closed_form(std::string(why::kSmallAsyncOne), {"SU async one thread", "MiB/s", std::nullopt,
                                                     su_async.points.front().mib_s, ""}),
      closed_form(std::string(why::kLargeAsyncOne), {"MU^8 async one thread", "MiB/s", std::nullopt,
                                                     mu_async.points.front().mib_s, ""}),
  };
  return result;
}

// --- Workload sensitivity 2): request size -----------------------------------

Result<ExperimentResult> run_request_size(const RunOptions& options) {
  std::vector<CurveSpec> specs;
  for (uint64_t kib : {128, 384, 768}) {
    specs.push_back({fmt::format("MU^8, {} KiB", kib), &large_zone(),
                     Reading{Placement::kOneZone, kib * kKiB, 1}});
  }
  auto curves = curves_of(options, "request_size", specs);
  if (!curves) return Error{curves.error()};
  ExperimentResult result;
  result.table = curve_table(*curves);
  result.parameters = layout_parameters(options);
  result.parameters["placement"] = "the file in zone 0; every thread reads all of it";
  result.parameters["request_bytes"] = {128 * kKiB, 384 * kKiB, 768 * kKiB};
  result.parameters["iodepth"] = 1;
  result.plot = speedup_plot("Request size on a 1-to-all zone, sync (seed 002, sensitivity 2)",
                             {paper::kLargeRequestLarge_x});
  result.comparisons = {
      closed_form(std::string(why::kLargeRequest),
                  {"MU^8 768 KiB requests: speedup, 8 threads", "x", paper::kLargeRequestLarge_x,
                   speedup_at((*curves)[2], kCompareThreads), std::string(why::kLargeRequestNote)}),
      closed_form(std::string(why::kLargeRequestOne),
                  {"MU^8 one thread, 768 KiB requests", "MiB/s", std::nullopt,
                   (*curves)[2].points.front().mib_s, ""}),
  };
  return result;
}

constexpr Experiment kExperiments[] = {
    {"intra_zone", "Intra-zone parallelism: threads reading one zone", "seed 002 Observation 3",
     "A 48 MiB file written into zone 0, then read by 1-16 threads (1-8 with --quick), every "
     "thread reading the whole file in order in 128 KiB reads, one at a time, for 1 s of "
     "virtual time (50 ms), on SU (72 MiB zones on one unit each) and MU^8 (1536 MiB zones "
     "over 8 units).",
     run_intra_zone},
    {"inter_zone", "Inter-zone parallelism: threads reading a file spread over zones",
     "seed 002 Observation 4",
     "The 48 MiB file as 3 MiB in each of zones 0-15; thread k reads zone k in order in 128 KiB "
     "reads, one at a time. A third curve, on SU, has every thread read at random anywhere in "
     "the 16 zones, so threads meet on dies.",
     run_inter_zone},
    {"sync_async", "Sync against async on inter-zone reads", "seed 002 workload sensitivity 1)",
     "As inter_zone, with each thread keeping one read in flight (sync) or 16 (async).",
     run_sync_async},
    {"request_size", "Request size on a 1-to-all zone", "seed 002 workload sensitivity 2)",
     "As intra_zone on MU^8, with requests of 128 KiB, 384 KiB (a page on each of the zone's 8 "
     "units) and 768 KiB.",
     run_request_size},
};

}  // namespace

ExperimentSet confzns_experiments() {
  return {"confzns", "ConfZNS: intra- and inter-zone parallelism on SU and MU^8 zones",
          "seed 002 Observations 3-4, workload sensitivity", kExperiments};
}

}  // namespace zonelab
