// Flash operations on the channel and plane timelines; see flash.h.
#include "flash/flash.h"

#include <algorithm>

#include "zonelab/assert.h"

namespace zonelab {

Flash::Flash(const FlashConfig& config)
    : channels_(static_cast<uint32_t>(config.channels)),
      dies_per_channel_(static_cast<uint32_t>(config.dies_per_channel)),
      planes_per_die_(static_cast<uint32_t>(config.planes_per_die)),
      blocks_per_plane_(static_cast<uint32_t>(config.blocks_per_plane)),
      page_size_bytes_(config.page_size_bytes),
      read_ns_(config.read_latency_ns),
      program_ns_(config.program_latency_ns),
      erase_ns_(config.erase_latency_ns),
      transfer_page_ns_(config.transfer_latency_ns),
      suspend_program_(config.suspend_program != 0),
      suspend_erase_(config.suspend_erase != 0),
      suspend_ns_(config.suspend_latency_ns),
      resume_ns_(config.suspend_resume_ns),
      suspend_max_(static_cast<uint32_t>(std::max<uint64_t>(config.suspend_max, 1))),
      suspends_(suspend_program_ || suspend_erase_),
      channel_(channels_, ChannelTimeline(config.channel_backfill != 0)),
      plane_(static_cast<size_t>(channels_) * dies_per_channel_ * planes_per_die_),
      die_busy_(static_cast<size_t>(channels_) * dies_per_channel_),
      erase_counts_(plane_.size() * blocks_per_plane_, 0) {
  if (suspends_) work_.resize(plane_.size());
  ZL_ASSERT(channels_ > 0 && dies_per_channel_ > 0 && planes_per_die_ > 0);
  ZL_ASSERT(page_size_bytes_ > 0);
}

uint64_t Flash::transfer_ns(uint64_t bytes) const {
  if (bytes >= page_size_bytes_) return transfer_page_ns_;
  // Round up so that a part of a page never transfers for free.
  return (transfer_page_ns_ * bytes + page_size_bytes_ - 1) / page_size_bytes_;
}

void Flash::note_busy(uint32_t plane, uint64_t ready_ns, bool suspendable) {
  if (!suspends_) return;
  PlaneWork& w = work_[plane];
  if (ready_ns >= plane_[plane].free_at_ns()) w = PlaneWork{};  // idle until now
  w.suspendable = suspendable;
  if (suspendable) ++w.ops;
}

uint64_t Flash::read(uint32_t plane, uint64_t ready_ns, uint64_t bytes) {
  ZL_ASSERT(plane < plane_.size());
  ZL_ASSERT(bytes > 0 && bytes <= page_size_bytes_);
  uint64_t sensed = 0;
  if (suspends_ && ready_ns < plane_[plane].free_at_ns() && work_[plane].suspendable &&
      work_[plane].suspensions < suspend_max_ * work_[plane].ops) {
    // Program/erase suspend: the read is sensed now, the plane's work after;
    // a read that comes while the plane is suspended senses after the
    // reads before it, in the same suspension.
    PlaneWork& w = work_[plane];
    if (ready_ns < w.read_free_ns) {
      sensed = w.read_free_ns + read_ns_;
      plane_[plane].extend(read_ns_);
    } else {
      sensed = ready_ns + suspend_ns_ + read_ns_;
      plane_[plane].extend(suspend_ns_ + read_ns_ + resume_ns_);
    }
    // Each read that gets ahead counts against the operation's cap.
    ++w.suspensions;
    ++suspensions_;
    w.read_free_ns = sensed;
  } else {
    note_busy(plane, ready_ns, false);
    sensed = plane_[plane].reserve(ready_ns, read_ns_);
  }
  die_busy_[die_of_plane(plane)].add(sensed - read_ns_, sensed);
  uint64_t done = channel_[channel_of_plane(plane)].reserve(sensed, transfer_ns(bytes));
  ++counters_.read_pages;
  counters_.read_bytes += bytes;
  return done;
}

uint64_t Flash::program(uint32_t plane, uint64_t ready_ns, FlashCause cause) {
  ZL_ASSERT(plane < plane_.size());
  uint64_t loaded = channel_[channel_of_plane(plane)].reserve(ready_ns, transfer_page_ns_);
  note_busy(plane, loaded, suspend_program_);
  uint64_t done = plane_[plane].reserve(loaded, program_ns_);
  die_busy_[die_of_plane(plane)].add(done - program_ns_, done);
  ++counters_.program_pages[static_cast<size_t>(cause)];
  return done;
}

uint64_t Flash::erase(uint32_t plane, uint32_t block, uint64_t ready_ns, FlashCause cause) {
  ZL_ASSERT(plane < plane_.size());
  ZL_ASSERT(block < blocks_per_plane_);
  note_busy(plane, ready_ns, suspend_erase_);
  uint64_t done = plane_[plane].reserve(ready_ns, erase_ns_);
  die_busy_[die_of_plane(plane)].add(done - erase_ns_, done);
  ++erase_counts_[static_cast<size_t>(plane) * blocks_per_plane_ + block];
  ++counters_.erases[static_cast<size_t>(cause)];
  return done;
}

uint64_t Flash::copyback_read(uint32_t plane, uint64_t ready_ns) {
  ZL_ASSERT(plane < plane_.size());
  note_busy(plane, ready_ns, false);
  uint64_t done = plane_[plane].reserve(ready_ns, read_ns_);
  die_busy_[die_of_plane(plane)].add(done - read_ns_, done);
  ++counters_.read_pages;
  return done;
}

uint64_t Flash::copyback_program(uint32_t plane, uint64_t ready_ns, FlashCause cause) {
  ZL_ASSERT(plane < plane_.size());
  note_busy(plane, ready_ns, suspend_program_);
  uint64_t done = plane_[plane].reserve(ready_ns, program_ns_);
  die_busy_[die_of_plane(plane)].add(done - program_ns_, done);
  ++counters_.program_pages[static_cast<size_t>(cause)];
  return done;
}

uint64_t Flash::drained_at_ns() const {
  uint64_t latest = 0;
  for (const auto& t : channel_) latest = std::max(latest, t.free_at_ns());
  for (const auto& t : plane_) latest = std::max(latest, t.free_at_ns());
  return latest;
}

void Flash::restore_free_at_ns(const std::vector<uint64_t>& planes,
                               const std::vector<uint64_t>& channels) {
  ZL_ASSERT(planes.size() == plane_.size() && channels.size() == channel_.size());
  for (size_t i = 0; i < plane_.size(); ++i) plane_[i].set_free_at_ns(planes[i]);
  for (size_t i = 0; i < channel_.size(); ++i) channel_[i].set_free_at_ns(channels[i]);
}

void Flash::reset_stats() {
  for (auto& t : channel_) t.reset_stats();
  for (auto& t : plane_) t.reset_stats();
  for (auto& d : die_busy_) d.reset_stats();
  counters_ = FlashCounters{};
  suspensions_ = 0;
}

}  // namespace zonelab
