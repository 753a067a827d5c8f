// What a FUSE server shows as its one file: bytes at offsets, of a size
// that never changes, with holes and a flush. Two kinds: the modeled
// device's LBAs (BlockFile) and a host file passed through as it is
// (PassThroughFile), the second to measure what FUSE itself costs.
//
// Every method is safe from any number of threads at once and returns 0
// (or a count) or a negative errno, as a FUSE reply wants it:
//   -EIO     the device or file answered with an error, or the device no
//            longer takes commands (it is closing);
//   -ENOSPC  a write past the end;
//   -EINVAL  a request longer than kMaxRequestBytes, or a hole whose end
//            overflows.
// A read past the end is short, as a file's is; a hole past the end punches
// nothing.
#pragma once

#include <atomic>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>

namespace zonelab::serve {

struct FileCounters {
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

nlohmann::ordered_json file_counters_json(const FileCounters& c);

// The same counters, added to by any number of threads at once.
struct AtomicFileCounters {
  std::atomic<uint64_t> reads{0}, read_bytes{0}, writes{0}, write_bytes{0}, partial_lbas{0},
      holes{0}, hole_bytes{0}, deallocated_lbas{0}, flushes{0}, errors{0};

  // Counts an answered error and returns it.
  int error(int errno_value) {
    errors.fetch_add(1, std::memory_order_relaxed);
    return errno_value;
  }
  FileCounters snapshot() const;
};

// The largest read or write taken at once (FUSE sends at most a few MiB).
inline constexpr uint64_t kMaxRequestBytes = 64ull << 20;

class ServedFile {
 public:
  virtual ~ServedFile() = default;
  virtual uint64_t size_bytes() const = 0;
  // The unit the file is best read and written in (st_blksize).
  virtual uint64_t block_bytes() const = 0;
  // Up to out.size() bytes at `offset`: the count read (short at the end).
  virtual int64_t read(uint64_t offset, std::span<uint8_t> out) = 0;
  // Every byte of `in` at `offset`: in.size().
  virtual int64_t write(uint64_t offset, std::span<const uint8_t> in) = 0;
  // Reads give zeros for [offset, offset + length) afterwards.
  virtual int hole(uint64_t offset, uint64_t length) = 0;
  // What was written is durable.
  virtual int flush() = 0;
  virtual FileCounters counters() const = 0;
};

}  // namespace zonelab::serve
