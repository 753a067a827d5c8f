// The ZNS SSD: the zone table (state machine and limits), the zone -> flash
// mapping, the flash timelines and a host interface in front (a submission
// queue of `host.queue_depth`, a fixed per-command controller overhead and a
// link of `host.link_bandwidth` in each direction).
//
// A command's effect on zone state happens when the device takes it from
// its queue, in queue order, so writes submitted in order at any queue depth
// land in order. Its completion time is computed then from the timelines,
// and delivered as a simulator event. A failed command changes nothing and
// completes after the controller overhead.
//
// Writes are staged page by page: a write completes when every flash page
// it filled has been programmed; the tail of a partly filled page waits in
// the zone's page buffer (an open-zone resource) for the next write. Reads
// of LBAs that were never written return zeros without touching the flash.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <queue>
#include <unordered_map>
#include <vector>

#include "controller/drive.h"
#include "controller/front_end.h"
#include "controller/host_link.h"
#include "controller/modeled_device.h"
#include "controller/submission_queue.h"
#include "flash/flash.h"
#include "sim/simulator.h"
#include "store/backing.h"
#include "store/image.h"
#include "zns/block_map.h"
#include "zns/zone_layout.h"
#include "zns/zone_table.h"
#include "zonelab/device.h"

namespace zonelab {

class ZnsDevice final : public ModeledDevice, private EventHandler {
 public:
  ZnsDevice(const Config& config, const ZoneLayout& layout, Simulator& sim,
            std::unique_ptr<Backing> backing);

  void submit(Command& command) override;
  const DeviceInfo& info() const override { return info_; }
  ZoneDescriptor zone(uint32_t index) const override;

  // Test hook: the media fails under a zone (read-only or offline).
  void inject(uint32_t zone, ZoneState state);
  Outcome inject_zone(uint32_t zone, ZoneState state) override;
  Outcome inject_die(uint32_t channel, uint32_t way, bool failed = true) override;
  void recovered() override;
  uint32_t power_loss(bool keep_data = false) override;
  Outcome replay_loss(uint32_t zone, uint64_t durable_lbas) override;
  // The production-drive features (controller/front_end.h).
  const DriveCounters& drive_counters() const { return front_.counters(); }
  const WriteBuffer& write_buffer() const { return front_.buffer(); }
  bool die_failed(uint32_t flat_die) const { return failed_[flat_die] != 0; }
  // Die-level RAID counters (FlexZNS parity).
  struct ParityCounters {
    uint64_t stripes_programmed = 0;   // parity pages programmed (each copy counts)
    uint64_t rebuilt_pages = 0;        // pages of failed dies read back from their stripe
    uint64_t rebuild_reads = 0;        // flash page reads those rebuilds cost
    uint64_t unrecoverable_reads = 0;  // reads failed: two failures in one stripe
  };
  const ParityCounters& parity_counters() const { return parity_counters_; }
  void describe_state(nlohmann::ordered_json& out) const override;
  void describe_run(nlohmann::ordered_json& out) const override;
  void describe_zone(uint32_t zone, nlohmann::ordered_json& out) const override;

  const Config& config() const override { return config_; }
  const ZoneLayout& layout() const { return layout_; }
  const ZoneTable& zones() const { return table_; }
  const BlockMap& block_map() const { return map_; }
  const Flash& flash() const override { return flash_; }
  Backing& backing() { return *backing_; }
  const Backing& backing() const override { return *backing_; }
  const HostCounters& counters() const override { return counters_; }
  uint32_t inflight() const { return queue_.inflight(); }
  uint32_t queued() const { return queue_.queued(); }
  void reset_stats() override;
  uint64_t implicit_closes() const override { return table_.implicit_closes(); }
  LifetimeCounters lifetime() const override {
    return {lifetime_write_bytes_, lifetime_read_bytes_, lifetime_commands_};
  }

  // Persistence through the device image.
  void export_state(ImageState& state) const override;
  Outcome import_state(const ImageState& state) override;

 private:
  void on_event(uint64_t tag) override;
  void admit(Command& command);
  // controller.read_dispatch = die: the flat die a read's first page on
  // flash is on, or kNoDie when it reads no flash (refused, unwritten, or
  // still in the buffer).
  static constexpr uint32_t kNoDie = ~uint32_t{0};
  uint32_t read_die(const Command& command);
  // Executes a read now (DieReadQueues): returns when its flash reads end.
  uint64_t start_read(Command& command);
  // Each returns the completion time of a command taken at `start_ns`.
  uint64_t execute(Command& command, uint64_t start_ns);
  uint64_t execute_write(Command& command, uint64_t t0);
  uint64_t execute_read(Command& command, uint64_t t0);
  uint64_t execute_zone_send(Command& command, uint64_t t0);
  uint64_t execute_flush(uint64_t t0);
  // The write buffer's data of `zone` whose page is not yet programmed (a
  // partly written page), in bytes.
  uint64_t partial_page_bytes(uint32_t zone) const;
  // A zone's data is gone (reset, offline): the buffer drops its partly
  // written page (`partial_bytes`) and what it knew of its programs.
  void forget_buffered(uint32_t zone, uint64_t partial_bytes);
  // Whether zone page `page` is still in the write buffer at `at_ns` (its
  // program has not ended).
  bool in_buffer(uint32_t zone, uint32_t page, uint64_t at_ns) const;
  // Drops the zone's first pages whose programs have ended by now.
  void forget_programmed(uint32_t zone);
  // Cuts `zone` back to `durable_lbas` of data (a power cut's loss).
  void lose(uint32_t zone, uint64_t durable_lbas, bool keep_data = false);
  uint64_t apply_action(Command& command, ZoneAction action, uint32_t zone, uint64_t t0,
                        Status& status);
  // Programs the zone's pages from the first unprogrammed one up to (not
  // including) page `end`, on the blocks of its slot. With a write buffer,
  // each page's data (up to zone-relative LBA `data_end`) leaves the buffer
  // when its program ends, and not before `mapped_ns` (the mapping table has
  // the host data's LBAs).
  uint64_t program_pages(uint32_t zone, uint32_t end, uint64_t ready_ns, FlashCause cause,
                         uint64_t data_end, uint64_t mapped_ns = 0);
  // Before a zone's first write: lazy mapping gives it a slot, an erase still
  // going on in the slot's blocks completes, and with erase_on = zone the
  // slot's old data is erased.
  uint64_t prepare_first_write(uint32_t zone, uint64_t ready_ns);
  // The physical side of a reset: erase now, later, or step by step.
  uint64_t release_blocks(Command& command, uint32_t zone, uint32_t programmed, uint64_t t0);
  // Blocks of a unit of `slot` that hold any of a zone's first `pages`
  // pages (every block of the unit under zns.reset.erase = full).
  uint32_t dirty_blocks(uint32_t slot, uint32_t unit, uint32_t pages) const;
  uint64_t erase_slot(uint32_t slot, uint32_t pages, uint64_t ready_ns);
  uint64_t erase_parity(uint32_t slot, uint32_t pages, uint64_t ready_ns);

  // FlexZNS parity (zone_layout.h). The parity of every stripe is kept,
  // XOR of its data, as the stripe fills (in the backing, after the
  // namespace's LBAs: the controller's power-loss-protected parity buffer
  // for the stripe being filled, the parity chunk for the others); the flash
  // program is charged when the stripe completes, or when the zone is
  // finished with the stripe partly written.
  bool parity_stored() const {
    return layout_.parity() != ParityPlacement::kNone && backing_->stores_data();
  }
  uint64_t parity_lba(uint32_t slot, uint32_t stripe) const {
    return layout_.capacity_lbas() +
           (uint64_t{slot} * layout_.stripes_of_slot(slot) + stripe) * layout_.lbas_per_page();
  }
  // XORs a write's data (zone-relative LBAs [offset, offset + nlb)) into
  // its stripes' parity.
  bool update_parity(uint32_t zone, uint64_t offset, uint32_t nlb, const uint8_t* data);
  // Recomputes the parity of the zone's last, partly written stripe from
  // its data, and clears the parity of the stripes after it.
  bool recompute_tail_parity(uint32_t zone);
  uint64_t program_parity(uint32_t slot, uint32_t stripe, uint64_t ready_ns, FlashCause cause);
  // Rebuilds zone page `page` (its LBAs [from, to) relative to the page)
  // from its stripe into `out` (null: timing only); false when the stripe
  // lost a second page or its parity.
  bool rebuild(uint32_t zone, uint32_t page, uint64_t from, uint64_t to, uint8_t* out, uint64_t t0,
               uint64_t& done);
  uint64_t die_cost(uint32_t slot, const std::vector<uint32_t>& load) const;

  // Device jobs: work a zone management command sets going that proceeds
  // step by step on the flash timelines, and completes the command at its
  // end. A finish fill (seed 003 4.1) writes zns.finish.granularity at a
  // time from the zone's data end to its capacity; a preemptive reset erases
  // one block per plane at a time (seed 003 4.2). Either waits while host
  // I/O is in flight (dynamic finish, preemptive reset).
  struct Job {
    enum class Kind : uint8_t { kFill, kErase };
    Kind kind = Kind::kFill;
    Command* command = nullptr;
    uint32_t zone = 0;         // fill
    uint64_t cursor_lbas = 0;  // fill: zone-relative end of the last fill write
    uint32_t slot = 0;         // erase
    uint32_t pages = 0;        // erase: the slot's pages that hold data
    uint32_t next_block = 0;   // erase: the next round erases this block of each unit
    uint64_t drained_ns = 0;   // fill through the buffer: when its programs end
    uint32_t generation = 0;   // tells a stale step event from a live one
    bool active = false;
  };
  // A job's next step is an event of its own, apart from the device's
  // command completions: (generation << 32) | job.
  class JobSteps final : public EventHandler {
   public:
    explicit JobSteps(ZnsDevice& device) : device_(device) {}
    void on_event(uint64_t step) override;

   private:
    ZnsDevice& device_;
  };
  JobSteps job_steps_{*this};
  void start_job(Command& command, const Job& job, uint64_t ready_ns);
  void job_step(uint32_t job, uint64_t ready_ns);
  uint64_t fill_step(Job& job, uint64_t ready_ns);
  uint64_t erase_step(Job& job, uint64_t ready_ns);
  bool job_done(const Job& job) const;
  void end_job(uint32_t job, uint64_t done_ns);
  void cancel_fill(uint32_t zone);
  // Issues the rest of a preemptive erase of `slot` at once.
  void complete_erase(uint32_t slot);
  void resume_parked_jobs();
  bool is_host_io(const Command& command) const {
    return command.opcode != Opcode::kZoneManagementSend;
  }
  uint64_t link_ns(uint64_t bytes) { return link_time_.ns(bytes); }
  Status check_range(uint64_t slba, uint32_t nlb) const;
  // Discards the data of the zones a command reset or took offline, after
  // the command is recorded (ModeledDevice::log_taken).
  void discard_released();

  Config config_;
  ZoneLayout layout_;
  Simulator& sim_;
  std::unique_ptr<Backing> backing_;
  Flash flash_;
  ZoneTable table_;
  DeviceInfo info_;
  HostCounters counters_;
  Timeline link_in_;
  Timeline link_out_;
  LinkTime link_time_;
  SubmissionQueue queue_;
  BlockMap map_;
  // The configuration's reset and mapping designs, read once.
  bool async_reset_;
  bool full_erase_;
  bool erase_on_block_;
  struct PendingCommand {
    uint32_t parts = 0;
    uint64_t done_ns = 0;
  };
  std::vector<Job> jobs_;
  std::vector<uint32_t> free_jobs_;
  std::vector<int64_t> fill_job_of_zone_;
  std::vector<int64_t> erase_job_of_slot_;
  std::vector<uint32_t> parked_jobs_;
  std::unordered_map<Command*, PendingCommand> pending_;
  // Zones whose data goes once recorded, with the slot that held it (a
  // reset has given the slot back by then; its parity goes too).
  std::vector<std::pair<uint32_t, uint32_t>> released_;
  void release(uint32_t zone) { released_.emplace_back(zone, map_.slot_of(zone)); }
  uint32_t host_io_inflight_ = 0;
  std::unique_ptr<DieReadQueues> die_reads_;  // controller.read_dispatch = die
  uint64_t read_flash_done_ns_ = 0;           // execute_read: when its flash reads end
  std::vector<uint8_t> failed_;               // per flat die: 1 when failed
  uint32_t failed_count_ = 0;
  ParityCounters parity_counters_;
  std::vector<uint8_t> scratch_;
  std::vector<uint8_t> scratch2_;
  uint64_t lifetime_write_bytes_ = 0;
  uint64_t lifetime_read_bytes_ = 0;
  uint64_t lifetime_commands_ = 0;
  // Production-drive features (all off in the emulator presets).
  DriveFrontEnd front_;
  WriteBuffer internal_quota_;  // the part of the buffer a finish fill may hold
  struct Draining {
    uint32_t page;
    uint64_t end_ns;  // when its program ends
  };
  // Per zone, with a buffer: pages whose programs may not have ended, in
  // page order.
  std::vector<std::deque<Draining>> draining_;
  // Per zone, volatile cache: data below this (zone-relative) is durable
  // through a Flush.
  std::vector<uint64_t> flushed_lbas_;
};

// Builds a device from a configuration (checked first). `backing` may be
// null: the configuration's store.backing then decides (none or memory).
Result<std::unique_ptr<ZnsDevice>> make_zns_device(const Config& config, Simulator& sim,
                                                   std::unique_ptr<Backing> backing = nullptr);

}  // namespace zonelab
