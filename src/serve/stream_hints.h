// Write-lifetime hints from a guest's programs, carried to the block SSD's
// write streams (seed 000 §5.3: a Stream SSD keeps data of each stream in
// blocks of its own).
//
// A program tells the kernel how long a file's data will live with
// fcntl(F_SET_RW_HINT) -- RocksDB does for its log and for each level's
// tables. The kernel that `zonelab vm` boots (Debian's UML 6.1) keeps the
// hint on the inode but no longer hands it to the disk, so it cannot reach
// the device in the write commands. The guest's hint shim
// (libzonelab_hints.so, preloaded) carries it instead: when a file is given
// space with fallocate -- RocksDB preallocates every table and log that way
// before it writes -- the shim asks the file system where that space is
// (FIEMAP) and appends one record per extent to a hints file that the host
// reads:
//
//   OFFSET LENGTH HINT\n     bytes on the disk, bytes, the hint (0-5, as
//                            RWH_WRITE_LIFE_NOT_SET..EXTREME)
//
// Each write to the served disk then goes to the stream its LBAs were last
// hinted for (hint h -> stream min(h, streams - 1); never hinted -> stream
// 0). The shim appends with O_DSYNC before fallocate returns, so the records
// of a file's space are here before its data can be written back.
//
// Only file systems that write data where fallocate put it carry hints this
// way: XFS, ext4 and btrfs (its preallocated extents are written in place
// once). f2fs writes every block at its log's head, wherever fallocate
// reserved room, so no extent it reports has an address (records: 0).
//
// The hints file is read as it grows, bounded: lines longer than
// kMaxLineBytes, or ones that do not parse, name a hint above 5 or reach
// past the disk, are counted as ignored and change nothing.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace zonelab::serve {

inline constexpr uint32_t kWriteHintMax = 5;  // RWH_WRITE_LIFE_EXTREME
inline constexpr size_t kMaxHintLineBytes = 96;
inline constexpr uint32_t kMaxStreams = 16;  // block.streams' bound

struct HintRecord {
  uint64_t offset = 0;  // bytes on the disk
  uint64_t length = 0;
  uint32_t hint = 0;
};

// One line's record (without its newline), or nothing when it is not one.
std::optional<HintRecord> parse_hint_record(std::string_view line);

// The stream of a hint on a device of `streams` streams.
uint32_t stream_of_hint(uint32_t hint, uint32_t streams);

struct StreamHintCounters {
  uint64_t records = 0;       // records taken
  uint64_t ignored = 0;       // lines that were not records, or reached past the disk
  uint64_t hinted_bytes = 0;  // bytes of records taken
  std::array<uint64_t, kMaxStreams> write_bytes{};  // served writes by stream
};

class StreamHints {
 public:
  // `path`: the hints file (it may not exist yet: read once it does);
  // `streams`: the device's write streams; the disk's LBA size and LBAs.
  StreamHints(std::string path, uint32_t streams, uint64_t lba_bytes, uint64_t lbas);
  ~StreamHints();
  StreamHints(const StreamHints&) = delete;
  StreamHints& operator=(const StreamHints&) = delete;

  // Reads what the hints file gained, then calls `write(lba, nlb, stream)`
  // over [lba, lba + nlb) in pieces of one stream each, in order; stops at
  // the first that does not return 0 and returns it.
  int split(uint64_t lba, uint64_t nlb,
            const std::function<int(uint64_t lba, uint64_t nlb, uint32_t stream)>& write);
  // A record as if read from the file (tests).
  void take(const HintRecord& record);
  // The stream of one LBA now (tests).
  uint32_t stream_of(uint64_t lba);

  StreamHintCounters counters() const;
  nlohmann::ordered_json json() const;

 private:
  void refresh();                         // with mutex_ held
  void take_line(std::string_view line);  // with mutex_ held
  void take_locked(const HintRecord& record);
  void assign(uint64_t first, uint64_t end, uint32_t stream);

  const std::string path_;
  const uint32_t streams_;
  const uint64_t lba_bytes_;
  const uint64_t lbas_;
  mutable std::mutex mutex_;
  int fd_ = -1;
  uint64_t read_bytes_ = 0;  // of the file, consumed
  std::string partial_;      // a line begun, not ended
  bool skipping_ = false;    // inside an over-long line
  // first LBA -> (end LBA, stream); the spans never overlap.
  std::map<uint64_t, std::pair<uint64_t, uint32_t>> spans_;
  StreamHintCounters counters_;
};

}  // namespace zonelab::serve
