// The device image: one file that holds a device's configuration, its zone
// states and write pointers, per-block erase counts, lifetime counters and,
// with `store.backing = "file"`, the data. Format in docs/image-format.md.
//
// An image is opened by one process at a time (an exclusive lock on the
// file). Metadata is written to one of two slots in turn, each with its own
// sequence number and checksum, so a crash during save leaves the previous
// state readable. A corrupt or truncated image is refused with a one-line
// message, and a refused image is never written to.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
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

  bool operator==(const ImageZone&) const = default;
};

// One physical zone of the block mapping (mirrors zns/block_map.h's Slot).
struct ImageSlot {
  uint32_t stale_pages = 0;
  uint64_t released_seq = 0;

  bool operator==(const ImageSlot&) const = default;
};

// One flash block of a block-interface image's FTL (mirrors conv/ftl.h's Block).
struct ImageFtlBlock {
  uint8_t state = 0;  // 0 free, 1 open, 2 full
  uint32_t next_page = 0;
  uint32_t valid_lbas = 0;
  uint64_t last_write_ns = 0;

  bool operator==(const ImageFtlBlock&) const = default;
};

// One plane's free blocks (in allocation order) and open block per opener
// (the streams, then GC; kNone: none).
struct ImageFtlPlane {
  static constexpr uint32_t kNone = 0xFFFFFFFFu;
  std::vector<uint32_t> free;
  std::vector<uint32_t> open;

  bool operator==(const ImageFtlPlane&) const = default;
};

// The page-mapped FTL of a block-interface image (conv/ftl.h): the
// logical-to-physical map, the blocks, the planes, the partial page buffers
// (streams, then one per plane for GC), each stream's next plane in turn and
// the FTL's counters. The reverse map and valid totals are derived. The
// device's virtual clock and when each plane and channel is next free go
// with it, so work in flight at a save (GC after a write) and the ages GC
// compares continue in the next process as in one run.
struct ImageFtl {
  std::vector<uint32_t> l2p;
  std::vector<ImageFtlBlock> blocks;
  std::vector<ImageFtlPlane> planes;
  std::vector<std::vector<uint32_t>> buffers;
  std::vector<uint32_t> cursors;
  uint64_t gc_runs = 0;
  uint64_t gc_moved_lbas = 0;
  uint64_t trimmed_lbas = 0;
  uint64_t skipped_planes = 0;
  uint64_t clock_ns = 0;
  std::vector<uint64_t> plane_free_at_ns;
  std::vector<uint64_t> channel_free_at_ns;

  bool operator==(const ImageFtl&) const = default;
};

// Everything an image keeps besides data.
struct ImageState {
  Config config;
  std::vector<ImageZone> zones;
  uint64_t next_open_seq = 1;
  std::vector<uint32_t> erase_counts;  // one per flash block
  // The block mapping: each zone's physical zone (UINT32_MAX: none) and each
  // physical zone's state. Both empty: not stored (direct mapping, as
  // images written before the mapping was stored).
  std::vector<uint32_t> zone_slots;
  std::vector<ImageSlot> slots;
  uint64_t next_released_seq = 1;
  // The FTL of a block-interface image (interface = "block"), whose zones
  // are the zoned view (state and write pointer only); absent for ZNS.
  std::optional<ImageFtl> ftl;
  uint64_t lifetime_host_write_bytes = 0;
  uint64_t lifetime_host_read_bytes = 0;
  uint64_t lifetime_commands = 0;
};

// CRC-32C (Castagnoli), the checksum of the image header and slots.
// `crc` continues an earlier value, so a checksum can span pieces.
uint32_t crc32c(const uint8_t* data, size_t size, uint32_t crc = 0);

class Image {
 public:
  static constexpr uint32_t kFormatVersion = 1;
  static constexpr uint64_t kHeaderBytes = 4096;  // slot A starts here
  // Limits on what an image may hold; larger values in a file are corrupt.
  static constexpr uint64_t kZoneCountMax = 1ULL << 24;
  static constexpr uint64_t kEraseCountsMax = 1ULL << 26;
  // An FTL's logical blocks and its flash slots (conv/ftl.h maps at most
  // 2^28); its map takes 4 bytes per LBA in a slot of kSlotBytesMax.
  static constexpr uint64_t kFtlLbasMax = 1ULL << 28;
  static constexpr uint64_t kSlotBytesMax = 1ULL << 30;
  static constexpr uint64_t kDataBytesMax = 1ULL << 50;

  ~Image();
  Image(const Image&) = delete;
  Image& operator=(const Image&) = delete;

  // Makes a new image at `path` holding `state` (refuses an existing file
  // unless `force`). The data region is sized for `data_bytes` (0 when the
  // backing is not `file`); the file is sparse. The image appears at `path`
  // complete or not at all.
  static Result<std::unique_ptr<Image>> create(const std::string& path, const ImageState& state,
                                               uint64_t data_bytes, bool force);
  // Opens and locks an existing image, checks it and loads the newest valid
  // metadata slot.
  static Result<std::unique_ptr<Image>> open(const std::string& path);

  const ImageState& state() const { return state_; }
  const std::string& path() const { return path_; }
  uint64_t sequence() const { return sequence_; }
  uint64_t slot_bytes() const { return slot_bytes_; }
  uint64_t data_offset_bytes() const { return data_offset_bytes_; }
  uint64_t data_bytes() const { return data_bytes_; }

  // Writes `state` to the older slot (data first, then metadata, each synced).
  // Refused, changing nothing, after a data I/O error (see data_error()).
  Outcome save(const ImageState& state);
  // The file backing over this image's data region (valid while the image
  // lives); only for images whose config says store.backing = "file".
  std::unique_ptr<Backing> file_backing(uint64_t lba_size_bytes);
  // The first I/O error of a file backing, or empty.
  const std::string& data_error() const { return data_error_; }

  // Parses a whole image held in memory, exactly as open() checks a file
  // (used by tests and the fuzzer). `size` is the image's length in bytes.
  static Result<ImageState> decode(const uint8_t* data, size_t size);
  static Result<ImageState> decode(const std::vector<uint8_t>& bytes) {
    return decode(bytes.data(), bytes.size());
  }
  // A whole image in memory as create() would write it: header, slot A with
  // sequence 1, an unwritten slot B and `data_bytes` (at most 64 MiB) of zeros.
  static Result<std::vector<uint8_t>> encode(const ImageState& state, uint64_t data_bytes);
  // One metadata slot's bytes: slot header and payload (unchecked).
  static std::vector<uint8_t> encode_metadata(const ImageState& state, uint64_t sequence);

 private:
  Image() = default;
  Outcome load();

  std::string path_;
  int fd_ = -1;
  ImageState state_;
  uint64_t sequence_ = 0;
  int active_slot_ = 0;  // the slot holding sequence_; save writes the other
  uint64_t slot_bytes_ = 0;
  uint64_t data_offset_bytes_ = 0;
  uint64_t data_bytes_ = 0;
  std::string data_error_;
};

}  // namespace zonelab
