// The device image: one file that holds a device's configuration, the
// persisted state of each layer of the device (as sections the layers encode
// themselves), a journal of the commands taken since that state was saved,
// and, with `store.backing = "file"`, the data. Format in
// docs/image-format.md.
//
// An image is opened for writing by one process at a time (an exclusive
// lock on the file), or by any number of readers (a shared lock). Metadata
// is written to one of two slots in turn, each with its own sequence number
// and checksum, so a process killed while saving leaves the previous state
// readable. Between saves the device appends a record to the journal for
// every command that changed its state, before the command's completion is
// reported and before any data is destroyed; the next open replays them.
// So a killed process leaves an image that opens with every reported
// command in it (docs/image-format.md, "Durability").
//
// A corrupt or truncated image is refused with a one-line message, and a
// refused image is never written to.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "store/backing.h"
#include "store/bytes.h"
#include "zonelab/config.h"
#include "zonelab/result.h"

namespace zonelab {

// Everything an image keeps besides data and the journal.
struct ImageState {
  Config config;
  // Each layer's persisted state, by section type. The layers encode and
  // decode their own sections; the image only frames them. Types 1 (the
  // configuration) and 8 (the journal's place) are the image's own.
  std::map<uint32_t, std::vector<uint8_t>> sections;
  // How many bytes the sections may grow by in a later save of the same
  // device (a block-interface FTL's buffers filling); create() sizes the
  // slots for it. Not stored.
  uint64_t growth_bytes = 0;
};

class Image {
 public:
  static constexpr uint32_t kFormatVersion = 1;
  static constexpr uint64_t kHeaderBytes = 4096;  // slot A starts here
  static constexpr uint32_t kSectionConfig = 1;
  static constexpr uint32_t kSectionJournal = 8;
  // Limits on what an image may hold; larger values in a file are corrupt.
  static constexpr uint64_t kSlotBytesMax = 1ULL << 30;
  static constexpr uint64_t kDataBytesMax = 1ULL << 50;
  static constexpr uint64_t kSectionBytesMax = kSlotBytesMax;
  // The journal region of a new image, and the limits of any image's.
  static constexpr uint64_t kJournalBytes = 4ULL << 20;
  static constexpr uint64_t kJournalBytesMax = 64ULL << 20;
  static constexpr uint64_t kJournalRecordBytesMax = 1ULL << 16;

  enum class Access : uint8_t { kReadWrite, kReadOnly };

  ~Image();
  Image(const Image&) = delete;
  Image& operator=(const Image&) = delete;

  // Makes a new image at `path` holding `state` (refuses an existing file
  // unless `force`). The data region is sized for `data_bytes` (0 when the
  // backing is not `file`) and left sparse; header, slots and journal are
  // allocated. The image appears at `path` complete or not at all.
  static Result<std::unique_ptr<Image>> create(const std::string& path, const ImageState& state,
                                               uint64_t data_bytes, bool force);
  // Opens and locks an existing image, checks it, loads the newest valid
  // metadata slot and reads the journal records written after it.
  static Result<std::unique_ptr<Image>> open(const std::string& path,
                                             Access access = Access::kReadWrite);

  const ImageState& state() const { return state_; }
  const std::string& path() const { return path_; }
  bool read_only() const { return access_ == Access::kReadOnly; }
  uint64_t sequence() const { return sequence_; }
  uint64_t slot_bytes() const { return slot_bytes_; }
  uint64_t data_offset_bytes() const { return data_offset_bytes_; }
  uint64_t data_bytes() const { return data_bytes_; }
  // The file's length: header, slots, data region and journal.
  uint64_t file_bytes() const;
  // Not empty when the newest slot could not be read and open() used the
  // older one: which slot, why, and the sequence opened (for a warning).
  const std::string& fallback_note() const { return fallback_note_; }

  // A checkpoint: writes `state` to the older slot (data synced first, then
  // the slot, synced), after which the journal starts empty. Refused,
  // changing nothing, on a read-only image.
  Outcome save(const ImageState& state);

  // The journal. Records found by open() (after the slot it loaded, in
  // order), for the device to replay; then those appended since.
  bool has_journal() const { return journal_bytes_ != 0; }
  const std::vector<std::vector<uint8_t>>& journal_found() const { return journal_found_; }
  // An image written before the journal existed gets one at the end of the
  // file, recorded by a save (so a reader of the old format still opens it).
  Outcome add_journal();
  // Buffers a record; false when the journal region has no room for it
  // (save first). At most kJournalRecordBytesMax bytes.
  bool journal_append(const std::vector<uint8_t>& record);
  // Writes the buffered records into the file. Not synced: they survive the
  // process's death, as the data writes do.
  Outcome journal_flush();
  // Records appended since the last save (or open).
  uint64_t journal_records() const { return journal_count_; }
  bool journal_pending() const { return !journal_buffer_.empty(); }
  uint64_t journal_pending_bytes() const { return journal_buffer_.size(); }

  // The file backing over this image's data region (valid while the image
  // lives); only for images whose config says store.backing = "file".
  std::unique_ptr<Backing> file_backing(uint64_t lba_size_bytes);
  // While replaying the journal the data is already in place: the file
  // backing then ignores writes and discards.
  void set_replaying(bool replaying) { replaying_ = replaying; }
  // Test hook (a power cut): from now on nothing reaches the file -- no
  // journal record, data write, discard or save -- so the file stays as a
  // process killed at this instant would leave it.
  void freeze() { frozen_ = true; }
  bool frozen() const { return frozen_; }

  // The latest I/O error of the file backing (what failed a command), or
  // empty.
  const std::string& data_error() const { return data_error_; }

  // Parses a whole image held in memory, exactly as open() checks a file
  // (used by tests and the fuzzer). `size` is the image's length in bytes;
  // the journal records found are put in `journal` when it is not null.
  static Result<ImageState> decode(const uint8_t* data, size_t size,
                                   std::vector<std::vector<uint8_t>>* journal = nullptr);
  static Result<ImageState> decode(const std::vector<uint8_t>& bytes) {
    return decode(bytes.data(), bytes.size());
  }
  // A whole image in memory as create() would write it: header, slot A with
  // sequence 1, an unwritten slot B, `data_bytes` (at most 64 MiB) of zeros
  // and an empty journal region -- of 4 KiB, not create()'s 4 MiB, so that
  // images in memory stay small.
  static Result<std::vector<uint8_t>> encode(const ImageState& state, uint64_t data_bytes);
  // One metadata slot's bytes: slot header and payload (unchecked), with the
  // journal's place when `journal_bytes` is not 0.
  static std::vector<uint8_t> encode_metadata(const ImageState& state, uint64_t sequence,
                                              uint64_t journal_offset = 0,
                                              uint64_t journal_bytes = 0);
  // One journal record as the region holds it (tests, the fuzzer).
  static std::vector<uint8_t> encode_journal_record(uint64_t epoch, uint64_t index,
                                                    const std::vector<uint8_t>& payload);

 private:
  Image() = default;
  Outcome load();
  Outcome write_at_checked(const uint8_t* data, uint64_t size, uint64_t offset, const char* what);

  std::string path_;
  int fd_ = -1;
  Access access_ = Access::kReadWrite;
  ImageState state_;
  uint64_t sequence_ = 0;
  int active_slot_ = 0;  // the slot holding sequence_; save writes the other
  uint64_t slot_bytes_ = 0;
  uint64_t data_offset_bytes_ = 0;
  uint64_t data_bytes_ = 0;
  std::string fallback_note_;
  std::string data_error_;
  bool replaying_ = false;
  bool frozen_ = false;
  // The journal region and where the next record goes.
  uint64_t journal_offset_ = 0;
  uint64_t journal_bytes_ = 0;
  uint64_t journal_used_ = 0;     // bytes written or buffered since the last save
  uint64_t journal_flushed_ = 0;  // of those, in the file
  uint64_t journal_count_ = 0;
  std::vector<uint8_t> journal_buffer_;
  std::vector<std::vector<uint8_t>> journal_found_;
};

}  // namespace zonelab
