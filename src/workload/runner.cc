// Job execution: each clone keeps up to `iodepth` commands in flight and
// plans the next one when a slot frees; see runner.h.
#include "workload/runner.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cassert>
#include <cmath>
#include <memory>

#include "common/divisor.h"
#include "common/rng.h"
#include "common/units.h"
#include "host/softfinish.h"
#include "stack/stack_report.h"

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
  kFlush,      // an NVMe Flush after fsync=N writes
};

struct Slot {
  Command command;
  struct Clone* clone = nullptr;
  SlotUse use = SlotUse::kData;
  uint32_t zone = 0;                       // a management op's zone
  std::unique_ptr<SoftFinish> softfinish;  // softfinish jobs: this slot's fill
  uint64_t softfinish_writes = 0;          // of its writes, those counted
};

// A random order of `count` blocks that names each once (fio's random map,
// without the map): a keyed bijection of the next power of two, walked
// until it lands below count -- fewer than two steps on average, since that
// power is below 2 x count.
class BlockOrder {
 public:
  void shuffle(uint64_t count, Rng& rng) {
    count_ = count;
    bits_ = 0;
    while (bits_ < 63 && (uint64_t{1} << bits_) < count) ++bits_;
    mask_ = (uint64_t{1} << bits_) - 1;
    for (auto& round : rounds_) round = {rng.next() | 1, rng.next()};
  }
  uint64_t count() const { return count_; }
  uint64_t at(uint64_t index) const {
    ZL_ASSERT(index < count_);
    uint64_t x = index;
    do {
      x = mix(x);
    } while (x >= count_);
    return x;
  }

 private:
  // Each step is invertible on bits_ bits: times an odd number, xor with its
  // own high half, plus a constant.
  uint64_t mix(uint64_t x) const {
    for (const auto& [multiplier, addend] : rounds_) {
      x = (x * multiplier) & mask_;
      x ^= x >> (bits_ / 2 + 1);
      x = (x + addend) & mask_;
    }
    return x;
  }

  uint64_t count_ = 0;
  int bits_ = 0;
  uint64_t mask_ = 0;
  std::array<std::pair<uint64_t, uint64_t>, 3> rounds_{};
};

// What a clone does next: issue the planned command, wait for a completion
// (a zone reuse that drains the queue), or nothing more.
enum class Next : uint8_t { kIssue, kWait, kDone };

struct Clone {
  uint64_t writes_since_flush = 0;  // fsync=N
  JobResult* result = nullptr;
  const JobSpec* spec = nullptr;
  size_t job_index = 0;
  std::vector<uint32_t> zones;
  std::vector<bool> filled;  // zones this clone wrote to capacity
  size_t cursor = 0;         // writers: the zone in use; managers: the next one
  uint64_t bs_lbas = 0;      // the job's bs in LBAs
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
  // randread: prefix sums of bs-sized slots per zone, and the slots of
  // each zone when every zone has as many (0: they differ).
  std::vector<uint64_t> prefix;
  uint64_t blocks_each_zone = 0;
  // randwrite, randrw: this pass's order of the clone's bs-sized blocks.
  BlockOrder order;
  uint64_t blocks_per_zone = 0;
  uint64_t order_position = 0;
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

  uint64_t zone_start(uint32_t zone) const { return info_.zone_start_lba(zone); }

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
    } else if (slot.use == SlotUse::kFlush) {
      ++r.flushes;
      r.flush_latency_ns.record(command.latency_ns());
    } else {
      uint64_t bytes = slot.use == SlotUse::kData ? command.nlb * info_.lba_size_bytes : 0;
      count_op(clone, command.complete_ns, command.latency_ns(), bytes, command.opcode);
    }
  }

  // An operation completed at `done_ns`. One that ends after the runtime is
  // late, and counts only if the job counts past its runtime.
  void count_op(Clone& clone, uint64_t done_ns, uint64_t latency_ns, uint64_t bytes,
                Opcode opcode = Opcode::kZoneManagementSend) {
    JobResult& r = *clone.result;
    if (done_ns > clone.deadline_ns) {
      ++r.late_ops;
      if (clone.spec->count_within_runtime) return;
    }
    ++r.ops;
    r.bytes += bytes;
    r.latency_ns.record(latency_ns);
    if (clone.spec->kind == JobKind::kRandRw) {
      JobResult::Direction& d = opcode == Opcode::kRead ? r.reads : r.writes;
      ++d.ops;
      d.bytes += bytes;
      d.latency_ns.record(latency_ns);
    }
    if (clone.spec->log_interval_ns != 0 && bytes != 0) log_bandwidth(r, done_ns, bytes);
  }

  // The bandwidth log's bucket for `done_ns`; past kBwLogEntriesMax entries
  // the interval doubles and neighbouring entries merge.
  static void log_bandwidth(JobResult& r, uint64_t done_ns, uint64_t bytes) {
    uint64_t elapsed = done_ns - r.start_ns;
    while (elapsed / r.bw_log_interval_ns >= kBwLogEntriesMax) {
      for (size_t i = 0; i < r.bw_log.size(); ++i) {
        r.bw_log[i / 2] = (i % 2 == 0 ? 0 : r.bw_log[i / 2]) + r.bw_log[i];
      }
      r.bw_log.resize((r.bw_log.size() + 1) / 2);
      r.bw_log_interval_ns *= 2;
    }
    auto bucket = static_cast<size_t>(elapsed / r.bw_log_interval_ns);
    if (r.bw_log.size() <= bucket) r.bw_log.resize(bucket + 1, 0);
    r.bw_log[bucket] += bytes;
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
      if (slot->use == SlotUse::kData &&
          (slot->command.opcode == Opcode::kWrite || slot->command.opcode == Opcode::kAppend)) {
        ++clone.writes_since_flush;
      }
      if (slot->use != SlotUse::kZoneReuse && slot->use != SlotUse::kFlush) ++clone.ops_started;
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
    c = blank_;
    c.sink = this;
    c.user_tag = reinterpret_cast<uint64_t>(&slot);
    if (clone.spec->fsync != 0 && clone.writes_since_flush >= clone.spec->fsync) {
      // fio's fsync=N: after N writes, a Flush in the next free slot.
      clone.writes_since_flush = 0;
      slot.use = SlotUse::kFlush;
      c.opcode = Opcode::kFlush;
      return Next::kIssue;
    }
    switch (clone.spec->kind) {
      case JobKind::kWrite:
      case JobKind::kAppend:
        return plan_write(clone, slot);
      case JobKind::kRead:
        return plan_read(clone, c) ? Next::kIssue : Next::kDone;
      case JobKind::kRandRead:
        return plan_randread(clone, c) ? Next::kIssue : Next::kDone;
      case JobKind::kRandWrite:
      case JobKind::kRandRw:
        return plan_random(clone, c);
      case JobKind::kTrim:
        return plan_trim(clone, c);
      case JobKind::kFinish:
      case JobKind::kReset:
      case JobKind::kSoftfinish:
        return plan_manage(clone, slot);
    }
    return Next::kDone;
  }

  uint64_t chunk_lbas(const Clone& clone, uint64_t room_lbas) const {
    uint64_t chunk = std::min(clone.bs_lbas, room_lbas);
    if (clone.target_bytes != 0) {
      uint64_t left =
          lba_divisor_.quotient(clone.target_bytes - clone.issued_bytes + info_.lba_size_bytes - 1);
      chunk = std::min(chunk, left);
    }
    return chunk;
  }

  Next plan_write(Clone& clone, Slot& slot) {
    Command& c = slot.command;
    bool drain = clone.spec->zone_reset_drain;
    if (drain && clone.resetting) return Next::kWait;
    for (size_t tries = 0; tries <= clone.zones.size() * 2; ++tries) {
      uint32_t zone = clone.zones[clone.cursor];
      uint64_t start = zone_start(zone);
      uint64_t cap = info_.zone_capacity_of(zone);
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
    // The zone whose slots hold `pick`: by a division when the zones are
    // equal (the first prefix sum above pick is then zone pick / each's),
    // else by a search.
    size_t index = 0;
    uint64_t before = 0;
    if (uint64_t each = clone.blocks_each_zone; each != 0) {
      index = static_cast<size_t>(pick / each);
      before = index * each;
    } else {
      index = static_cast<size_t>(std::upper_bound(clone.prefix.begin(), clone.prefix.end(), pick) -
                                  clone.prefix.begin());
      before = index == 0 ? 0 : clone.prefix[index - 1];
    }
    uint64_t bs = clone.bs_lbas;
    c.opcode = Opcode::kRead;
    c.slba = zone_start(clone.zones[index]) + (pick - before) * bs;
    c.nlb = static_cast<uint32_t>(bs);
    clone.issued_bytes += bs * info_.lba_size_bytes;
    return true;
  }

  // The next block of the clone's random order (a new order each pass): a
  // write, or for randrw a read with probability rwmixread %.
  Next plan_random(Clone& clone, Command& c) {
    if (clone.order.count() == 0) {
      note_failure(clone, "no zone in the job's range holds a block of bs bytes");
      return Next::kDone;
    }
    if (clone.order_position == clone.order.count()) {
      clone.order.shuffle(clone.order.count(), *clone.rng);
      clone.order_position = 0;
    }
    uint64_t block = clone.order.at(clone.order_position++);
    uint64_t bs = clone.bs_lbas;
    bool read = clone.spec->kind == JobKind::kRandRw &&
                clone.rng->below(100) < clone.spec->rwmixread_percent;
    c.opcode = read ? Opcode::kRead : Opcode::kWrite;
    c.slba =
        zone_start(clone.zones[block / clone.blocks_per_zone]) + block % clone.blocks_per_zone * bs;
    c.nlb = static_cast<uint32_t>(chunk_lbas(clone, bs));
    if (!read) c.stream = clone.spec->stream;
    clone.issued_bytes += c.nlb * info_.lba_size_bytes;
    return Next::kIssue;
  }

  // The next bs of a pass that deallocates the clone's zones in order.
  Next plan_trim(Clone& clone, Command& c) {
    uint64_t cap = info_.zone_capacity_lbas;
    if (clone.offset_lbas >= cap) advance(clone);
    issue(clone, c, Opcode::kDeallocate, zone_start(clone.zones[clone.cursor]), cap, false);
    return Next::kIssue;
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
    c.nlb = static_cast<uint32_t>(clone.bs_lbas);
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
  Divisor lba_divisor_{info_.lba_size_bytes};  // bytes to LBAs
  uint64_t commands_ = 0;
  size_t first_failed_job_ = SIZE_MAX;
  bool exiting_ = false;  // a job with exitall_on_error failed
  // A default command, copied over a slot's before each plan: the compiler
  // zeroes a Command{} with `rep stos`, slow for its 88 bytes (8 % of a
  // run), and copies an object it cannot see into with a few vector moves.
  Command blank_;
};

// The zones a job names (default: every zone), before its offset.
std::pair<uint32_t, uint32_t> named_range(const JobSpec& spec, const DeviceInfo& info) {
  return spec.zones.value_or(std::pair<uint32_t, uint32_t>{0, info.zone_count - 1});
}

// The size and capacity of the job's zones (one zone set: check_zone_sets).
uint64_t zone_lbas_of(const JobSpec& spec, const DeviceInfo& info) {
  return info.zone_size_of(named_range(spec, info).first);
}
uint64_t capacity_lbas_of(const JobSpec& spec, const DeviceInfo& info) {
  return info.zone_capacity_of(named_range(spec, info).first);
}
uint64_t zone_bytes(const JobSpec& spec, const DeviceInfo& info) {
  return zone_lbas_of(spec, info) * info.lba_size_bytes;
}

// Zones the offset skips at the start of the named range.
uint64_t offset_zones(const JobSpec& spec, const DeviceInfo& info) {
  auto [first, last] = named_range(spec, info);
  if (spec.offset_percent > 0) {
    return static_cast<uint64_t>(static_cast<double>(last - first + 1) * spec.offset_percent /
                                 100.0);
  }
  return spec.offset_bytes / zone_bytes(spec, info);
}

// The zones the job uses: its named range from its offset on.
std::pair<uint32_t, uint32_t> zone_range(const JobSpec& spec, const DeviceInfo& info) {
  auto [first, last] = named_range(spec, info);
  uint64_t skipped = std::min<uint64_t>(offset_zones(spec, info), last - first);
  return {static_cast<uint32_t>(first + skipped), last};
}

bool splits_zones(JobKind kind) { return kind != JobKind::kRandRead; }

// bs-sized blocks in one zone.
uint64_t blocks_per_zone(const JobSpec& spec, const DeviceInfo& info) {
  return capacity_lbas_of(spec, info) / (spec.block_size_bytes / info.lba_size_bytes);
}

// The job's total byte target from size / size percent (0 = one pass).
uint64_t job_target_bytes(const JobSpec& spec, const Device& device) {
  const DeviceInfo& info = device.info();
  auto [first, last] = zone_range(spec, info);
  uint64_t zones = last - first + 1;
  uint64_t usable = zones * capacity_lbas_of(spec, info) * info.lba_size_bytes;
  if (is_management(spec.kind)) return 0;  // one op per zone, until the zones run out
  if (spec.time_based && spec.runtime_ns != 0) return 0;
  if (spec.size_bytes != 0) return spec.size_bytes;
  if (spec.size_percent > 0) {
    return static_cast<uint64_t>(static_cast<double>(usable) * spec.size_percent / 100.0);
  }
  if (spec.runtime_ns != 0) return 0;
  if (spec.kind == JobKind::kRandWrite || spec.kind == JobKind::kRandRw) {
    return zones * blocks_per_zone(spec, info) * spec.block_size_bytes;  // every block once
  }
  if (is_zone_writer(spec.kind) || spec.kind == JobKind::kTrim) return usable;
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
  clone.bs_lbas = spec.block_size_bytes / info.lba_size_bytes;
  bool shared = !splits_zones(spec.kind);
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
    const uint64_t each = clone.prefix.empty() ? 0 : clone.prefix.front();
    bool equal = true;
    for (size_t i = 0; i < clone.prefix.size() && equal; ++i) {
      equal = clone.prefix[i] == (i + 1) * each;
    }
    clone.blocks_each_zone = equal ? each : 0;
  }
  if (spec.kind == JobKind::kRandWrite || spec.kind == JobKind::kRandRw) {
    clone.blocks_per_zone = blocks_per_zone(spec, info);
    clone.order.shuffle(clone.zones.size() * clone.blocks_per_zone, *clone.rng);
  }
  if (clone.zones.empty()) clone.stopped = true;
}

}  // namespace

namespace {

// The zone range and the offset into it.
Outcome check_placement(const JobSpec& job, const DeviceInfo& info) {
  auto [first, last] = named_range(job, info);
  if (last >= info.zone_count) {
    return Error{fmt::format("job {}: zones {}-{} outside the device's {} zones (0-{})", job.name,
                             first, last, info.zone_count, info.zone_count - 1)};
  }
  if (job.offset_bytes % zone_bytes(job, info) != 0) {
    return Error{fmt::format(
        "job {}: offset {} is not at a zone boundary (zones start every {}); a zoned job "
        "starts at a zone",
        job.name, format_size(job.offset_bytes), format_size(zone_bytes(job, info)))};
  }
  if (offset_zones(job, info) > last - first) {
    return Error{fmt::format("job {}: offset {} leaves no zone of the range {}-{}", job.name,
                             job.offset_percent > 0 ? fmt::format("{}%", job.offset_percent)
                                                    : format_size(job.offset_bytes),
                             first, last)};
  }
  return {};
}

// What the kind needs of the interface and of bs.
Outcome check_kind(const JobSpec& job, const DeviceInfo& info) {
  std::string_view kind = job_kind_name(job.kind);
  bool zns = info.interface == "zns";
  if (zns && (job.kind == JobKind::kRandWrite || job.kind == JobKind::kRandRw)) {
    return Error{fmt::format(
        "job {}: rw={} needs the block interface (--set interface=block): a ZNS zone takes "
        "writes only at its write pointer (use write or append)",
        job.name, kind)};
  }
  if (zns && job.kind == JobKind::kTrim) {
    return Error{fmt::format(
        "job {}: rw=trim needs the block interface (--set interface=block): a ZNS namespace has "
        "no deallocate (zones are emptied by a reset)",
        job.name)};
  }
  if (!zns && job.kind == JobKind::kAppend) {
    return Error{fmt::format(
        "job {}: rw=append needs the zns interface: a block device has no Zone Append", job.name)};
  }
  if (zns && job.stream != 0) {
    return Error{fmt::format(
        "job {}: stream {}: write streams are the block interface's (block.streams); a ZNS "
        "namespace places data by zone",
        job.name, job.stream)};
  }
  if (job.block_size_bytes % info.lba_size_bytes != 0) {
    return Error{fmt::format("job {}: bs {} is not a multiple of the LBA size {}", job.name,
                             job.block_size_bytes, info.lba_size_bytes)};
  }
  if (job.block_size_bytes / info.lba_size_bytes > capacity_lbas_of(job, info)) {
    return Error{fmt::format("job {}: bs is larger than a zone's capacity", job.name)};
  }
  if (job.kind == JobKind::kAppend && job.block_size_bytes / info.lba_size_bytes > info.zasl_lbas) {
    return Error{fmt::format("job {}: bs {} exceeds the zone append size limit ({} bytes)",
                             job.name, job.block_size_bytes, info.zasl_lbas * info.lba_size_bytes)};
  }
  if (is_management(job.kind) && job.kind != JobKind::kReset && job.block_size_bytes == 0) {
    return Error{fmt::format("job {}: bs must be at least one LBA: a {} writes bs bytes first",
                             job.name, kind)};
  }
  if (job.kind == JobKind::kSoftfinish &&
      (job.softfinish_chunk_bytes == 0 || job.softfinish_chunk_bytes % info.lba_size_bytes != 0)) {
    return Error{fmt::format("job {}: softfinish chunk {} is not a multiple of the LBA size {}",
                             job.name, job.softfinish_chunk_bytes, info.lba_size_bytes)};
  }
  return {};
}

// A job's zones are of one size: on a device formatted with several zone
// sets, its range lies inside one set.
Outcome check_zone_sets(const JobSpec& job, const DeviceInfo& info) {
  if (info.uniform_zones()) return {};
  auto [first, last] = named_range(job, info);
  if (last >= info.zone_count || first > last) return {};  // check_placement says why
  uint32_t set = zone_set_of_zone(info.zone_sets, first);
  if (zone_set_of_zone(info.zone_sets, last) == set) return {};
  std::string sets;
  for (const ZoneSetInfo& s : info.zone_sets) {
    sets += fmt::format("{}{}-{} ({} LBAs)", sets.empty() ? "" : ", ", s.first_zone,
                        s.first_zone + s.zone_count - 1, s.zone_size_lbas);
  }
  return Error{fmt::format(
      "job {}: zones {}-{} span zone sets of different sizes; name zones of one set with "
      "zones=A-B (--zones): {}",
      job.name, first, last, sets)};
}

// How much and how long: size, runtime, pace, the bandwidth log, clones.
Outcome check_amounts(const JobSpec& job, const DeviceInfo& info) {
  auto [first, last] = zone_range(job, info);
  uint64_t zones = last - first + 1;
  uint64_t usable = zones * capacity_lbas_of(job, info) * info.lba_size_bytes;
  constexpr uint64_t kPassesMax = kJobSizePercentMax / 100;
  if (job.size_bytes / kPassesMax > usable) {
    return Error{fmt::format(
        "job {}: size {} is above the limit of {} passes over its zones ({} for zones {}-{}); "
        "lower size or give a runtime",
        job.name, format_size(job.size_bytes), kPassesMax, format_size(usable * kPassesMax), first,
        last)};
  }
  if (job.runtime_ns > kJobRuntimeMaxNs) {
    return Error{fmt::format("job {}: runtime {} is above the limit of 3600s", job.name,
                             format_time(job.runtime_ns))};
  }
  if (job.time_based && job.runtime_ns == 0) {
    return Error{fmt::format("job {}: time_based needs a runtime", job.name)};
  }
  if (!(job.rate_iops >= 0) || !std::isfinite(job.rate_iops)) {
    return Error{fmt::format("job {}: rate_iops {} is not a rate of 0 or more ops/s", job.name,
                             job.rate_iops)};
  }
  if (job.rwmixread_percent > 100 || (job.kb_base != 1024 && job.kb_base != 1000)) {
    return Error{fmt::format("job {}: rwmixread above 100% or kb_base not 1024 or 1000", job.name)};
  }
  uint64_t log_entries = job.log_interval_ns == 0
                             ? 0
                             : (job.runtime_ns + job.log_interval_ns - 1) / job.log_interval_ns;
  if (log_entries > kBwLogEntriesMax) {
    return Error{fmt::format(
        "job {}: log_interval {} over runtime {} makes {} entries, above the limit of {}; use a "
        "log_interval of at least {}",
        job.name, format_time(job.log_interval_ns), format_time(job.runtime_ns), log_entries,
        kBwLogEntriesMax, format_time((job.runtime_ns + kBwLogEntriesMax - 1) / kBwLogEntriesMax))};
  }
  bool splits = splits_zones(job.kind) && job.kind != JobKind::kRead;
  if (splits && job.numjobs > zones) {
    return Error{fmt::format("job {}: numjobs {} needs at least as many zones (range has {})",
                             job.name, job.numjobs, zones)};
  }
  return {};
}

}  // namespace

Outcome check_jobs(const std::vector<JobSpec>& jobs, const DeviceInfo& info) {
  uint64_t inflight = 0;
  for (const auto& job : jobs) {
    for (auto check : {check_zone_sets, check_placement, check_kind, check_amounts}) {
      auto checked = check(job, info);
      if (!checked) return checked;
    }
    inflight += uint64_t{job.iodepth} * job.numjobs;
    if (inflight > kRunInflightMax) {
      return Error{fmt::format(
          "job {}: iodepth x numjobs over the jobs comes to {}, above the limit of {} commands in "
          "flight",
          job.name, inflight, kRunInflightMax)};
    }
  }
  return {};
}

namespace {

// Zones a group of jobs that run together adds to the device's active
// zones: a zone writer's clone keeps one (none if its first zone is active
// already); a finish or softfinish clone writes up to iodepth zones at once.
uint64_t zones_to_activate(const JobSpec& job, const Device& device) {
  const DeviceInfo& info = device.info();
  auto [first, last] = zone_range(job, info);
  uint64_t added = 0;
  for (uint32_t k = 0; k < job.numjobs && first + k <= last; ++k) {
    if (is_zone_writer(job.kind)) {
      added += zone_is_active(device.zone(first + k).state) ? 0 : 1;
    } else if (job.kind == JobKind::kFinish || job.kind == JobKind::kSoftfinish) {
      added += job.iodepth;
    }
  }
  return added;
}

Outcome check_zone_limits(const std::vector<JobSpec>& jobs, const Device& device) {
  const DeviceInfo& info = device.info();
  uint64_t active = 0;
  uint64_t explicitly_open = 0;
  for (uint32_t z = 0; z < info.zone_count; ++z) {
    ZoneState state = device.zone(z).state;
    active += zone_is_active(state) ? 1 : 0;
    explicitly_open += state == ZoneState::kExplicitlyOpened ? 1 : 0;
  }
  uint64_t added = 0;
  for (size_t j = 0; j < jobs.size(); ++j) {
    if (jobs[j].stonewall) added = 0;  // a new group, on the state before the run
    added += zones_to_activate(jobs[j], device);
    if (info.max_active != 0 && active + added > info.max_active) {
      return Error{fmt::format(
          "job {}: its writers{} would keep {} more zones active beside the {} active now, above "
          "the device's limit of {} active zones (zns.max_active); lower numjobs",
          jobs[j].name, added > zones_to_activate(jobs[j], device) ? " and those beside it" : "",
          added, active, info.max_active)};
    }
    if (info.max_open != 0 && added > 0 && explicitly_open >= info.max_open) {
      return Error{fmt::format(
          "job {}: its writers must open a zone, and all {} open zones the device allows "
          "(zns.max_open) are explicitly opened; close some first",
          jobs[j].name, info.max_open)};
    }
  }
  return {};
}

}  // namespace

Outcome check_jobs_on_device(const std::vector<JobSpec>& jobs, const Device& device) {
  auto limits = check_zone_limits(jobs, device);
  if (!limits) return limits;
  for (const auto& job : jobs) {
    if (job.rate_bytes_per_s == 0 || job.runtime_ns != 0) continue;
    // A paced job without a runtime ends when its bytes are done.
    __extension__ typedef unsigned __int128 Wide;
    Wide paced_ns =
        static_cast<Wide>(job_target_bytes(job, device)) * 1'000'000'000 / job.rate_bytes_per_s;
    if (paced_ns >= kPacingHorizonNs) {
      return Error{fmt::format(
          "job {}: at rate {} its bytes take longer than the 146 years of virtual time the "
          "runner counts; raise rate, lower size or give a runtime",
          job.name, format_rate(job.rate_bytes_per_s))};
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
      result.bw_log_interval_ns = jobs[j].log_interval_ns;
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

namespace {

// randrw's reads or writes alone, over the job's time.
nlohmann::ordered_json direction_json(const JobResult& r, const JobResult::Direction& d) {
  double seconds = r.seconds();
  return nlohmann::ordered_json{
      {"ops", d.ops},
      {"bytes", d.bytes},
      {"iops", seconds > 0 ? std::round(static_cast<double>(d.ops) / seconds * 1e3) / 1e3 : 0.0},
      {"bw_bytes_per_s", seconds > 0 ? std::llround(static_cast<double>(d.bytes) / seconds) : 0},
      {"lat_ns", latency_json(d.latency_ns)}};
}

}  // namespace

nlohmann::ordered_json job_result_json(const JobResult& r) {
  nlohmann::ordered_json j;
  j["name"] = r.spec.name;
  j["rw"] = std::string(job_kind_name(r.spec.kind));
  j["bs"] = r.spec.block_size_bytes;
  j["iodepth"] = r.spec.iodepth;
  j["numjobs"] = r.spec.numjobs;
  j["ops"] = r.ops;
  j["bytes"] = r.bytes;
  j["iops"] = std::round(r.iops() * 1000.0) / 1000.0;
  j["bw_bytes_per_s"] = std::llround(r.bandwidth_bytes_per_s());
  j["lat_ns"] = latency_json(r.latency_ns);
  j["start_ns"] = r.start_ns;
  j["end_ns"] = r.end_ns;
  j["resets"] = r.resets;
  if (r.resets != 0) j["reset_lat_ns"] = latency_json(r.reset_latency_ns);
  if (r.flushes != 0) {
    j["flushes"] = r.flushes;
    j["flush_lat_ns"] = latency_json(r.flush_latency_ns);
  }
  j["errors"] = r.errors;
  if (r.errors != 0) j["first_error"] = r.first_error;
  if (r.spec.log_interval_ns != 0) {
    j["bw_log"] = {{"interval_ns", r.bw_log_interval_ns}, {"bytes", r.bw_log}};
  }
  if (r.spec.kind == JobKind::kRandRw) {
    j["rwmixread"] = r.spec.rwmixread_percent;
    j["read"] = direction_json(r, r.reads);
    j["write"] = direction_json(r, r.writes);
  }
  return j;
}

}  // namespace zonelab
