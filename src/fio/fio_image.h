// An image as fio's ioengine sees it (libzonelab_fio.so, docs/fio.md): one
// stack per image and process, shared by every job (fio thread) that names
// the image, and a queue per job that takes fio's I/O units asynchronously.
//
// Two ways to run the device, chosen per image (every job on it agrees):
//   - modeled: a real-time stack -- the device thread paces the model to the
//     wall clock (times the time scale), so fio's own wall-clock latencies
//     are the model's; commands go in with submit_async and complete on the
//     device thread.
//   - off: a virtual-time stack run on the job's own thread, as fast as the
//     model goes. A job that waits for completions steps the simulation
//     (under the image's lock, so jobs on one image take turns); commands
//     stay in flight across fio's commits, so iodepth is the device's queue
//     depth in device time. fio's latencies are then the host's cost.
//
// Nothing here knows fio's structures: engine.c translates them into these
// calls (through engine_abi.h), and the tests drive the same calls.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "stack/stack.h"

namespace zonelab::fio {

struct EngineOptions {
  Timing timing = Timing::kModeled;
  double time_scale = 1.0;
  // The host I/O scheduler; empty: the image's configuration's.
  std::string scheduler;
  // Where to write the device's counters when the image closes (JSON), or
  // empty.
  std::string stats_path;
  // Journal records written in batches, as zonelab bench writes them
  // (Stack::defer_durability): a completion fio sees is then not yet in the
  // image's journal; a killed fio leaves a consistent image holding a prefix
  // of the commands. Off: every completion is in the journal first.
  bool batched_journal = false;

  bool operator==(const EngineOptions&) const = default;
};

// "zonelab_timing=off,zonelab_time_scale=2" as words for messages.
std::string describe(const EngineOptions& options);

enum class IoKind : uint8_t { kRead, kWrite, kTrim, kFlush };

class SharedImage;

// One job's I/O. Not thread-safe: one fio thread calls it.
class JobQueue final : private CompletionSink {
 public:
  struct Event {
    void* cookie = nullptr;
    int error = 0;  // 0 or a positive errno, as fio keeps it
    Status status = Status::kSuccess;
  };

  ~JobQueue();
  JobQueue(const JobQueue&) = delete;
  JobQueue& operator=(const JobQueue&) = delete;

  // Takes an I/O of `length` bytes at byte `offset` (both whole LBAs; none
  // for a flush); `data` stays the caller's until the I/O is reaped. 0, or
  // a positive errno when it is refused before it reaches the device
  // (EINVAL: not whole LBAs, past the end, or longer than a command holds).
  int queue(IoKind kind, uint64_t offset, uint64_t length, uint8_t* data, void* cookie);
  // Sends what was queued since the last commit to the device.
  void commit();
  // Waits until at least `min` I/Os have completed (or `timeout` passed;
  // none: no limit), takes up to `max` of them and returns how many;
  // event(0..n-1) are theirs until the next reap.
  unsigned reap(unsigned min, unsigned max, std::optional<std::chrono::nanoseconds> timeout);
  const Event& event(unsigned i) const { return events_[i]; }

  // I/Os queued or in flight, not yet reaped.
  unsigned outstanding() const { return outstanding_; }

 private:
  friend class SharedImage;
  struct Slot {
    std::vector<Command> pieces;
    unsigned remaining = 0;
    void* cookie = nullptr;
    Status status = Status::kSuccess;
    int error = 0;
  };

  explicit JobQueue(SharedImage& image) : image_(image) {}
  void on_complete(Command& command) override;

  SharedImage& image_;
  // Owned here and touched by this job's thread; a command's user_tag points
  // at its slot, which the device thread reaches only through that.
  std::vector<std::unique_ptr<Slot>> slots_;
  std::vector<Slot*> free_;
  std::vector<Slot*> pending_;  // queued, not committed
  unsigned outstanding_ = 0;
  std::vector<Event> events_;

  // done_ and the slots' completion fields: under mutex_ in real time,
  // under the image's sim_mutex_ in virtual time.
  std::mutex mutex_;
  std::condition_variable completed_;
  std::vector<Slot*> done_;
};

class SharedImage {
 public:
  // The image's one stack in this process, opened at the first acquire and
  // closed (its state saved) at the last release. A second acquire with
  // other options is refused: every job on an image runs it one way.
  static Result<std::shared_ptr<SharedImage>> acquire(const std::string& path,
                                                      const EngineOptions& options);
  ~SharedImage();
  SharedImage(const SharedImage&) = delete;
  SharedImage& operator=(const SharedImage&) = delete;

  const std::string& path() const { return path_; }
  const DeviceInfo& info() const { return info_; }
  const EngineOptions& options() const { return options_; }
  bool zoned() const { return info_.interface == "zns"; }
  uint64_t size_bytes() const { return info_.capacity_lbas * info_.lba_size_bytes; }
  // The open-zone limit fio should keep to: the smaller of the device's open
  // and active limits that is set (0: none). fio keeps a zone open from its
  // first write until it is full, so for fio an open zone is an active one.
  uint32_t max_open_zones() const;
  // Whether the image keeps what is written (store.backing is not none).
  bool stores_data() const { return stack_->stores_data(); }

  // The zones from the one holding byte `offset`, at most `count`.
  std::vector<ZoneDescriptor> zones_from(uint64_t offset, uint32_t count);
  // Resets (or finishes) every zone that [offset, offset + length) touches;
  // the message names the zone and the device's status.
  Outcome zone_action(ZoneAction action, uint64_t offset, uint64_t length);

  std::unique_ptr<JobQueue> new_queue();

  // The device's counters and, in real time, the driver's pacing, as JSON.
  std::string stats_json();

 private:
  friend class JobQueue;
  SharedImage() = default;
  bool realtime() const { return options_.timing == Timing::kModeled; }
  // Runs one blocking command (zone management) in either mode.
  bool run_blocking(Command& command);

  std::string path_;
  EngineOptions options_;
  std::unique_ptr<Stack> stack_;
  DeviceInfo info_;
  // Virtual time: whoever steps the simulation or submits holds it.
  std::mutex sim_mutex_;
};

}  // namespace zonelab::fio
