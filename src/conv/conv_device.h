// The conventional (block-interface) SSD: the same flash and host interface
// as the ZNS device, with a page-mapped FTL in between (see ftl.h).
//
// Any LBA may be written at any time; Dataset Management deallocate (TRIM)
// unmaps a range. So that one job runs on both interfaces, the device also
// answers zone queries with a *zoned view* (seed 000 §5.1): the host
// capacity cut into LBA ranges of zns.zone_capacity, each with a write
// pointer that follows the highest LBA written since its last reset. A zone
// reset deallocates the range; finish moves the pointer to the end; open and
// close change nothing. Nothing is enforced: a write anywhere succeeds. Zone
// Append has no meaning here and is refused with INVALID_FIELD.
//
// In front of the FTL is the same production-drive front end as the ZNS
// device's (controller/front_end.h): a write-back buffer with power-loss
// protection, firmware cores, the mapping table's work (a write's update, a
// trim's bookkeeping), program/erase suspend and reads queued by die; all
// off unless configured. A volatile write cache is modeled for ZNS only.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include "controller/front_end.h"
#include "controller/host_link.h"
#include "controller/modeled_device.h"
#include "controller/submission_queue.h"
#include "conv/ftl.h"
#include "sim/simulator.h"
#include "store/backing.h"

namespace zonelab {

class ConvDevice final : public ModeledDevice, private EventHandler {
 public:
  ConvDevice(const Config& config, uint64_t zone_capacity_lbas, Simulator& sim,
             std::unique_ptr<Backing> backing);

  void submit(Command& command) override;
  const DeviceInfo& info() const override { return info_; }
  ZoneDescriptor zone(uint32_t index) const override;

  const Config& config() const override { return config_; }
  const Flash& flash() const override { return flash_; }
  const HostCounters& counters() const override { return counters_; }
  void reset_stats() override;
  const Ftl& ftl() const { return ftl_; }
  const WriteBuffer& write_buffer() const { return front_.buffer(); }
  const DriveCounters& drive_counters() const { return front_.counters(); }
  const Backing& backing() const override { return *backing_; }
  Outcome inject_zone(uint32_t zone, ZoneState state) override;
  void describe_state(nlohmann::ordered_json& out) const override;
  void describe_run(nlohmann::ordered_json& out) const override;
  void describe_zone(uint32_t, nlohmann::ordered_json&) const override {}
  LifetimeCounters lifetime() const override {
    return {lifetime_write_bytes_, lifetime_read_bytes_, lifetime_commands_};
  }

  // The device's persistent state for an image: the zoned view as zones
  // (state and write pointer), erase counts, lifetime counters and the FTL.
  // import_state refuses, changing nothing, a state this configuration
  // could not have produced.
  void export_state(ImageState& state) const override;
  Outcome import_state(const ImageState& state) override;

 private:
  void on_event(uint64_t tag) override;
  void admit(Command& command);
  // Executes a command taken at `start_ns`; returns its completion time.
  uint64_t execute(Command& command, uint64_t start_ns);
  uint64_t execute_write(Command& command, uint64_t t0);
  // controller.read_dispatch = die: the die of a read's first LBA on flash,
  // or kNoDie when it reads no flash (refused, unmapped, or in the buffer).
  static constexpr uint32_t kNoDie = ~uint32_t{0};
  uint32_t read_die(const Command& command);
  // Executes a read now (DieReadQueues): returns when its flash reads end.
  uint64_t start_read(Command& command);
  // With a write buffer: whether flash page `page`'s program has not ended
  // at `at_ns` (its data is still in the buffer); forget_programmed() drops
  // the pages whose programs have ended by now.
  bool in_buffer(uint32_t page, uint64_t at_ns) const;
  void forget_programmed();
  uint64_t link_ns(uint64_t bytes) const {
    return link_time_ns(bytes, config_.host.link_bandwidth_bytes_per_s);
  }
  // Returns the bytes the trim unmapped.
  uint64_t trim(uint64_t lba, uint64_t nlb);
  // Runs `change` on the FTL; host data that waited in a page buffer and
  // left it unprogrammed (rewritten or trimmed) leaves the write buffer too.
  template <typename Change>
  void dropping_unbuffered(Change&& change);
  // Discards what trims released, after the command is recorded.
  void discard_released();
  // A write's data into the backing; false when it could not be stored.
  bool write_data(const Command& command);
  // A read's data from the backing (zeros for unmapped LBAs); false when the
  // backing could not read it.
  bool read_data(Command& command);
  // The zoned view's state of a zone with write pointer `wp` (zone-relative).
  ZoneState view_state(uint64_t wp) const;

  Config config_;
  Simulator& sim_;
  std::unique_ptr<Backing> backing_;
  Flash flash_;
  Ftl ftl_;
  DeviceInfo info_;
  HostCounters counters_;
  Timeline link_in_;
  Timeline link_out_;
  SubmissionQueue queue_;
  std::vector<uint64_t> wp_;                             // the zoned view: per zone, zone-relative
  std::vector<std::pair<uint64_t, uint64_t>> released_;  // (lba, nlb) whose data goes
  uint64_t lifetime_write_bytes_ = 0;
  uint64_t lifetime_read_bytes_ = 0;
  uint64_t lifetime_commands_ = 0;
  DriveFrontEnd front_;
  std::unique_ptr<DieReadQueues> die_reads_;  // controller.read_dispatch = die
  uint64_t read_flash_done_ns_ = 0;           // execute: when a read's flash reads end
  // With a write buffer: per flash page being programmed, its program's end,
  // and the pages in the order they were issued (end, page).
  std::unordered_map<uint32_t, uint64_t> programming_;
  std::deque<std::pair<uint64_t, uint32_t>> programming_order_;
  Ftl::Programs programs_;  // a write's, reused
};

// The zoned view's geometry, checked: zones of zns.zone_capacity over the
// host capacity the over-provisioning leaves.
struct ConvGeometry {
  uint64_t host_lbas = 0;
  uint64_t zone_capacity_lbas = 0;
  uint32_t zone_count = 0;
};
Result<ConvGeometry> conv_geometry(const Config& config);

// Builds a conventional device. `backing` may be null: store.backing then
// decides (none or memory; file needs a device image's backing).
Result<std::unique_ptr<ConvDevice>> make_conv_device(const Config& config, Simulator& sim,
                                                     std::unique_ptr<Backing> backing = nullptr);

}  // namespace zonelab
