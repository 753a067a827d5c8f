// A block device's logical blocks as the bytes of one file, the way a
// kernel's block layer shows /dev/nvme0n1: byte `o` of the file is byte
// `o % lba_size` of LBA `o / lba_size`. Reads and writes at any offset and
// length become device commands; a write that covers part of an LBA reads
// that LBA first and writes it whole (read-modify-write, serialized per LBA
// so that two part-writes of one LBA never lose each other); punching a hole
// deallocates the LBAs it covers whole (Dataset Management, deallocate) and
// writes zeros over the parts; fsync is NVMe's Flush.
//
// The file's size is the namespace's capacity and never changes. Every
// method is safe from any number of threads at once (the stack's blocking
// interface in real time) and returns 0 or a negative errno, as a FUSE
// reply wants it:
//   -EIO     the device answered with an error status, or no longer takes
//            commands (it is closing);
//   -ENOSPC  a write or hole past the end of the device;
//   -EINVAL  a length that overflows.
// A read past the end is short, as a file's is.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <nlohmann/json.hpp>
#include <span>

#include "stack/blocking.h"

namespace zonelab::serve {

struct BlockFileCounters {
  uint64_t reads = 0;
  uint64_t read_bytes = 0;
  uint64_t writes = 0;
  uint64_t write_bytes = 0;
  // Writes that covered part of an LBA: the LBAs read back to merge them.
  uint64_t partial_lbas = 0;
  uint64_t holes = 0;
  uint64_t hole_bytes = 0;
  uint64_t deallocated_lbas = 0;
  uint64_t flushes = 0;
  // Requests answered with an error.
  uint64_t errors = 0;
};

nlohmann::ordered_json block_file_counters_json(const BlockFileCounters& c);

class BlockFile {
 public:
  // The largest request taken at once; longer ones are refused with
  // -EINVAL (FUSE sends at most a few MiB).
  static constexpr uint64_t kMaxRequestBytes = 64ull << 20;

  explicit BlockFile(BlockingDevice& io);

  uint64_t size_bytes() const { return size_bytes_; }
  uint64_t lba_bytes() const { return lba_bytes_; }

  // Reads up to out.size() bytes at `offset`; the count read (short at the
  // end of the device), or a negative errno.
  int64_t read(uint64_t offset, std::span<uint8_t> out);
  // Writes every byte of `in` at `offset`: in.size(), or a negative errno.
  int64_t write(uint64_t offset, std::span<const uint8_t> in);
  // Reads give zeros for [offset, offset + length) afterwards: whole LBAs
  // deallocated, the parts at the edges written with zeros.
  int hole(uint64_t offset, uint64_t length);
  // What was written is durable (NVMe Flush).
  int flush();

  BlockFileCounters counters() const;

 private:
  // One command on [lba, lba + nlb), waited for; 0 or -EIO.
  int run(Opcode opcode, uint64_t lba, uint64_t nlb, uint8_t* data);
  // Writes `in` into part of LBA `lba` starting at byte `skip` of it.
  int merge(uint64_t lba, uint64_t skip, std::span<const uint8_t> in);
  int count_error(int error);

  BlockingDevice& io_;
  uint64_t lba_bytes_ = 0;
  uint64_t capacity_lbas_ = 0;
  uint64_t size_bytes_ = 0;
  // Part-writes of one LBA take its stripe's lock around the read and the
  // write.
  static constexpr size_t kStripes = 64;
  std::array<std::mutex, kStripes> stripes_;

  struct AtomicCounters {
    std::atomic<uint64_t> reads{0}, read_bytes{0}, writes{0}, write_bytes{0}, partial_lbas{0},
        holes{0}, hole_bytes{0}, deallocated_lbas{0}, flushes{0}, errors{0};
  };
  AtomicCounters counters_;
};

}  // namespace zonelab::serve
