// A device image with the zoned file system on it, for the experiments that
// run real RocksDB (kv/runtime.h) on the model: the image in a temporary
// directory of its own, removed with the object, and the zonelab:// URI the
// kv runner opens it by. The device runs in real time with its modeled
// latencies, behind mq-deadline (zone writes from several threads stay
// ordered), as a RocksDB host would see it.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "fs/zoned_fs.h"
#include "zonelab/config.h"
#include "zonelab/result.h"

namespace zonelab {

// How the files lie in the zones (KvImage::layout): what decides what
// garbage collection copies, since a zone is reset only once every file
// with data in it has let that data go.
struct ZoneLayout {
  uint64_t tables = 0;            // RocksDB's table files (.sst)
  double zones_per_table = 0;     // zones a table has data in, mean
  uint32_t zones_with_data = 0;   // zones some file has data in
  double files_per_zone = 0;      // files with data in a zone, mean over those zones
  uint32_t zones_under_half = 0;  // zones with data, less than half of it live
};

class KvImage {
 public:
  // Creates the image of `config` (its store must keep data) and makes the
  // file system with `mkfs`; `label` names the setup in error messages.
  static Result<KvImage> make(const Config& config, const fs::MkfsOptions& mkfs,
                              std::string_view label);
  KvImage() = default;
  KvImage(KvImage&& other) noexcept;
  KvImage& operator=(KvImage&&) = delete;
  KvImage(const KvImage&) = delete;
  KvImage& operator=(const KvImage&) = delete;
  ~KvImage();

  // time_scale: wall time per unit of device time (2: the device runs half
  // as fast; rocksdb/uri.h).
  std::string uri(double time_scale = 1.0) const;
  // The same image with no device time (timing=off): the host alone.
  std::string uri_untimed() const;
  // The file system's layout now (mounted read-only; RocksDB must have
  // closed the image).
  Result<ZoneLayout> layout() const;
  // What mkfs reported (the IZG probe's result and warnings, if any).
  const fs::MkfsReport& mkfs_report() const { return report_; }

 private:
  std::filesystem::path dir_;
  std::string path_;
  fs::MkfsReport report_;
};

}  // namespace zonelab
