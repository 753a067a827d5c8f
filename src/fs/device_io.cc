// See device_io.h.
#include "fs/device_io.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <vector>

namespace zonelab::fs {
namespace {

// The calling thread's ReadLatencyScope's histogram, if any.
thread_local Histogram* tls_read_latency = nullptr;

}  // namespace

ReadLatencyScope::ReadLatencyScope(Histogram& into) : previous_(tls_read_latency) {
  tls_read_latency = &into;
}

ReadLatencyScope::~ReadLatencyScope() { tls_read_latency = previous_; }

const char* write_cause_name(WriteCause cause) {
  static constexpr const char* kNames[] = {"data", "padding", "meta", "gc"};
  return kNames[static_cast<size_t>(cause)];
}

uint64_t DeviceCounters::written_bytes() const {
  uint64_t total = 0;
  for (const auto& b : write_bytes) total += b.load(std::memory_order_relaxed);
  return total;
}

DeviceIo::DeviceIo(FsDevice& device) : device_(device), info_(device.info()) {}

std::vector<ZoneSetInfo> DeviceIo::zone_sets() const {
  if (!info_.zone_sets.empty()) return info_.zone_sets;
  return uniform_zone_sets(info_.zone_size_lbas, info_.zone_capacity_lbas, info_.zone_count);
}

FsStatus DeviceIo::run(Command& command, IoKind kind, const char* what) {
  // A device of one caller at a time (virtual time: each command runs the
  // simulation on the caller's thread); callers from several threads -- a
  // RocksDB opened on a file system fsck mounted -- take turns.
  std::unique_lock<std::mutex> turn;
  if (!device_.concurrent()) turn = std::unique_lock(virtual_turn_mutex_);
  if (!device_.submit_wait(command)) {
    return FsStatus(Code::kIoError, fmt::format("{} at LBA {}: the device takes no more commands",
                                                what, command.slba));
  }
  return check(command, kind, what);
}

FsStatus DeviceIo::run_all(std::span<Command* const> commands, IoKind kind, const char* what) {
  std::unique_lock<std::mutex> turn;
  if (!device_.concurrent()) turn = std::unique_lock(virtual_turn_mutex_);
  if (!device_.submit_all(commands)) {
    return FsStatus(Code::kIoError, fmt::format("{} at LBA {}: the device takes no more commands",
                                                what, commands.front()->slba));
  }
  FsStatus first;
  for (Command* c : commands) {
    FsStatus ok = check(*c, kind, what);
    if (!ok && first) first = ok;
  }
  return first;
}

FsStatus DeviceIo::check(const Command& command, IoKind kind, const char* what) {
  counters_.commands[static_cast<size_t>(kind)].fetch_add(1, std::memory_order_relaxed);
  {
    std::lock_guard lock(latency_mutex_);
    latency_ns_[static_cast<size_t>(kind)].record(command.latency_ns());
  }
  if (kind == IoKind::kRead && tls_read_latency != nullptr) {
    tls_read_latency->record(command.latency_ns());
  }
  if (command.status == Status::kSuccess) return {};
  counters_.failed.fetch_add(1, std::memory_order_relaxed);
  std::string why = device_.data_error();
  return FsStatus(Code::kIoError,
                  fmt::format("{} at LBA {}: the device answered {}{}{}", what, command.slba,
                              status_name(command.status), why.empty() ? "" : ": ", why));
}

FsStatus DeviceIo::write(uint64_t lba, const uint8_t* data, uint64_t blocks, WriteCause cause,
                         uint64_t padding_bytes) {
  ZL_ASSERT(padding_bytes < blocks * block_bytes() || blocks == 0);
  const uint64_t chunk_blocks = kCommandBytesMax / block_bytes();
  for (uint64_t done = 0; done < blocks;) {
    uint64_t n = std::min(chunk_blocks, blocks - done);
    Command c;
    c.opcode = Opcode::kWrite;
    c.slba = lba + done;
    c.nlb = static_cast<uint32_t>(n);
    c.data = const_cast<uint8_t*>(data + done * block_bytes());
    if (FsStatus ok = run(c, IoKind::kWrite, "write"); !ok) return ok;
    writes_done_.fetch_add(1, std::memory_order_acq_rel);
    done += n;
  }
  count_written(lba, blocks * block_bytes(), padding_bytes, cause);
  return {};
}

void DeviceIo::count_written(uint64_t lba, uint64_t bytes, uint64_t padding_bytes,
                             WriteCause cause) {
  const auto c = static_cast<size_t>(cause);
  const auto pad = static_cast<size_t>(WriteCause::kPadding);
  counters_.write_bytes[c].fetch_add(bytes - padding_bytes, std::memory_order_relaxed);
  counters_.write_bytes[pad].fetch_add(padding_bytes, std::memory_order_relaxed);
  if (info_.uniform_zones()) return;
  auto& set = counters_.set_write_bytes[zone_set_of_lba(info_.zone_sets, lba)];
  set[c].fetch_add(bytes - padding_bytes, std::memory_order_relaxed);
  set[pad].fetch_add(padding_bytes, std::memory_order_relaxed);
}

FsStatus DeviceIo::read(uint64_t lba, uint8_t* out, uint64_t blocks) {
  const uint64_t chunk_blocks = kCommandBytesMax / block_bytes();
  for (uint64_t done = 0; done < blocks;) {
    uint64_t n = std::min(chunk_blocks, blocks - done);
    Command c;
    c.opcode = Opcode::kRead;
    c.slba = lba + done;
    c.nlb = static_cast<uint32_t>(n);
    c.data = out + done * block_bytes();
    if (FsStatus ok = run(c, IoKind::kRead, "read"); !ok) return ok;
    done += n;
  }
  counters_.read_bytes.fetch_add(blocks * block_bytes(), std::memory_order_relaxed);
  return {};
}

FsStatus DeviceIo::batch(std::span<const IoPiece> pieces, Opcode opcode, IoKind kind,
                         const char* what) {
  // At most kBatchCommandsMax pieces in flight; each window's pieces go
  // command by command, a round at a time.
  for (size_t first = 0; first < pieces.size(); first += kBatchCommandsMax) {
    const auto window = pieces.subspan(first, std::min(kBatchCommandsMax, pieces.size() - first));
    const uint64_t chunk_blocks = kCommandBytesMax / block_bytes();
    std::vector<Command> commands(window.size());
    std::vector<Command*> round;
    round.reserve(window.size());
    for (uint64_t done = 0;; done += chunk_blocks) {
      round.clear();
      for (size_t i = 0; i < window.size(); ++i) {
        const IoPiece& p = window[i];
        if (done >= p.blocks) continue;
        Command& c = commands[i];
        c = Command{};
        c.opcode = opcode;
        c.slba = p.lba + done;
        c.nlb = static_cast<uint32_t>(std::min(chunk_blocks, p.blocks - done));
        c.data = p.data + done * block_bytes();
        round.push_back(&c);
      }
      if (round.empty()) break;
      if (FsStatus ok = run_all(round, kind, what); !ok) return ok;
      if (opcode == Opcode::kWrite) {
        writes_done_.fetch_add(round.size(), std::memory_order_acq_rel);
      }
    }
  }
  return {};
}

FsStatus DeviceIo::write_all(std::span<const IoPiece> pieces, WriteCause cause) {
  if (FsStatus ok = batch(pieces, Opcode::kWrite, IoKind::kWrite, "write"); !ok) return ok;
  for (const IoPiece& p : pieces) {
    count_written(p.lba, p.blocks * block_bytes(), p.padding_bytes, cause);
  }
  return {};
}

FsStatus DeviceIo::read_all(std::span<const IoPiece> pieces) {
  if (FsStatus ok = batch(pieces, Opcode::kRead, IoKind::kRead, "read"); !ok) return ok;
  for (const IoPiece& p : pieces) {
    counters_.read_bytes.fetch_add(p.blocks * block_bytes(), std::memory_order_relaxed);
  }
  return {};
}

FsStatus DeviceIo::reset(uint32_t zone) {
  Command c;
  c.opcode = Opcode::kZoneManagementSend;
  c.action = ZoneAction::kReset;
  c.slba = zone_start(zone);
  return run(c, IoKind::kReset, "zone reset");
}

FsStatus DeviceIo::finish(uint32_t zone) {
  Command c;
  c.opcode = Opcode::kZoneManagementSend;
  c.action = ZoneAction::kFinish;
  c.slba = zone_start(zone);
  return run(c, IoKind::kFinish, "zone finish");
}

FsStatus DeviceIo::flush() {
  if (!info_.volatile_write_cache) return {};
  // A Flush covers the writes completed before it is submitted.
  uint64_t covered = writes_done_.load(std::memory_order_acquire);
  if (writes_flushed_.load(std::memory_order_acquire) >= covered) return {};
  Command c;
  c.opcode = Opcode::kFlush;
  if (FsStatus ok = run(c, IoKind::kFlush, "flush"); !ok) return ok;
  uint64_t seen = writes_flushed_.load(std::memory_order_acquire);
  while (seen < covered &&
         !writes_flushed_.compare_exchange_weak(seen, covered, std::memory_order_acq_rel)) {
  }
  return {};
}

std::string DeviceIo::counters_json() const {
  using Json = nlohmann::ordered_json;
  static constexpr const char* kKinds[] = {"write", "read", "reset", "finish", "flush"};
  Json written = Json::object();
  for (size_t i = 0; i < kWriteCauseCount; ++i) {
    written[write_cause_name(static_cast<WriteCause>(i))] =
        counters_.write_bytes[i].load(std::memory_order_relaxed);
  }
  Json commands = Json::object();
  std::lock_guard lock(latency_mutex_);
  for (size_t i = 0; i < kIoKindCount; ++i) {
    const Histogram& h = latency_ns_[i];
    commands[kKinds[i]] = {{"count", counters_.commands[i].load(std::memory_order_relaxed)},
                           {"latency_ns",
                            {{"mean", h.mean()},
                             {"p50", h.percentile(50)},
                             {"p99", h.percentile(99)},
                             {"max", h.max()}}}};
  }
  Json out = {{"written_bytes", written},
              {"read_bytes", counters_.read_bytes.load(std::memory_order_relaxed)},
              {"commands", commands},
              {"failed", counters_.failed.load(std::memory_order_relaxed)}};
  return out.dump();
}

}  // namespace zonelab::fs
