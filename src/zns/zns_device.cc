// The ZNS device: command checks in NVMe order, zone state through the zone
// table, timing on the flash and link timelines; see zns_device.h.
#include "zns/zns_device.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "zonelab/assert.h"

namespace zonelab {

ZnsDevice::ZnsDevice(const Config& config, const ZoneLayout& layout, Simulator& sim,
                     std::unique_ptr<Backing> backing)
    : config_(config),
      layout_(layout),
      sim_(sim),
      backing_(std::move(backing)),
      flash_(config.flash),
      table_(layout.sets(), layout.max_open(), layout.max_active()),
      link_time_(config.host.link_bandwidth_bytes_per_s),
      queue_(config.host.queue_depth),
      map_(layout_, config.zns.mapping_blocks == "lazy"),
      async_reset_(config.zns.reset_mode == "async"),
      full_erase_(config.zns.reset_erase == "full"),
      erase_on_block_(config.zns.mapping_erase_on == "block"),
      front_(config),
      internal_quota_(config.buffer.size_bytes * config.buffer.internal_share_bp / 10000) {
  ZL_ASSERT(backing_ != nullptr);
  info_.interface = "zns";
  info_.lba_size_bytes = layout_.lba_size_bytes();
  info_.zone_size_lbas = layout_.zone_size_lbas();
  info_.zone_capacity_lbas = layout_.zone_capacity_lbas();
  info_.zone_count = layout_.zone_count();
  info_.capacity_lbas = layout_.capacity_lbas();
  info_.max_open = table_.max_open();
  info_.max_active = table_.max_active();
  info_.zasl_lbas = layout_.zasl_lbas();
  info_.zone_sets = layout_.sets();
  info_.stored_lbas = layout_.backing_lbas();
  info_.volatile_write_cache = front_.volatile_cache();
  if (front_.buffer().enabled()) draining_.resize(layout_.zone_count());
  if (front_.volatile_cache()) flushed_lbas_.assign(layout_.zone_count(), 0);
  failed_.assign(flash_.dies(), 0);
  if (config.controller.read_dispatch == "die") {
    die_reads_ = std::make_unique<DieReadQueues>(
        sim_, front_, flash_.dies(), [this](Command& read) { return start_read(read); });
  }
  fill_job_of_zone_.assign(layout_.zone_count(), -1);
  erase_job_of_slot_.assign(map_.slot_count(), -1);
}

ZoneDescriptor ZnsDevice::zone(uint32_t index) const {
  const Zone& z = table_.zone(index);
  ZoneDescriptor d;
  d.zone = index;
  d.start_lba = layout_.zone_start_lba(index);
  d.capacity_lbas = layout_.zone_capacity_lbas(index);
  d.state = z.state;
  d.wp_lba = z.state == ZoneState::kFull ? d.start_lba + layout_.zone_size_lbas(index)
                                         : d.start_lba + z.wp;
  return d;
}

void ZnsDevice::submit(Command& command) {
  ZL_ASSERT(command.sink != nullptr);
  command.submit_ns = sim_.now_ns();
  if (queue_.offer(command)) admit(command);
}

void ZnsDevice::admit(Command& command) {
  if (die_reads_ != nullptr) {
    uint32_t die = command.opcode == Opcode::kRead ? read_die(command) : kNoDie;
    if (die != kNoDie) {
      ++host_io_inflight_;
      die_reads_->queue(command, die);
      return;
    }
    die_reads_->before_other_command();
  }
  if (is_host_io(command)) {
    ++host_io_inflight_;
    command.complete_ns = execute(command, sim_.now_ns());
    sim_.schedule_at(command.complete_ns, this, reinterpret_cast<uint64_t>(&command));
    return;
  }
  // A guard part keeps a command that starts device work (a finish fill)
  // from completing before all of that work has been set going.
  pending_[&command] = PendingCommand{1, 0};
  uint64_t done = execute(command, sim_.now_ns());
  auto it = pending_.find(&command);
  it->second.done_ns = std::max(it->second.done_ns, done);
  if (--it->second.parts == 0) {
    command.complete_ns = it->second.done_ns;
    pending_.erase(it);
    sim_.schedule_at(command.complete_ns, this, reinterpret_cast<uint64_t>(&command));
  }
}

uint32_t ZnsDevice::read_die(const Command& c) {
  if (check_range(c.slba, c.nlb) != Status::kSuccess) return kNoDie;
  uint32_t zone = layout_.zone_of_lba(c.slba);
  uint64_t offset = c.slba - layout_.zone_start_lba(zone);
  const Zone& z = table_.zone(zone);
  if (z.state == ZoneState::kOffline || offset + c.nlb > layout_.zone_size_lbas(zone) ||
      offset >= z.data_end) {
    return kNoDie;
  }
  uint32_t page = layout_.page_of_lba(offset);
  if (page >= z.pages_programmed) return kNoDie;
  if (front_.buffer().enabled()) {
    forget_programmed(zone);
    if (in_buffer(zone, page, sim_.now_ns())) return kNoDie;
  }
  return layout_.locate(map_.slot_of(zone), page).plane /
         static_cast<uint32_t>(config_.flash.planes_per_die);
}

uint64_t ZnsDevice::start_read(Command& command) {
  read_flash_done_ns_ = sim_.now_ns();
  command.complete_ns = execute(command, sim_.now_ns());
  sim_.schedule_at(command.complete_ns, this, reinterpret_cast<uint64_t>(&command));
  return read_flash_done_ns_;
}

void ZnsDevice::JobSteps::on_event(uint64_t step) {
  auto job = static_cast<uint32_t>(step);
  auto generation = static_cast<uint32_t>(step >> 32);
  Job& j = device_.jobs_[job];
  if (j.active && j.generation == generation) device_.job_step(job, device_.sim_.now_ns());
}

void ZnsDevice::on_event(uint64_t tag) {
  Command& command = *reinterpret_cast<Command*>(tag);  // a command's completion
  queue_.release();
  if (is_host_io(command) && --host_io_inflight_ == 0) resume_parked_jobs();
  // Waiting commands take the freed slot before the completion is seen, so a
  // submitter that resubmits from its callback queues behind them.
  while (Command* next = queue_.admit_next()) admit(*next);
  log_completing(command);  // a completion reported is a command recorded
  command.sink->on_complete(command);
}

Status ZnsDevice::check_range(uint64_t slba, uint32_t nlb) const {
  if (nlb == 0) return Status::kInvalidField;
  if (slba >= layout_.capacity_lbas() || nlb > layout_.capacity_lbas() - slba) {
    return Status::kLbaOutOfRange;
  }
  return Status::kSuccess;
}

uint64_t ZnsDevice::execute(Command& command, uint64_t start_ns) {
  ++lifetime_commands_;
  ++counters_.commands[static_cast<size_t>(command.opcode)];
  // The firmware first (a core free, its service time), then the fixed
  // controller overhead.
  uint64_t t0 = front_.take(command, start_ns);
  command.status = Status::kSuccess;
  command.result_lba = 0;
  uint64_t done = t0;
  switch (command.opcode) {
    case Opcode::kWrite:
    case Opcode::kAppend:
      done = execute_write(command, t0);
      break;
    case Opcode::kRead:
      done = execute_read(command, t0);
      break;
    case Opcode::kZoneManagementSend:
      done = execute_zone_send(command, t0);
      break;
    case Opcode::kDeallocate:
      command.status = Status::kInvalidField;  // zones are reset, not trimmed
      break;
    case Opcode::kFlush:
      done = execute_flush(t0);
      break;
  }
  ++counters_.statuses[static_cast<size_t>(command.status)];
  ZL_ASSERT(command.status != Status::kSuccess || done >= t0);
  log_taken(command);
  discard_released();
  return std::max(done, t0);
}

void ZnsDevice::discard_released() {
  if (released_.empty()) return;
  // The record of what released the data is durable first; if it cannot
  // be, the data stays (above a write pointer nothing reads).
  if (log_destroying()) {
    for (auto [zone, slot] : released_) {
      backing_->discard(layout_.zone_start_lba(zone), layout_.zone_size_lbas(zone));
      if (parity_stored() && slot != BlockMap::kUnmapped) {
        backing_->discard(parity_lba(slot, 0),
                          uint64_t{layout_.stripes_of_slot(slot)} * layout_.lbas_per_page());
      }
    }
  }
  released_.clear();
}

uint64_t ZnsDevice::execute_write(Command& c, uint64_t t0) {
  bool append = c.opcode == Opcode::kAppend;
  c.status = check_range(c.slba, c.nlb);
  if (c.status != Status::kSuccess) return t0;
  uint32_t zone = layout_.zone_of_lba(c.slba);
  uint64_t zone_start = layout_.zone_start_lba(zone);
  if (append) {
    // Zone Append names the zone by its start LBA and may not exceed ZASL.
    if (c.slba != zone_start || c.nlb > layout_.zasl_lbas()) {
      c.status = Status::kInvalidField;
      return t0;
    }
  }
  uint64_t offset = append ? table_.zone(zone).wp : c.slba - zone_start;
  c.status = table_.check_write(zone, offset, c.nlb);
  if (c.status != Status::kSuccess) return t0;
  // The data goes first, above the write pointer, where nothing reads it
  // until the pointer moves: a write the backing cannot store fails with
  // nothing changed, and a zone never describes data that is not there.
  uint64_t lba = zone_start + offset;
  if (backing_->stores_data() && !backing_->write(lba, c.nlb, c.data)) {
    c.status = Status::kWriteFault;
    return t0;
  }
  c.status = table_.open_for_write(zone);
  if (c.status != Status::kSuccess) return t0;

  uint64_t erased = table_.zone(zone).data_end == 0 ? prepare_first_write(zone, t0) : t0;
  // The parity of the stripes the data falls in; a parity buffer that could
  // not be stored fails the write (the tail's parity is recomputed first by
  // the zone's next write).
  if (parity_stored() && !update_parity(zone, offset, c.nlb, c.data)) {
    (void)recompute_tail_parity(zone);
    c.status = Status::kWriteFault;
    return t0;
  }
  table_.advance(zone, c.nlb);
  if (append) c.result_lba = lba;
  uint64_t bytes = c.nlb * layout_.lba_size_bytes();
  counters_.host_write_bytes += bytes;
  lifetime_write_bytes_ += bytes;
  uint64_t received = link_in_.reserve(t0, link_ns(bytes));
  const bool maps = front_.maps();
  // Every page the data now fills completely is programmed.
  const Zone& after = table_.zone(zone);
  uint32_t full_pages = layout_.page_of_lba(after.data_end);
  if (front_.buffer().enabled()) {
    // Complete once in the buffer; the pages drain from there (the erase of
    // reused blocks is ahead of them on the planes).
    // The FTL maps the new LBAs once the data is in the buffer, off the
    // write's path, on the table reset bookkeeping holds; a page's buffer
    // space comes back when it is programmed and its data mapped.
    uint64_t admitted = front_.buffer().admit(sim_.now_ns(), received, bytes);
    uint64_t mapped = maps ? front_.map(admitted, bytes) : 0;
    program_pages(zone, full_pages, admitted, FlashCause::kHost, after.data_end, mapped);
    return admitted;
  }
  // Without a buffer the write completes once the table has its LBAs.
  if (maps) received = front_.map(received, bytes);
  return std::max({received, erased,
                   program_pages(zone, full_pages, received, FlashCause::kHost, after.data_end)});
}

uint64_t ZnsDevice::execute_flush(uint64_t t0) {
  // Without a volatile cache every completed write is durable already
  // (NVMe: Flush succeeds and does nothing).
  if (!front_.volatile_cache()) return t0;
  ++front_.counters().flushes;
  uint64_t done = t0;
  const uint64_t lpp = layout_.lbas_per_page();
  const uint64_t now = sim_.now_ns();
  for (uint32_t zone = 0; zone < layout_.zone_count(); ++zone) {
    const Zone& z = table_.zone(zone);
    if (z.data_end <= flushed_lbas_[zone]) continue;
    for (const Draining& d : draining_[zone]) {
      if (d.end_ns > now) done = std::max(done, d.end_ns);
    }
    // A partly written page is programmed to a spare page of its plane
    // (the page itself is programmed when it fills).
    if (z.data_end > uint64_t{z.pages_programmed} * lpp) {
      uint32_t slot = map_.slot_of(zone);
      if (slot != BlockMap::kUnmapped) {
        uint32_t plane = layout_.unit_plane(slot, z.pages_programmed % layout_.slot_units(slot));
        done = std::max(done, flash_.program(plane, t0, FlashCause::kHost));
        ++front_.counters().flush_programs;
      }
    }
    flushed_lbas_[zone] = z.data_end;
  }
  return done;
}

uint64_t ZnsDevice::partial_page_bytes(uint32_t zone) const {
  const Zone& z = table_.zone(zone);
  uint64_t programmed = uint64_t{z.pages_programmed} * layout_.lbas_per_page();
  uint64_t end = z.data_end;
  // A finish fill in progress has put its own data in the buffer.
  if (int64_t job = fill_job_of_zone_[zone]; job >= 0) {
    end = std::max(end, jobs_[static_cast<size_t>(job)].cursor_lbas);
  }
  return end > programmed ? (end - programmed) * layout_.lba_size_bytes() : 0;
}

void ZnsDevice::forget_buffered(uint32_t zone, uint64_t partial_bytes) {
  if (!front_.buffer().enabled()) return;
  front_.buffer().drop(partial_bytes);
  draining_[zone].clear();
  if (front_.volatile_cache()) flushed_lbas_[zone] = 0;
}

void ZnsDevice::forget_programmed(uint32_t zone) {
  std::deque<Draining>& d = draining_[zone];
  while (!d.empty() && d.front().end_ns <= sim_.now_ns()) d.pop_front();
}

bool ZnsDevice::in_buffer(uint32_t zone, uint32_t page, uint64_t at_ns) const {
  const std::deque<Draining>& d = draining_[zone];
  auto it = std::lower_bound(d.begin(), d.end(), page,
                             [](const Draining& x, uint32_t p) { return x.page < p; });
  return it != d.end() && it->page == page && it->end_ns > at_ns;
}

uint64_t ZnsDevice::program_pages(uint32_t zone, uint32_t end, uint64_t ready_ns, FlashCause cause,
                                  uint64_t data_end, uint64_t mapped_ns) {
  Zone& z = table_.mutable_zone(zone);
  if (end <= z.pages_programmed) return ready_ns;
  std::deque<Draining>* draining = front_.buffer().enabled() ? &draining_[zone] : nullptr;
  if (draining != nullptr) forget_programmed(zone);
  const uint64_t lpp = layout_.lbas_per_page();
  uint32_t slot = map_.slot_of(zone);
  ZL_ASSERT(slot != BlockMap::kUnmapped);
  // With erase_on = block, old data in a block is erased when the zone
  // programs the block's first page (seed 003 4.3).
  uint32_t stale = erase_on_block_ ? map_.slot(slot).stale_pages : 0;
  uint32_t units = layout_.slot_units(slot);
  auto ppb = static_cast<uint32_t>(config_.flash.pages_per_block);
  const bool parity = layout_.parity() != ParityPlacement::kNone;
  const uint32_t stripe_pages = parity ? layout_.flex_slot(slot).data_dies : 0;
  const auto ppd = static_cast<uint32_t>(config_.flash.planes_per_die);
  uint64_t done = ready_ns;
  for (uint32_t page = z.pages_programmed; page < end; ++page) {
    uint32_t unit = page % units;
    uint32_t plane = layout_.unit_plane(slot, unit);
    uint64_t ready = ready_ns;
    uint32_t unit_page = page / units;
    if (stale != 0 && unit_page % ppb == 0 && unit_page / ppb < dirty_blocks(slot, unit, stale)) {
      ready = flash_.erase(plane, layout_.first_block(slot) + unit_page / ppb, ready_ns,
                           FlashCause::kReset);
    }
    // A failed die takes no program: its page is lost, and rebuilt from
    // the stripe when read.
    uint64_t programmed = ready;
    if (failed_count_ == 0 || failed_[plane / ppd] == 0) {
      programmed = flash_.program(plane, ready, cause);
      done = std::max(done, programmed);
    }
    if (draining != nullptr) {
      // The page's data leaves the buffer when it is on flash and mapped.
      uint64_t first = uint64_t{page} * lpp;
      uint64_t lbas = data_end > first ? std::min(lpp, data_end - first) : 0;
      front_.buffer().release_at(std::max(programmed, mapped_ns), lbas * layout_.lba_size_bytes());
      if (cause == FlashCause::kFinish && internal_quota_.enabled()) {
        internal_quota_.release_at(programmed, lbas * layout_.lba_size_bytes());
      }
      draining->push_back({page, programmed});
    }
    // The page that completes a stripe lets its parity go to flash. The
    // write does not wait for it: until then the parity is in the
    // controller's power-loss-protected buffer.
    if (parity && (page + 1) % stripe_pages == 0) {
      program_parity(slot, page / stripe_pages, ready_ns, FlashCause::kParity);
    }
  }
  z.pages_programmed = end;
  return done;
}

uint64_t ZnsDevice::program_parity(uint32_t slot, uint32_t stripe, uint64_t ready_ns,
                                   FlashCause cause) {
  uint64_t done = ready_ns;
  const FlexSlot& s = layout_.flex_slot(slot);
  const auto ppd = static_cast<uint32_t>(config_.flash.planes_per_die);
  for (uint32_t copy = 0; copy < s.parity.size(); ++copy) {
    FlashPage at = layout_.parity_page(slot, copy, stripe);
    if (failed_count_ != 0 && failed_[at.plane / ppd] != 0) continue;
    done = std::max(done, flash_.program(at.plane, ready_ns, cause));
    ++parity_counters_.stripes_programmed;
  }
  return done;
}

uint64_t ZnsDevice::die_cost(uint32_t slot, const std::vector<uint32_t>& load) const {
  // The least-loaded dies (seed 001 §III-C): the FBG whose dies hold the
  // fewest open FBGs; an FBG on a failed die only when no other is free.
  const FlexSlot& s = layout_.flex_slot(slot);
  uint64_t cost = 0;
  for (uint32_t d = s.first_die; d < s.first_die + s.dies; ++d) {
    uint32_t flat = layout_.flex_die(d);
    cost += load[d] + (failed_[flat] != 0 ? (uint64_t{1} << 40) : 0);
  }
  return cost;
}

uint64_t ZnsDevice::prepare_first_write(uint32_t zone, uint64_t ready_ns) {
  uint32_t slot = map_.slot_of(zone);
  if (slot == BlockMap::kUnmapped) {
    if (layout_.flex()) {
      // Open FBGs on each die: those of the other active zones.
      std::vector<uint32_t> load(flash_.dies(), 0);
      for (uint32_t other = 0; other < layout_.zone_count(); ++other) {
        uint32_t taken = map_.slot_of(other);
        if (other == zone || taken == BlockMap::kUnmapped ||
            !zone_is_active(table_.zone(other).state)) {
          continue;
        }
        const FlexSlot& s = layout_.flex_slot(taken);
        for (uint32_t d = s.first_die; d < s.first_die + s.dies; ++d) ++load[d];
      }
      slot = map_.map(zone, [&](uint32_t candidate) { return die_cost(candidate, load); });
    } else {
      slot = map_.map(zone);
    }
  }
  complete_erase(slot);
  Slot& s = map_.mutable_slot(slot);
  if (s.stale_pages == 0 || erase_on_block_) return ready_ns;
  uint64_t done = erase_slot(slot, s.stale_pages, ready_ns);
  s.stale_pages = 0;
  return done;
}

uint64_t ZnsDevice::execute_read(Command& c, uint64_t t0) {
  c.status = check_range(c.slba, c.nlb);
  if (c.status != Status::kSuccess) return t0;
  uint32_t zone = layout_.zone_of_lba(c.slba);
  uint64_t zone_start = layout_.zone_start_lba(zone);
  uint64_t offset = c.slba - zone_start;
  const Zone& z = table_.zone(zone);
  // State before boundary, as QEMU checks a read (nvme_check_zone_read).
  if (z.state == ZoneState::kOffline) {
    c.status = Status::kZoneIsOffline;
    return t0;
  }
  if (offset + c.nlb > layout_.zone_size_lbas(zone)) {
    c.status = Status::kZoneBoundaryError;  // reads do not cross zones
    return t0;
  }
  uint64_t lba_bytes = layout_.lba_size_bytes();
  uint64_t end = offset + c.nlb;
  uint64_t data_end = std::min(end, z.data_end);
  if (c.data != nullptr) {
    uint64_t stored = data_end > offset ? data_end - offset : 0;
    if (stored > 0 && backing_->stores_data()) {
      if (!backing_->read(c.slba, static_cast<uint32_t>(stored), c.data)) {
        c.status = Status::kUnrecoveredReadError;
        return t0;
      }
    } else {
      stored = 0;
    }
    std::memset(c.data + stored * lba_bytes, 0, (c.nlb - stored) * lba_bytes);
  }
  if (front_.buffer().enabled()) forget_programmed(zone);
  uint64_t done = t0;
  uint64_t lpp = layout_.lbas_per_page();
  const auto ppd = static_cast<uint32_t>(config_.flash.planes_per_die);
  for (uint64_t lba = offset; lba < data_end;) {
    uint32_t page = layout_.page_of_lba(lba);
    uint64_t page_end = std::min<uint64_t>((page + 1) * lpp, data_end);
    if (page < z.pages_programmed && front_.buffer().enabled() && in_buffer(zone, page, t0)) {
      ++front_.buffer().mutable_counters().read_hits;  // still in the buffer: no flash read
    } else if (page < z.pages_programmed) {
      uint32_t slot = map_.slot_of(zone);
      uint32_t plane = layout_.unit_plane(slot, page % layout_.slot_units(slot));
      if (failed_count_ != 0 && failed_[plane / ppd] != 0) {
        // The die is gone: the page comes back from its stripe, or the
        // read fails (never wrong data).
        uint8_t* out = c.data != nullptr ? c.data + (lba - offset) * lba_bytes : nullptr;
        if (!rebuild(zone, page, lba - uint64_t{page} * lpp, page_end - uint64_t{page} * lpp, out,
                     t0, done)) {
          ++parity_counters_.unrecoverable_reads;
          c.status = Status::kUnrecoveredReadError;
          return t0;
        }
      } else {
        done = std::max(done, flash_.read(plane, t0, (page_end - lba) * lba_bytes));
        read_flash_done_ns_ = std::max(read_flash_done_ns_, done);
      }
    }
    lba = page_end;
  }
  uint64_t bytes = c.nlb * lba_bytes;
  counters_.host_read_bytes += bytes;
  lifetime_read_bytes_ += bytes;
  return link_out_.reserve(done, link_ns(bytes));
}

uint64_t ZnsDevice::execute_zone_send(Command& c, uint64_t t0) {
  ZoneAction action = c.action;
  if (action == ZoneAction::kNone || static_cast<uint8_t>(action) > 5) {
    c.status = Status::kInvalidField;
    return t0;
  }
  if (c.select_all) {
    std::vector<uint32_t> targets = table_.select_all_targets(action);
    if (action == ZoneAction::kOpen) {
      c.status = table_.open_all(targets);
      if (c.status == Status::kSuccess) ++counters_.zone_actions[static_cast<size_t>(action)];
      return t0;
    }
    uint64_t done = t0;
    for (uint32_t zone : targets) {
      Status status = Status::kSuccess;
      done = std::max(done, apply_action(c, action, zone, t0, status));
      ZL_ASSERT(status == Status::kSuccess);  // targets are in states the action accepts
    }
    ++counters_.zone_actions[static_cast<size_t>(action)];
    return done;
  }
  if (c.slba >= layout_.capacity_lbas()) {
    c.status = Status::kLbaOutOfRange;
    return t0;
  }
  uint32_t zone = layout_.zone_of_lba(c.slba);
  if (c.slba != layout_.zone_start_lba(zone)) {
    c.status = Status::kInvalidField;  // must name the zone by its start LBA
    return t0;
  }
  uint64_t done = apply_action(c, action, zone, t0, c.status);
  if (c.status == Status::kSuccess) ++counters_.zone_actions[static_cast<size_t>(action)];
  return done;
}

uint64_t ZnsDevice::apply_action(Command& command, ZoneAction action, uint32_t zone, uint64_t t0,
                                 Status& status) {
  const Zone& z = table_.zone(zone);
  switch (action) {
    case ZoneAction::kOpen:
      status = table_.open(zone);
      return t0;
    case ZoneAction::kClose:
      status = table_.close(zone);
      return t0;
    case ZoneAction::kFinish: {
      bool was_full = z.state == ZoneState::kFull;
      bool holds_data = z.data_end != 0;
      status = table_.finish(zone);
      if (status != Status::kSuccess || was_full) return t0;
      if (config_.zns.finish_granularity_bytes != 0) {
        // An empty zone holds no blocks to fill: its finish is cheap.
        if (holds_data) {
          Job fill;
          fill.kind = Job::Kind::kFill;
          fill.zone = zone;
          fill.cursor_lbas = z.data_end;
          start_job(command, fill, t0);
        }
        return t0;
      }
      // No fill: only the page buffer's partial page is padded and programmed.
      uint64_t lpp = layout_.lbas_per_page();
      auto padded_pages = static_cast<uint32_t>((z.data_end + lpp - 1) / lpp);
      uint64_t done = program_pages(zone, padded_pages, t0, FlashCause::kFinish, z.data_end);
      // A partly written last stripe: its parity leaves the buffer now.
      if (layout_.parity() != ParityPlacement::kNone && padded_pages != 0) {
        uint32_t slot = map_.slot_of(zone);
        uint32_t stripe_pages = layout_.flex_slot(slot).data_dies;
        if (padded_pages % stripe_pages != 0) {
          program_parity(slot, padded_pages / stripe_pages, t0, FlashCause::kParity);
        }
      }
      return done;
    }
    case ZoneAction::kReset: {
      bool was_empty = z.state == ZoneState::kEmpty;
      uint32_t programmed = z.pages_programmed;
      uint64_t mapped_bytes = z.data_end * layout_.lba_size_bytes();
      uint64_t partial = front_.buffer().enabled() ? partial_page_bytes(zone) : 0;
      status = table_.reset(zone);
      if (status != Status::kSuccess || was_empty) return t0;
      forget_buffered(zone, partial);
      cancel_fill(zone);
      table_.mutable_zone(zone).pages_programmed = 0;
      release(zone);
      uint64_t done = release_blocks(command, zone, programmed, t0);
      // Bookkeeping: the zone's LBAs leave the mapping table, which takes
      // no other update meanwhile.
      return std::max(done, front_.unmap(t0, mapped_bytes));
    }
    case ZoneAction::kOffline:
      if (front_.buffer().enabled() && table_.zone(zone).state == ZoneState::kReadOnly) {
        forget_buffered(zone, partial_page_bytes(zone));
      }
      status = table_.offline(zone);
      if (status == Status::kSuccess) release(zone);
      return t0;
    case ZoneAction::kNone:
      break;
  }
  status = Status::kInvalidField;
  return t0;
}

void ZnsDevice::inject(uint32_t zone, ZoneState state) {
  ZL_ASSERT(zone < layout_.zone_count());
  uint64_t partial =
      front_.buffer().enabled() ? partial_page_bytes(zone) : 0;  // with a fill's data
  cancel_fill(zone);
  forget_buffered(zone, partial);
  table_.inject(zone, state);
  if (log_ != nullptr) log_->injected(zone, state);
  if (state == ZoneState::kOffline) release(zone);
  discard_released();
}

Outcome ZnsDevice::inject_zone(uint32_t zone, ZoneState state) {
  if (zone >= layout_.zone_count()) {
    return Error{fmt::format("zone {} does not exist (the device has zones 0-{})", zone,
                             layout_.zone_count() - 1)};
  }
  if (state != ZoneState::kReadOnly && state != ZoneState::kOffline) {
    return Error{
        fmt::format("a zone can be made read-only or offline, not {}", zone_state_name(state))};
  }
  inject(zone, state);
  return {};
}

void ZnsDevice::describe_state(nlohmann::ordered_json& out) const {
  uint64_t stale_pages = 0;
  for (const Slot& slot : map_.slots()) stale_pages += slot.stale_pages;
  out["block_map"] = {{"mapping", map_.lazy() ? "lazy" : "direct"},
                      {"physical_zones", map_.slot_count()},
                      {"free_physical_zones", map_.free_slots()},
                      {"clean_free_physical_zones", map_.clean_free_slots()},
                      {"stale_pages", stale_pages}};
  const FlashConfig& f = config_.flash;
  nlohmann::ordered_json failed = nlohmann::ordered_json::array();
  for (uint32_t die = 0; die < failed_.size(); ++die) {
    if (failed_[die] != 0) {
      failed.push_back(fmt::format("{}:{}", die / f.dies_per_channel, die % f.dies_per_channel));
    }
  }
  out["failed_dies"] = std::move(failed);
  if (drive_features_on(config_)) {
    // The production-drive features (controller/front_end.h); counters since
    // the device was opened or its statistics were last cleared.
    front_.describe(flash_, "reset_unmap_ns", out);
  }
  if (!layout_.flex()) {
    out["parity"] = {{"placement", "none"}, {"area_bytes", 0}, {"percent_of_flash", 0.0}};
    return;
  }
  const FlexLayout& plan = *layout_.flex_layout();
  const uint64_t lba = layout_.lba_size_bytes();
  nlohmann::ordered_json sets = nlohmann::ordered_json::array();
  for (uint32_t i = 0; i < layout_.sets().size(); ++i) {
    const ZoneSetInfo& set = layout_.sets()[i];
    const ZoneSetLayout& planned = plan.sets[i];
    sets.push_back({{"set", i},
                    {"zone_size_bytes", set.zone_size_lbas * lba},
                    {"zone_capacity_bytes", set.zone_capacity_lbas * lba},
                    {"zone_count", set.zone_count},
                    {"first_zone", set.first_zone},
                    {"first_lba", set.first_lba},
                    {"dies_per_zone", planned.dies_per_fbg},
                    {"dies", die_range_text(planned.first_die, planned.dies)},
                    {"dies_bound", planned.bound},
                    {"first_superblock", planned.first_superblock},
                    {"superblocks", planned.superblocks},
                    {"open_blocks_per_zone", layout_.open_blocks_of_set(i)},
                    {"max_open_by_budget", layout_.budget_zones_of_set(i)}});
  }
  const double flash_bytes = static_cast<double>(plan.geometry.flash_bytes());
  // The contract's summary: the flash that holds parity (the parity area
  // apart, or the zones' own parity chunks).
  out["parity"] = {
      {"placement", parity_placement_name(plan.placement)},
      {"area_bytes", plan.parity_bytes()},
      {"percent_of_flash", 100.0 * static_cast<double>(plan.parity_bytes()) / flash_bytes}};
  out["flexzns"] = {
      {"parity", parity_placement_name(plan.placement)},
      {"chunk_bytes", plan.geometry.chunk_bytes},
      {"superblocks", plan.geometry.superblocks},
      {"zone_sets", std::move(sets)},
      {"data_area_bytes", uint64_t{plan.data_superblocks} * plan.geometry.superblock_bytes()},
      {"parity_area_bytes", uint64_t{plan.parity_superblocks} * plan.geometry.superblock_bytes()},
      {"parity_bytes", plan.parity_bytes()},
      {"parity_percent_of_flash", 100.0 * static_cast<double>(plan.parity_bytes()) / flash_bytes},
      {"max_open_blocks", config_.zns.max_open_blocks},
      {"parity_pages_programmed", parity_counters_.stripes_programmed},
      {"rebuilt_pages", parity_counters_.rebuilt_pages},
      {"rebuild_reads", parity_counters_.rebuild_reads},
      {"unrecoverable_reads", parity_counters_.unrecoverable_reads}};
}

void ZnsDevice::describe_run(nlohmann::ordered_json& out) const {
  if (drive_features_on(config_)) front_.describe(flash_, "reset_unmap_ns", out);
}

void ZnsDevice::describe_zone(uint32_t zone, nlohmann::ordered_json& out) const {
  ZL_ASSERT(zone < layout_.zone_count());
  uint32_t slot = map_.slot_of(zone);
  out["physical_zone"] =
      slot == BlockMap::kUnmapped ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(slot);
  if (layout_.flex()) {
    out["zone_set"] = layout_.set_of_zone(zone);
    if (slot != BlockMap::kUnmapped) {
      const FlexSlot& s = layout_.flex_slot(slot);
      out["fbg"] = {{"superblock", s.superblock}, {"first_die", s.first_die}, {"dies", s.dies}};
    }
  }
}

void ZnsDevice::reset_stats() {
  counters_ = HostCounters{};
  front_.reset_stats();
  internal_quota_.reset_stats();
  flash_.reset_stats();
  link_in_.reset_stats();
  link_out_.reset_stats();
}

Result<std::unique_ptr<ZnsDevice>> make_zns_device(const Config& config, Simulator& sim,
                                                   std::unique_ptr<Backing> backing) {
  auto layout = ZoneLayout::make(config);
  if (!layout) return Error{layout.error()};
  if (backing == nullptr) {
    if (config.store.backing == "file") {
      return Error{"store.backing = \"file\" needs a device image (zonelab create)"};
    }
    if (config.store.backing == "memory") {
      backing = make_memory_backing(layout->lba_size_bytes(), layout->sets(),
                                    layout->backing_lbas() - layout->capacity_lbas(),
                                    layout->parity_lbas_per_slot());
    } else {
      backing = make_none_backing();
    }
  }
  return std::make_unique<ZnsDevice>(config, *layout, sim, std::move(backing));
}

}  // namespace zonelab
