// The device image: one file that holds a device's configuration, its zone
// states and write pointers, per-block erase counts, lifetime counters and,
// with `store.backing = "file"`, the data. Format in docs/image-format.md.
//
// An image is opened by one process at a time (an exclusive lock on the
// file). Metadata is written to one of two slots in turn, each with its own
// sequence number and checksum, so a crash during save leaves the previous
// state readable. A corrupt or truncated image is refused with a message.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "store/backing.h"
#include "zonelab/config.h"
#include "zonelab/result.h"

namespace zonelab {

// One zone as an image stores it (mirrors zns/zone_table.h's Zone).
struct ImageZone {
  uint8_t state = 0;  // ZoneState value
  uint64_t wp = 0;
  uint64_t data_end = 0;
  uint32_t pages_programmed = 0;
  uint64_t open_seq = 0;
};

// Everything an image keeps besides data.
struct ImageState {
  Config config;
  std::vector<ImageZone> zones;
  uint64_t next_open_seq = 1;
  std::vector<uint32_t> erase_counts;  // one per flash block
  uint64_t lifetime_host_write_bytes = 0;
  uint64_t lifetime_host_read_bytes = 0;
  uint64_t lifetime_commands = 0;
};

class Image {
 public:
  ~Image();
  Image(const Image&) = delete;
  Image& operator=(const Image&) = delete;

  // Makes a new image at `path` holding `state` (refuses an existing file
  // unless `force`). The data region is sized for `data_bytes` (0 when the
  // backing is not `file`); the file is sparse.
  static Result<std::unique_ptr<Image>> create(const std::string& path, const ImageState& state,
                                               uint64_t data_bytes, bool force);
  // Opens and locks an existing image, checks it and loads the newest valid
  // metadata slot.
  static Result<std::unique_ptr<Image>> open(const std::string& path);

  const ImageState& state() const { return state_; }
  const std::string& path() const { return path_; }
  // Writes `state` to the older slot (data first, then metadata, each synced).
  Outcome save(const ImageState& state);
  // The file backing over this image's data region (valid while the image
  // lives); only for images whose config says store.backing = "file".
  std::unique_ptr<Backing> file_backing(uint64_t lba_size_bytes);

  // Parses image bytes without a file (used by open, tests and the fuzzer).
  static Result<ImageState> decode(const std::vector<uint8_t>& bytes);
  static std::vector<uint8_t> encode_metadata(const ImageState& state, uint64_t sequence);

 private:
  Image() = default;
  std::string path_;
  int fd_ = -1;
  ImageState state_;
  uint64_t sequence_ = 0;
  uint64_t data_offset_ = 0;
  uint64_t data_bytes_ = 0;
  uint64_t slot_bytes_ = 0;
};

}  // namespace zonelab
