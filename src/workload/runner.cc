// Job execution: each clone keeps up to `iodepth` commands in flight and
// plans the next one when a slot frees; see runner.h.
#include "workload/runner.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <memory>

#include "common/rng.h"
#include "host/softfinish.h"

namespace zonelab {
namespace {

constexpr uint64_t kProgressEvery = 1 << 16;
// Without a runtime, op pacing looks no further ahead than this (about 146
// years), so an op's start time cannot overflow.
constexpr uint64_t kPacingHorizonNs = 1ULL << 62;
constexpr uint64_t kNever = UINT64_MAX;

// LBAs of a zone that hold data a read may ask for (a finished zone's
// padding reads as zeros but is readable).
uint64_t readable_of(const ZoneDescriptor& d) {
  if (d.state == ZoneState::kOffline) return 0;
  if (d.state == ZoneState::kFull) return d.capacity_lbas;
  return d.wp_lba - d.start_lba;
}

// The softfinish settings of a job, as the host's.
HostConfig softfinish_host(const JobSpec& spec, const DeviceInfo& info) {
  HostConfig host;
  host.lba_size_bytes = info.lba_size_bytes;
  host.softfinish_chunk_bytes = spec.softfinish_chunk_bytes;
  host.softfinish_pause_ns = spec.softfinish_pause_ns;
  return host;
}

// What a slot's command is doing.
enum class SlotUse : uint8_t {
  kData,       // a read, write or append: one operation
  kZoneReuse,  // a writer's reset of a zone it comes back to
  kPrepare,    // a management op's write before its finish or softfinish
  kManage,     // a management op's finish or reset
};

struct Slot {
  Command command;
  struct Clone* clone = nullptr;
  SlotUse use = SlotUse::kData;
  uint32_t zone = 0;                       // a management op's zone
  std::unique_ptr<SoftFinish> softfinish;  // softfinish jobs: this slot's fill
  uint64_t softfinish_writes = 0;          // of its writes, those counted
};

// What a clone does next: issue the planned command, wait for a completion
// (a zone reuse that drains the queue), or nothing more.
enum class Next : uint8_t { kIssue, kWait, kDone };

struct Clone {
  JobResult* result = nullptr;
  const JobSpec* spec = nullptr;
  size_t job_index = 0;
  std::vector<uint32_t> zones;
  std::vector<bool> filled;  // zones this clone wrote to capacity
  size_t cursor = 0;         // writers: the zone in use; managers: the next one
  bool entered = false;
  uint64_t offset_lbas = 0;  // next write/append/read position in the zone
  uint64_t target_bytes = 0;
  uint64_t issued_bytes = 0;
  uint64_t start_ns = 0;
  uint64_t deadline_ns = UINT64_MAX;
  uint64_t rate_bytes_per_s = 0;
  uint64_t next_allowed_ns = 0;
  double rate_iops = 0;
  uint64_t pacing_horizon_ns = kPacingHorizonNs;  // op k due later: the clone is done
  uint64_t ops_started = 0;                       // a zone reuse's reset is none
  bool resetting = false;                         // a zone reuse's reset is in flight
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
  size_t first_failed_job() const { return first_failed_job_; }

  void on_complete(Command& command) override {
    Slot& slot = *reinterpret_cast<Slot*>(command.user_tag);
    Clone& clone = *slot.clone;
    ++commands_;
    clone.result->end_ns = std::max(clone.result->end_ns, command.complete_ns);
    // A management op's write done: the op goes on in its slot.
    bool goes_on = command.status == Status::kSuccess && slot.use == SlotUse::kPrepare;
    if (goes_on) {
      manage(clone, slot);
    } else {
      --clone.inflight;
      settle(clone, slot, command);
      clone.free_slots.push_back(&slot);
    }
    if (progress_ && commands_ % kProgressEvery == 0) progress_(sim_.now_ns(), commands_);
    if (!goes_on) pump(clone);
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

  uint64_t zone_start(uint32_t zone) const {
    return static_cast<uint64_t>(zone) * info_.zone_size_lbas;
  }

  // A command that ends what its slot was doing: a failure, or what it
  // counts for.
  void settle(Clone& clone, Slot& slot, const Command& command) {
    JobResult& r = *clone.result;
    if (slot.use == SlotUse::kZoneReuse) clone.resetting = false;
    if (command.status != Status::kSuccess) {
      fail(clone, command.status,
           fmt::format("{} at LBA {} ({})", status_name(command.status), command.slba,
                       describe(command)));
    } else if (slot.use == SlotUse::kZoneReuse) {
      ++r.resets;
      r.reset_latency_ns.record(command.latency_ns());
    } else {
      uint64_t bytes = slot.use == SlotUse::kData ? command.nlb * info_.lba_size_bytes : 0;
      count_op(clone, command.complete_ns, command.latency_ns(), bytes);
    }
  }

  // An operation completed at `done_ns`. One that ends after the runtime is
  // late, and counts only if the job counts past its runtime.
  void count_op(Clone& clone, uint64_t done_ns, uint64_t latency_ns, uint64_t bytes) {
    JobResult& r = *clone.result;
    if (done_ns > clone.deadline_ns) {
      ++r.late_ops;
      if (clone.spec->count_within_runtime) return;
    }
    ++r.ops;
    r.bytes += bytes;
    r.latency_ns.record(latency_ns);
    if (uint64_t interval = clone.spec->log_interval_ns; interval != 0 && bytes != 0) {
      auto bucket = static_cast<size_t>((done_ns - r.start_ns) / interval);
      if (r.bw_log.size() <= bucket) r.bw_log.resize(bucket + 1, 0);
      r.bw_log[bucket] += bytes;
    }
  }

  // The clone's error: the job keeps its first, the run notes the first
  // job to fail, and with exitall_on_error no clone issues more.
  void fail(Clone& clone, Status status, std::string what) {
    JobResult& r = *clone.result;
    if (r.errors++ == 0) {
      r.first_status = status;
      r.first_error = std::move(what);
    }
    clone.stopped = true;
    if (first_failed_job_ == SIZE_MAX) first_failed_job_ = clone.job_index;
    if (clone.spec->exitall_on_error) exiting_ = true;
  }

  // A job that cannot go on (SUCCESS: no device error).
  void note_failure(Clone& clone, std::string_view why) {
    fail(clone, Status::kSuccess, std::string(why));
  }

  void pump(Clone& clone) {
    while (!clone.stopped && !exiting_ && clone.inflight < clone.spec->iodepth) {
      uint64_t now = sim_.now_ns();
      if (now >= clone.deadline_ns) {
        clone.stopped = true;
        break;
      }
      uint64_t start_ns = next_start_ns(clone, now);
      if (start_ns == kNever) {
        clone.stopped = true;
        break;
      }
      if (start_ns > now) {
        if (!clone.wake_pending) {
          clone.wake_pending = true;
          sim_.schedule_at(start_ns, this, reinterpret_cast<uint64_t>(&clone));
        }
        break;
      }
      Slot* slot = clone.free_slots.back();
      Next next = plan(clone, *slot);
      if (next == Next::kWait) break;
      if (next == Next::kDone) {
        clone.stopped = true;
        break;
      }
      clone.free_slots.pop_back();
      ++clone.inflight;
      if (slot->use != SlotUse::kZoneReuse) ++clone.ops_started;
      if (clone.rate_bytes_per_s != 0 && slot->use == SlotUse::kData) {
        uint64_t bytes = slot->command.nlb * info_.lba_size_bytes;
        clone.next_allowed_ns = std::max(clone.next_allowed_ns, now) +
                                bytes * 1'000'000'000ULL / clone.rate_bytes_per_s;
      }
      device_.submit(slot->command);
    }
  }

  // When the clone's pacing lets it start its next command: now, later, or
  // kNever (the op pacing puts the next op past the runtime). Op k is due
  // k / rate_iops after the start, computed afresh so errors do not add up.
  uint64_t next_start_ns(const Clone& clone, uint64_t now) const {
    uint64_t at = now;
    if (clone.rate_bytes_per_s != 0) at = std::max(at, clone.next_allowed_ns);
    if (clone.rate_iops > 0) {
      double offset_ns = std::ceil(static_cast<double>(clone.ops_started) * 1e9 / clone.rate_iops);
      if (offset_ns >= static_cast<double>(clone.pacing_horizon_ns)) return kNever;
      at = std::max(at, clone.start_ns + static_cast<uint64_t>(offset_ns));
    }
    return at;
  }

  // Fills `slot` with the clone's next command.
  Next plan(Clone& clone, Slot& slot) {
    if (clone.target_bytes != 0 && clone.issued_bytes >= clone.target_bytes) return Next::kDone;
    slot.use = SlotUse::kData;
    Command& c = slot.command;
    c = Command{};
    c.sink = this;
    c.user_tag = reinterpret_cast<uint64_t>(&slot);
    switch (clone.spec->kind) {
      case JobKind::kWrite:
      case JobKind::kAppend:
        return plan_write(clone, slot);
      case JobKind::kRead:
        return plan_read(clone, c) ? Next::kIssue : Next::kDone;
      case JobKind::kRandRead:
        return plan_randread(clone, c) ? Next::kIssue : Next::kDone;
      case JobKind::kFinish:
      case JobKind::kReset:
      case JobKind::kSoftfinish:
        return plan_manage(clone, slot);
    }
    return Next::kDone;
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

  Next plan_write(Clone& clone, Slot& slot) {
    Command& c = slot.command;
    uint64_t cap = info_.zone_capacity_lbas;
    bool drain = clone.spec->zone_reset_drain;
    if (drain && clone.resetting) return Next::kWait;
    for (size_t tries = 0; tries <= clone.zones.size() * 2; ++tries) {
      uint32_t zone = clone.zones[clone.cursor];
      uint64_t start = zone_start(zone);
      if (!clone.entered) {
        ZoneDescriptor d = device_.zone(zone);
        if (d.state == ZoneState::kReadOnly || d.state == ZoneState::kOffline) {
          advance(clone);
          continue;
        }
        bool reuse = clone.filled[clone.cursor] || d.state == ZoneState::kFull;
        if (reuse && drain && clone.inflight > 0) return Next::kWait;
        clone.entered = true;
        if (reuse) {
          // A zone is reused: reset it first (the device keeps queue order).
          clone.offset_lbas = 0;
          clone.filled[clone.cursor] = false;
          clone.resetting = true;
          slot.use = SlotUse::kZoneReuse;
          c.opcode = Opcode::kZoneManagementSend;
          c.action = ZoneAction::kReset;
          c.slba = start;
          return Next::kIssue;
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
      return Next::kIssue;
    }
    note_failure(clone, "no writable zone in the job's range");
    return Next::kDone;
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

  // A management op on the clone's next zone: a reset, or the write that
  // comes before a finish or softfinish (manage() goes on from there). A
  // job without a runtime makes one pass over its zones; one with a runtime
  // must not run out of zones before its runtime ends.
  Next plan_manage(Clone& clone, Slot& slot) {
    if (clone.cursor >= clone.zones.size()) {
      if (clone.spec->runtime_ns != 0) {
        note_failure(clone, "no zone left for the next op (one zone per op) before the runtime");
      }
      return Next::kDone;
    }
    uint32_t zone = clone.zones[clone.cursor++];
    slot.zone = zone;
    Command& c = slot.command;
    if (clone.spec->kind == JobKind::kReset) {
      slot.use = SlotUse::kManage;
      c.opcode = Opcode::kZoneManagementSend;
      c.action = ZoneAction::kReset;
      c.slba = zone_start(zone);
      return Next::kIssue;
    }
    // The write goes to the write pointer; a full zone has none (it reports
    // the zone's end), so the write goes to its start and fails, as it must.
    ZoneDescriptor d = device_.zone(zone);
    slot.use = SlotUse::kPrepare;
    c.opcode = Opcode::kWrite;
    c.slba = d.state == ZoneState::kFull ? d.start_lba : d.wp_lba;
    c.nlb = static_cast<uint32_t>(clone.spec->block_size_bytes / info_.lba_size_bytes);
    c.stream = clone.spec->stream;
    return Next::kIssue;
  }

  // A management op's write is done: finish the zone, or have the host fill
  // it. The slot stays in flight until the op ends.
  void manage(Clone& clone, Slot& slot) {
    if (clone.spec->kind == JobKind::kSoftfinish) {
      slot.softfinish->start(slot.zone, [this, &clone, &slot](Status status, uint64_t latency_ns) {
        softfinish_done(clone, slot, status, latency_ns);
      });
      return;
    }
    slot.use = SlotUse::kManage;
    Command& c = slot.command;
    c = Command{};
    c.sink = this;
    c.user_tag = reinterpret_cast<uint64_t>(&slot);
    c.opcode = Opcode::kZoneManagementSend;
    c.action = ZoneAction::kFinish;
    c.slba = zone_start(slot.zone);
    device_.submit(c);
  }

  void softfinish_done(Clone& clone, Slot& slot, Status status, uint64_t latency_ns) {
    uint64_t writes = slot.softfinish->writes();
    commands_ += writes - slot.softfinish_writes;
    slot.softfinish_writes = writes;
    uint64_t now = sim_.now_ns();
    clone.result->end_ns = std::max(clone.result->end_ns, now);
    --clone.inflight;
    if (status != Status::kSuccess) {
      fail(clone, status,
           fmt::format("{} at LBA {} (softfinish)", status_name(status), zone_start(slot.zone)));
    } else {
      count_op(clone, now, latency_ns, 0);
    }
    clone.free_slots.push_back(&slot);
    pump(clone);
  }

  void advance(Clone& clone) {
    bool random = clone.spec->random_zones && clone.spec->kind != JobKind::kRead;
    clone.cursor = random ? static_cast<size_t>(clone.rng->below(clone.zones.size()))
                          : (clone.cursor + 1) % clone.zones.size();
    clone.entered = false;
    clone.offset_lbas = 0;
  }

  Device& device_;
  Simulator& sim_;
  const ProgressFn& progress_;
  DeviceInfo info_;
  uint64_t commands_ = 0;
  size_t first_failed_job_ = SIZE_MAX;
  bool exiting_ = false;  // a job with exitall_on_error failed
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
  if (is_management(spec.kind)) return 0;  // one op per zone, until the zones run out
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

void setup_clone(Clone& clone, JobResult& result, Device& device, Simulator& sim, uint32_t index,
                 uint64_t job_target, uint64_t seed, uint64_t job_index, uint64_t now) {
  const JobSpec& spec = result.spec;
  const DeviceInfo& info = device.info();
  auto [first, last] = zone_range(spec, info);
  clone.result = &result;
  clone.spec = &result.spec;
  clone.job_index = job_index;
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
  clone.start_ns = now;
  clone.rate_iops = spec.rate_iops / spec.numjobs;
  if (spec.runtime_ns != 0) clone.pacing_horizon_ns = spec.runtime_ns;
  clone.rng = std::make_unique<Rng>(spec.randseed ? *spec.randseed + index
                                                  : derive_seed(seed, job_index, index));
  clone.slots.resize(spec.iodepth);
  for (auto& slot : clone.slots) {
    slot.clone = &clone;
    if (spec.kind == JobKind::kSoftfinish) {
      slot.softfinish = std::make_unique<SoftFinish>(device, sim, softfinish_host(spec, info));
    }
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
    bool manages = is_management(job.kind);
    if (manages && job.kind != JobKind::kReset && job.block_size_bytes == 0) {
      return Error{fmt::format("job {}: bs must be at least one LBA: a {} writes bs bytes first",
                               job.name, job_kind_name(job.kind))};
    }
    if (job.kind == JobKind::kSoftfinish &&
        (job.softfinish_chunk_bytes == 0 ||
         job.softfinish_chunk_bytes % info.lba_size_bytes != 0)) {
      return Error{fmt::format("job {}: softfinish chunk {} is not a multiple of the LBA size {}",
                               job.name, job.softfinish_chunk_bytes, info.lba_size_bytes)};
    }
    if (!(job.rate_iops >= 0) || !std::isfinite(job.rate_iops)) {
      return Error{fmt::format("job {}: rate_iops {} is not a rate of 0 or more ops/s", job.name,
                               job.rate_iops)};
    }
    bool writes = job.kind == JobKind::kWrite || job.kind == JobKind::kAppend;
    uint64_t zones = last - first + 1;
    if ((writes || manages) && job.numjobs > zones) {
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
        setup_clone(*clone, result, device, sim, k, target, seed, j, now);
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
  run.first_failed_job = engine.first_failed_job();
  for (const auto& job : run.jobs) run.errors += job.errors;
  return run;
}

}  // namespace zonelab
