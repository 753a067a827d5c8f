// The conventional SSD; see conv_device.h.
#include "conv/conv_device.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "zonelab/assert.h"

namespace zonelab {

Result<ConvGeometry> conv_geometry(const Config& c) {
  if (c.interface != "block") return Error{"internal: conv_geometry needs interface = block"};
  const FlashConfig& f = c.flash;
  if (f.channels == 0 || f.dies_per_channel == 0 || f.planes_per_die == 0 ||
      f.blocks_per_plane == 0 || f.pages_per_block == 0) {
    return Error{"flash geometry: channels, dies, planes, blocks and pages must all be > 0"};
  }
  auto host = Ftl::host_lbas(c);
  if (!host) return Error{host.error()};
  uint64_t lba = c.host.lba_size_bytes;
  if (c.zns.zone_capacity_bytes == 0 || c.zns.zone_capacity_bytes % lba != 0) {
    return Error{fmt::format(
        "zns.zone_capacity ({} bytes) must be a non-zero multiple of host.lba_size; the block "
        "interface uses it for its zoned view",
        c.zns.zone_capacity_bytes)};
  }
  ConvGeometry g;
  g.host_lbas = *host;
  g.zone_capacity_lbas = c.zns.zone_capacity_bytes / lba;
  uint64_t zones = g.host_lbas / g.zone_capacity_lbas;
  if (zones == 0) {
    return Error{fmt::format(
        "the host capacity ({} LBAs after over-provisioning) holds no zone of zns.zone_capacity "
        "({} LBAs)",
        g.host_lbas, g.zone_capacity_lbas)};
  }
  g.zone_count = static_cast<uint32_t>(std::min<uint64_t>(zones, UINT32_MAX));
  if (c.host.queue_depth == 0) return Error{"host.queue_depth must be > 0"};
  if (c.host.link_bandwidth_bytes_per_s == 0) return Error{"host.link_bandwidth must be > 0"};
  return g;
}

ConvDevice::ConvDevice(const Config& config, uint64_t zone_capacity_lbas, Simulator& sim,
                       std::unique_ptr<Backing> backing)
    : config_(config),
      sim_(sim),
      backing_(std::move(backing)),
      flash_(config.flash),
      ftl_(config, flash_),
      queue_(config.host.queue_depth),
      front_(config) {
  ZL_ASSERT(backing_ != nullptr);
  uint64_t zones = ftl_.lba_count() / zone_capacity_lbas;
  info_.interface = "block";
  info_.lba_size_bytes = config.host.lba_size_bytes;
  info_.zone_size_lbas = zone_capacity_lbas;
  info_.zone_capacity_lbas = zone_capacity_lbas;
  info_.zone_count = static_cast<uint32_t>(zones);
  info_.capacity_lbas = zones * zone_capacity_lbas;
  info_.zone_sets = uniform_zone_sets(zone_capacity_lbas, zone_capacity_lbas, info_.zone_count);
  info_.zasl_lbas = 0;  // no Zone Append
  wp_.assign(zones, 0);
  if (config.controller.read_dispatch == "die") {
    die_reads_ = std::make_unique<DieReadQueues>(
        sim_, front_, flash_.dies(), [this](Command& read) { return start_read(read); });
  }
}

ZoneDescriptor ConvDevice::zone(uint32_t index) const {
  ZoneDescriptor d;
  d.zone = index;
  d.start_lba = index * info_.zone_size_lbas;
  d.capacity_lbas = info_.zone_capacity_lbas;
  d.wp_lba = d.start_lba + wp_[index];
  d.state = view_state(wp_[index]);
  return d;
}

ZoneState ConvDevice::view_state(uint64_t wp) const {
  return wp == 0                          ? ZoneState::kEmpty
         : wp == info_.zone_capacity_lbas ? ZoneState::kFull
                                          : ZoneState::kImplicitlyOpened;
}

void ConvDevice::submit(Command& command) {
  ZL_ASSERT(command.sink != nullptr);
  command.submit_ns = sim_.now_ns();
  if (queue_.offer(command)) admit(command);
}

void ConvDevice::admit(Command& command) {
  if (die_reads_ != nullptr) {
    uint32_t die = command.opcode == Opcode::kRead ? read_die(command) : kNoDie;
    if (die != kNoDie) {
      die_reads_->queue(command, die);
      return;
    }
    die_reads_->before_other_command();
  }
  command.complete_ns = execute(command, sim_.now_ns());
  sim_.schedule_at(command.complete_ns, this, reinterpret_cast<uint64_t>(&command));
}

uint32_t ConvDevice::read_die(const Command& c) {
  if (c.nlb == 0 || c.slba >= info_.capacity_lbas || c.nlb > info_.capacity_lbas - c.slba) {
    return kNoDie;
  }
  uint32_t slot = ftl_.where(c.slba);
  if (slot >= Ftl::kBuffered) return kNoDie;  // unmapped, or waiting in a page buffer
  if (front_.buffer().enabled()) {
    forget_programmed();
    if (in_buffer(slot / ftl_.lbas_per_page(), sim_.now_ns())) return kNoDie;
  }
  return flash_.die_of_plane(ftl_.slot_plane(slot));
}

uint64_t ConvDevice::start_read(Command& command) {
  read_flash_done_ns_ = sim_.now_ns();
  command.complete_ns = execute(command, sim_.now_ns());
  sim_.schedule_at(command.complete_ns, this, reinterpret_cast<uint64_t>(&command));
  return read_flash_done_ns_;
}

bool ConvDevice::in_buffer(uint32_t page, uint64_t at_ns) const {
  auto it = programming_.find(page);
  return it != programming_.end() && it->second > at_ns;
}

void ConvDevice::forget_programmed() {
  const uint64_t now = sim_.now_ns();
  // Programs end out of issue order across planes: a page whose program
  // ended waits behind one that has not, and is found ended when looked up.
  while (!programming_order_.empty() && programming_order_.front().first <= now) {
    auto [end, page] = programming_order_.front();
    programming_order_.pop_front();
    auto it = programming_.find(page);
    if (it != programming_.end() && it->second == end) programming_.erase(it);
  }
}

Outcome ConvDevice::inject_zone(uint32_t, ZoneState) {
  return Error{
      "inject: a block-interface device has no zone states to change (interface = \"block\")"};
}

void ConvDevice::describe_state(nlohmann::ordered_json& out) const {
  uint64_t free_blocks = 0;
  for (uint32_t p = 0; p < flash_.planes(); ++p) free_blocks += ftl_.free_blocks(p);
  const FtlCounters& c = ftl_.counters();
  out["ftl"] = {{"host_lbas", ftl_.lba_count()},    {"valid_lbas", ftl_.valid_lbas()},
                {"free_blocks", free_blocks},       {"gc_runs", c.gc_runs},
                {"gc_moved_lbas", c.gc_moved_lbas}, {"trimmed_lbas", c.trimmed_lbas}};
  if (drive_features_on(config_)) {
    // The production-drive features (controller/front_end.h); counters since
    // the device was opened or its statistics were last cleared.
    front_.describe(flash_, "trim_unmap_ns", out);
  }
}

void ConvDevice::describe_run(nlohmann::ordered_json& out) const {
  const FtlCounters& f = ftl_.counters();
  uint64_t lba = info_.lba_size_bytes;
  out["ftl"] = {{"gc_victims", f.gc_runs},
                {"gc_moved_bytes", f.gc_moved_lbas * lba},
                {"trimmed_bytes", f.trimmed_lbas * lba},
                {"valid_bytes", ftl_.valid_lbas() * lba},
                {"host_capacity_bytes", info_.capacity_lbas * lba}};
  if (drive_features_on(config_)) front_.describe(flash_, "trim_unmap_ns", out);
}

void ConvDevice::on_event(uint64_t tag) {
  Command& command = *reinterpret_cast<Command*>(tag);
  queue_.release();
  while (Command* next = queue_.admit_next()) admit(*next);
  log_completing(command);  // a completion reported is a command recorded
  command.sink->on_complete(command);
}

bool ConvDevice::write_data(const Command& c) {
  if (!backing_->stores_data()) return true;
  // A backing keeps whole zones of the zoned view: one piece per zone.
  uint64_t zone_lbas = info_.zone_size_lbas;
  for (uint64_t lba = c.slba; lba < c.slba + c.nlb;) {
    uint64_t end = std::min(c.slba + c.nlb, (lba / zone_lbas + 1) * zone_lbas);
    const uint8_t* data =
        c.data == nullptr ? nullptr : c.data + (lba - c.slba) * info_.lba_size_bytes;
    if (!backing_->write(lba, static_cast<uint32_t>(end - lba), data)) return false;
    lba = end;
  }
  return true;
}

bool ConvDevice::read_data(Command& c) {
  uint64_t lba_bytes = info_.lba_size_bytes;
  for (uint32_t i = 0; i < c.nlb; ++i) {
    uint8_t* out = c.data + i * lba_bytes;
    if (backing_->stores_data() && ftl_.where(c.slba + i) != Ftl::kUnmapped) {
      if (!backing_->read(c.slba + i, 1, out)) return false;
    } else {
      std::memset(out, 0, lba_bytes);
    }
  }
  return true;
}

template <typename Change>
void ConvDevice::dropping_unbuffered(Change&& change) {
  const uint64_t unbuffered = ftl_.host_unbuffered_lbas();
  change();
  front_.buffer().drop((ftl_.host_unbuffered_lbas() - unbuffered) * info_.lba_size_bytes);
}

uint64_t ConvDevice::trim(uint64_t lba, uint64_t nlb) {
  uint64_t trimmed = ftl_.counters().trimmed_lbas;
  dropping_unbuffered([&] { ftl_.trim(lba, nlb); });
  // The backing forgets whole zones only; a part-trimmed zone keeps stale
  // bytes that are never read, since the FTL answers zeros for them.
  uint64_t zone_lbas = info_.zone_size_lbas;
  uint64_t first = (lba + zone_lbas - 1) / zone_lbas;
  uint64_t end = (lba + nlb) / zone_lbas;
  if (end > first) released_.emplace_back(first * zone_lbas, (end - first) * zone_lbas);
  return (ftl_.counters().trimmed_lbas - trimmed) * info_.lba_size_bytes;
}

void ConvDevice::discard_released() {
  if (released_.empty()) return;
  // The record of the trim is durable before the data goes; if it cannot
  // be, the data stays (the FTL answers zeros for trimmed LBAs anyway).
  if (log_destroying()) {
    for (auto [lba, nlb] : released_) backing_->discard(lba, nlb);
  }
  released_.clear();
}

uint64_t ConvDevice::execute_write(Command& c, uint64_t t0) {
  // The data first: a write the backing cannot store fails before the FTL or
  // the zoned view change (its LBAs then hold what they held, or part of the
  // new data, as NVMe allows for a failed write).
  if (!write_data(c)) {
    c.status = Status::kWriteFault;
    return t0;
  }
  const uint64_t lba_bytes = info_.lba_size_bytes;
  uint64_t bytes = c.nlb * lba_bytes;
  uint64_t received = link_in_.reserve(t0, link_ns(bytes));
  counters_.host_write_bytes += bytes;
  lifetime_write_bytes_ += bytes;
  uint64_t zone_lbas = info_.zone_size_lbas;
  for (uint64_t lba = c.slba; lba < c.slba + c.nlb;) {
    uint64_t z = lba / zone_lbas;
    uint64_t end = std::min(c.slba + c.nlb, (z + 1) * zone_lbas);
    wp_[z] = std::max(wp_[z], end - z * zone_lbas);
    lba = end;
  }
  WriteBuffer& buffer = front_.buffer();
  if (!buffer.enabled()) {
    // Without a buffer the write completes when the table has its LBAs and
    // the pages it filled are programmed.
    if (front_.maps()) received = front_.map(received, bytes);
    return std::max(received, ftl_.write(c.slba, c.nlb, c.stream, received));
  }
  // Complete once in the buffer. The FTL maps the LBAs off the write's path;
  // a page's buffer space comes back when it is programmed and mapped. LBAs
  // rewritten while they waited in a page buffer leave it unprogrammed.
  uint64_t admitted = buffer.admit(sim_.now_ns(), received, bytes);
  uint64_t mapped = front_.maps() ? front_.map(admitted, bytes) : 0;
  forget_programmed();
  programs_.clear();
  dropping_unbuffered([&] { ftl_.write(c.slba, c.nlb, c.stream, admitted, &programs_); });
  const uint64_t page_bytes = uint64_t{ftl_.lbas_per_page()} * lba_bytes;
  for (auto [page, end] : programs_) {
    buffer.release_at(std::max(end, mapped), page_bytes);
    programming_[page] = end;
    programming_order_.emplace_back(end, page);
  }
  return admitted;
}

uint64_t ConvDevice::execute(Command& c, uint64_t start_ns) {
  ++counters_.commands[static_cast<size_t>(c.opcode)];
  ++lifetime_commands_;
  // The firmware first (a core free, its service time), then the fixed
  // controller overhead.
  const uint64_t t0 = front_.take(c, start_ns);
  c.status = Status::kSuccess;
  c.result_lba = 0;
  uint64_t done = t0;
  uint64_t lba_bytes = info_.lba_size_bytes;
  bool data_command =
      c.opcode == Opcode::kRead || c.opcode == Opcode::kWrite || c.opcode == Opcode::kDeallocate;
  if (data_command &&
      (c.nlb == 0 || c.slba >= info_.capacity_lbas || c.nlb > info_.capacity_lbas - c.slba)) {
    c.status = c.nlb == 0 ? Status::kInvalidField : Status::kLbaOutOfRange;
  } else if (c.opcode == Opcode::kWrite && c.stream >= config_.block.streams) {
    c.status = Status::kInvalidField;  // no such stream
  } else {
    switch (c.opcode) {
      case Opcode::kWrite:
        done = execute_write(c, t0);
        break;
      case Opcode::kRead: {
        uint64_t bytes = c.nlb * lba_bytes;
        // With a buffer, pages whose programs have not ended are read from
        // it. (Two words of capture: the function holds them in place.)
        Ftl::BufferedPage buffered;
        if (front_.buffer().enabled()) {
          forget_programmed();
          buffered = [this, t0](uint32_t page) {
            if (!in_buffer(page, t0)) return false;
            ++front_.buffer().mutable_counters().read_hits;
            return true;
          };
        }
        uint64_t flash_done = ftl_.read(c.slba, c.nlb, t0, buffered);
        read_flash_done_ns_ = std::max(read_flash_done_ns_, flash_done);
        done = link_out_.reserve(flash_done, link_ns(bytes));
        counters_.host_read_bytes += bytes;
        lifetime_read_bytes_ += bytes;
        if (c.data != nullptr && !read_data(c)) c.status = Status::kUnrecoveredReadError;
        break;
      }
      case Opcode::kDeallocate:
        // Bookkeeping: the trimmed LBAs leave the mapping table.
        done = front_.unmap(t0, trim(c.slba, c.nlb));
        counters_.deallocated_bytes += c.nlb * lba_bytes;
        break;
      case Opcode::kFlush:
        break;  // no volatile write cache: every completed write is durable
      case Opcode::kZoneManagementSend: {
        uint64_t zone_lbas = info_.zone_size_lbas;
        if (c.action != ZoneAction::kOpen && c.action != ZoneAction::kClose &&
            c.action != ZoneAction::kFinish && c.action != ZoneAction::kReset) {
          c.status = Status::kInvalidField;
        } else if (!c.select_all && (c.slba >= info_.capacity_lbas || c.slba % zone_lbas != 0)) {
          c.status = c.slba >= info_.capacity_lbas ? Status::kLbaOutOfRange : Status::kInvalidField;
        } else {
          uint64_t first = c.select_all ? 0 : c.slba / zone_lbas;
          uint64_t end = c.select_all ? wp_.size() : first + 1;
          for (uint64_t z = first; z < end; ++z) {
            if (c.action == ZoneAction::kReset && wp_[z] != 0) {
              // seed 000 §5.1: reset = trim the range -- unless the host
              // is one that never tells the drive what it freed.
              if (config_.block.zone_reset == "trim") {
                done = std::max(done, front_.unmap(t0, trim(z * zone_lbas, zone_lbas)));
              }
              wp_[z] = 0;
            } else if (c.action == ZoneAction::kFinish) {
              wp_[z] = zone_lbas;
            }
          }
          ++counters_.zone_actions[static_cast<size_t>(c.action)];
        }
        break;
      }
      case Opcode::kAppend:
        c.status = Status::kInvalidField;  // a block device has no Zone Append
        break;
    }
  }
  ++counters_.statuses[static_cast<size_t>(c.status)];
  log_taken(c);
  discard_released();
  return std::max(done, t0);
}

void ConvDevice::reset_stats() {
  counters_ = HostCounters{};
  front_.reset_stats();
  flash_.reset_stats();
  ftl_.reset_stats();
  link_in_.reset_stats();
  link_out_.reset_stats();
}

Result<std::unique_ptr<ConvDevice>> make_conv_device(const Config& config, Simulator& sim,
                                                     std::unique_ptr<Backing> backing) {
  auto geometry = conv_geometry(config);
  if (!geometry) return Error{geometry.error()};
  if (backing == nullptr) {
    if (config.store.backing == "file") {
      return Error{"store.backing = \"file\" needs a device image (zonelab create)"};
    }
    backing = config.store.backing == "memory"
                  ? make_memory_backing(config.host.lba_size_bytes, geometry->zone_capacity_lbas,
                                        geometry->zone_capacity_lbas, geometry->zone_count)
                  : make_none_backing();
  }
  return std::make_unique<ConvDevice>(config, geometry->zone_capacity_lbas, sim,
                                      std::move(backing));
}

}  // namespace zonelab
