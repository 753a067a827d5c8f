// mq-deadline with zone write locking; see scheduler.h.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "host/scheduler.h"

namespace zonelab {

class MqDeadline : public Scheduler {
 public:
  MqDeadline(const HostConfig& host, const DeviceInfo& info);

  std::string_view name() const override { return "mq-deadline"; }
  void insert(Command& command, uint64_t now_ns) override;
  Command* dispatch(uint64_t now_ns) override;
  void completed(const Command& command, uint64_t now_ns) override;
  size_t queued() const override { return info_.size() + direct_.size(); }

  // Reads and writes waiting (management commands excluded).
  size_t queued_io() const { return info_.size(); }
  bool zone_locked(uint32_t zone) const { return locked_zones_.count(zone) != 0; }

 private:
  enum Dir : uint8_t { kRead = 0, kWrite = 1 };
  struct Info {
    Dir dir;
    uint64_t seq;
    uint64_t deadline_ns;
  };
  using SortKey = std::pair<uint64_t, uint64_t>;  // (slba, seq)

  static bool locks_zone(const Command& c) { return c.opcode == Opcode::kWrite; }
  // Zone locking by zone number (zones of several sizes: by the sets).
  uint32_t zone_of(const Command& c) const {
    if (zone_sets_.size() <= 1) return static_cast<uint32_t>(c.slba / zone_size_lbas_);
    if (c.slba >= capacity_lbas_) return UINT32_MAX;
    return zone_of_lba(zone_sets_, c.slba);
  }
  uint64_t zone_start(uint32_t zone) const {
    if (zone_sets_.size() <= 1) return static_cast<uint64_t>(zone) * zone_size_lbas_;
    if (zone == UINT32_MAX) return capacity_lbas_;
    return zone_start_lba(zone_sets_, zone);
  }
  // A write may go when its zone has none in flight; it is then replaced by
  // the zone's lowest waiting write, so a zone's writes go in LBA order.
  Command* dispatchable(Command* c) const;
  Command* next_sorted(Dir dir) const;
  Command* oldest(Dir dir) const;
  Command* take(Command* c);

  uint64_t read_expire_ns_;
  uint64_t write_expire_ns_;
  uint32_t fifo_batch_;
  uint32_t writes_starved_;
  uint64_t zone_size_lbas_;
  uint64_t capacity_lbas_;
  std::vector<ZoneSetInfo> zone_sets_;
  std::deque<Command*> direct_;  // passed straight through
  std::map<SortKey, Command*> sorted_[2];
  std::map<uint64_t, Command*> fifo_[2];  // by arrival
  std::unordered_map<const Command*, Info> info_;
  std::unordered_set<uint32_t> locked_zones_;
  uint64_t next_seq_ = 0;
  uint64_t next_pos_[2] = {0, 0};  // where the sorted scan goes on
  int batch_dir_ = -1;
  uint32_t batched_ = 0;
  uint32_t starved_ = 0;
};

}  // namespace zonelab
