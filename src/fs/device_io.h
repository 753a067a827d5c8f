// The file system's commands: whole-block writes, reads, zone resets and
// finishes through its device (fs_device.h) -- one command at a time per
// caller, or several pieces in flight at once (a striped file's writes and
// reads) -- and the zone report. Every command the file system sends is
// counted here by what it was for, with its modeled latency.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "common/histogram.h"
#include "fs/fs_device.h"
#include "fs/status.h"
#include "zonelab/config.h"

namespace zonelab::fs {

// Why the file system wrote: the counters keep the bytes apart.
enum class WriteCause : uint8_t { kData, kPadding, kMeta, kGc, kCount };
inline constexpr size_t kWriteCauseCount = static_cast<size_t>(WriteCause::kCount);
const char* write_cause_name(WriteCause cause);

// The kinds of command the file system sends, for the latency histograms.
enum class IoKind : uint8_t { kWrite, kRead, kReset, kFinish, kFlush, kCount };
inline constexpr size_t kIoKindCount = static_cast<size_t>(IoKind::kCount);

struct DeviceCounters {
  std::array<std::atomic<uint64_t>, kWriteCauseCount> write_bytes{};
  // The same by zone set (a namespace of several zone sizes; set 0 only
  // otherwise).
  std::array<std::array<std::atomic<uint64_t>, kWriteCauseCount>, kMaxZoneSets> set_write_bytes{};
  std::atomic<uint64_t> read_bytes{0};
  std::array<std::atomic<uint64_t>, kIoKindCount> commands{};
  std::atomic<uint64_t> failed{0};  // commands the device answered with an error

  // Every byte written, whatever the cause.
  uint64_t written_bytes() const;
};

// One stretch of a batch: `blocks` blocks at `lba`, from or into `data`;
// `padding_bytes` of a write's are padding.
struct IoPiece {
  uint64_t lba = 0;
  uint8_t* data = nullptr;
  uint64_t blocks = 0;
  uint64_t padding_bytes = 0;
};

// While one is alive on a thread, the modeled latency (device time) of
// every read command the file system sends for that thread is recorded in
// `into` as well: a client thread's own view of the device, apart from the
// host's time around it (a tenant's reads beside a neighbour's writes).
// Scopes nest; the innermost records.
class ReadLatencyScope {
 public:
  explicit ReadLatencyScope(Histogram& into);
  ~ReadLatencyScope();
  ReadLatencyScope(const ReadLatencyScope&) = delete;
  ReadLatencyScope& operator=(const ReadLatencyScope&) = delete;

 private:
  Histogram* previous_;
};

class DeviceIo {
 public:
  // At most this much in one write or read command.
  static constexpr uint64_t kCommandBytesMax = 1 << 20;
  // At most this many commands of a batch in flight at once.
  static constexpr size_t kBatchCommandsMax = 64;

  explicit DeviceIo(FsDevice& device);

  uint64_t block_bytes() const { return info_.lba_size_bytes; }
  uint32_t zone_count() const { return info_.zone_count; }
  // Zone geometry, zone by zone: a namespace formatted with several zone
  // sizes (FlexZNS zone sets) has no one zone size.
  uint64_t zone_start(uint32_t zone) const { return info_.zone_start_lba(zone); }
  uint64_t zone_size_of(uint32_t zone) const { return info_.zone_size_of(zone); }
  uint64_t zone_capacity_of(uint32_t zone) const { return info_.zone_capacity_of(zone); }
  uint32_t zone_of(uint64_t lba) const { return info_.zone_of_lba(lba); }
  // The zone sets, in LBA order (one on a namespace of equal zones).
  std::vector<ZoneSetInfo> zone_sets() const;
  uint32_t zone_set_of(uint32_t zone) const {
    return info_.uniform_zones() ? 0 : zone_set_of_zone(info_.zone_sets, zone);
  }
  const DeviceInfo& info() const { return info_; }

  // Writes `blocks` blocks at `lba` (a zone's write pointer), in commands of
  // at most kCommandBytesMax; `padding_bytes` of them are padding.
  FsStatus write(uint64_t lba, const uint8_t* data, uint64_t blocks, WriteCause cause,
                 uint64_t padding_bytes = 0);
  FsStatus read(uint64_t lba, uint8_t* out, uint64_t blocks);
  FsStatus reset(uint32_t zone);
  FsStatus finish(uint32_t zone);
  // Makes every write completed so far durable on a device with a volatile
  // write cache (NVMe Flush); nothing to do, and no command sent, when the
  // device keeps what it acknowledges or nothing was written since the last
  // Flush.
  FsStatus flush();
  // Writes (reads) every piece with one command of each in flight at once,
  // then the next (a piece longer than kCommandBytesMax takes several
  // rounds). Written pieces start at their zone's write pointer and no two
  // share a zone. On an error the pieces may be written in part.
  FsStatus write_all(std::span<const IoPiece> pieces, WriteCause cause);
  FsStatus read_all(std::span<const IoPiece> pieces);
  ZoneDescriptor zone(uint32_t zone) const { return device_.zone(zone); }

  const DeviceCounters& counters() const { return counters_; }
  // Counters and latency percentiles as one JSON object.
  std::string counters_json() const;
  FsDevice& device() { return device_; }

 private:
  FsStatus run(Command& command, IoKind kind, const char* what);
  // The commands at once; the first error found, in their order.
  FsStatus run_all(std::span<Command* const> commands, IoKind kind, const char* what);
  FsStatus check(const Command& command, IoKind kind, const char* what);
  FsStatus batch(std::span<const IoPiece> pieces, Opcode opcode, IoKind kind, const char* what);
  // Counts a write's bytes by cause, and by the zone set it went to.
  void count_written(uint64_t lba, uint64_t bytes, uint64_t padding_bytes, WriteCause cause);

  FsDevice& device_;
  DeviceInfo info_;
  DeviceCounters counters_;
  // Writes completed, and of those the ones a completed Flush covers.
  std::atomic<uint64_t> writes_done_{0};
  std::atomic<uint64_t> writes_flushed_{0};
  std::mutex virtual_turn_mutex_;  // virtual time: one command at a time
  mutable std::mutex latency_mutex_;
  std::array<Histogram, kIoKindCount> latency_ns_;
};

}  // namespace zonelab::fs
