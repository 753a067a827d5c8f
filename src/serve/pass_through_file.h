// A host file served as it is, without the model: what FUSE and the host's
// own storage cost, to set beside a served device (`zonelab serve
// --pass-through FILE`). Reads and writes are pread and pwrite, a hole is
// fallocate's punch, a flush is fdatasync. The size is the file's when it
// was opened and stays so (a write past it is refused, as a device's is).
#pragma once

#include <memory>
#include <string>

#include "serve/served_file.h"
#include "zonelab/result.h"

namespace zonelab::serve {

class PassThroughFile final : public ServedFile {
 public:
  // A regular file, opened for reading and writing.
  static Result<std::unique_ptr<PassThroughFile>> open(const std::string& path);
  ~PassThroughFile() override;

  uint64_t size_bytes() const override { return size_bytes_; }
  uint64_t block_bytes() const override { return block_bytes_; }
  int64_t read(uint64_t offset, std::span<uint8_t> out) override;
  int64_t write(uint64_t offset, std::span<const uint8_t> in) override;
  int hole(uint64_t offset, uint64_t length) override;
  int flush() override;
  FileCounters counters() const override;

 private:
  PassThroughFile() = default;

  int fd_ = -1;
  uint64_t size_bytes_ = 0;
  uint64_t block_bytes_ = 4096;
  AtomicFileCounters counters_;
};

}  // namespace zonelab::serve
