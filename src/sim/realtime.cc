// The device loop of the real-time driver; see realtime.h.
#include "sim/realtime.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "zonelab/assert.h"

#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>
#endif

namespace zonelab {
namespace {

using SteadyClock = std::chrono::steady_clock;

uint64_t cpu_clock_ns(clockid_t clock) {
  struct timespec ts;
  if (::clock_gettime(clock, &ts) != 0) return 0;
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ULL + static_cast<uint64_t>(ts.tv_nsec);
}

// The calling thread's CPU time, or another thread's.
uint64_t thread_cpu_ns() { return cpu_clock_ns(CLOCK_THREAD_CPUTIME_ID); }
uint64_t thread_cpu_ns(pthread_t thread) {
  clockid_t clock;
  if (::pthread_getcpuclockid(thread, &clock) != 0) return 0;
  return cpu_clock_ns(clock);
}

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// A misuse that would deadlock or lose a command: crash loudly.
[[noreturn]] void misuse(const char* what) {
  std::fprintf(stderr, "zonelab: RealtimeDriver misuse: %s\n", what);
  std::abort();
}

// Linux lets a sleeping thread overshoot its wake-up by the thread's timer
// slack (50 us by default), more than the whole error budget; the device
// thread asks for none while it runs the loop.
class TimerSlack {
 public:
  TimerSlack() {
#if defined(__linux__)
    int previous = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
    if (previous > 0 && prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0) == 0) previous_ = previous;
#endif
  }
  ~TimerSlack() {
#if defined(__linux__)
    if (previous_ > 0) prctl(PR_SET_TIMERSLACK, static_cast<unsigned long>(previous_), 0, 0, 0);
#endif
  }
  TimerSlack(const TimerSlack&) = delete;
  TimerSlack& operator=(const TimerSlack&) = delete;

 private:
  int previous_ = 0;
};

// A standby loop thread gives way to every other thread: Linux's SCHED_IDLE
// policy runs it only on a CPU that nothing else wants (no privilege
// needed). Elsewhere it stays an ordinary thread.
void run_as_standby() {
#if defined(__linux__)
  sched_param param{};
  param.sched_priority = 0;
  pthread_setschedparam(pthread_self(), SCHED_IDLE, &param);
#endif
}

// The driver whose device loop the calling thread runs (holding the device
// lock), if any: what on_device_thread() asks.
thread_local const void* tls_device_owner = nullptr;

class DeviceOwner {
 public:
  explicit DeviceOwner(const void* driver) : previous_(tls_device_owner) {
    tls_device_owner = driver;
  }
  ~DeviceOwner() { tls_device_owner = previous_; }
  DeviceOwner(const DeviceOwner&) = delete;
  DeviceOwner& operator=(const DeviceOwner&) = delete;

 private:
  const void* previous_;
};

}  // namespace

std::string_view timing_name(Timing timing) { return timing == Timing::kOff ? "off" : "modeled"; }

std::optional<Timing> timing_from_name(std::string_view name) {
  if (name == "modeled") return Timing::kModeled;
  if (name == "off") return Timing::kOff;
  return std::nullopt;
}

Outcome check_realtime_options(const RealtimeOptions& options) {
  if (!std::isfinite(options.time_scale) || options.time_scale < kMinTimeScale ||
      options.time_scale > kMaxTimeScale) {
    return Error{fmt::format("time scale {} is outside [{}, {}]", options.time_scale, kMinTimeScale,
                             kMaxTimeScale)};
  }
  if (options.spin_ns > 10'000'000) return Error{"spin time above 10 ms"};
  if (options.max_outstanding == 0) return Error{"max_outstanding is 0"};
  if (options.standby_threads > kMaxStandbyThreads) {
    return Error{
        fmt::format("standby threads {} above {}", options.standby_threads, kMaxStandbyThreads)};
  }
  return {};
}

RealtimeDriver::RealtimeDriver(Device& device, Simulator& sim, const RealtimeOptions& options)
    : device_(device),
      sim_(sim),
      options_(options),
      view_(*this),
      origin_virtual_ns_(sim.now_ns()),
      origin_wall_ns_(wall_now_ns()) {
  ZL_ASSERT(check_realtime_options(options).ok());
}

RealtimeDriver::~RealtimeDriver() { stop(); }

int64_t RealtimeDriver::wall_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(SteadyClock::now().time_since_epoch())
      .count();
}

int64_t RealtimeDriver::wall_of(uint64_t virtual_ns) const {
  double offset = (static_cast<double>(virtual_ns) - static_cast<double>(origin_virtual_ns_)) *
                  options_.time_scale;
  return origin_wall_ns_ + std::llround(offset);
}

uint64_t RealtimeDriver::virtual_of(int64_t wall_ns) const {
  if (wall_ns <= origin_wall_ns_) return origin_virtual_ns_;
  double offset = static_cast<double>(wall_ns - origin_wall_ns_) / options_.time_scale;
  return origin_virtual_ns_ + static_cast<uint64_t>(offset);
}

bool RealtimeDriver::on_device_thread() const { return tls_device_owner == this; }

void RealtimeDriver::start() {
  std::lock_guard lock(mutex_);
  if (started_ || stopping_ || in_loop_.load() != 0) {
    misuse("start() twice, after stop(), or inside run_until_idle()");
  }
  started_ = true;
  started_wall_ns_ = wall_now_ns();
  for (uint32_t i = 0; i <= options_.standby_threads; ++i) {
    threads_.emplace_back([this, i] {
      if (i > 0) run_as_standby();
      loop(false);
      finished_cpu_ns_.fetch_add(thread_cpu_ns(), std::memory_order_relaxed);
    });
  }
}

RealtimeDriver::Ticket* RealtimeDriver::enqueue(Command& command, bool sync) {
  Ticket* ticket = nullptr;
  bool notify = false;
  {
    std::lock_guard lock(mutex_);
    if (stopping_ || outstanding_ >= options_.max_outstanding) {
      std::lock_guard stats_lock(stats_mutex_);
      ++stats_.refused;
      return nullptr;
    }
    if (free_tickets_.empty()) {
      ticket = &pool_.emplace_back();
    } else {
      ticket = free_tickets_.back();
      free_tickets_.pop_back();
    }
    ticket->command = &command;
    ticket->sink = command.sink;
    ticket->user_tag = command.user_tag;
    ticket->sync = sync;
    ticket->done.store(0, std::memory_order_relaxed);
    // Stamped under the lock, so the inbox is in arrival order.
    ticket->arrival_wall_ns = wall_now_ns();
    ticket->next = nullptr;
    if (inbox_tail_ != nullptr) {
      inbox_tail_->next = ticket;
    } else {
      inbox_head_ = ticket;
    }
    inbox_tail_ = ticket;
    ++outstanding_;
    if (sync) ++sync_callers_;
    arrivals_.fetch_add(1, std::memory_order_seq_cst);
    notify = sleepers_.load(std::memory_order_seq_cst) != 0;
  }
  if (notify) wake_.notify_all();
  return ticket;
}

void RealtimeDriver::release(Ticket* ticket) {
  std::lock_guard lock(mutex_);
  free_tickets_.push_back(ticket);
  if (--sync_callers_ == 0) idle_.notify_all();
}

bool RealtimeDriver::submit_async(Command& command) {
  if (command.sink == nullptr) misuse("submit_async of a command without a sink");
  return enqueue(command, false) != nullptr;
}

bool RealtimeDriver::submit_sync(Command& command) {
  if (on_device_thread()) misuse("submit_sync on the device thread would wait for itself");
  Ticket* ticket = enqueue(command, true);
  if (ticket == nullptr) return false;
  // A futex wait (after a short spin) on the ticket; the device thread's
  // notify may come after we have moved on, which is harmless: the ticket
  // stays in the pool and its next waiter re-checks `done`.
  while (ticket->done.load(std::memory_order_acquire) == 0) ticket->done.wait(0);
  int64_t now = wall_now_ns();
  record(ticket->delivery, now - wall_of(command.complete_ns), now - ticket->arrival_wall_ns,
         now - ticket->posted_wall_ns);
  release(ticket);
  return true;
}

void RealtimeDriver::View::submit(Command& command) {
  if (!driver_.submit_async(command)) misuse("a command the job engine submitted was refused");
}

ZoneDescriptor RealtimeDriver::View::zone(uint32_t index) const {
  ZoneDescriptor d;
  driver_.with_device([&] { d = driver_.device_.zone(index); });
  return d;
}

void RealtimeDriver::with_device(const std::function<void()>& fn) const {
  if (on_device_thread()) {
    fn();
    return;
  }
  std::lock_guard device(device_mutex_);
  fn();
}

void RealtimeDriver::on_complete(Command& command) {
  auto* ticket = reinterpret_cast<Ticket*>(command.user_tag);
  command.sink = ticket->sink;
  command.user_tag = ticket->user_tag;
  Delivery delivery = draining_                             ? Delivery::kDrained
                      : options_.timing == Timing::kModeled ? Delivery::kPaced
                                                            : Delivery::kUnpaced;
  if (ticket->sync) {
    {
      std::lock_guard lock(mutex_);
      if (--outstanding_ == 0) idle_.notify_all();
    }
    ticket->delivery = delivery;
    ticket->posted_wall_ns = wall_now_ns();
    ticket->done.store(1, std::memory_order_release);
    ticket->done.notify_one();
    return;
  }
  int64_t now = wall_now_ns();
  record(delivery, now - wall_of(command.complete_ns), now - ticket->arrival_wall_ns, -1);
  command.sink->on_complete(command);
  std::lock_guard lock(mutex_);
  free_tickets_.push_back(ticket);
  if (--outstanding_ == 0) idle_.notify_all();
}

void RealtimeDriver::record(Delivery delivery, int64_t error_ns, int64_t turnaround_ns,
                            int64_t wakeup_ns) {
  auto clamp = [](int64_t ns) { return static_cast<uint64_t>(std::max<int64_t>(ns, 0)); };
  std::lock_guard lock(stats_mutex_);
  if (delivery == Delivery::kDrained) {
    ++stats_.drained;
    return;
  }
  ++stats_.completions;
  stats_.turnaround_ns.record(clamp(turnaround_ns));
  if (wakeup_ns >= 0) stats_.wakeup_ns.record(clamp(wakeup_ns));
  if (delivery == Delivery::kPaced) stats_.completion_error_ns.record(clamp(error_ns));
}

RealtimeStats RealtimeDriver::stats() const {
  RealtimeStats out;
  {
    std::lock_guard lock(stats_mutex_);
    out = stats_;
  }
  std::lock_guard lock(mutex_);
  out.loop_cpu_ns = finished_cpu_ns_.load(std::memory_order_relaxed);
  for (const std::thread& thread : threads_) {
    out.loop_cpu_ns += thread_cpu_ns(const_cast<std::thread&>(thread).native_handle());
  }
  if (started_) {
    out.loop_wall_ns =
        static_cast<uint64_t>((stopped_ ? stopped_wall_ns_ : wall_now_ns()) - started_wall_ns_);
  }
  return out;
}

void RealtimeDriver::wait_idle() {
  if (on_device_thread()) misuse("wait_idle on the device thread would wait for itself");
  std::unique_lock lock(mutex_);
  idle_.wait(lock, [&] { return outstanding_ == 0; });
}

void RealtimeDriver::run_until_idle() {
  {
    std::lock_guard lock(mutex_);
    if (started_ || stopped_) misuse("run_until_idle with loop threads or after stop");
  }
  loop(true);
}

RealtimeDriver::Ticket* RealtimeDriver::take_arrivals(bool& stopping) {
  std::lock_guard lock(mutex_);
  Ticket* arrivals = inbox_head_;
  inbox_head_ = inbox_tail_ = nullptr;
  stopping = stopping_;
  return arrivals;
}

void RealtimeDriver::inject(Ticket* arrivals) {
  while (arrivals != nullptr) {
    Ticket* ticket = arrivals;
    arrivals = ticket->next;
    if (options_.timing == Timing::kModeled && !draining_) {
      // Events due before the arrival happen before it.
      uint64_t arrival_ns = std::max(sim_.now_ns(), virtual_of(ticket->arrival_wall_ns));
      sim_.run_until(arrival_ns);
      sim_.advance_to(std::max(sim_.now_ns(), arrival_ns));
    }
    Command& command = *ticket->command;
    command.sink = this;
    command.user_tag = reinterpret_cast<uint64_t>(ticket);
    device_.submit(command);
  }
}

void RealtimeDriver::lock_device() {
  for (int i = 0; i < 4096; ++i) {
    if (device_mutex_.try_lock()) return;
    cpu_relax();
  }
  device_mutex_.lock();
}

void RealtimeDriver::publish_next(int64_t wall_ns) {
  int64_t previous = next_wall_ns_.exchange(wall_ns, std::memory_order_seq_cst);
  if (wall_ns < previous && sleepers_.load(std::memory_order_seq_cst) != 0) {
    std::lock_guard lock(mutex_);
    wake_.notify_all();
  }
}

// Spins while the next event is within `spin_ns` (and for `spin_ns` after
// the loop ran out of work, for the next command); sleeps otherwise, to be
// woken `spin_ns` before the event, by an arrival, by stop, or by another
// loop thread publishing an earlier event. Waking a blocked thread takes
// tens of microseconds at the tail (more in a VM), longer than a flash read.
void RealtimeDriver::wait_turn(uint64_t seen_arrivals) {
  const auto spin = static_cast<int64_t>(options_.spin_ns);
  const int64_t idle_spin_until = wall_now_ns() + spin;
  for (;;) {
    if (arrivals_.load(std::memory_order_acquire) != seen_arrivals ||
        stop_hint_.load(std::memory_order_acquire)) {
      return;
    }
    const int64_t target = next_wall_ns_.load(std::memory_order_acquire);
    const int64_t now = wall_now_ns();
    if (options_.timing == Timing::kOff && target != kNoEvent) return;
    if (now >= target) return;
    if (target == kNoEvent ? now < idle_spin_until : target - now <= spin) {
      cpu_relax();
      continue;
    }
    std::unique_lock lock(mutex_);
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    // Re-read under the lock: whoever changes these notifies under it when
    // it sees a sleeper, so nothing is missed between the check and the wait.
    if (inbox_head_ == nullptr && !stopping_ &&
        arrivals_.load(std::memory_order_seq_cst) == seen_arrivals &&
        next_wall_ns_.load(std::memory_order_seq_cst) == target) {
      if (target == kNoEvent) {
        wake_.wait(lock);
      } else {
        wake_.wait_until(lock, SteadyClock::time_point(std::chrono::nanoseconds(target - spin)));
      }
    }
    sleepers_.fetch_sub(1, std::memory_order_seq_cst);
    if (target == kNoEvent) return;  // re-check everything under the device lock
  }
}

void RealtimeDriver::drain(Ticket* arrivals) {
  draining_ = true;
  inject(arrivals);
  auto outstanding = [&] {
    std::lock_guard lock(mutex_);
    return outstanding_;
  };
  // Every event until the last accepted command is delivered; the device
  // finishes what it has, since nothing new is accepted.
  while (outstanding() != 0 && sim_.step()) {
  }
  draining_ = false;
}

// Runs until stop() (loop threads) or until nothing is left to do
// (run_until_idle). Each turn, under the device lock, takes the arrivals and
// runs the next event if it is due; otherwise it publishes the next event's
// wall time and waits outside the lock.
void RealtimeDriver::loop(bool until_idle) {
  in_loop_.fetch_add(1);
  TimerSlack slack;
  for (;;) {
    lock_device();
    const uint64_t seen_arrivals = arrivals_.load(std::memory_order_acquire);
    Turn turn = take_turn(until_idle);  // lets the device lock go
    if (turn == Turn::kDone) break;
    if (turn == Turn::kWait) wait_turn(seen_arrivals);
  }
  in_loop_.fetch_sub(1);
}

RealtimeDriver::Turn RealtimeDriver::take_turn(bool until_idle) {
  std::lock_guard device(device_mutex_, std::adopt_lock);
  DeviceOwner owner(this);
  bool stopping = false;
  Ticket* arrivals = take_arrivals(stopping);
  if (stopping) {
    drain(arrivals);  // another loop thread then finds nothing left
    return Turn::kDone;
  }
  inject(arrivals);
  if (sim_.empty()) {
    publish_next(kNoEvent);
    if (!until_idle) return Turn::kWait;
    std::lock_guard lock(mutex_);
    return inbox_head_ == nullptr ? Turn::kDone : Turn::kAgain;
  }
  const int64_t due = options_.timing == Timing::kOff ? INT64_MIN : wall_of(sim_.next_time_ns());
  if (wall_now_ns() < due) {
    publish_next(due);
    return Turn::kWait;
  }
  sim_.step();
  return Turn::kAgain;
}

void RealtimeDriver::stop() {
  if (on_device_thread()) misuse("stop() on the device thread");
  std::lock_guard one_at_a_time(stop_mutex_);  // a second caller waits for the first
  {
    std::lock_guard lock(mutex_);
    if (stopped_) return;
    stopping_ = true;
    stop_hint_.store(true, std::memory_order_release);
  }
  wake_.notify_all();
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(mutex_);  // stats() reads threads_
    threads.swap(threads_);
  }
  for (auto& thread : threads) thread.join();
  {
    // Without loop threads (or with run_until_idle on another thread, which
    // stops at its next turn) what was accepted completes here.
    std::lock_guard device(device_mutex_);
    DeviceOwner owner(this);
    bool stopping = false;
    drain(take_arrivals(stopping));
  }
  // Released callers may still be reading their tickets.
  std::unique_lock lock(mutex_);
  idle_.wait(lock, [&] { return sync_callers_ == 0; });
  ZL_ASSERT(outstanding_ == 0 && inbox_head_ == nullptr);
  stopped_ = true;
  stopped_wall_ns_ = wall_now_ns();
}

}  // namespace zonelab
