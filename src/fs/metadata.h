// The file system's metadata in memory: directories, names, files and the
// extents that hold their data, which writer last took each data zone, and
// the journal records that change them.
//
// Every change is a Record: the running file system applies a record to
// its Metadata and queues it for the journal (journal.h); recovery applies
// the same records to the snapshot it starts from, so one function --
// Metadata::apply -- defines what each record means. A snapshot is itself a
// list of records that rebuilds the state from nothing.
//
// Paths are absolute ("/db/000012.sst"), normalized (no "//", no trailing
// "/", no "." or ".." components), at most kPathBytesMax bytes with
// components of at most kNameBytesMax. "/" always exists. A file may have
// several names (hard links); it dies when it has none and nobody holds it
// open.
//
// An extent is a run of whole blocks in one zone holding a file's bytes; its
// last block may be padded (a buffered file synced mid-block), so its
// `length` -- the bytes that belong to the file -- may end inside a block. A
// file's size is the sum of its extents' lengths.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "fs/status.h"

namespace zonelab::fs {

using FileId = uint64_t;

inline constexpr uint64_t kPathBytesMax = 1024;
inline constexpr uint64_t kNameBytesMax = 255;
inline constexpr uint64_t kExtentsPerFileMax = 1 << 20;
// A record's encoded body, at most (a moved extent's pieces, two paths).
inline constexpr uint64_t kRecordBytesMax = 1 << 20;

// RocksDB's write-lifetime hints (Env::WriteLifeTimeHint), in its order.
enum class Lifetime : uint8_t {
  kNotSet = 0,
  kNone = 1,
  kShort = 2,
  kMedium = 3,
  kLong = 4,
  kExtreme = 5
};
inline constexpr uint8_t kLifetimeLast = 5;
const char* lifetime_name(Lifetime lifetime);

// What a file's writes are, for placement and counters. RocksDB tells flush
// from compaction by the I/O priority it sets on a table file before its
// first write (high: flush; low: compaction).
enum class IoClass : uint8_t { kOther = 0, kWal = 1, kManifest = 2, kFlush = 3, kCompaction = 4 };
inline constexpr uint8_t kIoClassLast = 4;
inline constexpr size_t kIoClassCount = kIoClassLast + 1;
const char* io_class_name(IoClass io_class);

struct Extent {
  uint32_t zone = 0;
  uint64_t lba = 0;     // first LBA (device address)
  uint64_t length = 0;  // the file's bytes in it
  uint64_t blocks(uint64_t block_bytes) const { return (length + block_bytes - 1) / block_bytes; }
  uint64_t end_lba(uint64_t block_bytes) const { return lba + blocks(block_bytes); }
  bool operator==(const Extent&) const = default;
};

struct FileNode {
  FileId id = 0;
  uint64_t size = 0;
  std::vector<Extent> extents;
  Lifetime lifetime = Lifetime::kNotSet;
  IoClass io_class = IoClass::kOther;
  uint64_t mtime_ns = 0;
  uint32_t nlink = 0;
};

// The writer that last took a data zone, from `lba` on: what recovery gives
// a file whose writing a crash cut short (see ZonedFs). File 0: garbage
// collection, or nobody.
struct ZoneOwner {
  FileId id = 0;
  uint64_t lba = 0;
  bool operator==(const ZoneOwner&) const = default;
};

enum class RecordType : uint8_t {
  kFileCreated = 1,   // id, lifetime, io_class, mtime
  kNameLinked = 2,    // id, path: a new name for a file
  kNameUnlinked = 3,  // path: a name goes; the file goes with its last name
  kRenamed = 4,       // path -> path2: a file (replacing a file at path2), or a
                      // directory with all under it (replacing an empty one)
  kExtentAdded = 5,   // id, extent: appended (merged with a contiguous last extent)
  kSizeSet = 6,       // id, size, mtime: the file cut to `size` (never grown)
  kDirMade = 7,       // path
  kDirRemoved = 8,    // path
  kExtentMoved = 9,   // id, extent, extents: garbage collection moved one extent
  kHintsSet = 10,     // id, lifetime, io_class
  kZoneTaken = 11,    // zone, id, lba: a writer starts at `lba` of a data zone
  kCounters = 12,     // values: the file system's cumulative counters (FsCounters)
  kPolicySet = 13,    // path (the policy's name), blob: its options and state (placement.h)
};
inline constexpr uint8_t kRecordTypeLast = 13;
// A policy's stored options and state, at most.
inline constexpr uint64_t kPolicyStateBytesMax = 256 << 10;
// Counters a counters record may hold (more than today's, for later ones).
inline constexpr uint64_t kCountersMax = 128;
const char* record_type_name(RecordType type);

struct Record {
  RecordType type = RecordType::kFileCreated;
  FileId id = 0;
  std::string path;
  std::string path2;
  Lifetime lifetime = Lifetime::kNotSet;
  IoClass io_class = IoClass::kOther;
  uint64_t mtime_ns = 0;
  uint64_t size = 0;
  uint32_t zone = 0;
  uint64_t lba = 0;
  Extent extent;
  std::vector<Extent> extents;
  std::vector<uint64_t> values;
  std::string blob;

  bool operator==(const Record&) const = default;
};

// Appends `record`'s encoding to `out`: type u8, length u32, body.
void encode_record(const Record& record, std::vector<uint8_t>& out);
// Decodes the records in `bytes`, all of them or none; every count and
// string is checked against the bytes that are there and the limits above.
FsResult<std::vector<Record>> decode_records(const uint8_t* bytes, size_t size);

// Is `path` a normalized absolute path within the limits? The reason if not.
FsStatus check_path(const std::string& path);
// The parent of a normalized path ("/a/b" -> "/a", "/a" -> "/").
std::string parent_of(const std::string& path);

// What applying a record did to the space files hold: blocks that became
// part of a file, and blocks no file holds any more (a file gone, cut short,
// or moved), as extents whose length is a whole number of blocks.
struct SpaceChanges {
  std::vector<Extent> added;
  std::vector<Extent> freed;
};

class Metadata {
 public:
  Metadata();

  // Applies a record; refuses (changing nothing) one that does not fit the
  // state -- an unknown file, a name that exists, a missing parent -- which
  // during recovery means a corrupt journal. `changes`, when not null,
  // receives the space it took or gave back.
  FsStatus apply(const Record& record, uint64_t block_bytes, SpaceChanges* changes = nullptr);

  // The records that rebuild this state from nothing, in a fixed order:
  // the policy, directories (parents first), files with their extents, names, zone
  // owners. Files that have no name (alive only while open) are left out.
  std::vector<Record> snapshot() const;

  bool is_dir(const std::string& path) const { return dirs_.count(path) != 0; }
  // The file a name refers to, or nullptr.
  const FileNode* lookup(const std::string& path) const;
  const FileNode* file(FileId id) const;
  // Names and directories directly inside `dir` (their last components).
  std::vector<std::string> children(const std::string& dir) const;
  bool has_children(const std::string& dir) const;
  FileId next_id() const { return next_id_; }
  // File ids below `next` are never given again (a header's next id).
  void reserve_ids(FileId next) { next_id_ = std::max(next_id_, next); }

  const std::map<std::string, FileId>& names() const { return names_; }
  const std::set<std::string>& dirs() const { return dirs_; }
  const std::map<FileId, FileNode>& files() const { return files_; }
  const std::map<uint32_t, ZoneOwner>& owners() const { return owners_; }
  // The counters last recorded (kCounters), in FsCounters' order.
  const std::vector<uint64_t>& counters() const { return counters_; }
  // The placement policy's name and stored state (kPolicySet); empty before
  // the first such record (a file system made without one: the
  // superblock's policy with its defaults).
  const std::string& policy_name() const { return policy_name_; }
  const std::string& policy_state() const { return policy_state_; }

  // A file open in memory stays alive without names (RocksDB may read a
  // file it has deleted until it closes it) until its last hold goes.
  void hold(FileId id);
  // Ends a hold; a file with no names and no holds goes, its extents into
  // `changes->freed`.
  void release(FileId id, uint64_t block_bytes, SpaceChanges* changes);

 private:
  FsStatus apply_extent_moved(const Record& r, uint64_t block_bytes, SpaceChanges& out);
  FsStatus apply_size_set(const Record& r, uint64_t block_bytes, SpaceChanges& out);
  FsStatus apply_renamed(const Record& r, uint64_t block_bytes, SpaceChanges& out);
  FsStatus apply_dir_renamed(const Record& r);
  // A file with no names and no holds is removed.
  void drop_if_dead(FileId id, SpaceChanges& changes, uint64_t block_bytes);

  std::map<std::string, FileId> names_;
  std::set<std::string> dirs_;
  std::map<FileId, FileNode> files_;
  std::map<FileId, uint32_t> holds_;
  std::map<uint32_t, ZoneOwner> owners_;
  std::vector<uint64_t> counters_;
  std::string policy_name_;
  std::string policy_state_;
  FileId next_id_ = 1;
};

}  // namespace zonelab::fs
