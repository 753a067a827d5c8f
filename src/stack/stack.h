// A running device stack, assembled in one place: a device image or a
// configuration becomes a device (ZNS or conventional, from the
// configuration's interface), the host queue with its I/O scheduler in front
// of it, and a driver -- virtual time or real time -- that runs the
// simulation. Everything above (the CLI, the benchmark runner, experiments,
// the file system, the RocksDB plugin) builds its stack here and sees only
// the seam (Device, ModeledDevice), never ZnsDevice or ConvDevice.
//
// Three ways to use a stack:
//   - blocking: io().submit_wait(command). In virtual time one caller at a
//     time; the simulation runs until the command completes. In real time
//     (StackOptions::realtime) any number of threads; the device thread
//     paces the simulation to the wall clock.
//   - asynchronous, for job engines (virtual time): submit to device() with
//     a sink and run the events with drive(); the engine then runs inside
//     the simulation, on the calling thread.
//   - paced: pace() returns a real-time driver over the top of the stack
//     whose loop the caller runs (run_until_idle), for a measured window.
//
// Queries -- zone(), inspect() -- are safe from any thread: in real time
// they wait for the device lock.
//
// With an image the stack holds the image's lock until close(). Every
// command that changes the device is recorded in the image's journal before
// its completion is reported (store/image.h), so a process killed at any
// instant leaves an image that opens with it; open() replays the journal.
// close() stops the driver (commands accepted complete first) and saves the
// device's state, after which the journal starts empty.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "controller/modeled_device.h"
#include "host/host_queue.h"
#include "sim/realtime.h"
#include "sim/simulator.h"
#include "stack/blocking.h"
#include "stack/clock.h"
#include "stack/image_journal.h"
#include "store/image.h"
#include "zonelab/config.h"
#include "zonelab/result.h"

namespace zonelab {

struct StackOptions {
  // The host I/O scheduler; empty: the configuration's host.scheduler.
  std::string scheduler;
  // An image opened read-only (a shared lock): commands that would change
  // the device are refused, and nothing is written to the file.
  bool read_only = false;
  // A device thread paces the simulation to the wall clock and io() takes
  // commands from any thread (RealtimeDriver, sim/realtime.h).
  bool realtime = false;
  RealtimeOptions realtime_options;
};

// What `create` made.
struct CreatedImage {
  DeviceInfo info;
  std::string backing;
};

class Stack {
 public:
  ~Stack();
  Stack(const Stack&) = delete;
  Stack& operator=(const Stack&) = delete;

  // Opens and locks a device image and builds its stack.
  static Result<std::unique_ptr<Stack>> open(const std::string& image_path,
                                             const StackOptions& options = {});
  // A stack with no image (store.backing none or memory; empty means none).
  static Result<std::unique_ptr<Stack>> make(const Config& config,
                                             const StackOptions& options = {});
  // Makes a new device image holding a fresh device of `config` (its
  // store.backing empty means file).
  static Result<CreatedImage> create_image(const std::string& path, Config config, bool force);
  // FlexZNS's zone_format (seed 001 §III-B): remakes a ZNS image with the
  // zone sets of `zone_format` ("512MiB:64,2GiB:480") and, when not empty,
  // parity placement `parity`: every zone empty, its data gone; the flash's
  // wear and the lifetime counters stay. Refused, the image unchanged, when
  // the format does not fit or the image is open elsewhere.
  static Result<CreatedImage> format_image(const std::string& path, const std::string& zone_format,
                                           const std::string& parity);

  const Config& config() const { return device_->config(); }
  const DeviceInfo& info() const { return device_->info(); }
  bool stores_data() const { return device_->backing().stores_data(); }
  bool has_image() const { return image_ != nullptr; }
  const std::string& image_path() const;
  bool realtime() const { return realtime_ != nullptr; }
  // The scheduler in front of the device ("none", "mq-deadline", "zinc").
  const std::string& scheduler() const { return scheduler_; }

  BlockingDevice& io() { return *io_; }
  Clock& clock() { return *clock_; }

  // Virtual time only: the top of the stack for asynchronous submitters, the
  // simulator, and drive(), which runs events until none is left.
  Device& device();
  Simulator& sim();
  void drive();
  // A real-time driver over the top of the stack, not started: the caller
  // runs its loop (run_until_idle) and stops it. Virtual-time stacks only.
  std::unique_ptr<RealtimeDriver> pace(const RealtimeOptions& options);

  // Safe from any thread.
  ZoneDescriptor zone(uint32_t index) const;
  void inspect(const std::function<void(const ModeledDevice&)>& fn) const;
  // The device's counters cleared before a measured run (not its state).
  void reset_stats();
  // Test hook (zonelab inject): a zone's media fails.
  Outcome inject_zone(uint32_t zone, ZoneState state);
  // Test hook (zonelab inject --die): a die fails, or comes back.
  Outcome inject_die(uint32_t channel, uint32_t way, bool failed = true);
  // Test hook (zonelab inject --power-loss): the power goes and comes back
  // at the device's current time. A volatile write cache loses the data
  // that is neither on flash nor covered by a completed Flush; the loss is
  // recorded in the image. Returns the zones that lost data (0 with
  // power-loss protection or no buffer).
  uint32_t power_loss();
  // The real-time driver's statistics (zeros in virtual time).
  RealtimeStats realtime_stats() const;
  // Real time only, any thread: submits without waiting. The command is the
  // caller's and must live until its sink (set by the caller) is called, on
  // the device thread; the sink must not block. False, the sink never
  // called, when the stack takes no more commands (closing, powered off, a
  // journal failure) or the driver holds its maximum of commands.
  bool submit_async(Command& command);

  // Why the image's file failed a command (WRITE_FAULT and
  // UNRECOVERED_READ_ERROR): the operating system's answer, or empty.
  std::string data_error() const;
  // Why the journal failed, after which the stack takes no command.
  std::string journal_error() const;

  // What open() has to tell besides an error (a corrupt newest metadata
  // slot it stepped over; journal records it replayed), one line each.
  const std::vector<std::string>& notes() const { return notes_; }
  // Commands replayed from the journal at open().
  uint64_t replayed() const { return replayed_; }

  // Saves the device's state into the image now (a checkpoint).
  Outcome checkpoint();

  // Test hooks: a power cut. From the cut on nothing reaches the image
  // file -- no journal record, data, discard or save -- so it stays as a
  // drive with power-loss protection would be after a power cut at that
  // instant (open it again to power back on); commands in flight are
  // dropped: their callers (submit_wait) see a failure, as does any later
  // command. The device's state in memory is left as it was.
  //   power_cut(): now (any thread).
  //   power_cut_after(n): when the device takes its n+1-th state-changing
  //     command from now, inside that command -- an instant between two
  //     commands, chosen by count, so that a test can try each one in turn.
  void power_cut();
  void power_cut_after(uint64_t records);
  bool powered_off() const { return powered_off_; }
  // State-changing commands recorded in the image's journal since it was
  // opened (0 without a writable image).
  uint64_t commands_recorded() const;
  // For a caller that reports completions only when it is done (a
  // benchmark): a completion no longer waits for its journal record to be
  // written; records go in batches, before any data is destroyed, and all of
  // them by close(). A killed process then leaves an image as consistent as
  // ever, holding a prefix of the commands taken.
  void defer_durability();

  // Stops taking commands, completes those accepted, and with an image
  // saves the device's state: kIfChanged when a command changed it since
  // the last save, kAlways even if not (a benchmark's clock moved). The
  // stack answers queries afterwards but takes no command.
  enum class Save : uint8_t { kNo, kIfChanged, kAlways };
  Outcome close(Save save = Save::kIfChanged);

 private:
  Stack() = default;
  static Result<std::unique_ptr<Stack>> assemble(std::unique_ptr<Stack> stack, const Config& config,
                                                 std::unique_ptr<Backing> backing,
                                                 const ImageState* state,
                                                 const StackOptions& options);
  // Checks that the image's layout agrees with its configuration, replays
  // its journal and starts recording into it (a writable image).
  Outcome attach_image();
  Outcome replay_journal();
  // From virtual to real time: a device thread takes over the simulation.
  Outcome start_realtime(const RealtimeOptions& options);

  Simulator sim_;
  std::unique_ptr<Image> image_;
  std::unique_ptr<ModeledDevice> device_;
  std::unique_ptr<ImageJournal> journal_;
  std::vector<std::string> notes_;
  uint64_t replayed_ = 0;
  std::unique_ptr<HostQueue> host_queue_;
  Device* top_ = nullptr;  // the host queue, or the device itself
  std::string scheduler_;
  std::unique_ptr<RealtimeDriver> realtime_;
  std::unique_ptr<BlockingDevice> io_;
  std::unique_ptr<Clock> clock_;
  bool closed_ = false;
  // No command is taken: closed, or the journal failed.
  std::atomic<bool> refusing_{false};
  std::atomic<bool> powered_off_{false};
};

}  // namespace zonelab
