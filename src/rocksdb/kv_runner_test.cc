#include "rocksdb/kv_runner.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "fs/zoned_fs.h"
#include "rocksdb/session.h"
#include "stack/stack.h"

namespace zonelab::rocksdb_plugin {
namespace {

// A `small` image with a file system, in a directory of its own.
class KvImage {
 public:
  // A `small` image (with or without a file system), or one of `config`
  // with a file system.
  explicit KvImage(bool with_fs = true, std::optional<Config> config = std::nullopt) {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "zonelab-kv-test-XXXXXX").string();
    EXPECT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    path_ = dir_ + "/dev.img";
    if (config) {
      make_with_fs(*config);
    } else if (with_fs) {
      Outcome made = create_image_with_fs(path_, "small", 0);
      EXPECT_TRUE(made.ok()) << made.error();
    } else {
      auto made = Stack::create_image(path_, *preset_config("small"), false);
      EXPECT_TRUE(made.ok()) << made.error();
    }
  }
  ~KvImage() { std::filesystem::remove_all(dir_); }
  void make_with_fs(const Config& config, const fs::MkfsOptions& mkfs_options = {}) {
    auto made = Stack::create_image(path_, config, true);
    ASSERT_TRUE(made.ok()) << made.error();
    auto stack = Stack::open(path_);
    ASSERT_TRUE(stack.ok()) << stack.error();
    fs::FsStatus mkfs = fs::ZonedFs::mkfs(**stack, mkfs_options);
    ASSERT_TRUE(mkfs.is_ok()) << mkfs.message();
    ASSERT_TRUE((*stack)->close().ok());
  }
  KvImage(const KvImage&) = delete;
  KvImage& operator=(const KvImage&) = delete;

  std::string uri() const { return "zonelab://" + path_ + "?timing=off&stats=none"; }
  std::string file(const char* name) const { return dir_ + "/" + name; }

  KvOptions options(const char* workload, uint64_t num) const {
    KvOptions o;
    o.uri = uri();
    o.workload = find_workload(workload);
    o.num = num;
    o.seed = 5;
    o.write_buffer_bytes = kKvWriteBufferBytesMin;  // flushes, so tables reach the zones
    o.block_cache_bytes = 1 << 20;
    return o;
  }

 private:
  std::string dir_;
  std::string path_;
};

const KvOpStats& stats_of(const KvPhase& phase, OpType type) {
  return phase.by_type[static_cast<size_t>(type)];
}

TEST(KvRunner, FillseqThenReadrandomFindsEveryKey) {
  KvImage image;
  KvResult filled = run_kv(image.options("fillseq", 2000));
  ASSERT_TRUE(filled.ok()) << filled.error;
  ASSERT_EQ(filled.phases.size(), 1u);
  EXPECT_EQ(stats_of(filled.phases[0], OpType::kWrite).ops, 2000u);
  EXPECT_GT(filled.rocksdb["flush_write_bytes"].get<uint64_t>(), 0u);
  EXPECT_GT(filled.session["fs"]["space"]["files"].get<uint64_t>(), 0u);

  KvOptions read = image.options("readrandom", 2000);
  read.threads = 2;
  KvResult r = run_kv(read);
  ASSERT_TRUE(r.ok()) << r.error;
  const KvOpStats& reads = stats_of(r.phases[0], OpType::kRead);
  EXPECT_EQ(reads.ops, 2000u);
  EXPECT_EQ(reads.found, 2000u);
  EXPECT_EQ(reads.not_found, 0u);
  EXPECT_EQ(reads.latency_ns.count(), 2000u);
  // A zone's capacity is 48 MiB: tables get 90 % of it.
  EXPECT_EQ(r.target_file_size_bytes, (48ull << 20) * 9 / 10 / 4096 * 4096);
}

// Each read operation's device reads are recorded with their modeled
// latency: most of them a flash read at least (a table still in the
// device's write buffer reads faster), and no more of them than the file
// system sent in the run; writes that read nothing record none.
TEST(KvRunner, ReadsRecordTheDeviceReadsTheySent) {
  KvImage image;
  KvResult filled = run_kv(image.options("fillseq", 4000));
  ASSERT_TRUE(filled.ok()) << filled.error;
  EXPECT_EQ(stats_of(filled.phases[0], OpType::kWrite).device_read_latency_ns.count(), 0u);

  KvOptions read = image.options("readrandom", 4000);
  read.threads = 2;
  read.block_cache_bytes = 64 << 10;  // most gets miss the cache
  KvResult r = run_kv(read);
  ASSERT_TRUE(r.ok()) << r.error;
  const Histogram& device = stats_of(r.phases[0], OpType::kRead).device_read_latency_ns;
  const uint64_t sent = r.session["fs"]["device_io"]["commands"]["read"]["count"].get<uint64_t>();
  EXPECT_GT(device.count(), 1000u);
  EXPECT_LE(device.count(), sent);
  const Config small = *preset_config("small");
  EXPECT_GE(device.percentile(50), small.flash.read_latency_ns);
  EXPECT_GT(device.percentile(0), 0u);
}

// RocksDB's flush runs in its high-priority pool, compaction in its low one;
// under a write stall both write at user priority and a level-1 output has
// a flushed table's lifetime hint: the file system still counts each where
// RocksDB does.
TEST(KvRunner, FlushAndCompactionBytesAreCountedAsRocksDbCountsThemUnderStalls) {
  KvImage image;
  KvOptions o = image.options("fillrandom", 30'000);
  o.value_bytes = 400;
  o.write_buffer_bytes = 64 << 10;
  o.max_bytes_for_level_base = 64 << 10;
  KvResult r = run_kv(o);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_GT(r.rocksdb["stall_micros"].get<uint64_t>(), 0u);
  const uint64_t flush = r.rocksdb["flush_write_bytes"].get<uint64_t>();
  const uint64_t compaction = r.rocksdb["compact_write_bytes"].get<uint64_t>();
  ASSERT_GT(flush, 0u);
  ASSERT_GT(compaction, 0u);
  const auto& by_class = r.session["fs"]["files"]["by_class"];
  const uint64_t fs_flush = by_class["flush"]["appended_bytes"].get<uint64_t>();
  const uint64_t fs_compaction = by_class["compaction"]["appended_bytes"].get<uint64_t>();
  // Each within 5 % of RocksDB's count (the two do not count quite the same
  // bytes: the file system's run from mkfs, RocksDB's from the open). Both
  // are taken after the close, which waits for a compaction still running.
  auto near = [](uint64_t got, uint64_t want) {
    return got + want / 20 >= want && got <= want + want / 20;
  };
  EXPECT_PRED2(near, fs_flush, flush);
  EXPECT_PRED2(near, fs_compaction, compaction);
}

TEST(KvRunner, EachReportIntervalHasTheBytesAppendedByClass) {
  KvImage image;
  KvOptions o = image.options("fillrandom", 20'000);
  o.value_bytes = 400;
  o.report_interval_s = kKvReportIntervalSecondsMin;
  KvResult r = run_kv(o);
  ASSERT_TRUE(r.ok()) << r.error;
  const KvPhase& run = r.phases.back();
  ASSERT_FALSE(run.ops_per_s_series.empty());
  ASSERT_EQ(run.appended_bytes_series.size(), run.ops_per_s_series.size());
  uint64_t wal = 0, flush = 0, compaction = 0;
  for (const KvAppendedBytes& b : run.appended_bytes_series) {
    wal += b.wal;
    flush += b.flush;
    compaction += b.compaction;
  }
  EXPECT_GE(wal, 20'000u * 400);  // every write's value went through the log
  EXPECT_GT(flush, 0u);           // 64 KiB memtables
  // Within what the file system counted since mkfs (the DB's open and close
  // write outside the phase).
  const auto& by_class = r.session["fs"]["files"]["by_class"];
  EXPECT_LE(wal, by_class["wal"]["appended_bytes"].get<uint64_t>());
  EXPECT_LE(flush, by_class["flush"]["appended_bytes"].get<uint64_t>());
  EXPECT_LE(compaction, by_class["compaction"]["appended_bytes"].get<uint64_t>());
  EXPECT_GE(run.flush_bandwidth_cv(), 0.0);

  nlohmann::ordered_json j = kv_result_json(o, r);
  const auto& series = j["run"]["series"];
  EXPECT_EQ(series["ops_per_s"].size(), run.ops_per_s_series.size());
  for (const char* io_class : {"wal", "flush", "compaction"}) {
    EXPECT_EQ(series["appended_bytes"][io_class].size(), run.ops_per_s_series.size()) << io_class;
  }
  EXPECT_EQ(series["appended_bytes"]["flush"][0].get<uint64_t>(),
            run.appended_bytes_series[0].flush);
  EXPECT_TRUE(series["flush_bandwidth_cv"].is_number());

  // Each interval's writes and their tail: every write of the phase falls
  // in exactly one interval.
  ASSERT_EQ(run.write_latency_series.size(), run.ops_per_s_series.size());
  uint64_t counted = 0, worst = 0;
  for (const KvWriteLatencyWindow& w : run.write_latency_series) {
    counted += w.count;
    EXPECT_LE(w.p99, w.p999);
    EXPECT_LE(w.p999, w.p9999);
    EXPECT_LE(w.p9999, w.max);
    worst = std::max(worst, w.max);
  }
  EXPECT_EQ(counted, 20'000u);
  EXPECT_EQ(worst, run.by_type[static_cast<size_t>(OpType::kWrite)].latency_ns.max());
  ASSERT_EQ(series["write_lat_us"]["p999"].size(), run.ops_per_s_series.size());
  EXPECT_EQ(series["write_lat_us"]["count"][0].get<uint64_t>(), run.write_latency_series[0].count);
}

TEST(KvPhase, FlushBandwidthCvIsOverWholeIntervals) {
  KvPhase phase;
  phase.interval_s = 1;
  phase.seconds = 3.5;  // three whole intervals and half of one
  phase.ops_per_s_series = {1, 1, 1, 1};
  phase.appended_bytes_series = {{0, 100, 0}, {0, 300, 0}, {0, 200, 0}, {0, 5000, 0}};
  // mean 200, standard deviation sqrt((100^2 + 100^2 + 0) / 3)
  EXPECT_NEAR(phase.flush_bandwidth_cv(), std::sqrt(20000.0 / 3) / 200, 1e-12);
  phase.appended_bytes_series = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
  EXPECT_EQ(phase.flush_bandwidth_cv(), 0.0);  // no flush
  phase.seconds = 1.2;
  phase.ops_per_s_series = {1, 1};
  phase.appended_bytes_series = {{0, 10, 0}, {0, 20, 0}};
  EXPECT_EQ(phase.flush_bandwidth_cv(), 0.0);  // one whole interval
}

TEST(KvRunner, UpdaterandomReadsAndWritesBackEveryKey) {
  KvImage image;
  ASSERT_TRUE(run_kv(image.options("fillseq", 1000)).ok());
  KvResult r = run_kv(image.options("updaterandom", 1000));
  ASSERT_TRUE(r.ok()) << r.error;
  const KvOpStats& rmw = stats_of(r.phases.back(), OpType::kReadModifyWrite);
  EXPECT_EQ(rmw.ops, 1000u);
  EXPECT_EQ(rmw.found, 1000u);  // every key of [0, 1000) was written
}

TEST(KvRunner, YcsbALoadsOnceThenReportsReadsAndUpdates) {
  KvImage image;
  KvOptions o = image.options("ycsb-a", 1000);
  o.ops = 2000;
  o.threads = 2;
  o.value_bytes = 200;
  KvResult first = run_kv(o);
  ASSERT_TRUE(first.ok()) << first.error;
  ASSERT_EQ(first.phases.size(), 2u);
  EXPECT_EQ(first.phases[0].name, "load");
  EXPECT_EQ(stats_of(first.phases[0], OpType::kInsert).ops, 1000u);
  const KvPhase& run = first.phases[1];
  EXPECT_EQ(run.ops(), 2000u);
  EXPECT_GT(stats_of(run, OpType::kRead).ops, 800u);
  EXPECT_GT(stats_of(run, OpType::kUpdate).ops, 800u);
  EXPECT_EQ(stats_of(run, OpType::kRead).not_found, 0u);  // every record loaded

  nlohmann::ordered_json j = kv_result_json(o, first);
  EXPECT_TRUE(j["run"]["by_type"].contains("read"));
  EXPECT_TRUE(j["run"]["by_type"].contains("update"));
  EXPECT_TRUE(j["run"]["by_type"]["read"]["lat_us"].contains("p999"));
  EXPECT_TRUE(j["session"].contains("device"));

  KvResult second = run_kv(o);  // the records are there: no load phase
  ASSERT_TRUE(second.ok()) << second.error;
  ASSERT_EQ(second.phases.size(), 1u);
  EXPECT_EQ(second.phases[0].name, "run");
}

TEST(KvRunner, YcsbEInsertsAndScans) {
  KvImage image;
  KvOptions o = image.options("ycsb-e", 500);
  o.ops = 400;
  KvResult r = run_kv(o);
  ASSERT_TRUE(r.ok()) << r.error;
  const KvPhase& run = r.phases.back();
  EXPECT_GT(stats_of(run, OpType::kScan).ops, 300u);
  EXPECT_GT(stats_of(run, OpType::kInsert).ops, 0u);
  EXPECT_EQ(r.records, 500 + stats_of(run, OpType::kInsert).ops);
}

TEST(KvRunner, AckLogAndVerifyRoundTrip) {
  KvImage image;
  KvOptions write = image.options("fillrandom", 1000);
  write.sync = true;
  write.ack_log_path = image.file("acks");
  KvResult written = run_kv(write);
  ASSERT_TRUE(written.ok()) << written.error;

  KvOptions verify = image.options("verify", 1000);
  verify.ack_log_path = write.ack_log_path;
  KvResult checked = run_kv(verify);
  ASSERT_TRUE(checked.ok()) << checked.error;
  ASSERT_TRUE(checked.verify.has_value());
  EXPECT_TRUE(checked.verify->clean());
  EXPECT_GT(checked.verify->listed, 500u);  // 1000 random keys of 1000, some twice
  EXPECT_EQ(checked.verify->found, checked.verify->listed);

  verify.seed = 6;  // other values than were written
  KvResult other_seed = run_kv(verify);
  ASSERT_TRUE(other_seed.ok()) << other_seed.error;
  EXPECT_EQ(other_seed.verify->wrong, other_seed.verify->listed);

  std::ofstream(write.ack_log_path, std::ios::app) << "123456789\n";  // never written
  verify.seed = 5;
  KvResult missing = run_kv(verify);
  ASSERT_TRUE(missing.ok()) << missing.error;
  EXPECT_EQ(missing.verify->missing, 1u);
  EXPECT_FALSE(missing.verify->clean());
}

TEST(KvRunner, AFullDeviceIsADbError) {
  // 10 zones of 4 MiB: 8 for data after the journal's two.
  Config config = *preset_config("small");
  for (const char* set :
       {"zns.zone_capacity=4MiB", "zns.zone_count=10", "zns.max_open=6", "zns.max_active=8"}) {
    ASSERT_TRUE(apply_override(config, set).ok()) << set;
  }
  KvImage image(true, config);
  KvOptions o = image.options("fillrandom", 1000);
  o.value_bytes = 64 << 10;  // 64 MiB in all, twice the room
  o.target_file_size_bytes = 2 << 20;
  o.write_buffer_bytes = 1 << 20;
  KvResult r = run_kv(o);
  EXPECT_EQ(r.failure, KvFailure::kDbError);
  EXPECT_NE(r.error.find("space"), std::string::npos) << r.error;
}

// FlexZNS zone sets (seed 001 §IV-C): the log, level 0 and level 1 in the
// 1 MiB zones, the deeper levels in the 4 MiB ones; every key read back.
TEST(KvRunner, OnZoneSetsTheHotLevelsGoToTheSmallZones) {
  Config config = *preset_config("small");
  for (const char* set : {"flash.blocks_per_plane=32", "flash.pages_per_block=64",
                          "flash.page_size=4KiB", "zns.format=1MiB:32,4MiB:20"}) {
    ASSERT_TRUE(apply_override(config, set).ok()) << set;
  }
  KvImage image(true, config);
  KvOptions o = image.options("fillrandom", 30'000);
  o.value_bytes = 400;
  o.write_buffer_bytes = 256 << 10;
  o.max_bytes_for_level_base = 1 << 20;
  KvResult r = run_kv(o);
  ASSERT_TRUE(r.ok()) << r.error;
  // Tables of 90 % of the smallest zone.
  EXPECT_EQ(r.target_file_size_bytes, (1ull << 20) * 9 / 10 / 4096 * 4096);
  const auto& levels = r.rocksdb["files_per_level"];
  ASSERT_GE(levels.size(), 3u);
  // The large zones have tables: level 2's (the set's used bytes; the level
  // counts are taken as the phase ends, when a compaction into level 2 may
  // still be running, so level 2 may not be installed yet).
  const auto& sets = r.session["fs"]["space"]["sets"];
  ASSERT_EQ(sets.size(), 2u);
  EXPECT_EQ(sets[0]["zone_bytes"].get<uint64_t>(), 1u << 20);
  EXPECT_GT(sets[0]["used_bytes"].get<uint64_t>(), 0u);
  EXPECT_GT(sets[1]["used_bytes"].get<uint64_t>(), 0u);

  KvOptions read = image.options("readrandom", 30'000);
  KvResult back = run_kv(read);
  ASSERT_TRUE(back.ok()) << back.error;
  EXPECT_EQ(back.phases[0].by_type[static_cast<size_t>(OpType::kRead)].not_found, 0u);
}

TEST(KvRunner, TenantsRunAtOnceEachInItsOwnSetsOnItsOwnDies) {
  // Seed 001 §IV-D: two tenants' sets on separate dies.
  Config config = *preset_config("small");
  for (const char* set :
       {"flash.blocks_per_plane=32", "flash.pages_per_block=64", "flash.page_size=4KiB",
        "zns.format=1MiB:40@0-3,1MiB:40@4-7", "zns.parity.placement=separate"}) {
    ASSERT_TRUE(apply_override(config, set).ok()) << set;
  }
  KvImage image(false);
  fs::MkfsOptions mkfs;
  mkfs.tenants = {"a=0", "b=1"};
  image.make_with_fs(config, mkfs);
  KvOptions a = image.options("fillrandom", 20'000);
  a.uri += "&tenant=a";
  a.value_bytes = 400;
  KvOptions b = image.options("fillseq", 8'000);
  b.uri += "&tenant=b";
  b.value_bytes = 1000;
  b.threads = 2;
  KvTenantsResult r = run_kv_tenants({a, b});
  ASSERT_TRUE(r.ok()) << r.error
                      << (r.tenants.empty() ? "" : r.tenants[0].error + " / " + r.tenants[1].error);
  ASSERT_EQ(r.tenants.size(), 2u);
  EXPECT_EQ(r.tenants[0].phases[0].ops(), 20'000u);
  EXPECT_EQ(r.tenants[1].phases[0].ops(), 8'000u);
  // Each tenant's data went to its own set alone.
  const auto& tenants = r.session["fs"]["space"]["tenants"];
  ASSERT_EQ(tenants.size(), 2u);
  const auto& sets = r.session["fs"]["space"]["sets"];
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_GT(tenants[i]["data_written_bytes"].get<uint64_t>(), 0u);
    EXPECT_EQ(tenants[i]["written_bytes"], sets[i]["written_bytes"]);
    EXPECT_GT(tenants[i]["files"].get<uint64_t>(), 0u);
  }
  // More of b's bytes than a's: 8 MB of values against 8 MB, with keys.
  EXPECT_GT(tenants[1]["used_bytes"].get<uint64_t>(), 0u);

  // Each DB reads back through its tenant, and only there.
  KvOptions read_a = image.options("readrandom", 20'000);
  read_a.uri += "&tenant=a";
  KvResult back = run_kv(read_a);
  ASSERT_TRUE(back.ok()) << back.error;
  EXPECT_EQ(back.phases[0].by_type[static_cast<size_t>(OpType::kRead)].not_found, 0u);
  KvOptions read_b = image.options("readrandom", 8'000);
  read_b.uri += "&tenant=b";
  back = run_kv(read_b);
  ASSERT_TRUE(back.ok()) << back.error;
  EXPECT_EQ(back.phases[0].by_type[static_cast<size_t>(OpType::kRead)].not_found, 0u);
  // No tenant c; and no DB at the root, whose files no set would take.
  KvOptions c = image.options("fillseq", 10);
  c.uri += "&tenant=c";
  KvResult none = run_kv(c);
  EXPECT_EQ(none.failure, KvFailure::kBadInput);
  EXPECT_NE(none.error.find("has tenants a, b"), std::string::npos) << none.error;
  KvResult root = run_kv(image.options("fillseq", 10));
  EXPECT_FALSE(root.ok());
  EXPECT_NE(root.error.find("no tenant's directory"), std::string::npos) << root.error;
}

TEST(KvRunner, AckLogWithABadLineIsBadInput) {
  KvImage image;
  std::ofstream(image.file("acks")) << "12\nfoo\n";
  KvOptions verify = image.options("verify", 10);
  verify.ack_log_path = image.file("acks");
  KvResult r = run_kv(verify);
  EXPECT_EQ(r.failure, KvFailure::kBadInput);
  EXPECT_NE(r.error.find("line 2 'foo'"), std::string::npos) << r.error;
}

TEST(KvRunner, ImageWithoutFileSystemIsBadInputNamingMkfs) {
  KvImage image(false);
  KvResult r = run_kv(image.options("fillseq", 10));
  EXPECT_EQ(r.failure, KvFailure::kBadInput);
  EXPECT_NE(r.error.find("mkfs"), std::string::npos) << r.error;
}

TEST(KvRunner, OptionsOutOfBoundsAreNamed) {
  KvOptions o;
  o.uri = "zonelab:///nowhere.img";
  o.workload = find_workload("fillseq");
  o.threads = kKvThreadsMax + 1;
  EXPECT_NE(check_kv_options(o)->find("--threads"), std::string::npos);
  o.threads = 1;
  o.value_bytes = kKvValueBytesMax + 1;
  EXPECT_NE(check_kv_options(o)->find("--value-size"), std::string::npos);
  o.value_bytes = 100;
  o.db_dir = "db";
  EXPECT_NE(check_kv_options(o)->find("--db"), std::string::npos);
  o.db_dir = "/db";
  o.workload = find_workload("verify");
  EXPECT_NE(check_kv_options(o)->find("--ack-log"), std::string::npos);
  o.ack_log_path = "acks";
  EXPECT_FALSE(check_kv_options(o).has_value());
}

}  // namespace
}  // namespace zonelab::rocksdb_plugin
