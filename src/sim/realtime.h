// The real-time driver: the same simulation as in virtual time, run by a
// device loop paced to the wall clock, so that multi-threaded programs see
// the modeled latencies as they would on a drive.
//
// Time. Virtual time V maps to wall time W = W0 + (V - V0) * time_scale,
// where (V0, W0) are the simulator's time and the steady clock when the
// driver is made. A time scale of 1 is real time; 2 makes the device run
// twice as slow. Before it runs an event the loop waits until the event's
// wall time: it sleeps while the event is far off and spins for the last
// `spin_ns`. A command enters the simulation at the virtual time of its
// arrival (the wall clock when it was submitted, mapped back; never before
// the simulator's own time), after every event due before it.
//
// Loop threads. start() runs the loop on one thread, plus `standby_threads`
// more at the lowest scheduling priority (0 by default). The simulator and
// the device belong to whichever of them holds the device lock; a thread
// takes it to run one event (or inject arrivals) and lets it go to wait. All
// wait for the next event and the first awake runs it, so a stall of one
// thread (preempted, or its virtual CPU held by the hypervisor) delays a
// completion only if the others are stalled too. "The device thread" below
// means the loop thread holding the lock.
//
// Delivery. A completion is delivered when its completion event has run: an
// asynchronous command's sink is called on the device thread; a synchronous
// caller wakes up. The completion error is the wall time of that delivery
// (the call of the sink; the caller's return from submit_sync) minus the wall
// time of the modeled completion; stats() holds its histogram. For a
// synchronous caller it includes the operating system's wake-up of the
// caller's thread, which stats() also shows on its own (wakeup_ns).
//
// Timing off. With Timing::kOff nothing is paced: events run as soon as the
// device thread reaches them and commands enter at the simulator's current
// time, so every command completes as fast as the host software allows
// (what stats().turnaround_ns then measures). Virtual time still advances by
// the modeled latencies, but no longer follows the wall clock.
//
// Threads. The device and the simulator belong to the loop from start() to
// stop(); nobody else may touch them meanwhile. Before start and after stop
// the owner may use them directly. Instead of start(), a single-threaded
// caller can run the device loop itself with run_until_idle(), which makes
// the calling thread the device thread for that long (the job engine does
// this; see device()).
//
// Shutdown. stop() (and the destructor) refuses new commands, then completes
// every command already accepted: the simulation runs on without pacing
// until the last of them is delivered, so each command gets its real modeled
// status and result (writes are not lost), sinks are called and synchronous
// callers released. Then the loop threads are joined. Those completions
// count in stats().drained, not in the error histogram.
#pragma once

#include <atomic>
#include <climits>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>
#include <vector>

#include "common/histogram.h"
#include "sim/simulator.h"
#include "zonelab/device.h"
#include "zonelab/result.h"

namespace zonelab {

enum class Timing : uint8_t {
  kModeled,  // completions at their modeled times, paced to the wall clock
  kOff,      // no pacing: every command completes at once
};

struct RealtimeOptions {
  Timing timing = Timing::kModeled;
  // Wall ns per virtual ns; within [kMinTimeScale, kMaxTimeScale].
  double time_scale = 1.0;
  // The device thread spins (rather than sleeps) for the last `spin_ns` of
  // wall time before an event, and for `spin_ns` after it runs out of work
  // before it blocks; see docs/realtime.md for the measurement.
  uint64_t spin_ns = 200'000;
  // Loop threads besides the main one after start(), at most
  // kMaxStandbyThreads. They run at the lowest scheduling priority
  // (SCHED_IDLE), so they only use a CPU nobody else wants: they run an event
  // that falls due while the main loop thread has lost its CPU, and they
  // keep an otherwise idle CPU awake, which makes waking a synchronous
  // caller several times faster in a VM. Each spins near events like the
  // main thread. See docs/realtime.md for the measurement.
  uint32_t standby_threads = 0;
  // Commands accepted and not yet delivered; submissions beyond are refused.
  uint32_t max_outstanding = 1u << 16;
};

inline constexpr double kMinTimeScale = 1e-3;
inline constexpr double kMaxTimeScale = 1e6;
inline constexpr uint32_t kMaxStandbyThreads = 3;

// "modeled" / "off".
std::string_view timing_name(Timing timing);
std::optional<Timing> timing_from_name(std::string_view name);

// Checks options; the message names the bad field.
Outcome check_realtime_options(const RealtimeOptions& options);

struct RealtimeStats {
  // Delivery minus the modeled completion's wall time, of each completion
  // delivered while running with Timing::kModeled (never negative: nothing
  // is delivered early).
  Histogram completion_error_ns;
  // Wall time from submission to delivery, of every completion but those
  // stop() drained.
  Histogram turnaround_ns;
  // submit_sync: from the device thread posting the completion to the caller
  // running again (the host's wake-up, part of the completion error).
  Histogram wakeup_ns;
  uint64_t completions = 0;  // delivered while running (not drained)
  uint64_t drained = 0;      // delivered by stop() without pacing
  uint64_t refused = 0;      // submissions refused (stopping, or full)
  // The loop threads' CPU time and the wall time since start(): how much of
  // a core pacing costs (spinning near events takes one whole).
  uint64_t loop_cpu_ns = 0;
  uint64_t loop_wall_ns = 0;
};

class RealtimeDriver final : private CompletionSink {
 public:
  // `device` must run on `sim`. Options must pass check_realtime_options.
  RealtimeDriver(Device& device, Simulator& sim, const RealtimeOptions& options = {});
  ~RealtimeDriver();
  RealtimeDriver(const RealtimeDriver&) = delete;
  RealtimeDriver& operator=(const RealtimeDriver&) = delete;

  // Starts the loop threads (at most once, and not with run_until_idle).
  void start();

  // Any thread. The command is the caller's and must stay alive until its
  // sink is called, on the device thread; the sink may submit_async more
  // commands but must not block. False (and no call of the sink) when the
  // driver is stopping or holds max_outstanding commands.
  bool submit_async(Command& command);
  // Any thread but the device thread: submits and waits for the completion;
  // the command's status and result are then filled in. Its sink is ignored.
  // False (the command untouched) when refused, as for submit_async.
  bool submit_sync(Command& command);

  // Blocks until every accepted command has been delivered (any thread but
  // the device thread; someone must be running the loop: the device thread,
  // or another thread inside run_until_idle).
  void wait_idle();

  // Runs the device loop on the calling thread, paced as by the device
  // thread, until no event is left and every accepted command has been
  // delivered. Only without start().
  void run_until_idle();

  // The device seen through the driver, for code that runs on the device
  // thread (the job engine inside run_until_idle): submit is submit_async;
  // info reads the device and zone() reads it under the device lock.
  Device& device() { return view_; }

  // Runs `fn` while no loop thread touches the device: on the device thread
  // at once, on any other thread under the device lock (it waits for the
  // event being run). `fn` may read the device and the simulator; it must not
  // submit or wait for commands.
  void with_device(const std::function<void()>& fn) const;

  // Refuses new commands, completes those accepted (see the top of this
  // file) and joins the loop threads. Idempotent; not from the device
  // thread.
  void stop();

  RealtimeStats stats() const;
  const RealtimeOptions& options() const { return options_; }

  // The clock mapping, in steady-clock nanoseconds.
  static int64_t wall_now_ns();
  int64_t wall_of(uint64_t virtual_ns) const;
  uint64_t virtual_of(int64_t wall_ns) const;

 private:
  enum class Delivery : uint8_t { kPaced, kUnpaced, kDrained };

  // One accepted command on its way through the driver. Tickets are pooled
  // and live as long as the driver, so the device thread may still touch a
  // synchronous caller's ticket while the caller wakes up and moves on.
  struct Ticket {
    Command* command = nullptr;
    CompletionSink* sink = nullptr;  // the caller's
    uint64_t user_tag = 0;           // the caller's
    int64_t arrival_wall_ns = 0;
    Ticket* next = nullptr;  // inbox link
    bool sync = false;
    // submit_sync: the device thread fills these, then sets `done`.
    Delivery delivery = Delivery::kPaced;
    int64_t posted_wall_ns = 0;
    std::atomic<uint32_t> done{0};
  };

  class View final : public Device {
   public:
    explicit View(RealtimeDriver& driver) : driver_(driver) {}
    void submit(Command& command) override;
    const DeviceInfo& info() const override { return driver_.device_.info(); }
    ZoneDescriptor zone(uint32_t index) const override;

   private:
    RealtimeDriver& driver_;
  };

  // Puts the command into the inbox on a fresh ticket; null when refused.
  Ticket* enqueue(Command& command, bool sync);
  void release(Ticket* ticket);
  void on_complete(Command& command) override;
  void record(Delivery delivery, int64_t error_ns, int64_t turnaround_ns, int64_t wakeup_ns);
  bool on_device_thread() const;

  // The device loop; `until_idle` returns when nothing is left to do,
  // otherwise it runs until stop().
  void loop(bool until_idle);
  enum class Turn : uint8_t { kAgain, kWait, kDone };
  // One turn of the loop, entered holding the device lock (which it lets
  // go): takes the arrivals, then runs the next event if it is due (kAgain)
  // or publishes its wall time (kWait); kDone when stopping, or with
  // `until_idle` when nothing is left.
  Turn take_turn(bool until_idle);
  // Takes the device lock, spinning a while before it blocks.
  void lock_device();
  Ticket* take_arrivals(bool& stopping);
  void inject(Ticket* arrivals);
  // Publishes the wall time of the next event (kNoEvent: none), waking
  // sleeping loop threads when it came closer.
  void publish_next(int64_t wall_ns);
  // Outside the device lock: waits until the published next event is due,
  // a command arrives (the arrival count moves past `seen_arrivals`) or
  // stop() begins.
  void wait_turn(uint64_t seen_arrivals);
  // Runs what is left without pacing (stop()).
  void drain(Ticket* arrivals);

  static constexpr int64_t kNoEvent = INT64_MAX;

  Device& device_;
  Simulator& sim_;
  const RealtimeOptions options_;
  View view_;
  const uint64_t origin_virtual_ns_;
  const int64_t origin_wall_ns_;

  std::mutex stop_mutex_;
  // The simulator and the device belong to the loop thread holding it.
  mutable std::mutex device_mutex_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;  // loop threads: an arrival, stop, an earlier event
  // wait_idle and stop: outstanding_ or sync_callers_ fell to 0.
  std::condition_variable idle_;
  Ticket* inbox_head_ = nullptr;
  Ticket* inbox_tail_ = nullptr;
  std::deque<Ticket> pool_;
  std::vector<Ticket*> free_tickets_;
  uint32_t outstanding_ = 0;
  uint32_t sync_callers_ = 0;  // inside submit_sync with an accepted command
  bool stopping_ = false;
  bool stopped_ = false;
  bool started_ = false;
  // Hints for the waiting loop threads, read without mutex_.
  std::atomic<uint64_t> arrivals_{0};  // commands accepted so far
  std::atomic<bool> stop_hint_{false};
  std::atomic<int64_t> next_wall_ns_{kNoEvent};
  std::atomic<uint32_t> sleepers_{0};  // loop threads blocked on wake_
  std::vector<std::thread> threads_;
  int64_t started_wall_ns_ = 0;
  int64_t stopped_wall_ns_ = 0;
  std::atomic<uint64_t> finished_cpu_ns_{0};  // of loop threads that have ended
  std::atomic<uint32_t> in_loop_{0};          // run_until_idle or loop threads running
  bool draining_ = false;                     // device lock

  mutable std::mutex stats_mutex_;
  RealtimeStats stats_;
};

}  // namespace zonelab
