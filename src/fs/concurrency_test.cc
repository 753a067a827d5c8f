// The file system from many threads at once, in real time (timing off): a
// log syncing, writers of table files in their own directories, renames,
// links and deletes, a reader of everyone's files, with garbage collection
// running in the background and a small zone budget -- then every file that
// is left reads back, fsck is clean, and so it is after a remount. Part of
// `make tsan`.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/rng.h"
#include "fs/fs_test_util.h"

namespace zonelab::fs {
namespace {

struct Shared {
  std::mutex mutex;
  std::map<std::string, std::vector<uint8_t>> files;  // closed files and their bytes
};

// A real-time stack; timing off: every command completes at once.
StackOptions realtime(Timing timing) {
  StackOptions o;
  o.realtime = true;
  o.realtime_options.timing = timing;
  o.realtime_options.spin_ns = 0;
  o.scheduler = "mq-deadline";
  return o;
}
StackOptions realtime_off() { return realtime(Timing::kOff); }
// The device's own timing: a write stays in flight while the writer goes on.
StackOptions realtime_modeled() { return realtime(Timing::kModeled); }

nlohmann::json write_behind_stats(const ZonedFs& fs) {
  return nlohmann::json::parse(fs.stats_json())["write_behind"];
}

// Counts a failed call and says which.
bool failed(const FsStatus& status, const std::string& what, std::atomic<int>& errors) {
  if (status) return false;
  ADD_FAILURE() << what << ": " << status.message();
  ++errors;
  return true;
}

void table_writer(ZonedFs& fs, Shared& shared, int me, std::atomic<int>& errors) {
  Rng rng(derive_seed(99, static_cast<uint64_t>(me), 1));
  std::string dir = "/t" + std::to_string(me);
  (void)failed(fs.create_dir(dir, true), dir, errors);
  std::vector<std::string> mine;
  for (int i = 0; i < 25; ++i) {
    std::string path = dir + "/f" + std::to_string(i);
    std::vector<uint8_t> data = pattern_bytes(rng.next(), 1 + rng.next() % (120 << 10));
    auto w = fs.open_write(
        path, {static_cast<Lifetime>(2 + rng.next() % 4), IoClass::kCompaction, false});
    if (!w) {
      ADD_FAILURE() << path << ": " << w.status().message();
      ++errors;
      return;
    }
    uint64_t done = 0;
    while (done < data.size()) {
      uint64_t n = std::min<uint64_t>(data.size() - done, 1 + rng.next() % 50000);
      (void)failed((*w)->append(data.data() + done, n), path + " append", errors);
      if (rng.next() % 4 == 0) (void)failed((*w)->sync(), path + " sync", errors);
      done += n;
    }
    FsStatus closed = (*w)->close();
    if (!closed) {
      ADD_FAILURE() << path << ": " << closed.message();
      ++errors;
      return;
    }
    {
      std::lock_guard lock(shared.mutex);
      shared.files[path] = data;
    }
    mine.push_back(path);
    if (rng.next() % 5 == 0) {
      std::string renamed = path + "r";
      std::lock_guard lock(shared.mutex);
      if (!failed(fs.rename(path, renamed), path + " rename", errors)) {
        shared.files[renamed] = shared.files[path];
        shared.files.erase(path);
        mine.back() = renamed;
      }
    }
    if (mine.size() > 3) {
      std::string victim = mine.front();
      mine.erase(mine.begin());
      std::lock_guard lock(shared.mutex);
      (void)failed(fs.remove(victim), victim + " remove", errors);
      shared.files.erase(victim);
    }
  }
}

void log_writer(ZonedFs& fs, Shared& shared, std::atomic<int>& errors) {
  auto w = fs.open_write("/wal.log", {Lifetime::kShort, IoClass::kWal, false});
  ASSERT_TRUE(w.ok());
  std::vector<uint8_t> all;
  // Each sync pads a block: 150 of them take 600 KiB of the 3.5 MiB.
  for (int i = 0; i < 150; ++i) {
    std::vector<uint8_t> rec = pattern_bytes(5000 + i, 100 + i % 300);
    (void)failed((*w)->append(rec.data(), rec.size()), "log append", errors);
    (void)failed((*w)->sync(), "log sync", errors);
    all.insert(all.end(), rec.begin(), rec.end());
  }
  (void)failed((*w)->close(), "log close", errors);
  std::lock_guard lock(shared.mutex);
  shared.files["/wal.log"] = all;
}

void reader(ZonedFs& fs, Shared& shared, const std::atomic<bool>& stop, std::atomic<int>& errors,
            std::atomic<int>& verified) {
  Rng rng(7);
  while (!stop) {
    std::string path;
    std::vector<uint8_t> expect;
    {
      std::lock_guard lock(shared.mutex);
      if (shared.files.empty()) continue;
      auto it = shared.files.begin();
      std::advance(it, static_cast<long>(rng.next() % shared.files.size()));
      path = it->first;
      expect = it->second;
    }
    auto file = fs.open_read(path);
    if (!file) continue;  // deleted or renamed meanwhile
    std::vector<uint8_t> got((*file)->size());
    auto n = (*file)->read(0, got.size(), got.data());
    if (!n) {
      ADD_FAILURE() << path << ": " << n.status().message();
      ++errors;
      continue;
    }
    // The file may have been replaced by a rename meanwhile; a file read
    // whole is one of the versions written under that name.
    if (got == expect) ++verified;
  }
}

TEST(FsRealtime, ManyThreadsKeepEveryFileWhole) {
  TestImage image(fs_test_config({"zns.max_active=6", "zns.max_open=5"}));
  MountOptions mo;
  mo.gc_period_ns = 1'000'000;
  Shared shared;
  std::atomic<int> errors{0};
  std::atomic<int> verified{0};
  {
    MkfsOptions mkfs = test_mkfs_options();
    mkfs.gc_free_pct = 40;  // collections all along
    Mounted m = fresh(image, mkfs, mo, realtime_off());
    ASSERT_NE(m.fs, nullptr);
    std::atomic<bool> stop{false};
    std::vector<std::thread> threads;
    for (int t = 0; t < 3; ++t) {
      threads.emplace_back([&, t] { table_writer(*m.fs, shared, t, errors); });
    }
    threads.emplace_back([&] { log_writer(*m.fs, shared, errors); });
    std::thread read([&] { reader(*m.fs, shared, stop, errors, verified); });
    for (auto& t : threads) t.join();
    // The reader goes on a while over what is left, then stops.
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (verified < 20 && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    stop = true;
    read.join();
    EXPECT_EQ(errors.load(), 0);
    EXPECT_GT(verified.load(), 0);
    EXPECT_EQ(m.fs->device_counters().failed, 0u);
    for (const auto& [path, data] : shared.files) {
      EXPECT_TRUE(read_file(*m.fs, path) == data) << path;
    }
    ASSERT_TRUE(m.fs->sync_metadata().is_ok());
    auto report = m.fs->fsck(false);
    EXPECT_TRUE(report.clean()) << report.problems[0];
    std::printf("  %llu zones collected, %llu token lendings, %d whole reads\n",
                static_cast<unsigned long long>(m.fs->counters().gc_runs),
                static_cast<unsigned long long>(m.fs->token_revocations()), verified.load());
  }
  Mounted again = mount(image, mo, realtime_off());
  ASSERT_NE(again.fs, nullptr);
  for (const auto& [path, data] : shared.files) {
    EXPECT_TRUE(read_file(*again.fs, path) == data) << path << " after a remount";
  }
  EXPECT_TRUE(again.fs->fsck(false).clean());
}

// How appending a file while another thread copies it went.
struct CopiedWhileWritten {
  std::string failed;  // the writer's first failure
  int errors = 0;      // copies that read other bytes than the writer's
  int copies = 0;
};

// Appends `all` to the open `file` at `path` in chunks of up to `chunk`
// bytes (a sync every 50 appends, a flush every 17), while another thread
// copies the file from `from_share` of the size it is told on -- a
// reader of a file still being written, as RocksDB copies a live
// write-ahead log -- and checks each copy against `all`.
CopiedWhileWritten append_while_copying(ZonedFs& fs, const std::string& path, WritableFile& file,
                                        const std::vector<uint8_t>& all, uint32_t chunk,
                                        double from_share) {
  std::atomic<bool> done{false};
  std::atomic<int> errors{0};
  std::atomic<int> copies{0};
  std::thread copier([&] {
    std::vector<uint8_t> back;
    while (!done) {
      auto st = fs.stat(path);
      if (!st) continue;
      auto reader = fs.open_read(path);
      if (!reader) {
        ++errors;
        return;
      }
      const auto from = static_cast<uint64_t>(static_cast<double>(st->size) * from_share);
      back.assign(st->size - from, 0);
      auto got = (*reader)->read(from, back.size(), back.data());
      if (!got || *got != back.size() ||
          !std::equal(back.begin(), back.end(), all.begin() + static_cast<ptrdiff_t>(from))) {
        ++errors;
      }
      ++copies;
    }
  });
  CopiedWhileWritten out;
  uint64_t at = 0;
  uint32_t step = 1;
  bool waited = false;
  while (at < all.size() && out.failed.empty()) {
    // Halfway, the writer waits for a first copy: on a loaded machine the
    // copier's thread may not have run yet, and a copy must meet a file
    // still being written.
    if (!waited && at >= all.size() / 2) {
      while (copies.load() == 0 && errors.load() == 0) std::this_thread::yield();
      waited = true;
    }
    uint64_t n = std::min<uint64_t>(all.size() - at, 1 + (step * 7919) % chunk);
    FsStatus ok = file.append(all.data() + at, n);
    at += n;
    if (ok && step % 50 == 0) ok = file.sync();
    if (ok && step % 17 == 0) ok = file.flush();
    if (!ok) out.failed = ok.message();
    ++step;
  }
  done = true;
  copier.join();
  out.errors = errors.load();
  out.copies = copies.load();
  return out;
}

// A reader copying a file while its writer appends (RocksDB copying the live
// write-ahead log for a checkpoint): whatever size it is told, it reads that
// many bytes, and they are the writer's.
TEST(FsRealtime, ATailReaderAlwaysReadsTheSizeItIsToldOfAFileBeingWritten) {
  TestImage image;
  Mounted m = fresh(image, test_mkfs_options(), MountOptions{}, realtime_off());
  ASSERT_NE(m.fs, nullptr);
  auto file = m.fs->open_write("/wal", {Lifetime::kShort, IoClass::kWal, false});
  ASSERT_TRUE(file.ok());
  const std::vector<uint8_t> all = pattern_bytes(5, 2u << 20);
  const CopiedWhileWritten copied = append_while_copying(*m.fs, "/wal", **file, all, 20000, 0);
  ASSERT_EQ(copied.failed, "");
  ASSERT_TRUE((*file)->close().is_ok());
  EXPECT_EQ(copied.errors, 0);
  EXPECT_GT(copied.copies, 0);
  EXPECT_TRUE(read_file(*m.fs, "/wal") == all);
}

TEST(FsRealtime, ZenFsPlusStripesFromManyThreadsAndCompactionReadsWaitForFlushes) {
  // Eight groups; flushes and compactions striped over four, written from
  // three threads at once while a compaction reader reads everyone's
  // closed tables (and waits, within its bound, while a flush holds the
  // group it reads). Then every table reads back, and fsck is clean.
  TestImage image(
      fs_test_config({"flash.channels=4", "flash.dies_per_channel=2", "zns.channels_per_zone=1"}));
  MkfsOptions mkfs = test_mkfs_options();
  mkfs.policy = "zenfs+";
  mkfs.policy_options = "stripe_width=4,stripe_unit=16KiB";
  {
    auto stack = image.open();
    ASSERT_TRUE(ZonedFs::mkfs(*stack, mkfs).is_ok());
  }
  Mounted m = mount(image, {}, realtime_off());
  ASSERT_NE(m.fs, nullptr);
  Shared shared;
  std::atomic<int> errors{0};
  std::atomic<bool> stop{false};
  auto writer = [&](int me) {
    for (int i = 0; i < 12; ++i) {
      const std::string path = "/w" + std::to_string(me) + "-" + std::to_string(i);
      const auto data = pattern_bytes(static_cast<uint64_t>(me * 100 + i), 50'000 + 3'001 * i);
      auto w = m.fs->open_write(
          path, {Lifetime::kMedium, i % 2 == 0 ? IoClass::kFlush : IoClass::kCompaction, false});
      if (!w) {
        ADD_FAILURE() << path << ": " << w.status().message();
        ++errors;
        return;
      }
      if (failed((*w)->append(data.data(), data.size()), path, errors)) return;
      if (failed((*w)->close(), path, errors)) return;
      std::lock_guard lock(shared.mutex);
      shared.files[path] = data;
    }
  };
  std::thread reader([&] {
    std::vector<uint8_t> buf(64 << 10);
    while (!stop) {
      std::string path;
      {
        std::lock_guard lock(shared.mutex);
        if (!shared.files.empty()) path = shared.files.begin()->first;
      }
      if (path.empty()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        continue;
      }
      auto r = m.fs->open_read(path);
      if (!r) continue;  // removed meanwhile
      auto got = (*r)->read(0, buf.size(), buf.data(), IoClass::kCompaction);
      if (!got) {
        ADD_FAILURE() << path << ": " << got.status().message();
        ++errors;
      }
    }
  });
  std::vector<std::thread> writers;
  for (int t = 0; t < 3; ++t) writers.emplace_back(writer, t);
  for (auto& t : writers) t.join();
  stop = true;
  reader.join();
  EXPECT_EQ(errors.load(), 0);
  for (const auto& [path, data] : shared.files) {
    EXPECT_TRUE(read_file(*m.fs, path) == data) << path;
  }
  const FsCounters c = m.fs->counters();
  EXPECT_GT(c.striped_rounds, 0u);
  EXPECT_TRUE(m.fs->fsck(false).clean());
  std::printf("  %llu striped rounds, %llu compaction reads waited\n",
              static_cast<unsigned long long>(c.striped_rounds),
              static_cast<unsigned long long>(c.compaction_read_waits));
}

// Writes behind (MountOptions::write_behind): with the device's timing on,
// a writer's full buffer is still going out while it fills the next, and a
// reader copying the file meanwhile reads both buffers' bytes; the file
// reads back whole, after a remount too. Off, no write goes behind.
TEST(FsRealtime, WritesBehindGoOutWhileTheNextBufferFillsAndReadersSeeBothBuffers) {
  for (bool behind : {true, false}) {
    SCOPED_TRACE(behind ? "write_behind on" : "write_behind off");
    TestImage image;
    MountOptions mo;
    mo.write_buffer_bytes = 32 << 10;
    mo.write_behind = behind;
    const std::vector<uint8_t> all = pattern_bytes(behind ? 11 : 12, 1536 << 10);
    {
      Mounted m = fresh(image, test_mkfs_options(), mo, realtime_modeled());
      ASSERT_NE(m.fs, nullptr);
      auto file = m.fs->open_write("/sst", {Lifetime::kMedium, IoClass::kCompaction, false});
      ASSERT_TRUE(file.ok());
      // Copies from a third of the way in: across the two buffers as often
      // as from the start.
      const CopiedWhileWritten copied =
          append_while_copying(*m.fs, "/sst", **file, all, 9000, 1.0 / 3);
      ASSERT_EQ(copied.failed, "");
      ASSERT_TRUE((*file)->close().is_ok());
      EXPECT_EQ(copied.errors, 0);
      EXPECT_GT(copied.copies, 0);
      EXPECT_TRUE(read_file(*m.fs, "/sst") == all);
      const nlohmann::json stats = write_behind_stats(*m.fs);
      EXPECT_EQ(stats["on"].get<bool>(), behind);
      if (behind) {
        EXPECT_GT(stats["writes"].get<uint64_t>(), 10u) << stats.dump();
      } else {
        EXPECT_EQ(stats["writes"].get<uint64_t>(), 0u) << stats.dump();
        EXPECT_EQ(stats["waits"].get<uint64_t>(), 0u) << stats.dump();
      }
      EXPECT_TRUE(m.fs->fsck(false).clean());
    }
    Mounted again = mount(image, mo, realtime_off());
    ASSERT_NE(again.fs, nullptr);
    EXPECT_TRUE(read_file(*again.fs, "/sst") == all) << "after a remount";
    EXPECT_TRUE(again.fs->fsck(false).clean());
  }
}

// In virtual time every write is made before append returns (one caller at
// a time): nothing goes behind, so runs stay deterministic.
TEST(FsVirtualTime, NoWriteGoesBehind) {
  TestImage image;
  MountOptions mo;
  mo.write_buffer_bytes = 16 << 10;
  Mounted m = fresh(image, test_mkfs_options(), mo);
  ASSERT_NE(m.fs, nullptr);
  write_file(*m.fs, "/f", pattern_bytes(3, 300 << 10));
  const nlohmann::json stats = write_behind_stats(*m.fs);
  EXPECT_FALSE(stats["on"].get<bool>());
  EXPECT_EQ(stats["writes"].get<uint64_t>(), 0u);
}

// The device loses power with a write behind in flight (or at any of the
// first commands after a sync): the writer hears of it at its next call and
// at every one after -- no crash, no hang -- and the file system mounts
// clean afterwards with every synced byte in place and nothing but the
// writer's bytes after them.
TEST(FsRealtime, AFailedWriteBehindIsAnsweredAtTheNextCallAndSyncedDataStays) {
  const std::vector<uint8_t> synced = pattern_bytes(21, 100 << 10);
  const std::vector<uint8_t> more = pattern_bytes(22, 600 << 10);
  for (uint64_t cut : {0, 1, 2, 3, 5, 8, 13}) {
    SCOPED_TRACE("power cut after " + std::to_string(cut) + " commands");
    TestImage image(fs_test_config(), "c" + std::to_string(cut));
    MountOptions mo;
    mo.write_buffer_bytes = 32 << 10;
    {
      Mounted m = fresh(image, test_mkfs_options(), mo, realtime_modeled());
      ASSERT_NE(m.fs, nullptr);
      auto file = m.fs->open_write("/log", {Lifetime::kShort, IoClass::kWal, false});
      ASSERT_TRUE(file.ok());
      ASSERT_TRUE((*file)->append(synced.data(), synced.size()).is_ok());
      ASSERT_TRUE((*file)->sync().is_ok());
      m.stack->power_cut_after(cut);
      FsStatus first;
      for (uint64_t at = 0; at < more.size() && first; at += 7000) {
        first = (*file)->append(more.data() + at, std::min<uint64_t>(7000, more.size() - at));
      }
      if (first) first = (*file)->sync();
      EXPECT_FALSE(first.is_ok()) << "the writes after the cut all succeeded";
      // Once failed, the file answers every write with a failure.
      EXPECT_FALSE((*file)->append(more.data(), 100).is_ok());
      EXPECT_FALSE((*file)->sync().is_ok());
      (void)(*file)->close();
    }
    Mounted again = mount(image, mo, realtime_off());
    ASSERT_NE(again.fs, nullptr);
    const std::vector<uint8_t> back = read_file(*again.fs, "/log");
    ASSERT_GE(back.size(), synced.size());
    EXPECT_TRUE(std::equal(synced.begin(), synced.end(), back.begin()));
    EXPECT_TRUE(
        std::equal(back.begin() + static_cast<ptrdiff_t>(synced.size()), back.end(), more.begin()))
        << "bytes after the synced ones that the writer never wrote there";
    auto report = again.fs->fsck(false);
    EXPECT_TRUE(report.clean()) << (report.problems.empty() ? "" : report.problems[0]);
  }
}

}  // namespace
}  // namespace zonelab::fs
