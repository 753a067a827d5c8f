// Assembling, running and closing a device stack; see stack.h. The two
// blocking devices and the two clocks live here, one of each per driver.
#include "stack/stack.h"

#include <fmt/format.h>
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "controller/device_state.h"
#include "flash/flash_state.h"
#include "stack/command_record.h"
#include "stack/device_factory.h"
#include "stack/image_journal.h"
#include "zonelab/assert.h"

namespace zonelab {
namespace {

// ---------------------------------------------------------------------------
// Virtual time: one caller, who runs the simulation itself.

class VirtualBlocking final : public BlockingDevice, private CompletionSink {
 public:
  VirtualBlocking(Device& top, Simulator& sim, const std::atomic<bool>& refusing,
                  const std::atomic<bool>& powered_off)
      : top_(top), sim_(sim), refusing_(refusing), powered_off_(powered_off) {}

  bool submit_wait(Command& command) override {
    if (refusing_) return false;
    ZL_ASSERT(!busy_ && "a virtual-time stack takes one blocking caller at a time");
    busy_ = true;
    done_ = false;
    command.sink = this;
    top_.submit(command);
    // Bounded: a submitted command completes after finitely many events.
    while (!done_) ZL_ASSERT(sim_.step());
    command.sink = nullptr;
    busy_ = false;
    // A completion after a power cut never reached the host.
    return !powered_off_;
  }

  bool submit_all(std::span<Command* const> commands) override {
    if (refusing_) return false;
    ZL_ASSERT(!busy_ && "a virtual-time stack takes one blocking caller at a time");
    busy_ = true;
    waiting_ = commands.size();
    for (Command* c : commands) {
      c->sink = this;
      top_.submit(*c);
    }
    while (waiting_ > 0) ZL_ASSERT(sim_.step());
    for (Command* c : commands) c->sink = nullptr;
    busy_ = false;
    return !powered_off_;
  }

  const DeviceInfo& info() const override { return top_.info(); }

 private:
  void on_complete(Command&) override {
    done_ = true;
    if (waiting_ > 0) --waiting_;
  }

  Device& top_;
  Simulator& sim_;
  const std::atomic<bool>& refusing_;
  const std::atomic<bool>& powered_off_;
  bool busy_ = false;
  bool done_ = false;
  size_t waiting_ = 0;  // submit_all's commands not yet completed
};

class VirtualClock final : public Clock {
 public:
  explicit VirtualClock(Simulator& sim) : sim_(sim) {}
  uint64_t now_ns() const override { return sim_.now_ns(); }
  uint64_t add_timer(uint64_t delay_ns, TimerFn fn) override {
    return timers_.add(sim_.now_ns() + delay_ns, std::move(fn));
  }
  void cancel(uint64_t id) override { timers_.cancel(id); }
  void poll() override {
    // A timer may add timers; each pass runs one, so those due now run too.
    while (TimerFn fn = timers_.take_due(sim_.now_ns())) fn();
  }
  void stop() override { timers_ = TimerList(); }

 private:
  Simulator& sim_;
  TimerList timers_;
};

// ---------------------------------------------------------------------------
// Real time: the device thread runs the simulation; callers wait.

class RealtimeBlocking final : public BlockingDevice {
 public:
  RealtimeBlocking(RealtimeDriver& driver, const DeviceInfo& info,
                   const std::atomic<bool>& refusing, const std::atomic<bool>& powered_off)
      : driver_(driver), info_(info), refusing_(refusing), powered_off_(powered_off) {}
  bool submit_wait(Command& command) override {
    // A completion after a power cut never reached the host.
    return !refusing_ && driver_.submit_sync(command) && !powered_off_;
  }
  bool submit_all(std::span<Command* const> commands) override {
    if (refusing_) return false;
    Batch batch;
    bool accepted = true;
    for (Command* c : commands) {
      c->sink = &batch;
      {
        std::lock_guard lock(batch.mutex);
        ++batch.waiting;
      }
      if (!driver_.submit_async(*c)) {
        c->sink = nullptr;
        std::lock_guard lock(batch.mutex);
        --batch.waiting;
        accepted = false;
      }
    }
    {
      std::unique_lock lock(batch.mutex);
      batch.done.wait(lock, [&] { return batch.waiting == 0; });
    }
    for (Command* c : commands) c->sink = nullptr;
    return accepted && !powered_off_;
  }
  const DeviceInfo& info() const override { return info_; }

 private:
  // The commands of one submit_all: their completions (on the device
  // thread) count down; the caller waits for the last.
  struct Batch final : CompletionSink {
    std::mutex mutex;
    std::condition_variable done;
    size_t waiting = 0;
    void on_complete(Command&) override {
      std::lock_guard lock(mutex);
      if (--waiting == 0) done.notify_all();
    }
  };

  RealtimeDriver& driver_;
  const DeviceInfo& info_;
  const std::atomic<bool>& refusing_;
  const std::atomic<bool>& powered_off_;
};

// Timers on a thread of their own, in device time as the driver maps the
// wall clock.
class WallClock final : public Clock {
 public:
  explicit WallClock(const RealtimeDriver& driver) : driver_(driver), thread_([this] { run(); }) {}
  ~WallClock() override { stop(); }
  void stop() override {
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return;
      stopping_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }

  uint64_t now_ns() const override { return driver_.virtual_of(RealtimeDriver::wall_now_ns()); }
  uint64_t add_timer(uint64_t delay_ns, TimerFn fn) override {
    uint64_t id = 0;
    {
      std::lock_guard lock(mutex_);
      id = timers_.add(now_ns() + delay_ns, std::move(fn));
    }
    wake_.notify_all();
    return id;
  }
  void cancel(uint64_t id) override {
    std::unique_lock lock(mutex_);
    timers_.cancel(id);
    if (std::this_thread::get_id() == thread_.get_id()) return;
    done_.wait(lock, [&] { return running_ != id; });
  }
  void poll() override {}

 private:
  void run() {
    std::unique_lock lock(mutex_);
    while (!stopping_) {
      if (TimerFn fn = timers_.take_due(now_ns(), &running_)) {
        lock.unlock();
        fn();
        lock.lock();
        running_ = 0;
        done_.notify_all();
        continue;
      }
      uint64_t due = timers_.next_due_ns();
      if (due == UINT64_MAX) {
        wake_.wait(lock);
      } else {
        auto wall = std::chrono::nanoseconds(driver_.wall_of(due));
        wake_.wait_until(lock, std::chrono::steady_clock::time_point(wall));
      }
    }
  }

  const RealtimeDriver& driver_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;  // the running timer finished
  TimerList timers_;
  uint64_t running_ = 0;  // the id of the timer running, or 0
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace

Stack::~Stack() {
  if (!closed_) close(Save::kNo);
}

Result<std::unique_ptr<Stack>> Stack::assemble(std::unique_ptr<Stack> stack, const Config& config,
                                               std::unique_ptr<Backing> backing,
                                               const ImageState* state,
                                               const StackOptions& options) {
  auto device = make_device(config, stack->sim_, std::move(backing));
  if (!device) return Error{device.error()};
  stack->device_ = std::move(device).value();
  if (state != nullptr) {
    Outcome imported = stack->device_->import_state(*state);
    if (!imported) return Error{imported.error()};
  }
  HostConfig host = config.host;
  if (!options.scheduler.empty()) host.scheduler = options.scheduler;
  auto top = with_scheduler(*stack->device_, stack->sim_, host, stack->host_queue_);
  if (!top) return Error{top.error()};
  stack->top_ = *top;
  stack->scheduler_ = host.scheduler;
  stack->io_ = std::make_unique<VirtualBlocking>(*stack->top_, stack->sim_, stack->refusing_,
                                                 stack->powered_off_);
  stack->clock_ = std::make_unique<VirtualClock>(stack->sim_);
  if (options.realtime) {
    Outcome started = stack->start_realtime(options.realtime_options);
    if (!started) return Error{started.error()};
  }
  return stack;
}

Outcome Stack::start_realtime(const RealtimeOptions& options) {
  ZL_ASSERT(realtime_ == nullptr && !closed_);
  Outcome checked = check_realtime_options(options);
  if (!checked) return checked;
  realtime_ = std::make_unique<RealtimeDriver>(*top_, sim_, options);
  realtime_->start();
  io_ = std::make_unique<RealtimeBlocking>(*realtime_, device_->info(), refusing_, powered_off_);
  clock_ = std::make_unique<WallClock>(*realtime_);
  return {};
}

Result<std::unique_ptr<Stack>> Stack::open(const std::string& image_path,
                                           const StackOptions& options) {
  auto image = Image::open(
      image_path, options.read_only ? Image::Access::kReadOnly : Image::Access::kReadWrite);
  if (!image) return Error{image.error()};
  auto stack = std::unique_ptr<Stack>(new Stack());
  stack->image_ = std::move(image).value();
  const ImageState& state = stack->image_->state();
  auto checked = check_device_config(state.config);
  if (!checked) return Error{fmt::format("{}: corrupt image: {}", image_path, checked.error())};
  std::unique_ptr<Backing> backing;
  if (state.config.store.backing == "file") {
    backing = stack->image_->file_backing(state.config.host.lba_size_bytes);
  }
  StackOptions virtual_options = options;
  virtual_options.realtime = false;  // the journal is replayed in virtual time
  auto assembled =
      assemble(std::move(stack), state.config, std::move(backing), &state, virtual_options);
  if (!assembled) return Error{fmt::format("{}: {}", image_path, assembled.error())};
  Outcome attached = (*assembled)->attach_image();
  if (!attached) return Error{fmt::format("{}: {}", image_path, attached.error())};
  if (options.realtime) {
    Outcome started = (*assembled)->start_realtime(options.realtime_options);
    if (!started) return Error{fmt::format("{}: {}", image_path, started.error())};
  }
  return assembled;
}

Outcome Stack::attach_image() {
  if (!image_->read_only()) {
    // A file-size limit below the image's size would fail writes to its
    // far end -- the data, the journal -- halfway through a run.
    struct rlimit limit;
    uint64_t file_bytes = image_->file_bytes();
    if (::getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
        limit.rlim_cur < file_bytes) {
      return Error{fmt::format(
          "the file-size limit ({} bytes, `ulimit -f`) is below the image's size ({} bytes)",
          static_cast<uint64_t>(limit.rlim_cur), file_bytes)};
    }
  }
  const DeviceInfo& info = device_->info();
  uint64_t data_bytes_expected =
      device_->config().store.backing == "file" ? info.backing_lbas() * info.lba_size_bytes : 0;
  if (image_->data_bytes() != data_bytes_expected) {
    return Error{fmt::format(
        "corrupt image: its header gives a data region of {} bytes; its configuration ({} "
        "backing, {} LBAs of {} bytes) needs {}",
        image_->data_bytes(), device_->config().store.backing, info.capacity_lbas,
        info.lba_size_bytes, data_bytes_expected)};
  }
  if (!image_->fallback_note().empty()) notes_.push_back(image_->fallback_note());
  Outcome replayed = replay_journal();
  if (!replayed) return replayed;
  device_->recovered();
  if (replayed_ != 0 && info.volatile_write_cache && image_->read_only()) {
    // What a writable open will find, in memory only: nothing is written.
    (void)device_->power_loss(true);
  }
  if (image_->read_only()) return {};
  if (replayed_ != 0 && info.volatile_write_cache) {
    // The process ended without closing the image: for the drive, the
    // power went. Its volatile write cache loses what no Flush covered and
    // was not on flash by then (on the replayed commands' timeline); the
    // checkpoint below keeps the result.
    uint32_t zones = device_->power_loss();
    if (zones != 0) {
      notes_.push_back(fmt::format(
          "the image was not closed: its volatile write cache lost the unflushed data of {} "
          "zone(s)",
          zones));
    }
  }
  // An image made before journals existed gets one; one that was replayed
  // is saved, so the journal starts empty again.
  Outcome ready = !image_->has_journal() ? image_->add_journal()
                  : replayed_ != 0       ? checkpoint()
                                         : Outcome();
  if (!ready) return ready;
  journal_ = std::make_unique<ImageJournal>(
      *image_, [this] { return checkpoint(); }, [this] { refusing_ = true; });
  device_->set_command_log(journal_.get());
  return {};
}

Outcome Stack::replay_journal() {
  const auto& records = image_->journal_found();
  if (records.empty()) return {};
  image_->set_replaying(true);
  Outcome outcome;
  for (size_t i = 0; i < records.size() && outcome; ++i) {
    auto record = decode_command_record(records[i]);
    if (!record) {
      outcome = Error{fmt::format("corrupt image: journal record {}: {}", i, record.error())};
      break;
    }
    if (record->kind == CommandRecord::Kind::kFailDie) {
      const FlashConfig& f = device_->config().flash;
      uint64_t dies = f.channels * f.dies_per_channel;
      Outcome failed =
          record->zone < dies
              ? device_->inject_die(static_cast<uint32_t>(record->zone / f.dies_per_channel),
                                    static_cast<uint32_t>(record->zone % f.dies_per_channel),
                                    record->failed)
              : Outcome(Error{fmt::format("die {} of {}", record->zone, dies)});
      if (!failed)
        outcome = Error{fmt::format("corrupt image: journal record {}: {}", i, failed.error())};
      continue;
    }
    if (record->kind == CommandRecord::Kind::kLost) {
      Outcome lost = device_->replay_loss(record->zone, record->slba);
      if (!lost) outcome = Error{fmt::format("journal record {}: {}", i, lost.error())};
      continue;
    }
    if (record->kind == CommandRecord::Kind::kInject) {
      Outcome injected = device_->inject_zone(record->zone, record->state);
      if (!injected)
        outcome = Error{fmt::format("corrupt image: journal record {}: {}", i, injected.error())};
      continue;
    }
    Command command = record->command();
    if (command.opcode == Opcode::kWrite || command.opcode == Opcode::kAppend) {
      if (command.nlb == 0 || command.nlb > info().capacity_lbas) {
        outcome = Error{fmt::format("corrupt image: journal record {}: {} blocks", i, command.nlb)};
        break;
      }
    }
    // The device itself, not the scheduler: the records are in the order
    // the device took the commands.
    VirtualBlocking replay(*device_, sim_, refusing_, powered_off_);
    replay.submit_wait(command);
    sim_.run();
    if (command.status != Status::kSuccess) {
      outcome = Error{
          fmt::format("corrupt image: journal record {} ({} at LBA {}) does not apply: {}", i,
                      opcode_name(command.opcode), command.slba, status_name(command.status))};
    }
  }
  image_->set_replaying(false);
  if (!outcome) return outcome;
  replayed_ = records.size();
  notes_.push_back(
      fmt::format("replayed {} command(s) from the journal (the image was not closed "
                  "after them)",
                  replayed_));
  return {};
}

void Stack::power_cut() {
  auto cut = [this] {
    powered_off_ = true;
    refusing_ = true;
    if (image_ != nullptr) image_->freeze();
  };
  if (realtime_ != nullptr) {
    realtime_->with_device(cut);
  } else {
    cut();
  }
}

void Stack::power_cut_after(uint64_t records) {
  ZL_ASSERT(journal_ != nullptr && "a power cut needs a writable image");
  auto set = [&] {
    journal_->cut_after(journal_->recorded() + records, [this] {
      powered_off_ = true;
      refusing_ = true;
    });
  };
  if (realtime_ != nullptr) {
    realtime_->with_device(set);
  } else {
    set();
  }
}

uint64_t Stack::commands_recorded() const { return journal_ != nullptr ? journal_->recorded() : 0; }

void Stack::defer_durability() {
  if (journal_ != nullptr) journal_->set_lazy(true);
}

std::string Stack::data_error() const {
  return image_ != nullptr ? image_->data_error() : std::string();
}

std::string Stack::journal_error() const {
  return journal_ != nullptr ? journal_->error() : std::string();
}

Outcome Stack::checkpoint() {
  if (image_ == nullptr || image_->read_only()) return {};
  ImageState state;
  device_->export_state(state);
  return image_->save(state);
}

Result<std::unique_ptr<Stack>> Stack::make(const Config& config, const StackOptions& options) {
  auto checked = check_device_config(config);
  if (!checked) return Error{checked.error()};
  return assemble(std::unique_ptr<Stack>(new Stack()), config, nullptr, nullptr, options);
}

namespace {

// An image at `path` holding a fresh device of `config`, with the sections
// of `kept` (types `keep`) carried over.
Result<CreatedImage> write_fresh_image(const std::string& path, const Config& config, bool force,
                                       const ImageState* kept = nullptr,
                                       std::initializer_list<uint32_t> keep = {}) {
  Outcome checked = check_device_config(config);
  if (!checked) return Error{checked.error()};
  Simulator sim;
  auto device = make_device(config, sim, make_none_backing());
  if (!device) return Error{device.error()};
  ImageState state;
  (*device)->export_state(state);
  for (uint32_t type : keep) {
    if (auto it = kept->sections.find(type); it != kept->sections.end()) {
      state.sections[type] = it->second;
    }
  }
  const DeviceInfo& info = (*device)->info();
  uint64_t data_bytes =
      config.store.backing == "file" ? info.backing_lbas() * info.lba_size_bytes : 0;
  auto created = Image::create(path, state, data_bytes, force);
  if (!created) return Error{created.error()};
  return CreatedImage{info, config.store.backing};
}

}  // namespace

Result<CreatedImage> Stack::create_image(const std::string& path, Config config, bool force) {
  if (config.store.backing.empty()) config.store.backing = "file";
  return write_fresh_image(path, config, force);
}

Result<CreatedImage> Stack::format_image(const std::string& path, const std::string& zone_format,
                                         const std::string& parity) {
  // Read the image as it is (its journal replayed in memory), without
  // writing it: a refused format leaves it as it was.
  StackOptions read_only;
  read_only.read_only = true;
  ImageState old_state;
  Config config;
  {
    auto old = Stack::open(path, read_only);
    if (!old) return Error{old.error()};
    if ((*old)->config().interface != "zns") {
      return Error{fmt::format(
          "{}: a block-interface device has no zones to format (interface = \"block\")", path)};
    }
    (*old)->device_->export_state(old_state);
    config = (*old)->config();
  }
  auto sets = parse_zone_format(zone_format);
  if (!sets) return Error{"--zones: " + sets.error()};
  if (sets->empty()) return Error{"--zones: name at least one zone set, e.g. 512MiB:64,2GiB:480"};
  config.zns.format = zone_format_text(*sets);
  if (!parity.empty()) {
    if (parity != "none" && parity != "in-zone" && parity != "separate") {
      return Error{
          fmt::format("--parity {}: expected none, in-zone or separate", one_line(parity, 40))};
    }
    config.zns.parity_placement = parity;
  }
  // The flash is the same flash: its wear and the device's lifetime stay.
  return write_fresh_image(path, config, true, &old_state, {kSectionEraseCounts, kSectionLifetime});
}

const std::string& Stack::image_path() const {
  static const std::string kNone;
  return image_ != nullptr ? image_->path() : kNone;
}

Device& Stack::device() {
  ZL_ASSERT(realtime_ == nullptr);
  return *top_;
}

Simulator& Stack::sim() {
  ZL_ASSERT(realtime_ == nullptr);
  return sim_;
}

void Stack::drive() {
  ZL_ASSERT(realtime_ == nullptr);
  sim_.run();
}

std::unique_ptr<RealtimeDriver> Stack::pace(const RealtimeOptions& options) {
  ZL_ASSERT(realtime_ == nullptr);
  return std::make_unique<RealtimeDriver>(*top_, sim_, options);
}

ZoneDescriptor Stack::zone(uint32_t index) const {
  ZL_ASSERT(index < device_->info().zone_count);
  ZoneDescriptor d;
  inspect([&](const ModeledDevice& device) { d = device.zone(index); });
  return d;
}

void Stack::inspect(const std::function<void(const ModeledDevice&)>& fn) const {
  if (realtime_ != nullptr) {
    realtime_->with_device([&] { fn(*device_); });
  } else {
    fn(*device_);
  }
}

void Stack::reset_stats() {
  if (realtime_ != nullptr) {
    realtime_->with_device([&] { device_->reset_stats(); });
  } else {
    device_->reset_stats();
  }
}

Outcome Stack::inject_die(uint32_t channel, uint32_t way, bool failed) {
  Outcome outcome;
  auto inject = [&] { outcome = device_->inject_die(channel, way, failed); };
  if (realtime_ != nullptr) {
    realtime_->with_device(inject);
  } else {
    inject();
  }
  return outcome;
}

uint32_t Stack::power_loss() {
  uint32_t zones = 0;
  auto cut = [&] { zones = device_->power_loss(); };
  if (realtime_ != nullptr) {
    realtime_->with_device(cut);
  } else {
    cut();
  }
  return zones;
}

Outcome Stack::inject_zone(uint32_t zone, ZoneState state) {
  Outcome outcome;
  auto inject = [&] { outcome = device_->inject_zone(zone, state); };
  if (realtime_ != nullptr) {
    realtime_->with_device(inject);
  } else {
    inject();
  }
  return outcome;
}

bool Stack::submit_async(Command& command) {
  ZL_ASSERT(realtime_ != nullptr && "submit_async needs a real-time stack");
  return !refusing_ && realtime_->submit_async(command);
}

RealtimeStats Stack::realtime_stats() const {
  return realtime_ != nullptr ? realtime_->stats() : RealtimeStats{};
}

Outcome Stack::close(Save save) {
  if (closed_) return {};
  closed_ = true;
  refusing_ = true;
  if (clock_ != nullptr) clock_->stop();
  if (realtime_ != nullptr) realtime_->stop();
  if (image_ == nullptr || image_->read_only() || device_ == nullptr) return {};
  if (powered_off_) return {};  // the image stays as the cut left it
  if (journal_ != nullptr && !journal_->flush()) {
    // The device went on past what the journal holds; saving its state now
    // would put commands reported failed into the image. The image keeps
    // what was answered before the failure.
    device_->set_command_log(nullptr);
    return Error{fmt::format(
        "{}: its journal could not be written ({}); the image holds the commands answered "
        "before that",
        image_->path(), journal_->error())};
  }
  device_->set_command_log(nullptr);
  bool changed = image_->journal_records() != 0;
  if (save == Save::kAlways || (save == Save::kIfChanged && changed)) return checkpoint();
  return {};
}

}  // namespace zonelab
