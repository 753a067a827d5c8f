#include "workload/replay.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <map>

#include "stack/stack_report.h"
#include "zonelab/assert.h"

namespace zonelab {

namespace {

// Deallocate's block count is 32 bits wide: a trim goes in pieces.
constexpr uint64_t kTrimPieceLbas = 1u << 20;

struct Planned {
  TraceOpKind kind;
  uint64_t time_ns;  // when to issue, from the start (timestamps)
  uint64_t slba;
  uint64_t nlb;
};

bool zoned(const DeviceInfo& info) { return info.interface == "zns"; }

// The LBAs an operation touches; false past the end.
bool lbas_of(const TraceOp& op, const DeviceInfo& info, uint64_t& slba, uint64_t& nlb,
             bool& widened) {
  const uint64_t lba = info.lba_size_bytes;
  slba = op.offset_bytes / lba;
  if (op.offset_bytes > UINT64_MAX - op.length_bytes) return false;
  // The end rounded up to a whole LBA, without the sum overflowing near 2^64.
  const uint64_t end_byte = op.offset_bytes + op.length_bytes;
  const uint64_t end = end_byte / lba + (end_byte % lba != 0 ? 1 : 0);
  nlb = end - slba;
  widened = op.offset_bytes % lba != 0 || op.length_bytes % lba != 0;
  return slba < info.capacity_lbas && nlb <= info.capacity_lbas - slba;
}

std::vector<Planned> plan(const Trace& trace, const DeviceInfo& info, bool timestamps,
                          uint64_t& widened) {
  std::vector<Planned> out;
  out.reserve(trace.ops.size());
  uint64_t waited = 0;
  for (const TraceOp& op : trace.ops) {
    if (op.kind == TraceOpKind::kWait) {
      waited += op.wait_ns;
      continue;
    }
    Planned p{op.kind, timestamps ? op.time_ns + waited : 0, 0, 0};
    if (op.kind != TraceOpKind::kFlush) {
      bool w = false;
      bool inside = lbas_of(op, info, p.slba, p.nlb, w);
      ZL_ASSERT(inside && "check_trace first");
      widened += w ? 1 : 0;
    }
    out.push_back(p);
  }
  return out;
}

class Replayer final : private CompletionSink, private EventHandler {
 public:
  Replayer(Device& device, Simulator& sim, std::vector<Planned> ops, const ReplayOptions& options,
           const ProgressFn& progress)
      : device_(device),
        sim_(sim),
        ops_(std::move(ops)),
        options_(options),
        progress_(progress),
        slots_(options.iodepth) {
    for (uint32_t i = 0; i < options.iodepth; ++i) free_.push_back(i);
  }

  ReplayResult run() {
    result_.start_ns = sim_.now_ns();
    result_.end_ns = sim_.now_ns();
    if (ops_.empty()) return result_;
    if (options_.timestamps) {
      sim_.schedule_at(result_.start_ns + ops_[0].time_ns, this, kDue);
    } else {
      while (next_ < ops_.size() && !free_.empty()) issue(next_++, sim_.now_ns());
    }
    while (completed_ < ops_.size()) {
      // Bounded: every operation issued completes after finitely many events.
      ZL_ASSERT(sim_.step());
    }
    return result_;
  }

 private:
  struct Slot {
    std::vector<Command> pieces;
    uint32_t remaining = 0;
    size_t op = 0;
    uint64_t submit_ns = 0;
  };

  enum : uint64_t { kDue = 0, kPump = 1 };

  void on_event(uint64_t tag) override {
    const uint64_t now = sim_.now_ns();
    if (tag == kPump) {
      // Slots freed by completions: the waiting first, then (asap) the next.
      pump_scheduled_ = false;
      while (!free_.empty() && !waiting_.empty()) {
        size_t index = waiting_.front();
        waiting_.pop_front();
        ++result_.delayed;
        result_.delay_ns += now - (result_.start_ns + ops_[index].time_ns);
        issue(index, now);
      }
      while (!options_.timestamps && !free_.empty() && next_ < ops_.size()) issue(next_++, now);
      return;
    }
    // The next timestamped operation is due.
    // Every operation due now (several may share a time).
    while (next_ < ops_.size() && result_.start_ns + ops_[next_].time_ns <= now) {
      if (free_.empty()) {
        waiting_.push_back(next_);
      } else {
        issue(next_, now);
      }
      ++next_;
    }
    if (next_ < ops_.size()) {
      sim_.schedule_at(result_.start_ns + ops_[next_].time_ns, this, kDue);
    }
  }

  void issue(size_t index, uint64_t now) {
    uint32_t s = free_.back();
    free_.pop_back();
    Slot& slot = slots_[s];
    const Planned& p = ops_[index];
    slot.op = index;
    slot.submit_ns = now;
    slot.pieces.clear();
    auto add = [&](Opcode opcode, ZoneAction action, uint64_t slba, uint64_t nlb) {
      Command& c = slot.pieces.emplace_back();
      c.opcode = opcode;
      c.action = action;
      c.slba = slba;
      c.nlb = static_cast<uint32_t>(nlb);
      c.user_tag = s;
      c.sink = this;
    };
    const DeviceInfo& info = device_.info();
    switch (p.kind) {
      case TraceOpKind::kRead:
        add(Opcode::kRead, ZoneAction::kNone, p.slba, p.nlb);
        break;
      case TraceOpKind::kWrite:
        add(Opcode::kWrite, ZoneAction::kNone, p.slba, p.nlb);
        break;
      case TraceOpKind::kFlush:
        add(Opcode::kFlush, ZoneAction::kNone, 0, 0);
        break;
      case TraceOpKind::kTrim:
        if (zoned(info)) {
          for (uint64_t at = p.slba; at < p.slba + p.nlb;) {
            uint32_t zone = info.zone_of_lba(at);
            add(Opcode::kZoneManagementSend, ZoneAction::kReset, info.zone_start_lba(zone), 0);
            at = info.zone_start_lba(zone) + info.zone_size_of(zone);
          }
        } else {
          for (uint64_t done = 0; done < p.nlb; done += kTrimPieceLbas) {
            add(Opcode::kDeallocate, ZoneAction::kNone, p.slba + done,
                std::min(kTrimPieceLbas, p.nlb - done));
          }
        }
        break;
      case TraceOpKind::kWait:
        ZL_ASSERT(false && "waits are planned away");
    }
    slot.remaining = static_cast<uint32_t>(slot.pieces.size());
    result_.commands += slot.pieces.size();
    // The vector does not grow while its commands are with the device.
    for (Command& c : slot.pieces) device_.submit(c);
  }

  void on_complete(Command& command) override {
    Slot& slot = slots_[command.user_tag];
    if (command.status != Status::kSuccess) {
      if (result_.errors++ == 0) {
        result_.first_error = fmt::format("{} at LBA {} ({} of the trace's operations)",
                                          status_name(command.status), command.slba, slot.op + 1);
      }
    }
    if (--slot.remaining > 0) return;
    const Planned& p = ops_[slot.op];
    const uint64_t now = sim_.now_ns();
    ReplayResult::Kind* kind = nullptr;
    switch (p.kind) {
      case TraceOpKind::kRead:
        kind = &result_.read;
        break;
      case TraceOpKind::kWrite:
        kind = &result_.write;
        break;
      case TraceOpKind::kTrim:
        kind = &result_.trim;
        break;
      default:
        kind = &result_.flush;
        break;
    }
    ++kind->ops;
    kind->bytes += p.nlb * device_.info().lba_size_bytes;
    kind->latency_ns.record(now - slot.submit_ns);
    result_.end_ns = now;
    ++completed_;
    free_.push_back(static_cast<uint32_t>(command.user_tag));
    if (progress_ && completed_ % 4096 == 0) progress_(now - result_.start_ns, result_.commands);
    // Not from inside a completion: the next issue runs as an event now.
    if (!pump_scheduled_ && (!waiting_.empty() || (!options_.timestamps && next_ < ops_.size()))) {
      pump_scheduled_ = true;
      sim_.schedule_at(now, this, kPump);
    }
  }

  Device& device_;
  Simulator& sim_;
  std::vector<Planned> ops_;
  ReplayOptions options_;
  const ProgressFn& progress_;
  std::vector<Slot> slots_;
  std::vector<uint32_t> free_;
  std::deque<size_t> waiting_;
  size_t next_ = 0;
  size_t completed_ = 0;
  bool pump_scheduled_ = false;
  ReplayResult result_;
};

}  // namespace

Outcome check_trace(const Trace& trace, const DeviceInfo& info, const Device& device) {
  const bool zns = zoned(info);
  std::map<uint32_t, uint64_t> wp;  // zones the trace touched: their write pointers
  auto wp_of = [&](uint32_t zone) -> uint64_t& {
    auto it = wp.find(zone);
    if (it == wp.end()) it = wp.emplace(zone, device.zone(zone).wp_lba).first;
    return it->second;
  };
  for (const TraceOp& op : trace.ops) {
    if (op.kind == TraceOpKind::kWait || op.kind == TraceOpKind::kFlush) continue;
    uint64_t slba = 0;
    uint64_t nlb = 0;
    bool widened = false;
    if (!lbas_of(op, info, slba, nlb, widened)) {
      return Error{fmt::format(
          "line {}: {} of bytes {}+{} is past the device's end ({} bytes, {} LBAs of {} bytes)",
          op.line, trace_op_name(op.kind), op.offset_bytes, op.length_bytes,
          info.capacity_lbas * info.lba_size_bytes, info.capacity_lbas, info.lba_size_bytes)};
    }
    if (nlb > UINT32_MAX && op.kind != TraceOpKind::kTrim) {
      return Error{fmt::format("line {}: a {} of {} LBAs is longer than a command holds", op.line,
                               trace_op_name(op.kind), nlb)};
    }
    if (!zns) continue;
    uint32_t zone = info.zone_of_lba(slba);
    const uint64_t start = info.zone_start_lba(zone);
    if (op.kind == TraceOpKind::kWrite) {
      uint64_t& at = wp_of(zone);
      const uint64_t cap_end = start + info.zone_capacity_of(zone);
      if (slba != at) {
        return Error{fmt::format(
            "line {}: a write at LBA {} is not at zone {}'s write pointer (LBA {}): a zoned "
            "namespace takes writes at write pointers only (a block-interface trace replays on "
            "a block image: --set interface=block)",
            op.line, slba, zone, at)};
      }
      if (slba + nlb > cap_end) {
        return Error{
            fmt::format("line {}: a write of LBAs {}+{} runs past zone {}'s capacity (LBA {})",
                        op.line, slba, nlb, zone, cap_end)};
      }
      at += nlb;
    } else if (op.kind == TraceOpKind::kTrim) {
      // Whole zones only: they are reset.
      uint64_t end = slba + nlb;
      if (slba != start || widened) {
        return Error{fmt::format(
            "line {}: a trim of LBAs {}+{} on a zoned namespace must cover whole zones (it "
            "resets them); zone {} starts at LBA {}",
            op.line, slba, nlb, zone, start)};
      }
      for (uint64_t z_start = start; z_start < end;) {
        uint32_t z = info.zone_of_lba(z_start);
        uint64_t z_end = info.zone_start_lba(z) + info.zone_size_of(z);
        if (z_end > end) {
          return Error{fmt::format(
              "line {}: a trim of LBAs {}+{} ends inside zone {} (LBAs {}-{}); on a zoned "
              "namespace it must cover whole zones",
              op.line, slba, nlb, z, info.zone_start_lba(z), z_end - 1)};
        }
        wp_of(z) = info.zone_start_lba(z);
        z_start = z_end;
      }
    }
  }
  return {};
}

nlohmann::ordered_json replay_result_json(const ReplayResult& r) {
  const uint64_t span = r.end_ns - r.start_ns;
  const double seconds = static_cast<double>(span) / 1e9;
  auto kind = [seconds](const ReplayResult::Kind& k) {
    nlohmann::ordered_json j;
    j["ops"] = k.ops;
    j["bytes"] = k.bytes;
    j["iops"] = seconds > 0 ? std::round(static_cast<double>(k.ops) / seconds) : 0.0;
    j["bw_bytes_per_s"] = seconds > 0 ? std::round(static_cast<double>(k.bytes) / seconds) : 0.0;
    j["lat_ns"] = latency_json(k.latency_ns);
    return j;
  };
  nlohmann::ordered_json out;
  out["read"] = kind(r.read);
  out["write"] = kind(r.write);
  out["trim"] = kind(r.trim);
  out["flush"] = kind(r.flush);
  out["virtual_time_ns"] = span;
  out["commands"] = r.commands;
  out["delayed"] = r.delayed;
  out["delay_ns"] = r.delay_ns;
  out["widened"] = r.widened;
  out["errors"] = r.errors;
  if (r.errors != 0) out["first_error"] = r.first_error;
  return out;
}

ReplayResult replay_trace(Device& device, Simulator& sim, const Trace& trace,
                          const ReplayOptions& options, const ProgressFn& progress) {
  uint64_t widened = 0;
  auto ops = plan(trace, device.info(), options.timestamps, widened);
  Replayer replayer(device, sim, std::move(ops), options, progress);
  ReplayResult result = replayer.run();
  result.widened = widened;
  return result;
}

}  // namespace zonelab
