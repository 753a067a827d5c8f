// See drive.h.
#include "controller/drive.h"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>

#include "common/units.h"

namespace zonelab {

bool drive_features_on(const Config& c) {
  const ControllerConfig& k = c.controller;
  return c.buffer.size_bytes != 0 || c.flash.suspend_program != 0 || c.flash.suspend_erase != 0 ||
         k.cores != 0 || k.map_update_ns != 0 || k.unmap_ns_per_gib != 0 ||
         k.read_dispatch != "arrival";
}

Outcome check_drive_config(const Config& c) {
  const bool buffer = c.buffer.size_bytes != 0;
  const ControllerConfig& k = c.controller;
  if (c.interface != "zns" && c.buffer.power_loss_protection == "off") {
    return Error{
        "buffer.power_loss_protection = off (a volatile write cache) is modeled for ZNS devices "
        "(interface = \"zns\") only; the block interface's buffer is power-safe"};
  }
  if (buffer && c.buffer.size_bytes < c.flash.page_size_bytes) {
    return Error{fmt::format(
        "buffer.size ({}) is smaller than one program unit (a flash page of {}); the buffer "
        "drains a page at a time",
        format_size(c.buffer.size_bytes), format_size(c.flash.page_size_bytes))};
  }
  if (buffer && c.interface == "zns" && c.zns.max_active != 0 &&
      c.buffer.size_bytes < (c.zns.max_active + 1) * c.flash.page_size_bytes) {
    return Error{fmt::format(
        "buffer.size ({}) cannot hold a partly written page of each of the {} active zones and "
        "one page more ({})",
        format_size(c.buffer.size_bytes), c.zns.max_active,
        format_size((c.zns.max_active + 1) * c.flash.page_size_bytes))};
  }
  if (!buffer && c.buffer.power_loss_protection == "off") {
    return Error{"buffer.power_loss_protection = off needs a buffer to lose (set buffer.size)"};
  }
  // A suspension must be shorter than the operation it suspends.
  for (auto [on, op, op_ns] :
       {std::tuple{c.flash.suspend_program, "program", c.flash.program_latency_ns},
        std::tuple{c.flash.suspend_erase, "erase", c.flash.erase_latency_ns}}) {
    if (on != 0 && c.flash.suspend_latency_ns >= op_ns) {
      return Error{fmt::format(
          "flash.suspend.latency ({}) is not shorter than flash.{}_latency ({}): suspending "
          "the {} would not let a read go sooner",
          format_time(c.flash.suspend_latency_ns), op, format_time(op_ns), op)};
    }
  }
  if (k.cores == 0 &&
      (k.read_ns != 0 || k.write_ns != 0 || k.management_ns != 0 || k.flush_ns != 0)) {
    return Error{
        "controller.read/write/management/flush are service times of firmware cores: set "
        "controller.cores"};
  }
  return {};
}

void WriteBuffer::retire(uint64_t now_ns) {
  while (!releases_.empty() && releases_.begin()->first <= now_ns) {
    scheduled_ -= releases_.begin()->second;
    releases_.erase(releases_.begin());
  }
}

uint64_t WriteBuffer::used_bytes(uint64_t now_ns) {
  retire(now_ns);
  return held_ + scheduled_;
}

uint64_t WriteBuffer::admit(uint64_t now_ns, uint64_t ready_ns, uint64_t bytes) {
  retire(now_ns);
  const uint64_t need = std::min(bytes, size_);
  uint64_t used = held_ + scheduled_;
  uint64_t at = ready_ns;
  if (used + need > size_) {
    // The earliest release (at or after `ready`) after which it fits. Data
    // of partly written pages leaves only when more data comes: if even the
    // last release leaves too little room, the write waits for that one.
    for (const auto& [time, leaving] : releases_) {
      used -= leaving;
      at = std::max(ready_ns, time);
      if (used + need <= size_) break;
    }
    if (used + need > size_) ++counters_.overcommits;
    if (at > ready_ns) {
      ++counters_.waits;
      counters_.wait_ns += at - ready_ns;
    }
  } else {
    // Releases up to `ready` happen before it, whatever the order.
    for (auto it = releases_.begin(); it != releases_.end() && it->first <= ready_ns; ++it) {
      used -= it->second;
    }
  }
  held_ += bytes;
  counters_.admitted_bytes += bytes;
  counters_.peak_bytes = std::max(counters_.peak_bytes, used + bytes);
  return at;
}

void WriteBuffer::release_at(uint64_t at_ns, uint64_t bytes) {
  bytes = std::min(bytes, held_);
  if (bytes == 0) return;
  held_ -= bytes;
  releases_[at_ns] += bytes;
  scheduled_ += bytes;
}

void WriteBuffer::drop(uint64_t bytes) { held_ -= std::min(bytes, held_); }

size_t FirmwareCores::earliest() const {
  auto core = std::min_element(
      cores_.begin(), cores_.end(),
      [](const Timeline& a, const Timeline& b) { return a.free_at_ns() < b.free_at_ns(); });
  return static_cast<size_t>(core - cores_.begin());
}

uint64_t FirmwareCores::serve(uint64_t ready_ns, uint64_t service_ns) {
  if (cores_.empty()) return ready_ns;
  return cores_[earliest()].reserve(ready_ns, service_ns);
}

uint64_t FirmwareCores::free_at_ns() const {
  return cores_.empty() ? 0 : cores_[earliest()].free_at_ns();
}

uint64_t FirmwareCores::busy_ns() const {
  uint64_t busy = 0;
  for (const Timeline& core : cores_) busy += core.busy_ns();
  return busy;
}

}  // namespace zonelab
