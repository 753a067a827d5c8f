// Writing and reading files; see zoned_fs.h (WritableFile, ReadableFile).
// Writers of every kind -- files and garbage collection -- put their blocks
// on the device through ZonedFs::write_blocks.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "fs/zoned_fs.h"
#include "zonelab/assert.h"

namespace zonelab::fs {

FsStatus ZonedFs::write_blocks(WriterId writer, Lifetime lifetime, IoClass io_class,
                               std::optional<uint32_t>& zone, const uint8_t* data, uint64_t blocks,
                               uint64_t valid_bytes, WriteCause cause, const PlacedFn& placed) {
  const uint64_t bs = io_.block_bytes();
  ZL_ASSERT(blocks > 0 && valid_bytes <= blocks * bs && valid_bytes > (blocks - 1) * bs);
  uint64_t done = 0;
  uint64_t valid_left = valid_bytes;
  while (done < blocks) {
    uint64_t lba = 0;
    uint64_t n = 0;
    {
      std::lock_guard lock(mutex_);
      if (zone && zones_->holds(*zone, writer) && zones_->zone(*zone).room_lbas() > 0) {
        zones_->set_writing(*zone, true);
      } else {
        zone.reset();  // taken back by the token pool, or full
      }
    }
    if (!zone) {
      auto taken = allocate_zone(writer, lifetime, io_class);
      if (!taken) return taken.status();
      zone = *taken;
    }
    {
      std::lock_guard lock(mutex_);
      const DataZone& z = zones_->zone(*zone);
      ZL_ASSERT(z.writer == writer && z.writing);
      lba = z.start_lba + z.wp_lbas;
      n = std::min(blocks - done, z.room_lbas());
    }
    ZL_ASSERT(n > 0);
    const uint64_t valid = std::min(valid_left, n * bs);
    const uint64_t started_ns = now_ns();
    FsStatus written = io_.write(lba, data + done * bs, n, cause, n * bs - valid);
    const uint64_t took_ns = now_ns() - started_ns;
    std::lock_guard lock(mutex_);
    zones_->set_writing(*zone, false);
    DataZone& z = zones_->zone(*zone);
    // The zone may be taken back now (its writer is idle until its next
    // write): a writer waiting for a token asks again.
    changed_.notify_all();
    if (!written) {
      zones_->release(*zone, false);
      zone.reset();
      if (failure_.empty()) failure_ = written.message();
      changed_.notify_all();
      return written;
    }
    z.wp_lbas += n;
    policy_->on_io_complete(*zone, true, n * bs, took_ns);
    if (FsStatus ok = placed(Extent{*zone, lba, valid}); !ok) return ok;
    if (z.room_lbas() == 0) {
      // Full on the device: its active resource is free again.
      zones_->release(*zone, true);
      policy_->on_zone_full(*zone);
      zone.reset();
      changed_.notify_all();
    }
    done += n;
    valid_left -= valid;
  }
  return {};
}

uint32_t ZonedFs::stripe_width_for(Lifetime lifetime, IoClass io_class) {
  std::lock_guard lock(mutex_);
  const PlacementRequest request{lifetime, io_class, false, {}};
  const uint64_t unit = policy_->stripe_unit_bytes();
  const uint32_t width = policy_->stripe_width(request);
  if (width <= 1 || unit < io_.block_bytes()) return 1;
  // Each slot holds a token; the log and the other writers need theirs.
  return std::max<uint32_t>(1, std::min(width, zones_->limits().active / 2));
}

FsStatus ZonedFs::write_striped(WriterId writer, Lifetime lifetime, IoClass io_class,
                                Stripe& stripe, const uint8_t* data, uint64_t blocks,
                                uint64_t valid_bytes, WriteCause cause, const PlacedFn& placed) {
  const uint64_t bs = io_.block_bytes();
  ZL_ASSERT(blocks > 0 && valid_bytes <= blocks * bs && valid_bytes > (blocks - 1) * bs);
  ZL_ASSERT(!stripe.slots.empty());
  const uint64_t unit_blocks = std::max<uint64_t>(1, policy_->stripe_unit_bytes() / bs);
  const uint32_t width = static_cast<uint32_t>(stripe.slots.size());
  if (stripe.unit_left == 0) stripe.unit_left = unit_blocks;
  uint64_t done = 0;
  uint64_t valid_left = valid_bytes;
  std::vector<uint32_t> held;
  struct Piece {
    uint32_t slot;
    uint32_t zone;
    uint64_t lba;
    uint64_t offset;  // blocks into `data`
    uint64_t blocks;
  };
  std::vector<Piece> pieces;
  std::vector<IoPiece> io_pieces;
  while (done < blocks) {
    // The slots' zones, marked as being written (so not taken back).
    auto held_zones = [&] {
      held.clear();
      for (const auto& z : stripe.slots) {
        if (z) held.push_back(*z);
      }
    };
    {
      std::lock_guard lock(mutex_);
      for (auto& z : stripe.slots) {
        if (z && zones_->holds(*z, writer) && zones_->zone(*z).room_lbas() > 0) {
          zones_->set_writing(*z, true);
        } else {
          z.reset();
        }
      }
    }
    // Empty slots take a zone if one can be had at once (in another group:
    // the policy sees the stripe's zones); the stripe narrows otherwise.
    for (auto& z : stripe.slots) {
      if (z) continue;
      held_zones();
      auto taken = try_allocate_zone(writer, lifetime, io_class, held);
      if (!taken) return taken.status();
      z = *taken;
    }
    if (!stripe.slots[stripe.next]) {
      // The next unit's slot has no zone: the next slot that has one, or --
      // none at all -- a zone the usual way, waiting if it must.
      uint32_t s = stripe.next;
      for (uint32_t step = 1; step < width && !stripe.slots[s]; ++step) {
        s = (stripe.next + step) % width;
      }
      if (!stripe.slots[s]) {
        held_zones();
        auto taken = allocate_zone(writer, lifetime, io_class, held, false);
        if (!taken) return taken.status();
        s = stripe.next;
        stripe.slots[s] = *taken;
      }
      stripe.next = s;
      stripe.unit_left = unit_blocks;
    }
    // The round: units in turn, one piece per slot, until the data ends, a
    // slot comes round again, or a zone fills.
    pieces.clear();
    {
      std::lock_guard lock(mutex_);
      std::vector<bool> used(width, false);
      uint64_t at = done;
      while (at < blocks && !used[stripe.next]) {
        const uint32_t s = stripe.next;
        const DataZone& z = zones_->zone(*stripe.slots[s]);
        ZL_ASSERT(z.writer == writer && z.writing && z.room_lbas() > 0);
        const uint64_t n = std::min({blocks - at, stripe.unit_left, z.room_lbas()});
        pieces.push_back(Piece{s, z.index, z.start_lba + z.wp_lbas, at, n});
        used[s] = true;
        at += n;
        stripe.unit_left -= n;
        if (stripe.unit_left == 0) {
          stripe.unit_left = unit_blocks;
          // The next slot holding a zone.
          uint32_t next = s;
          for (uint32_t step = 1; step <= width; ++step) {
            next = (s + step) % width;
            if (stripe.slots[next]) break;
          }
          stripe.next = next;
        }
        if (n == z.room_lbas()) break;  // the zone fills: the unit goes on in a new one
      }
    }
    io_pieces.clear();
    uint64_t round_valid = valid_left;
    for (const Piece& p : pieces) {
      const uint64_t valid = std::min(round_valid, p.blocks * bs);
      round_valid -= valid;
      io_pieces.push_back(IoPiece{p.lba, const_cast<uint8_t*>(data + p.offset * bs), p.blocks,
                                  p.blocks * bs - valid});
    }
    const uint64_t started_ns = now_ns();
    {
      std::lock_guard lock(mutex_);
      ++counters_.striped_rounds;
    }
    FsStatus written = io_.write_all(io_pieces, cause);
    const uint64_t took_ns = now_ns() - started_ns;
    std::lock_guard lock(mutex_);
    for (auto& z : stripe.slots) {
      if (z) zones_->set_writing(*z, false);
    }
    changed_.notify_all();
    if (!written) {
      // Which pieces made it is not known: nothing of the round is
      // recorded, and the slots' zones (written past what is recorded) go.
      for (auto& z : stripe.slots) {
        if (z) zones_->release(*z, false);
        z.reset();
      }
      if (failure_.empty()) failure_ = written.message();
      return written;
    }
    for (const Piece& p : pieces) {
      DataZone& z = zones_->zone(p.zone);
      z.wp_lbas += p.blocks;
      const uint64_t valid = std::min(valid_left, p.blocks * bs);
      valid_left -= valid;
      policy_->on_io_complete(p.zone, true, p.blocks * bs, took_ns);
      if (FsStatus ok = placed(Extent{p.zone, p.lba, valid}); !ok) return ok;
      done += p.blocks;
      if (z.room_lbas() == 0) {
        zones_->release(p.zone, true);
        policy_->on_zone_full(p.zone);
        stripe.slots[p.slot].reset();
      }
    }
  }
  return {};
}

// --- writing -----------------------------------------------------------------

WritableFile::WritableFile(ZonedFs& fs, FileId id, uint64_t size, Lifetime lifetime,
                           IoClass io_class)
    : fs_(fs), id_(id), size_(size), lifetime_(lifetime), io_class_(io_class) {
  const uint64_t bs = fs.block_bytes();
  buffer_.resize(std::max(bs, fs.options_.write_buffer_bytes / bs * bs));
}

WritableFile::~WritableFile() {
  if (!closed_) (void)close();
}

void WritableFile::set_hints(Lifetime lifetime, IoClass io_class) {
  lifetime_ = lifetime;
  io_class_ = io_class;
  std::lock_guard lock(fs_.mutex_);
  const FileNode* node = fs_.meta_.file(id_);
  if (node == nullptr || (node->lifetime == lifetime && node->io_class == io_class)) return;
  if (!fs_.check_writable()) return;
  Record r;
  r.type = RecordType::kHintsSet;
  r.id = id_;
  r.lifetime = lifetime;
  r.io_class = io_class;
  (void)fs_.apply_for_file(r, id_);
}

FsStatus WritableFile::append(const uint8_t* data, uint64_t bytes) {
  if (closed_) return FsStatus(Code::kInvalid, "append to a closed file");
  // A write behind that failed (read only when none is in flight).
  if (!behind_.joinable() && !behind_status_) return behind_status_;
  decide_stripe();
  const uint64_t total = bytes;
  while (bytes > 0) {
    // Past the published bytes: no reader looks here yet.
    uint64_t n = std::min(bytes, buffer_.size() - buffered_);
    std::memcpy(buffer_.data() + buffered_, data, n);
    buffered_ += n;
    size_ += n;
    data += n;
    bytes -= n;
    if (buffered_ == buffer_.size()) {
      if (FsStatus ok = write_full_buffer(); !ok) return ok;
    }
  }
  std::lock_guard lock(fs_.mutex_);
  publish_locked();
  fs_.counters_.appended_bytes[static_cast<size_t>(io_class_)] += total;
  return {};
}

FsStatus WritableFile::write_full_buffer() {
  const uint64_t blocks = buffered_ / fs_.block_bytes();
  if (!fs_.writes_behind()) {
    {
      std::lock_guard lock(fs_.mutex_);
      publish_locked();  // readers read the full buffer while it goes out
    }
    if (FsStatus ok = write_out(buffer_.data(), blocks, buffered_, lifetime_, io_class_); !ok) {
      return ok;
    }
    std::lock_guard lock(fs_.mutex_);
    buffered_ = 0;
    publish_locked();
    return {};
  }
  // The previous buffer must be on the device before this one goes (one
  // write in flight: the file's extents stay in order).
  if (FsStatus ok = wait_behind(); !ok) return ok;
  if (flight_.size() != buffer_.size()) flight_.resize(buffer_.size());
  {
    // Readers copy from the buffers under this lock.
    std::lock_guard lock(fs_.mutex_);
    std::swap(buffer_, flight_);
    flight_bytes_ = buffered_;
    buffered_ = 0;
    publish_locked();
    ++fs_.behind_counters_.writes;
  }
  const uint64_t valid = flight_bytes_;
  const Lifetime lifetime = lifetime_;
  const IoClass io_class = io_class_;
  behind_done_.store(false, std::memory_order_relaxed);
  behind_ = std::thread([this, blocks, valid, lifetime, io_class] {
    behind_status_ = write_out(flight_.data(), blocks, valid, lifetime, io_class);
    behind_done_.store(true, std::memory_order_release);
  });
  return {};
}

FsStatus WritableFile::wait_behind() {
  if (behind_.joinable()) {
    const bool done = behind_done_.load(std::memory_order_acquire);
    const auto started = std::chrono::steady_clock::now();
    behind_.join();
    const auto waited = std::chrono::steady_clock::now() - started;
    std::lock_guard lock(fs_.mutex_);
    flight_bytes_ = 0;
    publish_locked();
    if (!done) {
      ++fs_.behind_counters_.waits;
      fs_.behind_counters_.wait_ns += static_cast<uint64_t>(
          std::chrono::duration_cast<std::chrono::nanoseconds>(waited).count());
    }
  }
  return behind_status_;
}

void WritableFile::publish_locked() {
  fs_.buffered_[id_] = ZonedFs::BufferedTail{buffer_.data(), size_ - buffered_, buffered_,
                                             flight_.data(), flight_bytes_};
}

void WritableFile::decide_stripe() {
  if (stripe_width_ != 0) return;
  stripe_width_ = fs_.stripe_width_for(lifetime_, io_class_);
  if (stripe_width_ <= 1) return;
  stripe_.slots.resize(stripe_width_);
  // A full stripe per write out, so that every slot has its unit.
  const uint64_t bs = fs_.block_bytes();
  const uint64_t stripe_bytes =
      std::max(bs, fs_.policy().stripe_unit_bytes() / bs * bs) * stripe_width_;
  if (stripe_bytes > buffer_.size()) buffer_.resize(stripe_bytes);
}

FsStatus WritableFile::write_out(const uint8_t* data, uint64_t blocks, uint64_t valid_bytes,
                                 Lifetime lifetime, IoClass io_class) {
  decide_stripe();
  auto placed = [this, io_class](const Extent& e) {
    fs_.counters_.data_written_bytes[static_cast<size_t>(io_class)] +=
        e.blocks(fs_.block_bytes()) * fs_.block_bytes();
    Record r;
    r.type = RecordType::kExtentAdded;
    r.id = id_;
    r.extent = e;
    return fs_.apply_for_file(r, id_);
  };
  if (stripe_width_ > 1) {
    return fs_.write_striped(id_, lifetime, io_class, stripe_, data, blocks, valid_bytes,
                             WriteCause::kData, placed);
  }
  return fs_.write_blocks(id_, lifetime, io_class, zone_, data, blocks, valid_bytes,
                          WriteCause::kData, placed);
}

FsStatus WritableFile::flush() {
  if (closed_) return {};
  if (FsStatus ok = wait_behind(); !ok) return ok;
  const uint64_t bs = fs_.block_bytes();
  uint64_t blocks = buffered_ / bs;
  if (blocks == 0) return {};
  if (FsStatus ok = write_out(buffer_.data(), blocks, blocks * bs, lifetime_, io_class_); !ok) {
    return ok;
  }
  // Moves published bytes: under the lock readers take.
  std::lock_guard lock(fs_.mutex_);
  uint64_t rest = buffered_ - blocks * bs;
  std::memmove(buffer_.data(), buffer_.data() + blocks * bs, rest);
  buffered_ = rest;
  publish_locked();
  return {};
}

FsStatus WritableFile::sync() {
  if (closed_) return {};
  if (FsStatus ok = wait_behind(); !ok) return ok;
  const uint64_t bs = fs_.block_bytes();
  if (buffered_ > 0) {
    // The last block is padded with zeros (the buffer still holds earlier
    // appends there, which must never reach the device as this block's
    // rest); later appends start a new block.
    const uint64_t padded = (buffered_ + bs - 1) / bs * bs;
    std::memset(buffer_.data() + buffered_, 0, padded - buffered_);
    if (FsStatus ok = write_out(buffer_.data(), padded / bs, buffered_, lifetime_, io_class_);
        !ok) {
      return ok;
    }
  }
  {
    std::lock_guard lock(fs_.mutex_);
    buffered_ = 0;
    publish_locked();
    ++fs_.counters_.syncs;
  }
  return fs_.commit();
}

FsStatus WritableFile::truncate(uint64_t size) {
  if (closed_) return FsStatus(Code::kInvalid, "truncate of a closed file");
  if (size > size_) {
    return FsStatus(
        Code::kInvalid,
        fmt::format("a zoned file grows only by appends (size {}, asked {})", size_, size));
  }
  if (size == size_) return {};
  if (FsStatus ok = sync(); !ok) return ok;
  {
    std::lock_guard lock(fs_.mutex_);
    if (FsStatus ok = fs_.check_writable(); !ok) return ok;
    Record r;
    r.type = RecordType::kSizeSet;
    r.id = id_;
    r.size = size;
    r.mtime_ns = fs_.now_ns();
    if (FsStatus ok = fs_.apply_for_file(r, id_); !ok) return ok;
    size_ = size;
    publish_locked();
  }
  return fs_.reset_freed();
}

FsStatus WritableFile::close() {
  if (closed_) return {};
  FsStatus synced = sync();
  closed_ = true;
  if (zone_) {
    fs_.release_zone(*zone_, id_);
    zone_.reset();
  }
  for (auto& z : stripe_.slots) {
    if (z) fs_.release_zone(*z, id_);
    z.reset();
  }
  {
    std::lock_guard lock(fs_.mutex_);
    fs_.buffered_.erase(id_);
    fs_.writer_room_.erase(id_);
  }
  fs_.release_file(id_);
  if (!synced) return synced;
  // A file deleted while open frees its space now -- as any deletion does:
  // at once where the policy resets freed zones, else at its collection.
  if (FsStatus ok = fs_.reset_freed(); !ok) return ok;
  fs_.device_.clock().poll();  // background work due in virtual time
  return {};
}

// --- reading -----------------------------------------------------------------

ReadableFile::~ReadableFile() { fs_.release_file(id_); }

uint64_t ReadableFile::size() const {
  std::lock_guard lock(fs_.mutex_);
  const FileNode* node = fs_.meta_.file(id_);
  return node == nullptr ? 0 : fs_.readable_size_locked(*node);
}

FsResult<uint64_t> ReadableFile::read(uint64_t offset, uint64_t bytes, uint8_t* out,
                                      IoClass reader) const {
  const uint64_t bs = fs_.block_bytes();
  struct Piece {
    uint64_t lba;
    uint64_t blocks;
    uint64_t skip;   // bytes of the first block before the piece
    uint64_t bytes;  // the piece's bytes
  };
  std::vector<Piece> pieces;
  std::vector<Extent> pinned;
  uint64_t tail_bytes = 0;  // read from an open writer's buffer
  {
    std::unique_lock lock(fs_.mutex_);
    // A compaction's read waits while a flush writes in the group it reads
    // (Algorithm 1), within the policy's bound; in virtual time nobody
    // else could let the group go.
    const uint64_t wait_ms = fs_.policy_->compaction_read_wait_ms();
    if (reader == IoClass::kCompaction && wait_ms > 0 && fs_.device_.concurrent()) {
      auto flush_in_groups = [&] {
        const FileNode* n = fs_.meta_.file(id_);
        if (n == nullptr) return false;
        uint64_t at = 0;
        for (const Extent& e : n->extents) {
          if (at + e.length > offset && at < offset + bytes &&
              fs_.zones_->flush_writing_in_group_of(e.zone) > 0) {
            return true;
          }
          at += e.length;
          if (at >= offset + bytes) break;
        }
        return false;
      };
      if (flush_in_groups()) {
        ++fs_.counters_.compaction_read_waits;
        fs_.changed_.wait_for(lock, std::chrono::milliseconds(wait_ms),
                              [&] { return !flush_in_groups(); });
      }
    }
    const FileNode* node = fs_.meta_.file(id_);
    if (node == nullptr || bytes == 0) return uint64_t{0};
    const uint64_t readable = fs_.readable_size_locked(*node);
    if (offset >= readable) return uint64_t{0};
    bytes = std::min(bytes, readable - offset);
    // An open writer's bytes past the device's: copied from its buffer now,
    // under the lock it changes them under.
    if (offset + bytes > node->size) {
      const ZonedFs::BufferedTail& tail = fs_.buffered_.at(id_);
      const uint64_t from = std::max(offset, node->size);
      const uint64_t to = offset + bytes;
      ZL_ASSERT(from >= tail.start() && to <= tail.end());
      for (uint64_t at = from; at < to;) {
        // The buffer going out (a write behind), then the one filling.
        const bool in_flight = at < tail.offset;
        const uint64_t stop = in_flight ? std::min(to, tail.offset) : to;
        const uint8_t* source =
            in_flight ? tail.flight + (at - tail.start()) : tail.data + (at - tail.offset);
        std::memcpy(out + (at - offset), source, stop - at);
        at = stop;
      }
      tail_bytes = to - from;
      bytes = from - offset;
      if (bytes == 0) return tail_bytes;
    }
    uint64_t file_offset = 0;
    for (const Extent& e : node->extents) {
      uint64_t end = file_offset + e.length;
      if (offset < end && offset + bytes > file_offset) {
        uint64_t start = std::max(offset, file_offset) - file_offset;
        uint64_t stop = std::min(offset + bytes, end) - file_offset;
        uint64_t first_block = start / bs;
        pieces.push_back(Piece{e.lba + first_block, (stop + bs - 1) / bs - first_block,
                               start - first_block * bs, stop - start});
        pinned.push_back(e);
      }
      file_offset = end;
      if (file_offset >= offset + bytes) break;
    }
    fs_.pin(pinned);
  }
  FsStatus status;
  std::vector<uint8_t> bounce;
  uint64_t done = 0;
  if (pieces.size() > 1 && fs_.policy_->parallel_reads()) {
    // A striped file's pieces lie in several zones: all their reads at once
    // (whole blocks straight into `out`, the rest through one bounce buffer).
    std::vector<IoPiece> batch;
    std::vector<uint64_t> bounce_at(pieces.size(), UINT64_MAX);
    uint64_t bounce_bytes = 0;
    for (size_t i = 0; i < pieces.size(); ++i) {
      const Piece& p = pieces[i];
      if (!(p.skip == 0 && p.bytes == p.blocks * bs)) {
        bounce_at[i] = bounce_bytes;
        bounce_bytes += p.blocks * bs;
      }
    }
    bounce.resize(bounce_bytes);
    for (size_t i = 0; i < pieces.size(); ++i) {
      const Piece& p = pieces[i];
      uint8_t* into = bounce_at[i] == UINT64_MAX ? out + done : bounce.data() + bounce_at[i];
      batch.push_back(IoPiece{p.lba, into, p.blocks, 0});
      done += p.bytes;
    }
    status = fs_.io_.read_all(batch);
    if (status) {
      done = 0;
      for (size_t i = 0; i < pieces.size(); ++i) {
        const Piece& p = pieces[i];
        if (bounce_at[i] != UINT64_MAX) {
          std::memcpy(out + done, bounce.data() + bounce_at[i] + p.skip, p.bytes);
        }
        done += p.bytes;
      }
    }
    pieces.clear();  // read
  }
  for (const Piece& p : pieces) {
    if (p.skip == 0 && p.bytes == p.blocks * bs) {
      status = fs_.io_.read(p.lba, out + done, p.blocks);  // whole blocks: no copy
    } else {
      bounce.resize(p.blocks * bs);
      status = fs_.io_.read(p.lba, bounce.data(), p.blocks);
      if (status) std::memcpy(out + done, bounce.data() + p.skip, p.bytes);
    }
    if (!status) break;
    done += p.bytes;
  }
  {
    std::lock_guard lock(fs_.mutex_);
    fs_.unpin(pinned);
  }
  if (!status) return status;
  return done + tail_bytes;
}

FsResult<uint64_t> ReadableFile::read_next(uint64_t bytes, uint8_t* out) {
  uint64_t done = 0;
  while (done < bytes) {
    uint64_t ahead_end = ahead_offset_ + ahead_.size();
    if (position_ >= ahead_offset_ && position_ < ahead_end) {
      uint64_t n = std::min(bytes - done, ahead_end - position_);
      std::memcpy(out + done, ahead_.data() + (position_ - ahead_offset_), n);
      done += n;
      position_ += n;
      continue;
    }
    // Large reads go straight to the caller; small ones through the
    // readahead window.
    uint64_t want = bytes - done;
    if (want >= fs_.options_.readahead_bytes) {
      auto got = read(position_, want, out + done);
      if (!got) return got.status();
      done += *got;
      position_ += *got;
      break;
    }
    ahead_.resize(fs_.options_.readahead_bytes);
    auto got = read(position_, ahead_.size(), ahead_.data());
    if (!got) {
      ahead_.clear();
      return got.status();
    }
    ahead_.resize(*got);
    ahead_offset_ = position_;
    if (*got == 0) break;  // the end of the file
  }
  return done;
}

FsStatus ReadableFile::skip(uint64_t bytes) {
  uint64_t end = size();
  position_ = std::min(end, position_ + std::min(bytes, end));
  return {};
}

}  // namespace zonelab::fs
