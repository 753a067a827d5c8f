// Records and what they do to the metadata; see metadata.h. The record
// layouts are one table (kLayouts) that the encoder, the decoder and
// docs/fs-format.md follow.
#include "fs/metadata.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <initializer_list>

#include "store/bytes.h"

namespace zonelab::fs {
namespace {

constexpr uint64_t kRecordHeaderBytes = 5;  // type u8, length u32
constexpr uint64_t kExtentBytes = 20;       // zone u32, lba u64, length u64

// The fields a record body is made of, in the order they are stored.
enum class Field : uint8_t {
  kId,       // u64
  kHints,    // lifetime u8, io_class u8
  kMtime,    // u64, nanoseconds of device time
  kSize,     // u64
  kPath,     // u16 length, bytes
  kPath2,    // u16 length, bytes
  kExtent,   // zone u32, lba u64, length u64
  kExtents,  // count u32, then that many extents
  kZone,     // u32
  kLba,      // u64
  kValues,   // count u32, then that many u64
  kBlob,     // u32 length, bytes (at most kPolicyStateBytesMax)
};

struct Layout {
  const char* name;
  std::initializer_list<Field> fields;
};

// Indexed by RecordType; entry 0 is no record.
const std::array<Layout, kRecordTypeLast + 1> kLayouts = {{
    {"", {}},
    {"file-created", {Field::kId, Field::kHints, Field::kMtime}},
    {"name-linked", {Field::kId, Field::kPath}},
    {"name-unlinked", {Field::kPath}},
    {"renamed", {Field::kPath, Field::kPath2}},
    {"extent-added", {Field::kId, Field::kExtent}},
    {"size-set", {Field::kId, Field::kSize, Field::kMtime}},
    {"dir-made", {Field::kPath}},
    {"dir-removed", {Field::kPath}},
    {"extent-moved", {Field::kId, Field::kExtent, Field::kExtents}},
    {"hints-set", {Field::kId, Field::kHints}},
    {"zone-taken", {Field::kZone, Field::kId, Field::kLba}},
    {"counters", {Field::kValues}},
    {"policy-set", {Field::kPath, Field::kBlob}},
}};

void put_string(ByteWriter& w, const std::string& text) {
  ZL_ASSERT(text.size() <= kPathBytesMax);
  w.u16(static_cast<uint16_t>(text.size()));
  w.bytes(text.data(), text.size());
}

void put_extent(ByteWriter& w, const Extent& e) {
  w.u32(e.zone);
  w.u64(e.lba);
  w.u64(e.length);
}

void put_field(ByteWriter& w, Field field, const Record& r) {
  switch (field) {
    case Field::kId:
      w.u64(r.id);
      return;
    case Field::kHints:
      w.u8(static_cast<uint8_t>(r.lifetime));
      w.u8(static_cast<uint8_t>(r.io_class));
      return;
    case Field::kMtime:
      w.u64(r.mtime_ns);
      return;
    case Field::kSize:
      w.u64(r.size);
      return;
    case Field::kPath:
      put_string(w, r.path);
      return;
    case Field::kPath2:
      put_string(w, r.path2);
      return;
    case Field::kExtent:
      put_extent(w, r.extent);
      return;
    case Field::kExtents:
      ZL_ASSERT(r.extents.size() <= kExtentsPerFileMax);
      w.u32(static_cast<uint32_t>(r.extents.size()));
      for (const Extent& e : r.extents) put_extent(w, e);
      return;
    case Field::kZone:
      w.u32(r.zone);
      return;
    case Field::kLba:
      w.u64(r.lba);
      return;
    case Field::kValues:
      ZL_ASSERT(r.values.size() <= kCountersMax);
      w.u32(static_cast<uint32_t>(r.values.size()));
      for (uint64_t v : r.values) w.u64(v);
      return;
    case Field::kBlob:
      ZL_ASSERT(r.blob.size() <= kPolicyStateBytesMax);
      w.u32(static_cast<uint32_t>(r.blob.size()));
      w.bytes(reinterpret_cast<const uint8_t*>(r.blob.data()), r.blob.size());
      return;
  }
}

bool get_string(ByteReader& reader, std::string& text) {
  if (!reader.has(2)) return false;
  uint16_t length = reader.u16();
  if (length > kPathBytesMax || !reader.has(length)) return false;
  const uint8_t* bytes = reader.take(length);
  text.assign(reinterpret_cast<const char*>(bytes), length);
  return true;
}

bool get_extent(ByteReader& reader, Extent& e) {
  if (!reader.has(kExtentBytes)) return false;
  e.zone = reader.u32();
  e.lba = reader.u64();
  e.length = reader.u64();
  return true;
}

// One field; false when the bytes are not there or out of range.
bool get_field(ByteReader& reader, Field field, Record& r) {
  switch (field) {
    case Field::kId:
    case Field::kMtime:
    case Field::kSize:
    case Field::kLba: {
      if (!reader.has(8)) return false;
      uint64_t value = reader.u64();
      (field == Field::kId      ? r.id
       : field == Field::kMtime ? r.mtime_ns
       : field == Field::kSize  ? r.size
                                : r.lba) = value;
      return true;
    }
    case Field::kHints: {
      if (!reader.has(2)) return false;
      uint8_t lifetime = reader.u8();
      uint8_t io_class = reader.u8();
      if (lifetime > kLifetimeLast || io_class > kIoClassLast) return false;
      r.lifetime = static_cast<Lifetime>(lifetime);
      r.io_class = static_cast<IoClass>(io_class);
      return true;
    }
    case Field::kPath:
      return get_string(reader, r.path);
    case Field::kPath2:
      return get_string(reader, r.path2);
    case Field::kExtent:
      return get_extent(reader, r.extent);
    case Field::kExtents: {
      if (!reader.has(4)) return false;
      uint32_t count = reader.u32();
      if (count > kExtentsPerFileMax || !reader.has(uint64_t{count} * kExtentBytes)) return false;
      r.extents.resize(count);
      for (Extent& e : r.extents) get_extent(reader, e);
      return true;
    }
    case Field::kZone:
      if (!reader.has(4)) return false;
      r.zone = reader.u32();
      return true;
    case Field::kValues: {
      if (!reader.has(4)) return false;
      uint32_t count = reader.u32();
      if (count > kCountersMax || !reader.has(uint64_t{count} * 8)) return false;
      r.values.resize(count);
      for (uint64_t& v : r.values) v = reader.u64();
      return true;
    }
    case Field::kBlob: {
      if (!reader.has(4)) return false;
      uint32_t length = reader.u32();
      if (length > kPolicyStateBytesMax || !reader.has(length)) return false;
      const uint8_t* bytes = reader.take(length);
      r.blob.assign(reinterpret_cast<const char*>(bytes), length);
      return true;
    }
  }
  return false;
}

}  // namespace

const char* lifetime_name(Lifetime lifetime) {
  static constexpr const char* kNames[] = {"not-set", "none", "short", "medium", "long", "extreme"};
  return kNames[static_cast<size_t>(lifetime)];
}

const char* io_class_name(IoClass io_class) {
  static constexpr const char* kNames[] = {"other", "wal", "manifest", "flush", "compaction"};
  return kNames[static_cast<size_t>(io_class)];
}

const char* record_type_name(RecordType type) {
  auto index = static_cast<size_t>(type);
  return index >= 1 && index <= kRecordTypeLast ? kLayouts[index].name : "unknown";
}

void encode_record(const Record& r, std::vector<uint8_t>& out) {
  auto index = static_cast<size_t>(r.type);
  ZL_ASSERT(index >= 1 && index <= kRecordTypeLast);
  const size_t header_at = out.size();
  ByteWriter w(out);
  w.u8(static_cast<uint8_t>(r.type));
  w.u32(0);  // the body's length, filled in below
  for (Field field : kLayouts[index].fields) put_field(w, field, r);
  uint64_t body = out.size() - header_at - kRecordHeaderBytes;
  ZL_ASSERT(body <= kRecordBytesMax);
  store_u32(out.data() + header_at + 1, static_cast<uint32_t>(body));
}

FsResult<std::vector<Record>> decode_records(const uint8_t* bytes, size_t size) {
  std::vector<Record> records;
  ByteReader reader(bytes, size);
  while (reader.remaining() > 0) {
    if (!reader.has(kRecordHeaderBytes)) {
      return FsStatus(Code::kCorruption, "journal: a record header cut short");
    }
    uint8_t type = reader.u8();
    uint32_t length = reader.u32();
    if (type == 0 || type > kRecordTypeLast) {
      return FsStatus(Code::kCorruption, fmt::format("journal: a record of type {}", type));
    }
    const char* name = kLayouts[type].name;
    if (length > kRecordBytesMax || !reader.has(length)) {
      return FsStatus(Code::kCorruption,
                      fmt::format("journal: a {} record of {} bytes past the end", name, length));
    }
    ByteReader body(reader.take(length), length);
    Record record;
    record.type = static_cast<RecordType>(type);
    bool good = true;
    for (Field field : kLayouts[type].fields) good = good && get_field(body, field, record);
    if (!good || body.remaining() != 0) {
      return FsStatus(
          Code::kCorruption,
          fmt::format("journal: a {} record that does not decode ({} bytes)", name, length));
    }
    records.push_back(std::move(record));
  }
  return records;
}

FsStatus check_path(const std::string& path) {
  if (path.empty() || path[0] != '/') {
    return FsStatus(Code::kInvalid, fmt::format("'{}' is not an absolute path", path));
  }
  if (path.size() > kPathBytesMax) {
    return FsStatus(Code::kInvalid, fmt::format("a path of {} bytes is longer than {}", path.size(),
                                                kPathBytesMax));
  }
  if (path == "/") return {};
  if (path.back() == '/') return FsStatus(Code::kInvalid, "a path ends with '/'");
  size_t start = 1;
  while (start <= path.size()) {
    size_t end = std::min(path.find('/', start), path.size());
    std::string_view name(path.data() + start, end - start);
    if (name.empty() || name == "." || name == "..") {
      return FsStatus(Code::kInvalid, fmt::format("'{}' is not a normalized path", path));
    }
    if (name.size() > kNameBytesMax) {
      return FsStatus(Code::kInvalid, fmt::format("a file name of {} bytes is longer than {}",
                                                  name.size(), kNameBytesMax));
    }
    if (name.find('\0') != std::string_view::npos) {
      return FsStatus(Code::kInvalid, "a file name holds a NUL byte");
    }
    start = end + 1;
  }
  return {};
}

std::string parent_of(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == 0 ? "/" : path.substr(0, slash);
}

Metadata::Metadata() { dirs_.insert("/"); }

const FileNode* Metadata::lookup(const std::string& path) const {
  auto it = names_.find(path);
  return it == names_.end() ? nullptr : &files_.at(it->second);
}

const FileNode* Metadata::file(FileId id) const {
  auto it = files_.find(id);
  return it == files_.end() ? nullptr : &it->second;
}

std::vector<std::string> Metadata::children(const std::string& dir) const {
  std::string prefix = dir == "/" ? "/" : dir + "/";
  std::vector<std::string> out;
  auto collect = [&](const std::string& path) {
    if (path.size() > prefix.size() && path.find('/', prefix.size()) == std::string::npos) {
      out.push_back(path.substr(prefix.size()));
    }
  };
  for (auto it = dirs_.lower_bound(prefix); it != dirs_.end() && it->rfind(prefix, 0) == 0; ++it) {
    collect(*it);
  }
  for (auto it = names_.lower_bound(prefix); it != names_.end() && it->first.rfind(prefix, 0) == 0;
       ++it) {
    collect(it->first);
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool Metadata::has_children(const std::string& dir) const {
  std::string prefix = dir == "/" ? "/" : dir + "/";
  auto d = dirs_.lower_bound(prefix);
  if (d != dirs_.end() && d->rfind(prefix, 0) == 0) return true;
  auto n = names_.lower_bound(prefix);
  return n != names_.end() && n->first.rfind(prefix, 0) == 0;
}

namespace {

// Appends an extent to a file, merged with its last one when it continues
// it in the same zone and the last one ends on a block boundary.
void append_extent(FileNode& file, const Extent& e, uint64_t block_bytes) {
  file.size += e.length;
  if (!file.extents.empty()) {
    Extent& last = file.extents.back();
    if (last.zone == e.zone && last.length % block_bytes == 0 &&
        last.end_lba(block_bytes) == e.lba) {
      last.length += e.length;
      return;
    }
  }
  file.extents.push_back(e);
}

// The whole blocks of an extent, as space.
Extent blocks_of(const Extent& e, uint64_t block_bytes) {
  return Extent{e.zone, e.lba, e.blocks(block_bytes) * block_bytes};
}

FsStatus no_file(const Record& r) {
  return FsStatus(Code::kCorruption, fmt::format("{}: no file {}", record_type_name(r.type), r.id));
}

}  // namespace

FsStatus Metadata::apply(const Record& r, uint64_t block_bytes, SpaceChanges* changes) {
  ZL_ASSERT(block_bytes > 0);
  SpaceChanges local;
  SpaceChanges& out = changes != nullptr ? *changes : local;
  auto exists = [&](const std::string& path) {
    return FsStatus(Code::kExists, fmt::format("{} exists", path));
  };
  auto no_dir = [&](const std::string& path) {
    return FsStatus(Code::kNotFound, fmt::format("no directory {}", path));
  };
  switch (r.type) {
    case RecordType::kFileCreated: {
      if (r.id == 0 || files_.count(r.id) != 0) {
        return FsStatus(Code::kCorruption, fmt::format("file-created: file {} exists", r.id));
      }
      FileNode node;
      node.id = r.id;
      node.lifetime = r.lifetime;
      node.io_class = r.io_class;
      node.mtime_ns = r.mtime_ns;
      files_.emplace(r.id, node);
      next_id_ = std::max(next_id_, r.id + 1);
      return {};
    }
    case RecordType::kNameLinked: {
      if (files_.count(r.id) == 0) return no_file(r);
      if (FsStatus ok = check_path(r.path); !ok) return ok;
      if (names_.count(r.path) != 0 || dirs_.count(r.path) != 0) return exists(r.path);
      if (dirs_.count(parent_of(r.path)) == 0) return no_dir(parent_of(r.path));
      names_.emplace(r.path, r.id);
      ++files_.at(r.id).nlink;
      return {};
    }
    case RecordType::kNameUnlinked: {
      auto it = names_.find(r.path);
      if (it == names_.end()) return FsStatus(Code::kNotFound, fmt::format("no file {}", r.path));
      FileId id = it->second;
      names_.erase(it);
      --files_.at(id).nlink;
      drop_if_dead(id, out, block_bytes);
      return {};
    }
    case RecordType::kRenamed:
      return apply_renamed(r, block_bytes, out);
    case RecordType::kExtentAdded: {
      auto it = files_.find(r.id);
      if (it == files_.end()) return no_file(r);
      if (r.extent.length == 0) return FsStatus(Code::kCorruption, "extent-added: an empty extent");
      if (it->second.extents.size() >= kExtentsPerFileMax) {
        return FsStatus(Code::kCorruption, "extent-added: too many extents");
      }
      append_extent(it->second, r.extent, block_bytes);
      out.added.push_back(blocks_of(r.extent, block_bytes));
      return {};
    }
    case RecordType::kSizeSet:
      return apply_size_set(r, block_bytes, out);
    case RecordType::kDirMade: {
      if (FsStatus ok = check_path(r.path); !ok) return ok;
      if (dirs_.count(r.path) != 0 || names_.count(r.path) != 0) return exists(r.path);
      if (dirs_.count(parent_of(r.path)) == 0) return no_dir(parent_of(r.path));
      dirs_.insert(r.path);
      return {};
    }
    case RecordType::kDirRemoved: {
      if (r.path == "/") return FsStatus(Code::kInvalid, "/ cannot be removed");
      if (dirs_.count(r.path) == 0) return no_dir(r.path);
      if (has_children(r.path)) {
        return FsStatus(Code::kNotEmpty, fmt::format("{} is not empty", r.path));
      }
      dirs_.erase(r.path);
      return {};
    }
    case RecordType::kExtentMoved:
      return apply_extent_moved(r, block_bytes, out);
    case RecordType::kHintsSet: {
      auto it = files_.find(r.id);
      if (it == files_.end()) return no_file(r);
      it->second.lifetime = r.lifetime;
      it->second.io_class = r.io_class;
      return {};
    }
    case RecordType::kZoneTaken: {
      if (r.id != 0 && files_.count(r.id) == 0) return no_file(r);
      owners_[r.zone] = ZoneOwner{r.id, r.lba};
      return {};
    }
    case RecordType::kCounters:
      counters_ = r.values;
      return {};
    case RecordType::kPolicySet:
      if (r.path.empty() || r.path.size() > 16) {
        return FsStatus(Code::kCorruption, "a policy record without a policy name");
      }
      policy_name_ = r.path;
      policy_state_ = r.blob;
      return {};
  }
  return FsStatus(Code::kCorruption, "a record of an unknown type");
}

FsStatus Metadata::apply_renamed(const Record& r, uint64_t block_bytes, SpaceChanges& out) {
  if (dirs_.count(r.path) != 0) return apply_dir_renamed(r);
  auto from = names_.find(r.path);
  if (from == names_.end()) return FsStatus(Code::kNotFound, fmt::format("no file {}", r.path));
  if (FsStatus ok = check_path(r.path2); !ok) return ok;
  if (dirs_.count(r.path2) != 0) {
    return FsStatus(Code::kIsDirectory, fmt::format("{} is a directory", r.path2));
  }
  if (dirs_.count(parent_of(r.path2)) == 0) {
    return FsStatus(Code::kNotFound, fmt::format("no directory {}", parent_of(r.path2)));
  }
  FileId id = from->second;
  if (r.path == r.path2) return {};
  auto to = names_.find(r.path2);
  if (to != names_.end() && to->second == id) {
    // Two names of one file: as rename(2), nothing happens.
    return {};
  }
  names_.erase(from);
  if (to != names_.end()) {
    FileId replaced = to->second;
    to->second = id;
    --files_.at(replaced).nlink;
    drop_if_dead(replaced, out, block_bytes);
  } else {
    names_.emplace(r.path2, id);
  }
  return {};
}

namespace {

// Does `path` lie below directory `dir` (not at it)?
bool is_below(const std::string& path, const std::string& dir) {
  return path.size() > dir.size() && path[dir.size()] == '/' &&
         path.compare(0, dir.size(), dir) == 0;
}

}  // namespace

// A directory takes its new name with everything below it in one record,
// so a crash leaves the whole tree at one name or the other (what RocksDB's
// checkpoint counts on when it renames "dir.tmp" to "dir"). As rename(2):
// an empty directory at the new name is replaced; a file there, a directory
// that holds anything, or a new name inside the directory itself is refused.
FsStatus Metadata::apply_dir_renamed(const Record& r) {
  const std::string& from = r.path;
  const std::string& to = r.path2;
  if (from == "/") return FsStatus(Code::kInvalid, "/ cannot be renamed");
  if (FsStatus ok = check_path(to); !ok) return ok;
  if (to == from) return {};
  if (is_below(to, from)) {
    return FsStatus(Code::kInvalid, fmt::format("{} cannot move into itself ({})", from, to));
  }
  if (names_.count(to) != 0) {
    return FsStatus(Code::kNotDirectory, fmt::format("{} is a file", to));
  }
  const std::string parent = parent_of(to);
  if (dirs_.count(parent) == 0) {
    if (names_.count(parent) != 0) {
      return FsStatus(Code::kNotDirectory, fmt::format("{} is a file", parent));
    }
    return FsStatus(Code::kNotFound, fmt::format("no directory {}", parent));
  }
  const bool replaces = dirs_.count(to) != 0;
  if (replaces && has_children(to)) {
    return FsStatus(Code::kNotEmpty, fmt::format("{} is not empty", to));
  }
  // Paths below keep their tails: the longest one must still fit.
  const std::string prefix = from + "/";
  uint64_t longest = from.size();
  for (auto it = dirs_.lower_bound(prefix); it != dirs_.end() && it->rfind(prefix, 0) == 0; ++it) {
    longest = std::max<uint64_t>(longest, it->size());
  }
  for (auto it = names_.lower_bound(prefix); it != names_.end() && it->first.rfind(prefix, 0) == 0;
       ++it) {
    longest = std::max<uint64_t>(longest, it->first.size());
  }
  if (longest - from.size() + to.size() > kPathBytesMax) {
    return FsStatus(Code::kInvalid,
                    fmt::format("{} as {} would make a path of {} bytes, longer than {}", from, to,
                                longest - from.size() + to.size(), kPathBytesMax));
  }
  if (replaces) dirs_.erase(to);
  // Taken out first, put back under the new name: no entry lies below `to`
  // (it was missing or empty), so none collides.
  std::vector<decltype(dirs_)::node_type> dirs;
  dirs.push_back(dirs_.extract(from));
  for (auto it = dirs_.lower_bound(prefix); it != dirs_.end() && it->rfind(prefix, 0) == 0;) {
    dirs.push_back(dirs_.extract(it++));
  }
  std::vector<decltype(names_)::node_type> names;
  for (auto it = names_.lower_bound(prefix);
       it != names_.end() && it->first.rfind(prefix, 0) == 0;) {
    names.push_back(names_.extract(it++));
  }
  for (auto& node : dirs) {
    node.value() = to + node.value().substr(from.size());
    const bool inserted = dirs_.insert(std::move(node)).inserted;
    ZL_ASSERT(inserted);
  }
  for (auto& node : names) {
    node.key() = to + node.key().substr(from.size());
    const bool inserted = names_.insert(std::move(node)).inserted;
    ZL_ASSERT(inserted);
  }
  return {};
}

FsStatus Metadata::apply_size_set(const Record& r, uint64_t block_bytes, SpaceChanges& out) {
  auto it = files_.find(r.id);
  if (it == files_.end()) return no_file(r);
  FileNode& node = it->second;
  if (r.size > node.size) {
    return FsStatus(Code::kInvalid,
                    fmt::format("size-set: {} is past the end ({})", r.size, node.size));
  }
  uint64_t kept = 0;
  std::vector<Extent> extents;
  for (const Extent& e : node.extents) {
    uint64_t keep = std::min(e.length, r.size - kept);
    uint64_t kept_blocks = (keep + block_bytes - 1) / block_bytes;
    if (kept_blocks < e.blocks(block_bytes)) {
      out.freed.push_back(
          Extent{e.zone, e.lba + kept_blocks, (e.blocks(block_bytes) - kept_blocks) * block_bytes});
    }
    if (keep > 0) extents.push_back(Extent{e.zone, e.lba, keep});
    kept += keep;
  }
  node.extents = std::move(extents);
  node.size = r.size;
  node.mtime_ns = r.mtime_ns;
  return {};
}

FsStatus Metadata::apply_extent_moved(const Record& r, uint64_t block_bytes, SpaceChanges& out) {
  auto it = files_.find(r.id);
  if (it == files_.end()) return no_file(r);
  FileNode& node = it->second;
  auto at = std::find(node.extents.begin(), node.extents.end(), r.extent);
  if (at == node.extents.end()) {
    return FsStatus(Code::kCorruption,
                    fmt::format("extent-moved: file {} has no extent at LBA {} of {} bytes", r.id,
                                r.extent.lba, r.extent.length));
  }
  uint64_t total = 0;
  for (const Extent& e : r.extents) {
    if (e.length == 0) return FsStatus(Code::kCorruption, "extent-moved: an empty extent");
    total += e.length;
  }
  // Every piece but the last holds whole blocks, so the file's bytes stay
  // where they were.
  for (size_t i = 0; i + 1 < r.extents.size(); ++i) {
    if (r.extents[i].length % block_bytes != 0) {
      return FsStatus(Code::kCorruption, "extent-moved: a piece that is not whole blocks");
    }
  }
  if (total != r.extent.length || r.extents.empty() ||
      node.extents.size() - 1 + r.extents.size() > kExtentsPerFileMax) {
    return FsStatus(Code::kCorruption,
                    fmt::format("extent-moved: {} bytes in {} pieces for an extent of {}", total,
                                r.extents.size(), r.extent.length));
  }
  out.freed.push_back(blocks_of(*at, block_bytes));
  for (const Extent& e : r.extents) out.added.push_back(blocks_of(e, block_bytes));
  // Rebuilt by appending, so that extents the move made contiguous merge
  // as they would when a snapshot is replayed.
  const size_t moved = static_cast<size_t>(at - node.extents.begin());
  std::vector<Extent> old = std::move(node.extents);
  node.extents.clear();
  node.size = 0;
  for (size_t i = 0; i < old.size(); ++i) {
    if (i == moved) {
      for (const Extent& piece : r.extents) append_extent(node, piece, block_bytes);
    } else {
      append_extent(node, old[i], block_bytes);
    }
  }
  return {};
}

void Metadata::hold(FileId id) {
  ZL_ASSERT(files_.count(id) != 0);
  ++holds_[id];
}

void Metadata::release(FileId id, uint64_t block_bytes, SpaceChanges* changes) {
  auto it = holds_.find(id);
  ZL_ASSERT(it != holds_.end() && it->second > 0);
  if (--it->second == 0) holds_.erase(it);
  SpaceChanges local;
  drop_if_dead(id, changes != nullptr ? *changes : local, block_bytes);
}

void Metadata::drop_if_dead(FileId id, SpaceChanges& changes, uint64_t block_bytes) {
  auto it = files_.find(id);
  if (it == files_.end() || it->second.nlink != 0 || holds_.count(id) != 0) return;
  for (const Extent& e : it->second.extents) changes.freed.push_back(blocks_of(e, block_bytes));
  files_.erase(it);
}

std::vector<Record> Metadata::snapshot() const {
  std::vector<Record> records;
  if (!policy_name_.empty()) {
    Record policy;
    policy.type = RecordType::kPolicySet;
    policy.path = policy_name_;
    policy.blob = policy_state_;
    records.push_back(std::move(policy));
  }
  for (const std::string& dir : dirs_) {  // sorted: a parent before its children
    if (dir == "/") continue;
    Record r;
    r.type = RecordType::kDirMade;
    r.path = dir;
    records.push_back(std::move(r));
  }
  for (const auto& [id, node] : files_) {
    if (node.nlink == 0) continue;  // alive only for an open handle: gone after a restart
    Record created;
    created.type = RecordType::kFileCreated;
    created.id = id;
    created.lifetime = node.lifetime;
    created.io_class = node.io_class;
    created.mtime_ns = node.mtime_ns;
    records.push_back(created);
    for (const Extent& e : node.extents) {
      Record added;
      added.type = RecordType::kExtentAdded;
      added.id = id;
      added.extent = e;
      records.push_back(added);
    }
  }
  for (const auto& [path, id] : names_) {
    Record linked;
    linked.type = RecordType::kNameLinked;
    linked.id = id;
    linked.path = path;
    records.push_back(std::move(linked));
  }
  if (!counters_.empty()) {
    Record counters;
    counters.type = RecordType::kCounters;
    counters.values = counters_;
    records.push_back(std::move(counters));
  }
  for (const auto& [zone, owner] : owners_) {
    Record taken;
    taken.type = RecordType::kZoneTaken;
    taken.zone = zone;
    const FileNode* node = file(owner.id);
    taken.id = node != nullptr && node->nlink != 0 ? owner.id : 0;
    taken.lba = owner.lba;
    records.push_back(std::move(taken));
  }
  return records;
}

}  // namespace zonelab::fs
