// The conventional device's part of a device image: the zoned view's write
// pointers (as zone records), the flash's erase counts, the lifetime
// counters and the FTL (ftl_state.h), checked against this device.
#include <fmt/format.h>

#include "controller/device_state.h"
#include "conv/conv_device.h"
#include "flash/flash_state.h"

namespace zonelab {
namespace {

constexpr uint32_t kSectionBlockMap = 6;  // the ZNS device's (refused here)

}  // namespace

void ConvDevice::export_state(ImageState& state) const {
  state.config = config_;
  std::vector<ZoneRecord> zones(wp_.size());
  for (uint32_t i = 0; i < wp_.size(); ++i) {
    zones[i] = ZoneRecord{static_cast<uint8_t>(zone(i).state), wp_[i], 0, 0, 0};
  }
  put_zone_records(state, zones);
  put_next_open_seq(state, 1);
  put_erase_counts(state, flash_.erase_counts());
  put_lifetime(state, lifetime());
  FtlState ftl;
  ftl_.export_state(ftl);
  ftl.clock_ns = sim_.now_ns();
  for (uint32_t p = 0; p < flash_.planes(); ++p) {
    ftl.plane_free_at_ns.push_back(flash_.plane_free_at_ns(p));
  }
  for (uint32_t ch = 0; ch < flash_.channels(); ++ch) {
    ftl.channel_free_at_ns.push_back(flash_.channel_free_at_ns(ch));
  }
  put_ftl(state, ftl);
  state.growth_bytes =
      ftl_growth_bytes(ftl, flash_.page_size_bytes() / config_.host.lba_size_bytes);
}

Outcome ConvDevice::import_state(const ImageState& state) {
  if (state.sections.count(kSectionBlockMap) != 0) {
    return Error{"corrupt image: a block-interface image with a zone block map"};
  }
  auto zones = get_zone_records(state);
  if (!zones) return Error{"corrupt image: " + zones.error()};
  auto next_open_seq = get_next_open_seq(state);
  if (!next_open_seq) return Error{"corrupt image: " + next_open_seq.error()};
  auto erase_counts = get_erase_counts(state);
  if (!erase_counts) return Error{"corrupt image: " + erase_counts.error()};
  auto lifetime = get_lifetime(state);
  if (!lifetime) return Error{"corrupt image: " + lifetime.error()};
  auto read_ftl = get_ftl(state);
  if (!read_ftl) return Error{"corrupt image: " + read_ftl.error()};
  const FtlState& ftl = *read_ftl;
  // What decodes must encode again: a state whose buffers could outgrow any
  // slot could be loaded but never saved.
  uint64_t lbas_per_page = flash_.page_size_bytes() / config_.host.lba_size_bytes;
  if (state.sections.at(kSectionFtl).size() + ftl_growth_bytes(ftl, lbas_per_page) >
      Image::kSlotBytesMax) {
    return Error{fmt::format("corrupt image: ftl section: {} page buffers could outgrow a slot",
                             ftl.buffers.size())};
  }
  if (zones->size() != wp_.size()) {
    return Error{fmt::format("corrupt image: {} zones stored, configuration has {}", zones->size(),
                             wp_.size())};
  }
  if (erase_counts->size() != flash_.erase_counts().size()) {
    return Error{"corrupt image: erase counts do not match the flash geometry"};
  }
  // The zoned view keeps only write pointers; the state follows from them.
  for (uint32_t i = 0; i < zones->size(); ++i) {
    const ZoneRecord& z = (*zones)[i];
    if (z.wp > info_.zone_capacity_lbas || z.state != static_cast<uint8_t>(view_state(z.wp)) ||
        z.data_end != 0 || z.pages_programmed != 0 || z.open_seq != 0) {
      return Error{fmt::format("corrupt image: zone {} has an impossible zoned-view state", i)};
    }
  }
  if (ftl.plane_free_at_ns.size() != flash_.planes() ||
      ftl.channel_free_at_ns.size() != flash_.channels()) {
    return Error{"corrupt image: ftl: free times do not match the flash geometry"};
  }
  // Bounded so that no later reservation can overflow: the clock to 2^62 ns
  // (146 years), work in flight to kInFlightMaxNs past it.
  constexpr uint64_t kClockMaxNs = 1ULL << 62;
  constexpr uint64_t kInFlightMaxNs = 1ULL << 50;
  if (ftl.clock_ns > kClockMaxNs || ftl.clock_ns < sim_.now_ns()) {
    return Error{fmt::format("corrupt image: ftl: clock {} ns is out of range", ftl.clock_ns)};
  }
  for (const auto* times : {&ftl.plane_free_at_ns, &ftl.channel_free_at_ns}) {
    for (uint64_t t : *times) {
      if (t > ftl.clock_ns + kInFlightMaxNs) {
        return Error{fmt::format("corrupt image: ftl: a resource busy until {} ns", t)};
      }
    }
  }
  Outcome imported = ftl_.import_state(ftl);
  if (!imported) return imported;
  sim_.advance_to(ftl.clock_ns);
  flash_.restore_free_at_ns(ftl.plane_free_at_ns, ftl.channel_free_at_ns);
  for (uint32_t i = 0; i < zones->size(); ++i) wp_[i] = (*zones)[i].wp;
  flash_.erase_counts() = std::move(erase_counts).value();
  lifetime_write_bytes_ = lifetime->host_write_bytes;
  lifetime_read_bytes_ = lifetime->host_read_bytes;
  lifetime_commands_ = lifetime->commands;
  // Data waiting in the page buffers is in the write buffer too.
  if (front_.buffer().enabled()) {
    front_.buffer().hold(ftl_.host_buffered_lbas() * config_.host.lba_size_bytes);
  }
  return {};
}

}  // namespace zonelab
