// mq-deadline with zone write locking; see scheduler.h. Follows Linux's
// block/mq-deadline.c in behaviour: two directions, each with a FIFO by
// arrival (for expiry) and a tree by LBA (for batches in LBA order).
#include "host/mq_deadline.h"

#include "zonelab/assert.h"

namespace zonelab {

MqDeadline::MqDeadline(const HostConfig& host, const DeviceInfo& info)
    : read_expire_ns_(host.deadline_read_expire_ns),
      write_expire_ns_(host.deadline_write_expire_ns),
      fifo_batch_(static_cast<uint32_t>(host.deadline_fifo_batch)),
      writes_starved_(static_cast<uint32_t>(host.deadline_writes_starved)),
      zone_size_lbas_(info.zone_size_lbas == 0 ? UINT64_MAX : info.zone_size_lbas),
      capacity_lbas_(info.capacity_lbas),
      zone_sets_(info.zone_sets) {}

void MqDeadline::insert(Command& c, uint64_t now_ns) {
  if (!is_data_io(c)) {
    direct_.push_back(&c);
    return;
  }
  Dir dir = c.opcode == Opcode::kRead ? kRead : kWrite;
  uint64_t seq = next_seq_++;
  uint64_t expire = dir == kRead ? read_expire_ns_ : write_expire_ns_;
  info_[&c] = Info{dir, seq, now_ns + expire};
  sorted_[dir].emplace(SortKey{c.slba, seq}, &c);
  fifo_[dir].emplace(seq, &c);
}

Command* MqDeadline::dispatchable(Command* c) const {
  if (!locks_zone(*c)) return c;
  uint32_t zone = zone_of(*c);
  if (locked_zones_.count(zone) != 0) return nullptr;
  uint64_t start = zone_start(zone);
  for (auto it = sorted_[kWrite].lower_bound(SortKey{start, 0});
       it != sorted_[kWrite].end() && zone_of(*it->second) == zone; ++it) {
    if (locks_zone(*it->second)) return it->second;
  }
  return c;
}

Command* MqDeadline::next_sorted(Dir dir) const {
  const auto& tree = sorted_[dir];
  auto from = tree.lower_bound(SortKey{next_pos_[dir], 0});
  for (auto it = from; it != tree.end(); ++it) {
    if (Command* c = dispatchable(it->second)) return c;
  }
  for (auto it = tree.begin(); it != from; ++it) {
    if (Command* c = dispatchable(it->second)) return c;
  }
  return nullptr;
}

Command* MqDeadline::oldest(Dir dir) const {
  for (const auto& [seq, c] : fifo_[dir]) {
    if (Command* d = dispatchable(c)) return d;
  }
  return nullptr;
}

Command* MqDeadline::take(Command* c) {
  auto it = info_.find(c);
  ZL_ASSERT(it != info_.end());
  Dir dir = it->second.dir;
  sorted_[dir].erase(SortKey{c->slba, it->second.seq});
  fifo_[dir].erase(it->second.seq);
  info_.erase(it);
  if (locks_zone(*c)) locked_zones_.insert(zone_of(*c));
  next_pos_[dir] = c->slba + c->nlb;
  return c;
}

Command* MqDeadline::dispatch(uint64_t now_ns) {
  if (!direct_.empty()) {
    Command* c = direct_.front();
    direct_.pop_front();
    return c;
  }
  // Go on with the batch in LBA order while it lasts.
  if (batch_dir_ >= 0 && batched_ < fifo_batch_) {
    if (Command* c = next_sorted(static_cast<Dir>(batch_dir_))) {
      ++batched_;
      return take(c);
    }
  }
  bool reads = !fifo_[kRead].empty();
  Command* oldest_write = oldest(kWrite);  // null: no write may go now
  Dir dir;
  if (reads && !(oldest_write != nullptr && starved_++ >= writes_starved_)) {
    dir = kRead;
  } else if (oldest_write != nullptr) {
    dir = kWrite;
    starved_ = 0;
  } else {
    return nullptr;
  }
  // A new batch starts at the oldest request if it expired, else where the
  // last batch in this direction left off.
  Command* head = dir == kWrite ? oldest_write : oldest(kRead);
  Command* c = nullptr;
  if (head != nullptr && info_.at(head).deadline_ns <= now_ns) {
    c = head;
  } else {
    c = next_sorted(dir);
    if (c == nullptr) c = head;
  }
  if (c == nullptr) return nullptr;
  batch_dir_ = dir;
  batched_ = 1;
  return take(c);
}

void MqDeadline::completed(const Command& c, uint64_t) {
  if (locks_zone(c)) locked_zones_.erase(zone_of(c));
}

}  // namespace zonelab
