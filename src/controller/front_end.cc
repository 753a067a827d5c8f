// See front_end.h.
#include "controller/front_end.h"

#include <algorithm>

namespace zonelab {

DriveFrontEnd::DriveFrontEnd(const Config& config)
    : controller_(config.controller),
      overhead_ns_(config.host.command_overhead_ns),
      map_update_ns_(config.controller.map_update_ns),
      volatile_cache_(has_volatile_write_cache(config)),
      power_loss_protection_(config.buffer.power_loss_protection == "on"),
      buffer_(config.buffer.size_bytes),
      cores_(config.controller.cores) {}

uint64_t DriveFrontEnd::service_ns(const Command& c) const {
  switch (c.opcode) {
    case Opcode::kRead:
      return controller_.read_ns;
    case Opcode::kWrite:
    case Opcode::kAppend:
      return controller_.write_ns;
    case Opcode::kFlush:
      return controller_.flush_ns;
    case Opcode::kZoneManagementSend:
    case Opcode::kDeallocate:
      return controller_.management_ns;
  }
  return 0;
}

uint64_t DriveFrontEnd::take(const Command& command, uint64_t start_ns) {
  uint64_t served = cores_.enabled() ? cores_.serve(start_ns, service_ns(command)) : start_ns;
  return served + overhead_ns_;
}

uint64_t DriveFrontEnd::map(uint64_t ready_ns, uint64_t bytes) {
  return mapping_.reserve(ready_ns, (map_update_ns_ * bytes + 4095) / 4096);
}

uint64_t DriveFrontEnd::unmap(uint64_t t0, uint64_t mapped_bytes) {
  if (controller_.unmap_ns_per_gib == 0 || mapped_bytes == 0) return t0;
  // ns per GiB x bytes, in 2^-10 steps so that no product overflows.
  uint64_t ns =
      (controller_.unmap_ns_per_gib * ((mapped_bytes + 1023) >> 10) + (uint64_t{1} << 20) - 1) >>
      20;
  counters_.unmap_ns += ns;
  // A core for all of it (the commands behind notice only when the other
  // cores are busy), the table for its first unmap_lock share, from when
  // both are free.
  uint64_t lock = ns * controller_.unmap_lock_bp / 10000;
  uint64_t start = std::max({t0, mapping_.free_at_ns(), unmapping_.free_at_ns()});
  if (cores_.enabled()) start = cores_.serve(start, ns) - ns;
  mapping_.reserve(start, lock);
  return unmapping_.reserve(start, ns);
}

void DriveFrontEnd::describe(const Flash& flash, const char* unmap_key,
                             nlohmann::ordered_json& out) const {
  const WriteBuffer::Counters& b = buffer_.counters();
  out["drive"] = {{"buffer_bytes", buffer_.size_bytes()},
                  {"power_loss_protection", power_loss_protection_},
                  {"volatile_write_cache", volatile_cache_},
                  {"buffer_admitted_bytes", b.admitted_bytes},
                  {"buffer_waits", b.waits},
                  {"buffer_wait_ns", b.wait_ns},
                  {"buffer_peak_bytes", b.peak_bytes},
                  {"buffer_overcommits", b.overcommits},
                  {"buffer_read_hits", b.read_hits},
                  {"suspensions", flash.suspensions()},
                  {"firmware_cores", controller_.cores},
                  {"firmware_busy_ns", cores_.busy_ns()},
                  {"mapping_busy_ns", mapping_.busy_ns()},
                  {unmap_key, counters_.unmap_ns},
                  {"read_dispatch", controller_.read_dispatch},
                  {"die_queued_reads", counters_.die_queued_reads},
                  {"die_queue_ns", counters_.die_queue_ns},
                  {"flushes", counters_.flushes},
                  {"flush_programs", counters_.flush_programs},
                  {"power_losses", counters_.power_losses},
                  {"power_loss_lost_zones", counters_.lost_zones},
                  {"power_loss_lost_bytes", counters_.lost_bytes}};
}

void DriveFrontEnd::reset_stats() {
  buffer_.reset_stats();
  cores_.reset_stats();
  mapping_.reset_stats();
  unmapping_.reset_stats();
  counters_ = DriveCounters{};
}

DieReadQueues::DieReadQueues(Simulator& sim, DriveFrontEnd& front_end, uint32_t dies, Start start)
    : sim_(sim), front_end_(front_end), start_(std::move(start)), dies_(dies) {}

void DieReadQueues::queue(Command& read, uint32_t die) {
  DieReads& d = dies_[die];
  d.waiting.emplace_back(arrivals_++, &read);
  if (d.waiting.size() == 1) ready_or_wait(die);
  dispatch(Dispatch::kFreeCore);
}

void DieReadQueues::dispatch(Dispatch how) {
  const uint64_t now = sim_.now_ns();
  FirmwareCores& cores = front_end_.cores();
  while (!ready_.empty()) {
    if (how == Dispatch::kFreeCore && cores.free_at_ns() > now) {
      // Every core is taken: look again when the first is free.
      uint64_t at = cores.free_at_ns();
      if (at < wake_ns_) {
        wake_ns_ = at;
        sim_.schedule_at(at, this, kWake);
      }
      return;
    }
    uint32_t die = ready_.top().second;
    ready_.pop();
    DieReads& d = dies_[die];
    Command& read = *d.waiting.front().second;
    d.waiting.pop_front();
    if (how == Dispatch::kWoken) how = Dispatch::kFreeCore;
    start(read, die);
    if (!d.waiting.empty()) ready_or_wait(die);
  }
}

void DieReadQueues::ready_or_wait(uint32_t die) {
  DieReads& d = dies_[die];
  if (d.busy_until_ns <= sim_.now_ns()) {
    ready_.emplace(d.waiting.front().first, die);
  } else if (!d.event_set) {
    d.event_set = true;
    sim_.schedule_at(d.busy_until_ns, this, die);
  }
}

void DieReadQueues::start(Command& read, uint32_t die) {
  const uint64_t now = sim_.now_ns();
  if (now > read.submit_ns) {
    DriveCounters& counters = front_end_.counters();
    ++counters.die_queued_reads;
    counters.die_queue_ns += now - read.submit_ns;
  }
  dies_[die].busy_until_ns = start_(read);
}

void DieReadQueues::on_event(uint64_t event) {
  if (event == kWake) {                     // a core may be free for a waiting read
    if (sim_.now_ns() != wake_ns_) return;  // an earlier wake-up took its place
    wake_ns_ = UINT64_MAX;
    dispatch(Dispatch::kWoken);
    return;
  }
  auto die = static_cast<uint32_t>(event);  // its read has left it
  dies_[die].event_set = false;
  if (!dies_[die].waiting.empty()) ready_or_wait(die);
  dispatch(Dispatch::kFreeCore);
}

}  // namespace zonelab
