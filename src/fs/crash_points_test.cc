// Power cuts at every instant of a workload. A seeded mix of table files,
// a synced log, renames, links and deletes runs on a fresh file system
// while the device is set to lose power after its k-th state-changing
// command, for every k (or evenly spaced ones). After each cut the image is
// opened again and the file system must mount, pass fsck, hold every file
// the workload was told was durable with exactly its bytes, hold nothing
// it never made, and give a file the cut caught being written no more than
// it wrote: a prefix of its bytes, at least what was synced.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <set>

#include "common/rng.h"
#include "fs/fs_test_util.h"

namespace zonelab::fs {
namespace {

constexpr uint64_t kBs = 4096;

// What recovery must give for a name.
struct Expect {
  enum class Kind : uint8_t {
    kExact,    // exists, with exactly these bytes
    kAbsent,   // does not exist
    kWritten,  // a file being written: `bytes` were appended, the first
               // `durable` of them synced; absent only if `durable` is 0
  };
  Kind kind = Kind::kAbsent;
  std::vector<uint8_t> bytes;
  uint64_t durable = 0;
};

struct Workload {
  uint64_t seed = 1;
  int steps = 40;
  size_t tables_max = 7;  // live table files kept at most
  MountOptions mount;
  MkfsOptions mkfs = test_mkfs_options();
};

// Runs the workload until it ends or an operation fails (the power is
// gone); fills `expect` with what a recovery must show and `unknown` with
// the names the failed operation touched.
class Runner {
 public:
  Runner(ZonedFs& fs, const Workload& w)
      : fs_(fs), rng_(w.seed), steps_(w.steps), tables_max_(w.tables_max) {}

  void run() {
    if (!ok(fs_.create_dir("/db", false), {"/db"})) return;
    for (int i = 0; i < steps_ && alive_; ++i) step(i);
    if (alive_ && log_) close_log();
  }

  std::map<std::string, Expect>& expect() { return expect_; }
  const std::set<std::string>& unknown() const { return unknown_; }
  bool finished() const { return alive_; }

  // Closes what is open, whatever happens (after a cut the closes fail).
  void drop_handles() {
    if (log_) (void)log_->close();
    log_.reset();
  }

 private:
  bool ok(const FsStatus& status, std::initializer_list<std::string> touched) {
    if (status.is_ok()) return true;
    EXPECT_EQ(status.code(), Code::kIoError) << status.message();
    alive_ = false;
    for (const std::string& path : touched) {
      unknown_.insert(path);
      expect_.erase(path);
    }
    return false;
  }

  std::vector<std::string> tables() const {
    std::vector<std::string> out;
    for (const auto& [path, e] : expect_) {
      if (e.kind == Expect::Kind::kExact && path.rfind("/db/t", 0) == 0) out.push_back(path);
    }
    return out;
  }

  void step(int i) {
    uint64_t dice = rng_.next() % 100;
    auto names = tables();
    if (dice < 40 || names.empty()) {
      write_table("/db/t" + std::to_string(i));
    } else if (dice < 65) {
      append_log(i);
    } else if (dice < 75 && log_) {
      close_log();
    } else if (dice < 85) {
      const std::string& from = names[rng_.next() % names.size()];
      std::string to = "/db/t" + std::to_string(rng_.next() % (i + 1)) + "r";
      if (from == to) return;
      if (!ok(fs_.rename(from, to), {from, to})) return;
      expect_[to] = expect_[from];
      expect_[from] = Expect{};
    } else if (dice < 90) {
      const std::string& from = names[rng_.next() % names.size()];
      std::string to = "/db/t" + std::to_string(i) + "l";
      if (!ok(fs_.link(from, to), {to})) return;
      expect_[to] = expect_[from];
    } else {
      const std::string& victim = names[rng_.next() % names.size()];
      if (!ok(fs_.remove(victim), {victim})) return;
      expect_[victim] = Expect{};
    }
    // Keep the live data within the device.
    names = tables();
    if (names.size() > tables_max_ && alive_) {
      const std::string& victim = names[rng_.next() % names.size()];
      if (!ok(fs_.remove(victim), {victim})) return;
      expect_[victim] = Expect{};
    }
  }

  void write_table(const std::string& path) {
    uint64_t size = 1 + rng_.next() % (300 << 10);
    auto lifetime = static_cast<Lifetime>(2 + rng_.next() % 4);
    std::vector<uint8_t> data = pattern_bytes(rng_.next(), size);
    auto file = fs_.open_write(path, {lifetime, IoClass::kCompaction, false});
    if (!ok(file.status(), {path})) return;
    uint64_t done = 0;
    while (done < size) {
      uint64_t n = std::min<uint64_t>(size - done, 1 + rng_.next() % (100 << 10));
      if (!ok((*file)->append(data.data() + done, n), {path})) return;
      done += n;
    }
    if (!ok((*file)->close(), {path})) return;
    expect_[path] = Expect{Expect::Kind::kExact, std::move(data), 0};
  }

  void append_log(int i) {
    if (!log_) {
      log_path_ = "/db/log" + std::to_string(i);
      auto file = fs_.open_write(log_path_, {Lifetime::kShort, IoClass::kWal, false});
      if (!ok(file.status(), {log_path_})) return;
      log_ = std::move(file).value();
      expect_[log_path_] = Expect{Expect::Kind::kWritten, {}, 0};
    }
    Expect& e = expect_[log_path_];
    std::vector<uint8_t> data = pattern_bytes(rng_.next(), 1 + rng_.next() % 9000);
    e.bytes.insert(e.bytes.end(), data.begin(), data.end());
    if (!ok(log_->append(data.data(), data.size()), {log_path_})) return;
    uint64_t how = rng_.next() % 10;
    if (how < 6) {
      if (!ok(log_->sync(), {log_path_})) return;
      e.durable = e.bytes.size();
    } else if (how < 8) {
      if (!ok(log_->flush(), {log_path_})) return;
    }
  }

  void close_log() {
    FsStatus closed = log_->close();
    log_.reset();
    if (!ok(closed, {log_path_})) return;
    Expect& e = expect_[log_path_];
    e.kind = Expect::Kind::kExact;
  }

  ZonedFs& fs_;
  Rng rng_;
  int steps_;
  size_t tables_max_;
  bool alive_ = true;
  std::map<std::string, Expect> expect_;
  std::set<std::string> unknown_;
  std::unique_ptr<WritableFile> log_;
  std::string log_path_;
};

// Every name in the file system, files only.
void collect(ZonedFs& fs, const std::string& dir, std::set<std::string>& out) {
  auto names = fs.list(dir);
  ASSERT_TRUE(names.ok()) << names.status().message();
  for (const std::string& name : *names) {
    std::string path = dir == "/" ? "/" + name : dir + "/" + name;
    auto st = fs.stat(path);
    ASSERT_TRUE(st.ok());
    if (st->is_dir) {
      collect(fs, path, out);
    } else {
      out.insert(path);
    }
  }
}

void check_recovered(ZonedFs& fs, Runner& runner, const std::string& where) {
  auto report = fs.fsck(false);
  EXPECT_TRUE(report.clean()) << where << ": " << report.problems[0];
  std::set<std::string> present;
  collect(fs, "/", present);
  for (const std::string& path : present) {
    EXPECT_TRUE(runner.expect().count(path) != 0 || runner.unknown().count(path) != 0)
        << where << ": " << path << " was never made";
  }
  for (const auto& [path, e] : runner.expect()) {
    bool exists = present.count(path) != 0;
    switch (e.kind) {
      case Expect::Kind::kAbsent:
        EXPECT_FALSE(exists) << where << ": " << path << " was removed";
        break;
      case Expect::Kind::kExact:
        EXPECT_TRUE(exists) << where << ": " << path << " is lost";
        if (exists) {
          EXPECT_TRUE(read_file(fs, path) == e.bytes) << where << ": " << path;
        }
        break;
      case Expect::Kind::kWritten: {
        if (!exists) {
          EXPECT_EQ(e.durable, 0u) << where << ": " << path << " lost synced data";
          break;
        }
        std::vector<uint8_t> got = read_file(fs, path);
        // A prefix of what was appended, at least what was synced: never
        // a sync's padding, never bytes it was not given.
        EXPECT_GE(got.size(), e.durable) << where << ": " << path;
        EXPECT_LE(got.size(), e.bytes.size()) << where << ": " << path << " grew past its data";
        size_t same = std::min(got.size(), e.bytes.size());
        EXPECT_TRUE(std::equal(got.begin(), got.begin() + static_cast<long>(same), e.bytes.begin()))
            << where << ": " << path << " holds bytes it was not given";
        break;
      }
    }
  }
}

// One run: a fresh file system, the workload with a cut after `cut`
// commands (none when empty), then recovery and the checks. Returns the
// commands the run took, and whether the workload finished.
std::pair<uint64_t, bool> run_once(const Config& config, const Workload& w,
                                   std::optional<uint64_t> cut) {
  TestImage image(config, cut ? "-cut" + std::to_string(*cut) : "");
  std::string where = "seed " + std::to_string(w.seed) + ", cut " +
                      (cut ? std::to_string(*cut) : std::string("none"));
  uint64_t taken = 0;
  bool finished = false;
  std::map<std::string, Expect> expect;
  Mounted m = fresh(image, w.mkfs, w.mount);
  if (m.fs == nullptr) return {0, false};
  uint64_t start = m.stack->commands_recorded();
  if (cut) m.stack->power_cut_after(*cut);
  Runner runner(*m.fs, w);
  runner.run();
  finished = runner.finished();
  taken = m.stack->commands_recorded() - start;
  runner.drop_handles();
  if (!cut) {
    EXPECT_TRUE(finished) << where;
    FsCounters c = m.fs->counters();
    std::printf("  seed %llu: %llu zones collected, %llu reset, %llu token revocations\n",
                static_cast<unsigned long long>(w.seed), static_cast<unsigned long long>(c.gc_runs),
                static_cast<unsigned long long>(c.zones_reset),
                static_cast<unsigned long long>(m.fs->token_revocations()));
    m.stack->power_cut();  // no clean unmount: recovery all the same
  }
  m.fs.reset();
  m.stack.reset();
  {
    Mounted after = mount(image, w.mount);
    if (after.fs == nullptr) {
      ADD_FAILURE() << where << ": no mount";
      return {taken, finished};
    }
    check_recovered(*after.fs, runner, where);
    // Usable, and a second recovery gives the same.
    write_file(*after.fs, "/after-recovery", pattern_bytes(77, 50000));
    runner.expect()["/after-recovery"] = Expect{Expect::Kind::kExact, pattern_bytes(77, 50000), 0};
  }
  Mounted again = mount(image, w.mount);
  if (again.fs != nullptr) {
    check_recovered(*again.fs, runner, where + " (second mount)");
    EXPECT_EQ(read_file(*again.fs, "/after-recovery"), pattern_bytes(77, 50000)) << where;
  }
  return {taken, finished};
}

void enumerate(const Config& config, const Workload& w, uint64_t runs_max) {
  auto [total, finished] = run_once(config, w, std::nullopt);
  ASSERT_TRUE(finished);
  ASSERT_GT(total, 20u);
  uint64_t step = std::max<uint64_t>(1, total / runs_max);
  uint64_t runs = 0;
  for (uint64_t cut = 0; cut <= total; cut += step) {
    run_once(config, w, cut);
    ++runs;
    if (::testing::Test::HasFailure()) break;
  }
  ::testing::Test::RecordProperty("commands", static_cast<int>(total));
  ::testing::Test::RecordProperty("cuts", static_cast<int>(runs));
  std::printf("  %llu commands, %llu cuts\n", static_cast<unsigned long long>(total),
              static_cast<unsigned long long>(runs));
}

TEST(FsCrashPoints, EveryInstantOfAMixedWorkload) {
  Workload w;
  w.seed = 11;
  enumerate(fs_test_config(), w, 400);
}

TEST(FsCrashPoints, EveryInstantWithGarbageCollectionAtWork) {
  // More writing than the device holds: zones are collected while the
  // power goes.
  Workload w;
  w.seed = 23;
  w.steps = 90;
  w.tables_max = 18;
  w.mount.gc_period_ns = 1'000'000;
  w.mkfs.gc_free_pct = 30;
  enumerate(fs_test_config(), w, 400);
}

TEST(FsCrashPoints, EveryInstantUnderZenFsPlusWithItsCollections) {
  // Eight independent zone groups; flush and compaction kept apart; minor
  // and full collections every millisecond of device time.
  Workload w;
  w.seed = 31;
  w.steps = 90;
  w.tables_max = 18;
  w.mkfs.policy = "zenfs+";
  w.mkfs.policy_options = "minor_gc_period=1ms,full_gc_trigger=30";
  enumerate(
      fs_test_config({"flash.channels=4", "flash.dies_per_channel=2", "zns.channels_per_zone=1"}),
      w, 400);
}

// FlexZNS zone sets, 128 KiB zones then 512 KiB zones, with collections in
// each set while the power goes.
void enumerate_on_zone_sets(uint64_t seed, bool spill_cold, uint64_t runs_max) {
  Workload w;
  w.seed = seed;
  w.steps = 90;
  w.tables_max = 12;
  w.mount.gc_period_ns = 1'000'000;
  w.mkfs.gc_free_pct = 30;
  w.mkfs.spill_cold = spill_cold;
  enumerate(fs_test_config({"flash.dies_per_channel=4", "flash.blocks_per_plane=16",
                            "zns.format=128KiB:16,512KiB:8"}),
            w, runs_max);
}

TEST(FsCrashPoints, EveryInstantOnZoneSetsOfTwoSizes) { enumerate_on_zone_sets(41, false, 400); }

TEST(FsCrashPoints, EveryInstantOnZoneSetsWithTheColdLevelsSpilling) {
  // mkfs --spill-cold: deep levels' tables land in either set, as each
  // set's live share moves.
  enumerate_on_zone_sets(43, true, 200);
}

TEST(FsCrashPoints, EveryInstantUnderATightZoneBudget) {
  Workload w;
  w.seed = 5;
  enumerate(fs_test_config({"zns.max_active=4", "zns.max_open=3"}), w, 300);
}

TEST(FsCrashPoints, EveryInstantWithAVolatileWriteCache) {
  // A cut loses what the buffer held and no Flush covered: the file system
  // flushes before its records and before it counts them as durable.
  Workload w;
  w.seed = 17;
  enumerate(fs_test_config({"buffer.size=64KiB", "buffer.power_loss_protection=off"}), w, 300);
}

}  // namespace
}  // namespace zonelab::fs
