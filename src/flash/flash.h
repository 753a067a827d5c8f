// The NAND flash array: channels x dies x planes x blocks x pages, with a
// timeline per channel and per plane and the busy time of every die. The
// three operations follow the timing model of DESIGN.md and seed 002:
//   read    = tR on the plane, then the data over the channel;
//   program = the page over the channel, then tPROG on the plane;
//   erase   = tBERS on the plane.
// With flash.suspend.* on, a read that finds its plane busy with a program
// or an erase goes first: the plane suspends (tSUS), senses the read (tR),
// and the work it held resumes later by tSUS + tR + the resume cost. Work
// already reserved keeps the end time it was given (its completion may have
// been computed already); the plane's later work waits for the suspension.
// A program or erase is suspended at most flash.suspend.max times.
// The planes of a die work independently (multi-plane operation). Every
// operation is counted by its cause, and every block keeps its erase count.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "flash/timeline.h"
#include "zonelab/config.h"

namespace zonelab {

// Why the device touched the flash. Host = data the host wrote; the rest are
// device-internal work that shares the same timelines.
enum class FlashCause : uint8_t { kHost, kGc, kFinish, kParity, kReset, kCount };
inline constexpr size_t kFlashCauseCount = static_cast<size_t>(FlashCause::kCount);

struct FlashCounters {
  uint64_t read_pages = 0;
  uint64_t read_bytes = 0;
  std::array<uint64_t, kFlashCauseCount> program_pages{};
  std::array<uint64_t, kFlashCauseCount> erases{};
};

class Flash {
 public:
  explicit Flash(const FlashConfig& config);

  uint32_t channels() const { return channels_; }
  uint32_t dies() const { return channels_ * dies_per_channel_; }
  uint32_t planes() const { return dies() * planes_per_die_; }
  uint32_t blocks_per_plane() const { return blocks_per_plane_; }
  uint64_t page_size_bytes() const { return page_size_bytes_; }

  // Flat indices: plane = (channel * dies_per_channel + die) * planes + plane.
  uint32_t plane_index(uint32_t channel, uint32_t die, uint32_t plane) const {
    return (channel * dies_per_channel_ + die) * planes_per_die_ + plane;
  }
  uint32_t channel_of_plane(uint32_t plane) const {
    return plane / (dies_per_channel_ * planes_per_die_);
  }
  uint32_t die_of_plane(uint32_t plane) const { return plane / planes_per_die_; }

  // Each returns the time the operation ends. `bytes` of a read is what
  // crosses the channel (a part of a page takes its share of the transfer).
  uint64_t read(uint32_t plane, uint64_t ready_ns, uint64_t bytes);
  uint64_t program(uint32_t plane, uint64_t ready_ns, FlashCause cause);
  uint64_t erase(uint32_t plane, uint32_t block, uint64_t ready_ns, FlashCause cause);
  // Copyback inside a plane (garbage collection): a page is sensed into the
  // plane's register (tR) and programmed from it (tPROG); neither crosses
  // the channel.
  uint64_t copyback_read(uint32_t plane, uint64_t ready_ns);
  uint64_t copyback_program(uint32_t plane, uint64_t ready_ns, FlashCause cause);

  const FlashCounters& counters() const { return counters_; }
  uint64_t suspensions() const { return suspensions_; }
  uint64_t channel_busy_ns(uint32_t channel) const { return channel_[channel].busy_ns(); }
  // When a plane is next free of the work reserved on it.
  uint64_t plane_free_at_ns(uint32_t plane) const { return plane_[plane].free_at_ns(); }
  uint64_t channel_free_at_ns(uint32_t channel) const { return channel_[channel].free_at_ns(); }
  // Restores work in flight (a device image reloaded); one time per plane
  // and per channel.
  void restore_free_at_ns(const std::vector<uint64_t>& planes,
                          const std::vector<uint64_t>& channels);
  uint64_t die_busy_ns(uint32_t die) const { return die_busy_[die].busy_ns(); }
  uint32_t erase_count(uint32_t plane, uint32_t block) const {
    return erase_counts_[static_cast<size_t>(plane) * blocks_per_plane_ + block];
  }
  std::vector<uint32_t>& erase_counts() { return erase_counts_; }
  const std::vector<uint32_t>& erase_counts() const { return erase_counts_; }
  // Latest time any resource is busy until.
  uint64_t drained_at_ns() const;
  void reset_stats();

 private:
  uint64_t transfer_ns(uint64_t bytes) const;
  // A program or erase reserved on `plane` from `ready_ns`.
  void note_busy(uint32_t plane, uint64_t ready_ns, bool suspendable);

  // Per plane: whether its last reserved work is a suspendable program or
  // erase, how many such operations it has queued since it was last idle,
  // and how many times reads suspended them.
  struct PlaneWork {
    bool suspendable = false;
    uint32_t ops = 0;
    uint32_t suspensions = 0;
    uint64_t read_free_ns = 0;  // reads in the current suspension sense until then
  };

  uint32_t channels_;
  uint32_t dies_per_channel_;
  uint32_t planes_per_die_;
  uint32_t blocks_per_plane_;
  uint64_t page_size_bytes_;
  uint64_t read_ns_;
  uint64_t program_ns_;
  uint64_t erase_ns_;
  uint64_t transfer_page_ns_;
  bool suspend_program_;
  bool suspend_erase_;
  uint64_t suspend_ns_;
  uint64_t resume_ns_;
  uint32_t suspend_max_;
  bool suspends_;  // either suspend on: work_ has a PlaneWork per plane
  std::vector<PlaneWork> work_;
  uint64_t suspensions_ = 0;
  std::vector<ChannelTimeline> channel_;
  std::vector<Timeline> plane_;
  std::vector<UnionBusy> die_busy_;
  std::vector<uint32_t> erase_counts_;
  FlashCounters counters_;
};

}  // namespace zonelab
