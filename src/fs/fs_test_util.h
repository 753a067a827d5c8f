// Helpers for the file system's tests: a small zoned device in a throwaway
// image (16 zones of 256 KiB, 4 KiB blocks), opened as a virtual-time stack,
// a file system made and mounted on it, and data patterns.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "fs/zoned_fs.h"
#include "stack/stack.h"

namespace zonelab::fs {

inline Config fs_test_config(const std::vector<std::string>& overrides = {}) {
  Config c = *preset_config("small");
  for (const char* kv :
       {"store.backing=file", "flash.channels=2", "flash.dies_per_channel=1",
        "flash.planes_per_die=1", "flash.blocks_per_plane=32", "flash.pages_per_block=4",
        "flash.page_size=16KiB", "host.lba_size=4KiB", "zns.channels_per_zone=2",
        "zns.dies_per_zone=1", "zns.zone_capacity=256KiB", "zns.zone_size=256KiB",
        "zns.zone_count=0", "zns.max_open=0", "zns.max_active=0", "zns.zasl=256KiB",
        "zns.finish.granularity=0"}) {
    EXPECT_TRUE(apply_override(c, kv).ok()) << kv;
  }
  for (const std::string& kv : overrides) EXPECT_TRUE(apply_override(c, kv).ok()) << kv;
  return c;
}

// A device image in a directory of its own, removed at the end.
class TestImage {
 public:
  explicit TestImage(const Config& config = fs_test_config(), const std::string& tag = "") {
    dir_ = std::filesystem::temp_directory_path() /
           ("zonelab-fs-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name() + tag +
            std::to_string(counter()++));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "dev.img").string();
    auto created = Stack::create_image(path_, config, false);
    EXPECT_TRUE(created.ok()) << created.error();
  }
  ~TestImage() { std::filesystem::remove_all(dir_); }
  TestImage(const TestImage&) = delete;
  TestImage& operator=(const TestImage&) = delete;
  const std::string& path() const { return path_; }

  std::unique_ptr<Stack> open(const StackOptions& options = {}) {
    auto stack = Stack::open(path_, options);
    EXPECT_TRUE(stack.ok()) << stack.error();
    return stack.ok() ? std::move(stack).value() : nullptr;
  }

 private:
  static int& counter() {
    static int n = 0;
    return n;
  }
  std::filesystem::path dir_;
  std::string path_;
};

// A stack and the file system mounted on it; the file system goes first.
struct Mounted {
  std::unique_ptr<Stack> stack;
  std::unique_ptr<ZonedFs> fs;
};

inline Mounted mount(TestImage& image, const MountOptions& options = {},
                     const StackOptions& stack_options = {}) {
  Mounted m;
  m.stack = image.open(stack_options);
  if (m.stack == nullptr) return m;
  auto fs = ZonedFs::mount(*m.stack, options);
  EXPECT_TRUE(fs.ok()) << fs.status().message();
  if (fs.ok()) m.fs = std::move(fs).value();
  return m;
}

// Unmounts `m` cleanly, lets its stack go and mounts the image again.
inline Mounted remount(TestImage& image, Mounted& m) {
  EXPECT_TRUE(m.fs->unmount().is_ok());
  m.fs.reset();
  m.stack.reset();
  return mount(image);
}

inline MkfsOptions test_mkfs_options() {
  MkfsOptions o;
  o.uuid_seed = 7;
  return o;
}

inline Mounted fresh(TestImage& image, const MkfsOptions& mkfs = test_mkfs_options(),
                     const MountOptions& options = {}, const StackOptions& stack_options = {}) {
  {
    auto stack = image.open();
    FsStatus made = ZonedFs::mkfs(*stack, mkfs);
    EXPECT_TRUE(made.is_ok()) << made.message();
  }
  return mount(image, options, stack_options);
}

inline std::vector<uint8_t> pattern_bytes(uint64_t seed, uint64_t bytes) {
  std::vector<uint8_t> out(bytes);
  uint64_t x = seed * 0x9E3779B97F4A7C15ULL + 1;
  for (auto& b : out) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    b = static_cast<uint8_t>(x);
  }
  return out;
}

// Writes a whole file; stops the test on a failure.
inline void write_file(ZonedFs& fs, const std::string& path, const std::vector<uint8_t>& data,
                       ZonedFs::WriteOptions options = {}) {
  auto file = fs.open_write(path, options);
  ASSERT_TRUE(file.ok()) << path << ": " << file.status().message();
  FsStatus appended = (*file)->append(data.data(), data.size());
  ASSERT_TRUE(appended.is_ok()) << path << ": " << appended.message();
  FsStatus closed = (*file)->close();
  ASSERT_TRUE(closed.is_ok()) << path << ": " << closed.message();
}

inline std::vector<uint8_t> read_file(ZonedFs& fs, const std::string& path) {
  auto file = fs.open_read(path);
  EXPECT_TRUE(file.ok()) << path << ": " << file.status().message();
  if (!file.ok()) return {};
  std::vector<uint8_t> out((*file)->size());
  auto got = (*file)->read(0, out.size(), out.data());
  EXPECT_TRUE(got.ok()) << got.status().message();
  if (!got.ok()) return {};
  out.resize(*got);
  return out;
}

// A device for the file system's tests: the stack's, with faults on
// command -- the write commands after the first `writes_ok` answer a write
// fault without reaching the device -- and a log of the batches it saw (how
// many commands each had in flight together).
class FaultDevice final : public FsDevice {
 public:
  explicit FaultDevice(Stack& stack) : inner_(stack) {}

  uint64_t writes_ok = UINT64_MAX;
  std::vector<size_t> batches;  // submit_all's sizes, in order
  uint64_t writes = 0;          // write commands seen

  const DeviceInfo& info() const override { return inner_.info(); }
  bool stores_data() const override { return inner_.stores_data(); }
  bool concurrent() const override { return inner_.concurrent(); }
  Clock& clock() override { return inner_.clock(); }
  ZoneDescriptor zone(uint32_t zone) const override { return inner_.zone(zone); }
  bool submit_wait(Command& command) override {
    if (fail(command)) return true;
    return inner_.submit_wait(command);
  }
  bool submit_all(std::span<Command* const> commands) override {
    batches.push_back(commands.size());
    std::vector<Command*> pass;
    for (Command* c : commands) {
      if (!fail(*c)) pass.push_back(c);
    }
    return pass.empty() || inner_.submit_all(pass);
  }
  std::string data_error() const override { return inner_.data_error(); }
  const Config* config() const override { return inner_.config(); }

 private:
  bool fail(Command& command) {
    if (command.opcode != Opcode::kWrite) return false;
    if (++writes <= writes_ok) return false;
    command.status = Status::kWriteFault;
    return true;
  }
  StackDevice inner_;
};

// A file's bytes, to compare an image before and after.
inline std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace zonelab::fs
