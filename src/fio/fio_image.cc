#include "fio/fio_image.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <map>

#include "stack/stack_report.h"
#include "zonelab/assert.h"

namespace zonelab::fio {

namespace {

// Deallocate's block count is 32 bits wide; a trim goes in pieces of this
// many LBAs.
constexpr uint64_t kTrimPieceLbas = 1u << 20;

// The errno Linux's NVMe driver gives a command that failed with `status`
// (nvme_error_status): zone errors are EIO, the open and active limits
// ETOOMANYREFS, a medium error ENODATA, a bad field EOPNOTSUPP, an LBA out of
// range EREMOTEIO.
int errno_of(Status status) {
  switch (status) {
    case Status::kSuccess:
      return 0;
    case Status::kInvalidField:
      return EOPNOTSUPP;
    case Status::kLbaOutOfRange:
      return EREMOTEIO;
    case Status::kTooManyActiveZones:
    case Status::kTooManyOpenZones:
      return ETOOMANYREFS;
    case Status::kUnrecoveredReadError:
      return ENODATA;
    case Status::kZoneBoundaryError:
    case Status::kZoneIsFull:
    case Status::kZoneIsReadOnly:
    case Status::kZoneIsOffline:
    case Status::kZoneInvalidWrite:
    case Status::kInvalidZoneStateTransition:
    case Status::kWriteFault:
      return EIO;
  }
  return EIO;
}

std::mutex& registry_mutex() {
  static std::mutex mutex;
  return mutex;
}

std::map<std::string, std::weak_ptr<SharedImage>>& registry() {
  static auto* images = new std::map<std::string, std::weak_ptr<SharedImage>>();
  return *images;
}

// The image's own name for the registry: the same file under two spellings
// is one image.
std::string canonical(const std::string& path) {
  char* real = ::realpath(path.c_str(), nullptr);
  if (real == nullptr) return path;
  std::string out(real);
  std::free(real);
  return out;
}

}  // namespace

std::string describe(const EngineOptions& options) {
  std::string out = fmt::format("zonelab_timing={}", timing_name(options.timing));
  if (options.timing == Timing::kModeled) {
    out += fmt::format(", zonelab_time_scale={:g}", options.time_scale);
  }
  if (!options.scheduler.empty()) out += fmt::format(", zonelab_scheduler={}", options.scheduler);
  if (options.batched_journal) out += ", zonelab_journal=batched";
  if (!options.stats_path.empty()) out += fmt::format(", zonelab_stats={}", options.stats_path);
  return out;
}

// ---------------------------------------------------------------------------

Result<std::shared_ptr<SharedImage>> SharedImage::acquire(const std::string& path,
                                                          const EngineOptions& options) {
  std::lock_guard lock(registry_mutex());
  std::string key = canonical(path);
  auto& images = registry();
  if (auto it = images.find(key); it != images.end()) {
    if (auto open = it->second.lock()) {
      if (open->options_ != options) {
        return Error{
            fmt::format("{}: already open in this fio with {}; every job on an image "
                        "runs it one way (asked for {})",
                        path, describe(open->options_), describe(options))};
      }
      return open;
    }
    images.erase(it);
  }
  StackOptions so;
  so.scheduler = options.scheduler;
  if (options.timing == Timing::kModeled) {
    so.realtime = true;
    so.realtime_options.timing = Timing::kModeled;
    so.realtime_options.time_scale = options.time_scale;
    if (auto ok = check_realtime_options(so.realtime_options); !ok) return Error{ok.error()};
  }
  auto stack = Stack::open(path, so);
  if (!stack) return Error{stack.error()};
  auto image = std::shared_ptr<SharedImage>(new SharedImage());
  image->path_ = path;
  image->options_ = options;
  image->stack_ = std::move(stack).value();
  image->info_ = image->stack_->info();
  if (options.batched_journal) image->stack_->defer_durability();
  images[key] = image;
  return image;
}

SharedImage::~SharedImage() {
  if (stack_ == nullptr) return;
  if (!options_.stats_path.empty()) {
    // Best effort: the run is over and fio has printed its own report.
    (void)write_stats_file(options_.stats_path, stats_json());
  }
  (void)stack_->close();
}

uint32_t SharedImage::max_open_zones() const {
  uint32_t open = info_.max_open;
  uint32_t active = info_.max_active;
  if (open == 0) return active;
  if (active == 0) return open;
  return std::min(open, active);
}

std::vector<ZoneDescriptor> SharedImage::zones_from(uint64_t offset, uint32_t count) {
  std::vector<ZoneDescriptor> out;
  if (!zoned() || info_.lba_size_bytes == 0) return out;
  uint64_t lba = offset / info_.lba_size_bytes;
  if (lba >= info_.capacity_lbas) return out;
  uint32_t first = info_.zone_of_lba(lba);
  uint32_t end =
      static_cast<uint32_t>(std::min<uint64_t>(info_.zone_count, uint64_t{first} + count));
  out.reserve(end - first);
  std::unique_lock<std::mutex> lock(sim_mutex_, std::defer_lock);
  if (!realtime()) lock.lock();
  for (uint32_t z = first; z < end; ++z) out.push_back(stack_->zone(z));
  return out;
}

bool SharedImage::run_blocking(Command& command) {
  if (realtime()) return stack_->io().submit_wait(command);
  std::lock_guard lock(sim_mutex_);
  return stack_->io().submit_wait(command);
}

Outcome SharedImage::zone_action(ZoneAction action, uint64_t offset, uint64_t length) {
  if (!zoned())
    return Error{fmt::format("{} is a {} device: it has no zones", path_, info_.interface)};
  const uint64_t lba_bytes = info_.lba_size_bytes;
  if (length == 0) return {};
  if (offset % lba_bytes != 0 || length % lba_bytes != 0 ||
      offset / lba_bytes >= info_.capacity_lbas ||
      length / lba_bytes > info_.capacity_lbas - offset / lba_bytes) {
    return Error{fmt::format("zone {} of bytes {}+{}: not whole LBAs inside the {}-byte namespace",
                             zone_action_name(action), offset, length, size_bytes())};
  }
  uint64_t first_lba = offset / lba_bytes;
  uint64_t end_lba = first_lba + length / lba_bytes;
  uint32_t zone = info_.zone_of_lba(first_lba);
  while (zone < info_.zone_count && info_.zone_start_lba(zone) < end_lba) {
    Command c;
    c.opcode = Opcode::kZoneManagementSend;
    c.action = action;
    c.slba = info_.zone_start_lba(zone);
    if (!run_blocking(c)) return Error{fmt::format("{}: the device takes no more commands", path_)};
    if (c.status != Status::kSuccess) {
      return Error{
          fmt::format("zone {} ({}): {}", zone, zone_action_name(action), status_name(c.status))};
    }
    ++zone;
  }
  return {};
}

std::unique_ptr<JobQueue> SharedImage::new_queue() {
  return std::unique_ptr<JobQueue>(new JobQueue(*this));
}

std::string SharedImage::stats_json() {
  nlohmann::ordered_json out;
  out["image"] = path_;
  out["timing"] = timing_name(options_.timing);
  out["scheduler"] = stack_->scheduler();
  std::unique_lock<std::mutex> lock(sim_mutex_, std::defer_lock);
  if (!realtime()) lock.lock();
  uint64_t now = stack_->clock().now_ns();
  stack_->inspect(
      [&](const ModeledDevice& device) { out["device"] = device_counters_json(device, now); });
  if (realtime()) {
    RealtimeOptions ro;
    ro.time_scale = options_.time_scale;
    out["realtime"] = realtime_stats_json(ro, stack_->realtime_stats());
  }
  out["virtual_time_ns"] = now;
  return out.dump(2) + "\n";
}

// ---------------------------------------------------------------------------

JobQueue::~JobQueue() {
  // Commands still with the device point at this queue: wait for them.
  while (outstanding_ > 0) {
    commit();
    unsigned got = reap(1, UINT_MAX, std::nullopt);
    if (got == 0) break;
  }
}

int JobQueue::queue(IoKind kind, uint64_t offset, uint64_t length, uint8_t* data, void* cookie) {
  const DeviceInfo& info = image_.info_;
  const uint64_t lba_bytes = info.lba_size_bytes;
  uint64_t lba = offset / lba_bytes;
  uint64_t nlb = length / lba_bytes;
  if (kind != IoKind::kFlush) {
    if (offset % lba_bytes != 0 || length % lba_bytes != 0 || nlb == 0) return EINVAL;
    if (lba >= info.capacity_lbas || nlb > info.capacity_lbas - lba) return EINVAL;
    if (kind != IoKind::kTrim && nlb > UINT32_MAX) return EINVAL;
  }
  Slot* taken;
  if (free_.empty()) {
    taken = slots_.emplace_back(std::make_unique<Slot>()).get();
  } else {
    taken = free_.back();
    free_.pop_back();
  }
  Slot& slot = *taken;
  slot.pieces.clear();
  slot.cookie = cookie;
  slot.status = Status::kSuccess;
  slot.error = 0;
  auto add = [&](Opcode opcode, uint64_t at, uint64_t count, uint8_t* bytes) {
    Command& c = slot.pieces.emplace_back();
    c.opcode = opcode;
    c.slba = at;
    c.nlb = static_cast<uint32_t>(count);
    c.data = bytes;
    c.user_tag = reinterpret_cast<uintptr_t>(taken);
    c.sink = this;
  };
  switch (kind) {
    case IoKind::kRead:
      add(Opcode::kRead, lba, nlb, data);
      break;
    case IoKind::kWrite:
      add(Opcode::kWrite, lba, nlb, data);
      break;
    case IoKind::kTrim:
      for (uint64_t done = 0; done < nlb; done += kTrimPieceLbas) {
        add(Opcode::kDeallocate, lba + done, std::min(kTrimPieceLbas, nlb - done), nullptr);
      }
      break;
    case IoKind::kFlush:
      add(Opcode::kFlush, 0, 0, nullptr);
      break;
  }
  slot.remaining = static_cast<unsigned>(slot.pieces.size());
  pending_.push_back(taken);
  ++outstanding_;
  return 0;
}

void JobQueue::commit() {
  if (pending_.empty()) return;
  if (image_.realtime()) {
    for (Slot* slot : pending_) {
      for (Command& c : slot->pieces) {
        if (!image_.stack_->submit_async(c)) {
          // Refused (closing, or the journal failed): it never reaches the
          // device, and completes here with an error.
          c.status = Status::kWriteFault;
          on_complete(c);
        }
      }
    }
  } else {
    std::lock_guard lock(image_.sim_mutex_);
    for (Slot* slot : pending_) {
      for (Command& c : slot->pieces) image_.stack_->device().submit(c);
    }
  }
  pending_.clear();
}

void JobQueue::on_complete(Command& command) {
  // In virtual time the completion runs inside a step, under the image's
  // lock, which then also guards done_; in real time on the device thread.
  std::unique_lock<std::mutex> lock(mutex_, std::defer_lock);
  if (image_.realtime()) lock.lock();
  Slot& slot = *reinterpret_cast<Slot*>(command.user_tag);
  if (command.status != Status::kSuccess && slot.status == Status::kSuccess) {
    slot.status = command.status;
    slot.error = errno_of(command.status);
  }
  if (--slot.remaining == 0) {
    done_.push_back(&slot);
    if (image_.realtime()) completed_.notify_one();
  }
}

unsigned JobQueue::reap(unsigned min, unsigned max,
                        std::optional<std::chrono::nanoseconds> timeout) {
  events_.clear();
  if (max == 0) return 0;
  unsigned in_flight = outstanding_ - static_cast<unsigned>(pending_.size());
  min = std::min(min, in_flight);
  std::unique_lock<std::mutex> lock;
  if (image_.realtime()) {
    lock = std::unique_lock(mutex_);
    auto enough = [&] { return done_.size() >= min; };
    if (timeout) {
      completed_.wait_for(lock, *timeout, enough);
    } else {
      completed_.wait(lock, enough);
    }
  } else {
    lock = std::unique_lock(image_.sim_mutex_);
    Simulator& simulator = image_.stack_->sim();
    while (done_.size() < min) {
      // Every command in flight completes after finitely many events.
      if (!simulator.step()) break;
    }
  }
  size_t take = std::min<size_t>(done_.size(), max);
  for (size_t i = 0; i < take; ++i) {
    Slot* slot = done_[i];
    events_.push_back(Event{slot->cookie, slot->error, slot->status});
    free_.push_back(slot);
  }
  done_.erase(done_.begin(), done_.begin() + static_cast<ptrdiff_t>(take));
  outstanding_ -= static_cast<unsigned>(take);
  return static_cast<unsigned>(take);
}

}  // namespace zonelab::fio
