// The physical side of zone finish and zone reset, apart from the command
// path in zns_device.cc: the erase of a zone's blocks (at once, deferred to
// the zone's next first write, or block by block), and the device jobs that
// carry work on after the command was taken -- a finish fill, a preemptive
// reset -- step by step on the flash timelines. See zns_device.h.
#include <algorithm>

#include "zns/zns_device.h"
#include "zonelab/assert.h"

namespace zonelab {

// Synchronous: the blocks are erased now (all at once, or round by round
// with zns.reset.preemptive). Asynchronous: the slot keeps its old pages as
// stale until a first write erases them. Lazy mapping then gives the slot
// back to the free pool.
uint64_t ZnsDevice::release_blocks(Command& command, uint32_t zone, uint32_t programmed,
                                   uint64_t t0) {
  uint32_t slot = map_.slot_of(zone);
  if (slot == BlockMap::kUnmapped) return t0;  // lazy: never written since its last reset
  complete_erase(slot);  // an earlier preemptive reset of these blocks ends first
  Slot& s = map_.mutable_slot(slot);
  uint32_t pages = std::max(s.stale_pages, programmed);
  uint64_t done = t0;
  if (async_reset_) {
    s.stale_pages = pages;
  } else {
    s.stale_pages = 0;
    if (config_.zns.reset_preemptive == 0) {
      done = erase_slot(slot, pages, t0);
    } else {
      Job erase;
      erase.kind = Job::Kind::kErase;
      erase.slot = slot;
      erase.pages = pages;
      if (!job_done(erase)) start_job(command, erase, t0);
    }
  }
  if (map_.lazy()) map_.unmap(zone);
  return done;
}

uint32_t ZnsDevice::dirty_blocks(uint32_t slot, uint32_t unit, uint32_t pages) const {
  if (full_erase_) return layout_.slot_blocks_per_unit(slot);
  auto ppb = static_cast<uint32_t>(config_.flash.pages_per_block);
  return (layout_.unit_pages(slot, unit, pages) + ppb - 1) / ppb;
}

uint64_t ZnsDevice::erase_slot(uint32_t slot, uint32_t pages, uint64_t ready_ns) {
  uint64_t done = ready_ns;
  uint32_t first = layout_.first_block(slot);
  for (uint32_t unit = 0; unit < layout_.slot_units(slot); ++unit) {
    uint32_t plane = layout_.unit_plane(slot, unit);
    uint32_t blocks = dirty_blocks(slot, unit, pages);
    for (uint32_t b = 0; b < blocks; ++b) {
      done = std::max(done, flash_.erase(plane, first + b, ready_ns, FlashCause::kReset));
    }
  }
  return std::max(done, erase_parity(slot, pages, ready_ns));
}

// The parity chunk(s) of an FBG are its own (mapped at format time), so
// they are erased with it: one block in each plane of each copy.
uint64_t ZnsDevice::erase_parity(uint32_t slot, uint32_t pages, uint64_t ready_ns) {
  if (layout_.parity() == ParityPlacement::kNone || (pages == 0 && !full_erase_)) return ready_ns;
  uint64_t done = ready_ns;
  const FlexSlot& s = layout_.flex_slot(slot);
  for (uint32_t copy = 0; copy < s.parity.size(); ++copy) {
    for (uint32_t plane = 0; plane < config_.flash.planes_per_die; ++plane) {
      FlashPage at = layout_.parity_page(slot, copy, plane);
      done = std::max(done, flash_.erase(at.plane, at.block, ready_ns, FlashCause::kReset));
    }
  }
  return done;
}

void ZnsDevice::start_job(Command& command, const Job& job, uint64_t ready_ns) {
  uint32_t index = 0;
  if (free_jobs_.empty()) {
    index = static_cast<uint32_t>(jobs_.size());
    jobs_.emplace_back();
  } else {
    index = free_jobs_.back();
    free_jobs_.pop_back();
  }
  uint32_t generation = (jobs_[index].generation + 1) & 0x7fffffff;
  Job& j = jobs_[index];
  j = job;
  j.command = &command;
  j.generation = generation;
  j.active = true;
  if (j.kind == Job::Kind::kFill) {
    fill_job_of_zone_[j.zone] = index;
  } else {
    erase_job_of_slot_[j.slot] = index;
  }
  ++pending_[&command].parts;
  job_step(index, ready_ns);
}

void ZnsDevice::job_step(uint32_t index, uint64_t ready_ns) {
  Job& j = jobs_[index];
  bool yields = j.kind == Job::Kind::kFill ? config_.zns.finish_dynamic != 0
                                           : config_.zns.reset_preemptive != 0;
  if (yields && host_io_inflight_ > 0) {
    parked_jobs_.push_back(index);  // waits until host I/O drains
    return;
  }
  uint64_t done = j.kind == Job::Kind::kFill ? fill_step(j, ready_ns) : erase_step(j, ready_ns);
  if (job_done(j)) {
    end_job(index, std::max(done, j.drained_ns));
    return;
  }
  uint64_t pause = j.kind == Job::Kind::kFill ? config_.zns.finish_pause_ns : 0;
  sim_.schedule_at(done + pause, &job_steps_, static_cast<uint64_t>(j.generation) << 32 | index);
}

// One fill write: the next `granularity` LBAs, programming the pages they
// complete. With a write buffer the fill goes through it like a host write:
// the next step waits for buffer space, the finish for the last program.
uint64_t ZnsDevice::fill_step(Job& j, uint64_t ready_ns) {
  uint64_t chunk = config_.zns.finish_granularity_bytes / layout_.lba_size_bytes();
  uint64_t from = j.cursor_lbas;
  j.cursor_lbas = std::min(layout_.zone_capacity_lbas(j.zone), j.cursor_lbas + chunk);
  auto end_page = static_cast<uint32_t>(j.cursor_lbas / layout_.lbas_per_page());
  if (front_.buffer().enabled()) {
    // The firmware issues each fill write as it does a host write (a core
    // for the write's service time); then the fill's share of the buffer,
    // then the buffer itself.
    uint64_t bytes = (j.cursor_lbas - from) * layout_.lba_size_bytes();
    uint64_t issued = front_.cores().serve(ready_ns, config_.controller.write_ns);
    uint64_t quota =
        internal_quota_.enabled() ? internal_quota_.admit(sim_.now_ns(), issued, bytes) : issued;
    uint64_t admitted = front_.buffer().admit(sim_.now_ns(), quota, bytes);
    j.drained_ns = std::max(j.drained_ns, program_pages(j.zone, end_page, admitted,
                                                        FlashCause::kFinish, j.cursor_lbas));
    return admitted;
  }
  return program_pages(j.zone, end_page, ready_ns, FlashCause::kFinish, j.cursor_lbas);
}

// One round of a preemptive reset: the next block of every unit that has one.
uint64_t ZnsDevice::erase_step(Job& j, uint64_t ready_ns) {
  uint64_t done = ready_ns;
  uint32_t block = layout_.first_block(j.slot) + j.next_block;
  for (uint32_t unit = 0; unit < layout_.slot_units(j.slot); ++unit) {
    if (j.next_block < dirty_blocks(j.slot, unit, j.pages)) {
      done = std::max(done, flash_.erase(layout_.unit_plane(j.slot, unit), block, ready_ns,
                                         FlashCause::kReset));
    }
  }
  if (j.next_block == 0) done = std::max(done, erase_parity(j.slot, j.pages, ready_ns));
  ++j.next_block;
  return done;
}

bool ZnsDevice::job_done(const Job& j) const {
  if (j.kind == Job::Kind::kFill) return j.cursor_lbas == layout_.zone_capacity_lbas(j.zone);
  return j.next_block >= dirty_blocks(j.slot, 0, j.pages);  // unit 0 holds the most pages
}

void ZnsDevice::end_job(uint32_t index, uint64_t done_ns) {
  Job& j = jobs_[index];
  j.active = false;
  if (j.kind == Job::Kind::kFill) {
    fill_job_of_zone_[j.zone] = -1;
  } else {
    erase_job_of_slot_[j.slot] = -1;
  }
  free_jobs_.push_back(index);
  auto it = pending_.find(j.command);
  ZL_ASSERT(it != pending_.end() && it->second.parts > 0);
  it->second.done_ns = std::max(it->second.done_ns, done_ns);
  if (--it->second.parts == 0) {
    Command& command = *j.command;
    command.complete_ns = std::max(it->second.done_ns, sim_.now_ns());
    pending_.erase(it);
    sim_.schedule_at(command.complete_ns, this, reinterpret_cast<uint64_t>(&command));
  }
}

// A reset (or a media failure) ends a fill in progress on the zone.
void ZnsDevice::cancel_fill(uint32_t zone) {
  int64_t job = fill_job_of_zone_[zone];
  if (job < 0) return;
  if (internal_quota_.enabled()) {
    // The fill's data of a partly filled page never goes to flash.
    uint64_t programmed = uint64_t{table_.zone(zone).pages_programmed} * layout_.lbas_per_page();
    uint64_t cursor = jobs_[static_cast<size_t>(job)].cursor_lbas;
    if (cursor > programmed) internal_quota_.drop((cursor - programmed) * layout_.lba_size_bytes());
  }
  std::erase(parked_jobs_, static_cast<uint32_t>(job));
  end_job(static_cast<uint32_t>(job), sim_.now_ns());
}

void ZnsDevice::complete_erase(uint32_t slot) {
  int64_t index = erase_job_of_slot_[slot];
  if (index < 0) return;
  auto job = static_cast<uint32_t>(index);
  std::erase(parked_jobs_, job);
  Job& j = jobs_[job];
  uint64_t done = sim_.now_ns();
  while (!job_done(j)) done = std::max(done, erase_step(j, sim_.now_ns()));
  end_job(job, done);
}

void ZnsDevice::resume_parked_jobs() {
  std::vector<uint32_t> parked;
  parked.swap(parked_jobs_);
  for (uint32_t job : parked) {
    if (jobs_[job].active) job_step(job, sim_.now_ns());
  }
}

}  // namespace zonelab
