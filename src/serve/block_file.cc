#include "serve/block_file.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "zonelab/assert.h"

namespace zonelab::serve {

namespace {

// Deallocate's block count is 32 bits wide; a hole goes in pieces of this
// many LBAs.
constexpr uint64_t kDeallocateLbasMax = 1u << 20;

}  // namespace

nlohmann::ordered_json file_counters_json(const FileCounters& c) {
  return {{"reads", c.reads},
          {"read_bytes", c.read_bytes},
          {"writes", c.writes},
          {"write_bytes", c.write_bytes},
          {"partial_lbas", c.partial_lbas},
          {"holes", c.holes},
          {"hole_bytes", c.hole_bytes},
          {"deallocated_lbas", c.deallocated_lbas},
          {"flushes", c.flushes},
          {"errors", c.errors}};
}

FileCounters AtomicFileCounters::snapshot() const {
  auto get = [](const std::atomic<uint64_t>& v) { return v.load(std::memory_order_relaxed); };
  FileCounters c;
  c.reads = get(reads);
  c.read_bytes = get(read_bytes);
  c.writes = get(writes);
  c.write_bytes = get(write_bytes);
  c.partial_lbas = get(partial_lbas);
  c.holes = get(holes);
  c.hole_bytes = get(hole_bytes);
  c.deallocated_lbas = get(deallocated_lbas);
  c.flushes = get(flushes);
  c.errors = get(errors);
  return c;
}

BlockFile::BlockFile(BlockingDevice& io, StreamHints* hints)
    : io_(io),
      hints_(hints),
      lba_bytes_(io.info().lba_size_bytes),
      capacity_lbas_(io.info().capacity_lbas),
      size_bytes_(lba_bytes_ * capacity_lbas_) {
  ZL_ASSERT(lba_bytes_ != 0);
}

int BlockFile::run(Opcode opcode, uint64_t lba, uint64_t nlb, uint8_t* data, uint32_t stream) {
  ZL_ASSERT(nlb != 0 && nlb <= UINT32_MAX && lba + nlb <= capacity_lbas_);
  Command c;
  c.opcode = opcode;
  c.slba = lba;
  c.nlb = static_cast<uint32_t>(nlb);
  c.data = data;
  c.stream = static_cast<uint16_t>(stream);
  if (!io_.submit_wait(c) || c.status != Status::kSuccess) return -EIO;
  return 0;
}

int BlockFile::write_lbas(uint64_t lba, uint64_t nlb, uint8_t* data) {
  if (hints_ == nullptr) return run(Opcode::kWrite, lba, nlb, data);
  return hints_->split(lba, nlb, [&](uint64_t first, uint64_t count, uint32_t stream) {
    return run(Opcode::kWrite, first, count, data + (first - lba) * lba_bytes_, stream);
  });
}

int BlockFile::merge(uint64_t lba, uint64_t skip, std::span<const uint8_t> in) {
  ZL_ASSERT(skip + in.size() <= lba_bytes_);
  std::vector<uint8_t> block(lba_bytes_);
  std::lock_guard lock(stripes_[lba % kStripes]);
  if (int error = run(Opcode::kRead, lba, 1, block.data()); error != 0) return error;
  std::memcpy(block.data() + skip, in.data(), in.size());
  counters_.partial_lbas.fetch_add(1, std::memory_order_relaxed);
  return write_lbas(lba, 1, block.data());
}

int64_t BlockFile::read(uint64_t offset, std::span<uint8_t> out) {
  counters_.reads.fetch_add(1, std::memory_order_relaxed);
  if (out.size() > kMaxRequestBytes) return counters_.error(-EINVAL);
  if (offset >= size_bytes_ || out.empty()) return 0;
  uint64_t length = std::min<uint64_t>(out.size(), size_bytes_ - offset);
  uint64_t first = offset / lba_bytes_;
  uint64_t end = (offset + length + lba_bytes_ - 1) / lba_bytes_;
  if (offset % lba_bytes_ == 0 && length % lba_bytes_ == 0) {
    if (int error = run(Opcode::kRead, first, end - first, out.data()); error != 0) {
      return counters_.error(error);
    }
  } else {
    std::vector<uint8_t> blocks((end - first) * lba_bytes_);
    if (int error = run(Opcode::kRead, first, end - first, blocks.data()); error != 0) {
      return counters_.error(error);
    }
    std::memcpy(out.data(), blocks.data() + offset % lba_bytes_, length);
  }
  counters_.read_bytes.fetch_add(length, std::memory_order_relaxed);
  return static_cast<int64_t>(length);
}

int64_t BlockFile::write(uint64_t offset, std::span<const uint8_t> in) {
  counters_.writes.fetch_add(1, std::memory_order_relaxed);
  if (in.size() > kMaxRequestBytes) return counters_.error(-EINVAL);
  if (in.empty()) return 0;
  if (offset >= size_bytes_ || in.size() > size_bytes_ - offset) return counters_.error(-ENOSPC);
  std::span<const uint8_t> rest = in;
  uint64_t lba = offset / lba_bytes_;
  if (uint64_t skip = offset % lba_bytes_; skip != 0) {
    size_t head = static_cast<size_t>(std::min<uint64_t>(rest.size(), lba_bytes_ - skip));
    if (int error = merge(lba, skip, rest.first(head)); error != 0) return counters_.error(error);
    rest = rest.subspan(head);
    ++lba;
  }
  if (uint64_t whole = rest.size() / lba_bytes_; whole != 0) {
    // The device reads the data of a write and never changes it.
    auto* data = const_cast<uint8_t*>(rest.data());
    if (int error = write_lbas(lba, whole, data); error != 0) return counters_.error(error);
    rest = rest.subspan(whole * lba_bytes_);
    lba += whole;
  }
  if (!rest.empty()) {
    if (int error = merge(lba, 0, rest); error != 0) return counters_.error(error);
  }
  counters_.write_bytes.fetch_add(in.size(), std::memory_order_relaxed);
  return static_cast<int64_t>(in.size());
}

int BlockFile::hole(uint64_t offset, uint64_t length) {
  counters_.holes.fetch_add(1, std::memory_order_relaxed);
  if (length > UINT64_MAX - offset) return counters_.error(-EINVAL);
  // Past the end there is nothing to punch.
  uint64_t end = std::min(offset + length, size_bytes_);
  if (offset >= end) return 0;
  uint64_t first_whole = (offset + lba_bytes_ - 1) / lba_bytes_;
  uint64_t end_whole = end / lba_bytes_;
  std::vector<uint8_t> zeros(lba_bytes_, 0);
  if (first_whole > end_whole) {
    // Inside one LBA.
    std::span<const uint8_t> part(zeros.data(), end - offset);
    if (int error = merge(offset / lba_bytes_, offset % lba_bytes_, part); error != 0) {
      return counters_.error(error);
    }
  } else {
    if (uint64_t head = first_whole * lba_bytes_ - offset; head != 0) {
      std::span<const uint8_t> part(zeros.data(), head);
      if (int error = merge(offset / lba_bytes_, offset % lba_bytes_, part); error != 0) {
        return counters_.error(error);
      }
    }
    for (uint64_t lba = first_whole; lba < end_whole;) {
      uint64_t nlb = std::min(kDeallocateLbasMax, end_whole - lba);
      if (int error = run(Opcode::kDeallocate, lba, nlb, nullptr); error != 0) {
        return counters_.error(error);
      }
      counters_.deallocated_lbas.fetch_add(nlb, std::memory_order_relaxed);
      lba += nlb;
    }
    if (uint64_t tail = end - end_whole * lba_bytes_; tail != 0) {
      std::span<const uint8_t> part(zeros.data(), tail);
      if (int error = merge(end_whole, 0, part); error != 0) return counters_.error(error);
    }
  }
  counters_.hole_bytes.fetch_add(end - offset, std::memory_order_relaxed);
  return 0;
}

int BlockFile::flush() {
  counters_.flushes.fetch_add(1, std::memory_order_relaxed);
  Command c;
  c.opcode = Opcode::kFlush;
  if (!io_.submit_wait(c) || c.status != Status::kSuccess) return counters_.error(-EIO);
  return 0;
}

FileCounters BlockFile::counters() const { return counters_.snapshot(); }

}  // namespace zonelab::serve
