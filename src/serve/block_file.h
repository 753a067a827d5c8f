// A block device's logical blocks as the bytes of one file, the way a
// kernel's block layer shows /dev/nvme0n1: byte `o` of the file is byte
// `o % lba_size` of LBA `o / lba_size`. Reads and writes at any offset and
// length become device commands; a write that covers part of an LBA reads
// that LBA first and writes it whole (read-modify-write, serialized per LBA
// so that two part-writes of one LBA never lose each other); punching a hole
// deallocates the LBAs it covers whole (Dataset Management, deallocate) and
// writes zeros over the parts; fsync is NVMe's Flush.
//
// With stream hints (serve/stream_hints.h), each write goes to the stream
// its LBAs were hinted for; without, to stream 0.
//
// The file's size is the namespace's capacity. Errors as ServedFile says;
// any number of threads at once (the stack's blocking interface in real
// time).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <span>

#include "serve/served_file.h"
#include "serve/stream_hints.h"
#include "stack/blocking.h"

namespace zonelab::serve {

class BlockFile final : public ServedFile {
 public:
  // `hints`, when given, outlives the file.
  explicit BlockFile(BlockingDevice& io, StreamHints* hints = nullptr);

  uint64_t size_bytes() const override { return size_bytes_; }
  uint64_t block_bytes() const override { return lba_bytes_; }
  int64_t read(uint64_t offset, std::span<uint8_t> out) override;
  int64_t write(uint64_t offset, std::span<const uint8_t> in) override;
  // Whole LBAs deallocated, the parts at the edges written with zeros.
  int hole(uint64_t offset, uint64_t length) override;
  // NVMe Flush.
  int flush() override;
  FileCounters counters() const override;

 private:
  // One command on [lba, lba + nlb), waited for; 0 or -EIO.
  int run(Opcode opcode, uint64_t lba, uint64_t nlb, uint8_t* data, uint32_t stream = 0);
  // Writes [lba, lba + nlb) from `data`, in the hinted streams' pieces.
  int write_lbas(uint64_t lba, uint64_t nlb, uint8_t* data);
  // Writes `in` into part of LBA `lba` starting at byte `skip` of it.
  int merge(uint64_t lba, uint64_t skip, std::span<const uint8_t> in);

  BlockingDevice& io_;
  StreamHints* hints_ = nullptr;
  uint64_t lba_bytes_ = 0;
  uint64_t capacity_lbas_ = 0;
  uint64_t size_bytes_ = 0;
  // Part-writes of one LBA take its stripe's lock around the read and the
  // write.
  static constexpr size_t kStripes = 64;
  std::array<std::mutex, kStripes> stripes_;

  AtomicFileCounters counters_;
};

}  // namespace zonelab::serve
