// Job execution: each clone keeps up to `iodepth` commands in flight and
// plans the next one when a slot frees; see runner.h.
#include "workload/runner.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <memory>

#include "common/rng.h"

namespace zonelab {
namespace {

constexpr uint64_t kProgressEvery = 1 << 16;

// LBAs of a zone that hold data a read may ask for (a finished zone's
// padding reads as zeros but is readable).
uint64_t readable_of(const ZoneDescriptor& d) {
  if (d.state == ZoneState::kOffline) return 0;
  if (d.state == ZoneState::kFull) return d.capacity_lbas;
  return d.wp_lba - d.start_lba;
}

struct Slot {
  Command command;
  struct Clone* clone = nullptr;
  bool is_reset = false;
};

struct Clone {
  JobResult* result = nullptr;
  const JobSpec* spec = nullptr;
  std::vector<uint32_t> zones;
  std::vector<bool> filled;  // zones this clone wrote to capacity
  size_t cursor = 0;
  bool entered = false;
  uint64_t offset_lbas = 0;  // next write/append/read position in the zone
  uint64_t target_bytes = 0;
  uint64_t issued_bytes = 0;
  uint64_t deadline_ns = UINT64_MAX;
  uint64_t rate_bytes_per_s = 0;
  uint64_t next_allowed_ns = 0;
  bool wake_pending = false;
  bool stopped = false;
  uint32_t inflight = 0;
  uint32_t skipped_in_a_row = 0;
  std::vector<Slot> slots;
  std::vector<Slot*> free_slots;
  std::unique_ptr<Rng> rng;
  // randread: prefix sums of bs-sized slots per zone.
  std::vector<uint64_t> prefix;
};

class Engine final : public CompletionSink, public EventHandler {
 public:
  Engine(Device& device, Simulator& sim, const ProgressFn& progress)
      : device_(device), sim_(sim), progress_(progress), info_(device.info()) {}

  void start(Clone& clone) { pump(clone); }
  uint64_t commands() const { return commands_; }

  void on_complete(Command& command) override {
    Slot& slot = *reinterpret_cast<Slot*>(command.user_tag);
    Clone& clone = *slot.clone;
    JobResult& r = *clone.result;
    --clone.inflight;
    ++commands_;
    r.end_ns = std::max(r.end_ns, command.complete_ns);
    if (command.status != Status::kSuccess) {
      if (r.errors++ == 0) {
        r.first_status = command.status;
        r.first_error = fmt::format("{} at LBA {} ({})", status_name(command.status), command.slba,
                                    describe(command));
      }
      clone.stopped = true;
    } else if (slot.is_reset) {
      ++r.resets;
      r.reset_latency_ns.record(command.latency_ns());
    } else {
      ++r.ops;
      uint64_t bytes = command.nlb * info_.lba_size_bytes;
      r.bytes += bytes;
      r.latency_ns.record(command.latency_ns());
      if (uint64_t interval = clone.spec->log_interval_ns; interval != 0) {
        auto bucket = static_cast<size_t>((command.complete_ns - r.start_ns) / interval);
        if (r.bw_log.size() <= bucket) r.bw_log.resize(bucket + 1, 0);
        r.bw_log[bucket] += bytes;
      }
    }
    clone.free_slots.push_back(&slot);
    if (progress_ && commands_ % kProgressEvery == 0) progress_(sim_.now_ns(), commands_);
    pump(clone);
  }

  void on_event(uint64_t tag) override {
    Clone& clone = *reinterpret_cast<Clone*>(tag);
    clone.wake_pending = false;
    pump(clone);
  }

 private:
  static std::string describe(const Command& c) {
    if (c.opcode == Opcode::kZoneManagementSend) {
      return fmt::format("zone {}", zone_action_name(c.action));
    }
    return std::string(opcode_name(c.opcode));
  }

  void pump(Clone& clone) {
    while (!clone.stopped && clone.inflight < clone.spec->iodepth) {
      uint64_t now = sim_.now_ns();
      if (now >= clone.deadline_ns) {
        clone.stopped = true;
        break;
      }
      if (clone.rate_bytes_per_s != 0 && now < clone.next_allowed_ns) {
        if (!clone.wake_pending) {
          clone.wake_pending = true;
          sim_.schedule_at(clone.next_allowed_ns, this, reinterpret_cast<uint64_t>(&clone));
        }
        break;
      }
      Slot* slot = clone.free_slots.back();
      if (!plan(clone, *slot)) {
        clone.stopped = true;
        break;
      }
      clone.free_slots.pop_back();
      ++clone.inflight;
      if (clone.rate_bytes_per_s != 0 && !slot->is_reset) {
        uint64_t bytes = slot->command.nlb * info_.lba_size_bytes;
        clone.next_allowed_ns = std::max(clone.next_allowed_ns, now) +
                                bytes * 1'000'000'000ULL / clone.rate_bytes_per_s;
      }
      device_.submit(slot->command);
    }
  }

  // Fills `slot` with the clone's next command; false when the clone is done.
  bool plan(Clone& clone, Slot& slot) {
    if (clone.target_bytes != 0 && clone.issued_bytes >= clone.target_bytes) return false;
    slot.is_reset = false;
    Command& c = slot.command;
    c = Command{};
    c.sink = this;
    c.user_tag = reinterpret_cast<uint64_t>(&slot);
    switch (clone.spec->kind) {
      case JobKind::kWrite:
      case JobKind::kAppend:
        return plan_write(clone, slot);
      case JobKind::kRead:
        return plan_read(clone, c);
      case JobKind::kRandRead:
        return plan_randread(clone, c);
    }
    return false;
  }

  uint64_t chunk_lbas(const Clone& clone, uint64_t room_lbas) const {
    uint64_t bs = clone.spec->block_size_bytes / info_.lba_size_bytes;
    uint64_t chunk = std::min(bs, room_lbas);
    if (clone.target_bytes != 0) {
      uint64_t left = (clone.target_bytes - clone.issued_bytes + info_.lba_size_bytes - 1) /
                      info_.lba_size_bytes;
      chunk = std::min(chunk, left);
    }
    return chunk;
  }

  bool plan_write(Clone& clone, Slot& slot) {
    Command& c = slot.command;
    uint64_t cap = info_.zone_capacity_lbas;
    for (size_t tries = 0; tries <= clone.zones.size() * 2; ++tries) {
      uint32_t zone = clone.zones[clone.cursor];
      uint64_t start = static_cast<uint64_t>(zone) * info_.zone_size_lbas;
      if (!clone.entered) {
        ZoneDescriptor d = device_.zone(zone);
        if (d.state == ZoneState::kReadOnly || d.state == ZoneState::kOffline) {
          advance(clone);
          continue;
        }
        clone.entered = true;
        if (clone.filled[clone.cursor] || d.state == ZoneState::kFull) {
          // A zone is reused: reset it first (the device keeps queue order).
          clone.offset_lbas = 0;
          clone.filled[clone.cursor] = false;
          slot.is_reset = true;
          c.opcode = Opcode::kZoneManagementSend;
          c.action = ZoneAction::kReset;
          c.slba = start;
          return true;
        }
        clone.offset_lbas = d.wp_lba - start;
      }
      if (clone.offset_lbas >= cap) {
        clone.filled[clone.cursor] = true;
        advance(clone);
        continue;
      }
      bool append = clone.spec->kind == JobKind::kAppend;
      issue(clone, c, append ? Opcode::kAppend : Opcode::kWrite, start, cap, append);
      return true;
    }
    note_failure(clone, "no writable zone in the job's range");
    return false;
  }

  // The next piece of a sequential pass over a zone starting at `start`
  // with `end` LBAs to cover; an append names the zone by its start.
  void issue(Clone& clone, Command& c, Opcode opcode, uint64_t start, uint64_t end,
             bool at_zone_start) {
    uint64_t nlb = chunk_lbas(clone, end - clone.offset_lbas);
    c.opcode = opcode;
    c.slba = at_zone_start ? start : start + clone.offset_lbas;
    c.nlb = static_cast<uint32_t>(nlb);
    c.stream = clone.spec->stream;
    clone.offset_lbas += nlb;
    clone.issued_bytes += nlb * info_.lba_size_bytes;
  }

  bool plan_read(Clone& clone, Command& c) {
    for (size_t tries = 0; tries <= clone.zones.size() * 2; ++tries) {
      uint32_t zone = clone.zones[clone.cursor];
      ZoneDescriptor d = device_.zone(zone);
      uint64_t readable = readable_of(d);
      if (clone.offset_lbas >= readable) {
        advance(clone);
        continue;
      }
      issue(clone, c, Opcode::kRead, d.start_lba, readable, false);
      return true;
    }
    note_failure(clone, "no data to read in the job's zones (write first)");
    return false;
  }

  bool plan_randread(Clone& clone, Command& c) {
    if (clone.prefix.empty() || clone.prefix.back() == 0) {
      note_failure(clone, "no zone in the job's range holds a block of bs bytes (write first)");
      return false;
    }
    uint64_t pick = clone.rng->below(clone.prefix.back());
    size_t index = static_cast<size_t>(
        std::upper_bound(clone.prefix.begin(), clone.prefix.end(), pick) - clone.prefix.begin());
    uint64_t before = index == 0 ? 0 : clone.prefix[index - 1];
    uint64_t bs = clone.spec->block_size_bytes / info_.lba_size_bytes;
    c.opcode = Opcode::kRead;
    c.slba =
        static_cast<uint64_t>(clone.zones[index]) * info_.zone_size_lbas + (pick - before) * bs;
    c.nlb = static_cast<uint32_t>(bs);
    clone.issued_bytes += bs * info_.lba_size_bytes;
    return true;
  }

  void advance(Clone& clone) {
    bool random = clone.spec->random_zones && clone.spec->kind != JobKind::kRead;
    clone.cursor = random ? static_cast<size_t>(clone.rng->below(clone.zones.size()))
                          : (clone.cursor + 1) % clone.zones.size();
    clone.entered = false;
    clone.offset_lbas = 0;
  }

  void note_failure(Clone& clone, std::string_view why) {
    JobResult& r = *clone.result;
    if (r.errors++ == 0) r.first_error = std::string(why);
  }

  Device& device_;
  Simulator& sim_;
  const ProgressFn& progress_;
  DeviceInfo info_;
  uint64_t commands_ = 0;
};

std::pair<uint32_t, uint32_t> zone_range(const JobSpec& spec, const DeviceInfo& info) {
  return spec.zones.value_or(std::pair<uint32_t, uint32_t>{0, info.zone_count - 1});
}

// The job's total byte target from size / size percent (0 = one pass).
uint64_t job_target_bytes(const JobSpec& spec, Device& device) {
  const DeviceInfo& info = device.info();
  auto [first, last] = zone_range(spec, info);
  uint64_t zones = last - first + 1;
  uint64_t usable = zones * info.zone_capacity_lbas * info.lba_size_bytes;
  if (spec.size_bytes != 0) return spec.size_bytes;
  if (spec.size_percent > 0) {
    return static_cast<uint64_t>(static_cast<double>(usable) * spec.size_percent / 100.0);
  }
  if (spec.runtime_ns != 0) return 0;
  if (spec.kind == JobKind::kWrite || spec.kind == JobKind::kAppend) return usable;
  uint64_t readable = 0;
  for (uint64_t z = first; z <= last; ++z) {
    readable += readable_of(device.zone(static_cast<uint32_t>(z))) * info.lba_size_bytes;
  }
  return readable;
}

void setup_clone(Clone& clone, JobResult& result, Device& device, uint32_t index,
                 uint64_t job_target, uint64_t seed, uint64_t job_index, uint64_t now) {
  const JobSpec& spec = result.spec;
  const DeviceInfo& info = device.info();
  auto [first, last] = zone_range(spec, info);
  clone.result = &result;
  clone.spec = &result.spec;
  bool shared = spec.kind == JobKind::kRandRead;
  for (uint64_t z = first; z <= last; ++z) {
    if (shared || (z - first) % spec.numjobs == index)
      clone.zones.push_back(static_cast<uint32_t>(z));
  }
  clone.filled.assign(clone.zones.size(), false);
  uint64_t share = job_target / spec.numjobs;
  clone.target_bytes = share + (index < job_target % spec.numjobs ? 1 : 0);
  if (job_target != 0 && clone.target_bytes == 0) clone.stopped = true;
  clone.deadline_ns = spec.runtime_ns == 0 ? UINT64_MAX : now + spec.runtime_ns;
  clone.rate_bytes_per_s = spec.rate_bytes_per_s / spec.numjobs;
  if (spec.rate_bytes_per_s != 0 && clone.rate_bytes_per_s == 0) clone.rate_bytes_per_s = 1;
  clone.next_allowed_ns = now;
  clone.rng = std::make_unique<Rng>(derive_seed(seed, job_index, index));
  clone.slots.resize(spec.iodepth);
  for (auto& slot : clone.slots) {
    slot.clone = &clone;
    clone.free_slots.push_back(&slot);
  }
  if (spec.kind == JobKind::kRandRead) {
    uint64_t bs = spec.block_size_bytes / info.lba_size_bytes;
    uint64_t total = 0;
    for (uint32_t z : clone.zones) {
      total += readable_of(device.zone(z)) / bs;
      clone.prefix.push_back(total);
    }
  }
  if (clone.zones.empty()) clone.stopped = true;
}

}  // namespace

Outcome check_jobs(const std::vector<JobSpec>& jobs, const DeviceInfo& info) {
  for (const auto& job : jobs) {
    auto [first, last] = zone_range(job, info);
    if (last >= info.zone_count) {
      return Error{fmt::format("job {}: zones {}-{} outside the device's {} zones (0-{})", job.name,
                               first, last, info.zone_count, info.zone_count - 1)};
    }
    if (job.block_size_bytes % info.lba_size_bytes != 0) {
      return Error{fmt::format("job {}: bs {} is not a multiple of the LBA size {}", job.name,
                               job.block_size_bytes, info.lba_size_bytes)};
    }
    if (job.block_size_bytes / info.lba_size_bytes > info.zone_capacity_lbas) {
      return Error{fmt::format("job {}: bs is larger than a zone's capacity", job.name)};
    }
    if (job.kind == JobKind::kAppend &&
        job.block_size_bytes / info.lba_size_bytes > info.zasl_lbas) {
      return Error{fmt::format("job {}: bs {} exceeds the zone append size limit ({} bytes)",
                               job.name, job.block_size_bytes,
                               info.zasl_lbas * info.lba_size_bytes)};
    }
    bool writes = job.kind == JobKind::kWrite || job.kind == JobKind::kAppend;
    uint64_t zones = last - first + 1;
    if (writes && job.numjobs > zones) {
      return Error{fmt::format("job {}: numjobs {} needs at least as many zones (range has {})",
                               job.name, job.numjobs, zones)};
    }
    if (uint64_t(job.iodepth) * job.numjobs > (1u << 20)) {
      return Error{fmt::format("job {}: iodepth x numjobs is above 1048576", job.name)};
    }
  }
  return {};
}

RunResult run_jobs(Device& device, Simulator& sim, const std::vector<JobSpec>& jobs, uint64_t seed,
                   const ProgressFn& progress, const DriveFn& drive) {
  RunResult run;
  run.start_ns = sim.now_ns();
  run.jobs.resize(jobs.size());
  Engine engine(device, sim, progress);
  size_t next = 0;
  while (next < jobs.size()) {
    // One stonewall group: jobs up to the next one that waits for the rest.
    size_t end = next + 1;
    while (end < jobs.size() && !jobs[end].stonewall) ++end;
    std::vector<std::vector<std::unique_ptr<Clone>>> clones(end - next);
    uint64_t now = sim.now_ns();
    for (size_t j = next; j < end; ++j) {
      JobResult& result = run.jobs[j];
      result.spec = jobs[j];
      result.start_ns = now;
      result.end_ns = now;
      uint64_t target = job_target_bytes(jobs[j], device);
      for (uint32_t k = 0; k < jobs[j].numjobs; ++k) {
        auto clone = std::make_unique<Clone>();
        setup_clone(*clone, result, device, k, target, seed, j, now);
        clones[j - next].push_back(std::move(clone));
      }
    }
    for (auto& job_clones : clones) {
      for (auto& clone : job_clones) engine.start(*clone);
    }
    if (drive) {
      drive();
    } else {
      sim.run();
    }
    next = end;
  }
  run.end_ns = sim.now_ns();
  run.commands = engine.commands();
  for (const auto& job : run.jobs) run.errors += job.errors;
  return run;
}

}  // namespace zonelab
