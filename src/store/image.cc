// The device image file: a checksummed header, two metadata slots written in
// turn, and a sparse data region; plus the file backing over that region.
// The byte layout is described in docs/image-format.md; this file is the
// only code that reads or writes it.
//
// Everything read from a file is bounded before it is used: lengths against
// the bytes that are really there, counts against the limits in image.h.
// Reading never writes, so a refused image is left exactly as it was.
#include "store/image.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string_view>
#include <utility>

#include "zonelab/assert.h"
#include "zonelab/device.h"

namespace zonelab {
namespace {

// ---------------------------------------------------------------------------
// Layout constants (docs/image-format.md).

constexpr uint8_t kMagic[8] = {'Z', 'O', 'N', 'E', 'L', 'A', 'B', '\0'};
constexpr uint8_t kSlotMagic[8] = {'Z', 'L', 'S', 'L', 'O', 'T', '\0', '\0'};
constexpr uint64_t kHeaderFieldsBytes = 40;  // the fields the header checksum covers
constexpr uint64_t kAlignBytes = 4096;
constexpr uint64_t kSlotHeaderBytes = 32;
constexpr uint64_t kSlotChecksummedHeaderBytes = 28;  // slot header bytes before its CRC
constexpr uint64_t kSlotBytesMin = 4096;
constexpr uint64_t kSlotHeadroomBytes = 1024;
constexpr uint64_t kSectionHeaderBytes = 12;
constexpr int kSectionsMax = 256;
constexpr uint64_t kConfigBytesMax = 1 << 20;
constexpr uint64_t kZoneRecordBytes = 29;
constexpr uint64_t kLifetimeBytes = 24;
constexpr uint64_t kEncodeDataBytesMax = 64 << 20;
constexpr uint64_t kIoChunkBytes = 1 << 30;
constexpr int kEintrRetriesMax = 1000;
constexpr int kTempNameAttemptsMax = 100;

enum SectionType : uint32_t {
  kSectionConfig = 1,
  kSectionZones = 2,
  kSectionNextOpenSeq = 3,
  kSectionEraseCounts = 4,
  kSectionLifetime = 5,
  kSectionBlockMap = 6,  // optional
  kSectionFtl = 7,       // optional: present exactly in block-interface images
};
constexpr uint32_t kSectionTypeLast = kSectionFtl;
constexpr uint32_t kSectionsOptional = (1u << kSectionBlockMap) | (1u << kSectionFtl);
constexpr uint64_t kFtlBlockRecordBytes = 17;
constexpr uint8_t kFtlBlockStateLast = 2;
constexpr uint64_t kSlotRecordBytes = 12;

const char* section_name(uint32_t type) {
  switch (type) {
    case kSectionConfig:
      return "config";
    case kSectionZones:
      return "zones";
    case kSectionNextOpenSeq:
      return "next-open-seq";
    case kSectionEraseCounts:
      return "erase-counts";
    case kSectionLifetime:
      return "lifetime";
    case kSectionBlockMap:
      return "block-map";
    case kSectionFtl:
      return "ftl";
  }
  return "unknown";
}

// ---------------------------------------------------------------------------
// CRC-32C: reflected Castagnoli polynomial, one table lookup per byte.

constexpr uint32_t kCrc32cPolynomial = 0x82F63B78;

constexpr std::array<uint32_t, 256> make_crc_table() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t crc = i;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1) != 0 ? kCrc32cPolynomial : 0);
    table[i] = crc;
  }
  return table;
}

constexpr std::array<uint32_t, 256> kCrcTable = make_crc_table();

// ---------------------------------------------------------------------------
// Little-endian encoding, byte by byte so the layout never depends on the host.

void store_u32(uint8_t* p, uint32_t value) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(value >> (8 * i));
}

void store_u64(uint8_t* p, uint64_t value) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(value >> (8 * i));
}

uint32_t load_u32(const uint8_t* p) {
  uint32_t value = 0;
  for (int i = 3; i >= 0; --i) value = (value << 8) | p[i];
  return value;
}

uint64_t load_u64(const uint8_t* p) {
  uint64_t value = 0;
  for (int i = 7; i >= 0; --i) value = (value << 8) | p[i];
  return value;
}

class ByteWriter {
 public:
  explicit ByteWriter(std::vector<uint8_t>& out) : out_(out) {}
  void u8(uint8_t value) { out_.push_back(value); }
  void u32(uint32_t value) {
    uint8_t bytes[4];
    store_u32(bytes, value);
    out_.insert(out_.end(), bytes, bytes + 4);
  }
  void u64(uint64_t value) {
    uint8_t bytes[8];
    store_u64(bytes, value);
    out_.insert(out_.end(), bytes, bytes + 8);
  }
  void bytes(const void* data, size_t size) {
    const auto* p = static_cast<const uint8_t*>(data);
    out_.insert(out_.end(), p, p + size);
  }

 private:
  std::vector<uint8_t>& out_;
};

// A cursor over bytes whose length the caller has already checked with has().
class ByteReader {
 public:
  ByteReader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  size_t remaining() const { return size_ - pos_; }
  bool has(uint64_t bytes) const { return bytes <= remaining(); }
  uint8_t u8() {
    ZL_ASSERT(has(1));
    return data_[pos_++];
  }
  uint32_t u32() {
    ZL_ASSERT(has(4));
    uint32_t value = load_u32(data_ + pos_);
    pos_ += 4;
    return value;
  }
  uint64_t u64() {
    ZL_ASSERT(has(8));
    uint64_t value = load_u64(data_ + pos_);
    pos_ += 8;
    return value;
  }
  const uint8_t* take(uint64_t bytes) {
    ZL_ASSERT(has(bytes));
    const uint8_t* p = data_ + pos_;
    pos_ += bytes;
    return p;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

uint64_t round_up(uint64_t value, uint64_t align) { return (value + align - 1) / align * align; }

// Messages end up on one line of stderr, whatever a parser put in them.
std::string one_line(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  std::replace(text.begin(), text.end(), '\r', ' ');
  return text;
}

// ---------------------------------------------------------------------------
// The header.

struct Header {
  uint64_t slot_bytes = 0;
  uint64_t data_offset_bytes = 0;
  uint64_t data_bytes = 0;
};

uint64_t slot_offset(const Header& header, int slot) {
  return Image::kHeaderBytes + static_cast<uint64_t>(slot) * header.slot_bytes;
}

std::vector<uint8_t> encode_header(const Header& header) {
  std::vector<uint8_t> out;
  ByteWriter writer(out);
  writer.bytes(kMagic, sizeof kMagic);
  writer.u32(Image::kFormatVersion);
  writer.u32(static_cast<uint32_t>(Image::kHeaderBytes));
  writer.u64(header.slot_bytes);
  writer.u64(header.data_offset_bytes);
  writer.u64(header.data_bytes);
  ZL_ASSERT(out.size() == kHeaderFieldsBytes);
  writer.u32(crc32c(out.data(), out.size()));
  out.resize(Image::kHeaderBytes, 0);
  return out;
}

// Checks the fields of a header whose checksum matched.
Result<Header> check_header(const Header& header, uint32_t header_bytes, uint64_t file_bytes) {
  if (header_bytes != Image::kHeaderBytes) {
    return Error{fmt::format("corrupt image: header size {} (expected {})", header_bytes,
                             Image::kHeaderBytes)};
  }
  if (header.slot_bytes < kSlotBytesMin || header.slot_bytes > Image::kSlotBytesMax ||
      header.slot_bytes % kAlignBytes != 0) {
    return Error{fmt::format("corrupt image: slot size {} is out of range", header.slot_bytes)};
  }
  uint64_t data_offset_expected = Image::kHeaderBytes + 2 * header.slot_bytes;
  if (header.data_offset_bytes != data_offset_expected) {
    return Error{fmt::format("corrupt image: data offset {} (expected {})",
                             header.data_offset_bytes, data_offset_expected)};
  }
  if (header.data_bytes > Image::kDataBytesMax) {
    return Error{fmt::format("corrupt image: data size {} is out of range", header.data_bytes)};
  }
  uint64_t file_bytes_expected = header.data_offset_bytes + header.data_bytes;
  if (file_bytes < file_bytes_expected) {
    return Error{
        fmt::format("truncated image ({} bytes, expected {})", file_bytes, file_bytes_expected)};
  }
  return header;
}

// `data` holds the first `size` bytes of a file of `file_bytes` bytes.
Result<Header> decode_header(const uint8_t* data, size_t size, uint64_t file_bytes) {
  size_t magic_bytes = std::min(size, sizeof kMagic);
  if (magic_bytes > 0 && std::memcmp(data, kMagic, magic_bytes) != 0) {
    return Error{"not a zonelab image (bad magic)"};
  }
  if (file_bytes < Image::kHeaderBytes || size < kHeaderFieldsBytes + 4) {
    return Error{fmt::format("truncated image ({} bytes, header needs {})", file_bytes,
                             Image::kHeaderBytes)};
  }
  ByteReader reader(data + sizeof kMagic, kHeaderFieldsBytes + 4 - sizeof kMagic);
  uint32_t version = reader.u32();
  // The version is checked before the checksum: a later version may lay out
  // (and checksum) its header differently.
  if (version != Image::kFormatVersion) {
    return Error{fmt::format("unsupported image format version {} (this zonelab reads version {})",
                             version, Image::kFormatVersion)};
  }
  uint32_t header_bytes = reader.u32();
  Header header;
  header.slot_bytes = reader.u64();
  header.data_offset_bytes = reader.u64();
  header.data_bytes = reader.u64();
  uint32_t crc = reader.u32();
  if (crc != crc32c(data, kHeaderFieldsBytes)) {
    return Error{"corrupt image: header checksum mismatch"};
  }
  return check_header(header, header_bytes, file_bytes);
}

// ---------------------------------------------------------------------------
// The payload: sections of (type u32, length u64, bytes).

void put_section(ByteWriter& writer, uint32_t type, const std::vector<uint8_t>& body) {
  writer.u32(type);
  writer.u64(body.size());
  writer.bytes(body.data(), body.size());
}

std::vector<uint8_t> encode_zones(const std::vector<ImageZone>& zones) {
  std::vector<uint8_t> body;
  body.reserve(4 + zones.size() * kZoneRecordBytes);
  ByteWriter writer(body);
  writer.u32(static_cast<uint32_t>(zones.size()));
  for (const ImageZone& zone : zones) {
    writer.u8(zone.state);
    writer.u64(zone.wp);
    writer.u64(zone.data_end);
    writer.u32(zone.pages_programmed);
    writer.u64(zone.open_seq);
  }
  return body;
}

void put_u32s(ByteWriter& writer, const std::vector<uint32_t>& values) {
  writer.u32(static_cast<uint32_t>(values.size()));
  for (uint32_t value : values) writer.u32(value);
}

std::vector<uint8_t> encode_ftl(const ImageFtl& ftl) {
  std::vector<uint8_t> body;
  body.reserve(4 + ftl.l2p.size() * 4 + 4 + ftl.blocks.size() * kFtlBlockRecordBytes);
  ByteWriter writer(body);
  put_u32s(writer, ftl.l2p);
  writer.u32(static_cast<uint32_t>(ftl.blocks.size()));
  for (const ImageFtlBlock& block : ftl.blocks) {
    writer.u8(block.state);
    writer.u32(block.next_page);
    writer.u32(block.valid_lbas);
    writer.u64(block.last_write_ns);
  }
  writer.u32(static_cast<uint32_t>(ftl.planes.size()));
  for (const ImageFtlPlane& plane : ftl.planes) {
    put_u32s(writer, plane.free);
    put_u32s(writer, plane.open);
  }
  writer.u32(static_cast<uint32_t>(ftl.buffers.size()));
  for (const auto& buffer : ftl.buffers) put_u32s(writer, buffer);
  put_u32s(writer, ftl.cursors);
  writer.u64(ftl.gc_runs);
  writer.u64(ftl.gc_moved_lbas);
  writer.u64(ftl.trimmed_lbas);
  writer.u64(ftl.skipped_planes);
  writer.u64(ftl.clock_ns);
  for (const auto* times : {&ftl.plane_free_at_ns, &ftl.channel_free_at_ns}) {
    writer.u32(static_cast<uint32_t>(times->size()));
    for (uint64_t t : *times) writer.u64(t);
  }
  return body;
}

std::vector<uint8_t> encode_payload(const ImageState& state) {
  std::vector<uint8_t> payload;
  ByteWriter writer(payload);
  std::string config_text = config_to_toml(state.config);
  put_section(writer, kSectionConfig, std::vector<uint8_t>(config_text.begin(), config_text.end()));
  put_section(writer, kSectionZones, encode_zones(state.zones));

  std::vector<uint8_t> body;
  ByteWriter body_writer(body);
  body_writer.u64(state.next_open_seq);
  put_section(writer, kSectionNextOpenSeq, body);

  body.clear();
  body_writer.u32(static_cast<uint32_t>(state.erase_counts.size()));
  for (uint32_t count : state.erase_counts) body_writer.u32(count);
  put_section(writer, kSectionEraseCounts, body);

  body.clear();
  body_writer.u64(state.lifetime_host_write_bytes);
  body_writer.u64(state.lifetime_host_read_bytes);
  body_writer.u64(state.lifetime_commands);
  put_section(writer, kSectionLifetime, body);

  if (!state.zone_slots.empty() || !state.slots.empty()) {
    body.clear();
    body_writer.u32(static_cast<uint32_t>(state.zone_slots.size()));
    for (uint32_t slot : state.zone_slots) body_writer.u32(slot);
    body_writer.u32(static_cast<uint32_t>(state.slots.size()));
    for (const ImageSlot& slot : state.slots) {
      body_writer.u32(slot.stale_pages);
      body_writer.u64(slot.released_seq);
    }
    body_writer.u64(state.next_released_seq);
    put_section(writer, kSectionBlockMap, body);
  }
  if (state.ftl) put_section(writer, kSectionFtl, encode_ftl(*state.ftl));
  return payload;
}

Outcome decode_config(const uint8_t* body, uint64_t length, Config& config) {
  if (length > kConfigBytesMax) {
    return Error{
        fmt::format("config section of {} bytes is larger than {}", length, kConfigBytesMax)};
  }
  // Onto an empty Config: the stored text names every key, and a key this
  // build does not know is an error rather than silently dropped.
  Config parsed{};
  std::string_view text(reinterpret_cast<const char*>(body), length);
  Outcome outcome = apply_toml(parsed, text, "config section");
  if (!outcome) return outcome;
  // A key missing from the text keeps Config{}'s zero, which may be out of
  // range; such a state could be loaded but never saved again. Accept only
  // a configuration that prints and parses back unchanged.
  std::string printed = config_to_toml(parsed);
  Config reparsed{};
  outcome = apply_toml(reparsed, printed, "stored configuration");
  if (!outcome || config_to_toml(reparsed) != printed) {
    return Error{"config section is incomplete: " +
                 (outcome ? std::string("it does not read back unchanged") : outcome.error())};
  }
  config = std::move(parsed);
  return {};
}

Outcome decode_zones(const uint8_t* body, uint64_t length, std::vector<ImageZone>& zones) {
  if (length < 4) return Error{"zones section is shorter than its count"};
  uint32_t count = load_u32(body);
  if (count > Image::kZoneCountMax) {
    return Error{fmt::format("zones section: {} zones (limit {})", count, Image::kZoneCountMax)};
  }
  uint64_t length_expected = 4 + count * kZoneRecordBytes;
  if (length != length_expected) {
    return Error{fmt::format("zones section: {} bytes for {} zones (expected {})", length, count,
                             length_expected)};
  }
  ByteReader reader(body + 4, length - 4);
  zones.assign(count, ImageZone{});
  for (uint32_t i = 0; i < count; ++i) {
    ImageZone& zone = zones[i];
    zone.state = reader.u8();
    zone.wp = reader.u64();
    zone.data_end = reader.u64();
    zone.pages_programmed = reader.u32();
    zone.open_seq = reader.u64();
    if (zone.state >= kZoneStateCount) {
      return Error{fmt::format("zone {}: state {} is not a zone state", i, zone.state)};
    }
    if (zone.data_end > zone.wp) {
      return Error{fmt::format("zone {}: data end {} is beyond the write pointer {}", i,
                               zone.data_end, zone.wp)};
    }
  }
  return {};
}

Outcome decode_erase_counts(const uint8_t* body, uint64_t length, std::vector<uint32_t>& counts) {
  if (length < 4) return Error{"erase-counts section is shorter than its count"};
  uint32_t count = load_u32(body);
  if (count > Image::kEraseCountsMax) {
    return Error{
        fmt::format("erase-counts section: {} blocks (limit {})", count, Image::kEraseCountsMax)};
  }
  uint64_t length_expected = 4 + uint64_t{count} * 4;
  if (length != length_expected) {
    return Error{fmt::format("erase-counts section: {} bytes for {} blocks (expected {})", length,
                             count, length_expected)};
  }
  counts.resize(count);
  for (uint32_t i = 0; i < count; ++i) counts[i] = load_u32(body + 4 + uint64_t{i} * 4);
  return {};
}

Outcome decode_block_map(const uint8_t* body, uint64_t length, ImageState& state) {
  ByteReader reader(body, length);
  if (!reader.has(4)) return Error{"block-map section is shorter than its zone count"};
  uint32_t zones = reader.u32();
  if (zones > Image::kZoneCountMax || !reader.has(uint64_t{zones} * 4 + 4)) {
    return Error{fmt::format("block-map section: {} zones do not fit in {} bytes", zones, length)};
  }
  state.zone_slots.resize(zones);
  for (uint32_t& slot : state.zone_slots) slot = reader.u32();
  uint32_t slots = reader.u32();
  uint64_t rest = uint64_t{slots} * kSlotRecordBytes + 8;
  if (slots > Image::kZoneCountMax || reader.remaining() != rest) {
    return Error{fmt::format("block-map section: {} bytes for {} zones and {} physical zones",
                             length, zones, slots)};
  }
  state.slots.resize(slots);
  for (ImageSlot& slot : state.slots) {
    slot.stale_pages = reader.u32();
    slot.released_seq = reader.u64();
  }
  state.next_released_seq = reader.u64();
  return {};
}

// A count followed by that many u32 values; `what` names the list.
Outcome read_u32s(ByteReader& reader, const char* what, uint64_t limit,
                  std::vector<uint32_t>& values) {
  if (!reader.has(4)) return Error{fmt::format("ftl section: {} cut short", what)};
  uint32_t count = reader.u32();
  if (count > limit || !reader.has(uint64_t{count} * 4)) {
    return Error{fmt::format("ftl section: {} {} do not fit (limit {}, {} bytes left)", count, what,
                             limit, reader.remaining())};
  }
  values.resize(count);
  for (uint32_t& value : values) value = reader.u32();
  return {};
}

// The section's shape only; conv/ftl.cc checks the contents against the
// configuration's geometry when a device imports it.
Outcome decode_ftl(const uint8_t* body, uint64_t length, ImageState& state) {
  ByteReader reader(body, length);
  ImageFtl ftl;
  Outcome read = read_u32s(reader, "logical blocks", Image::kFtlLbasMax, ftl.l2p);
  if (!read) return read;
  if (!reader.has(4)) return Error{"ftl section: block count cut short"};
  uint32_t blocks = reader.u32();
  if (blocks > Image::kEraseCountsMax || !reader.has(uint64_t{blocks} * kFtlBlockRecordBytes)) {
    return Error{fmt::format("ftl section: {} blocks do not fit in {} bytes", blocks, length)};
  }
  ftl.blocks.resize(blocks);
  for (uint32_t b = 0; b < blocks; ++b) {
    ImageFtlBlock& block = ftl.blocks[b];
    block.state = reader.u8();
    block.next_page = reader.u32();
    block.valid_lbas = reader.u32();
    block.last_write_ns = reader.u64();
    if (block.state > kFtlBlockStateLast) {
      return Error{fmt::format("ftl section: block {} has state {}", b, block.state)};
    }
  }
  if (!reader.has(4)) return Error{"ftl section: plane count cut short"};
  uint32_t planes = reader.u32();
  // Each plane takes at least its two counts.
  if (planes > blocks || !reader.has(uint64_t{planes} * 8)) {
    return Error{fmt::format("ftl section: {} planes for {} blocks", planes, blocks)};
  }
  ftl.planes.resize(planes);
  for (ImageFtlPlane& plane : ftl.planes) {
    if (!(read = read_u32s(reader, "free blocks", blocks, plane.free))) return read;
    if (!(read = read_u32s(reader, "open blocks", blocks, plane.open))) return read;
  }
  if (!reader.has(4)) return Error{"ftl section: buffer count cut short"};
  uint32_t buffers = reader.u32();
  if (!reader.has(uint64_t{buffers} * 4)) {
    return Error{fmt::format("ftl section: {} buffers do not fit", buffers)};
  }
  ftl.buffers.resize(buffers);
  for (auto& buffer : ftl.buffers) {
    if (!(read = read_u32s(reader, "buffered LBAs", ftl.l2p.size(), buffer))) return read;
  }
  if (!(read = read_u32s(reader, "stream cursors", buffers, ftl.cursors))) return read;
  if (!reader.has(40)) return Error{"ftl section: counters cut short"};
  ftl.gc_runs = reader.u64();
  ftl.gc_moved_lbas = reader.u64();
  ftl.trimmed_lbas = reader.u64();
  ftl.skipped_planes = reader.u64();
  ftl.clock_ns = reader.u64();
  for (auto* times : {&ftl.plane_free_at_ns, &ftl.channel_free_at_ns}) {
    if (!reader.has(4)) return Error{"ftl section: free times cut short"};
    uint32_t count = reader.u32();
    if (count > planes || !reader.has(uint64_t{count} * 8)) {
      return Error{fmt::format("ftl section: {} free times for {} planes", count, planes)};
    }
    times->resize(count);
    for (uint64_t& t : *times) t = reader.u64();
  }
  if (reader.remaining() != 0) {
    return Error{fmt::format("ftl section: {} bytes after its end", reader.remaining())};
  }
  state.ftl = std::move(ftl);
  return {};
}

Outcome decode_section(uint32_t type, const uint8_t* body, uint64_t length, ImageState& state) {
  uint64_t length_fixed = type == kSectionNextOpenSeq ? 8 : type == kSectionLifetime ? 24 : 0;
  if (length_fixed != 0 && length != length_fixed) {
    return Error{fmt::format("{} section has {} bytes (expected {})", section_name(type), length,
                             length_fixed)};
  }
  switch (type) {
    case kSectionConfig:
      return decode_config(body, length, state.config);
    case kSectionZones:
      return decode_zones(body, length, state.zones);
    case kSectionNextOpenSeq:
      state.next_open_seq = load_u64(body);
      return {};
    case kSectionEraseCounts:
      return decode_erase_counts(body, length, state.erase_counts);
    case kSectionLifetime:
      state.lifetime_host_write_bytes = load_u64(body);
      state.lifetime_host_read_bytes = load_u64(body + 8);
      state.lifetime_commands = load_u64(body + 16);
      return {};
    case kSectionBlockMap:
      return decode_block_map(body, length, state);
    case kSectionFtl:
      return decode_ftl(body, length, state);
  }
  ZL_ASSERT(false && "decode_section called with an unknown type");
  return Error{"internal: unknown section"};
}

// An FTL section grows after create only in its page buffers (the free
// lists shrink as blocks open, the rest has a fixed size): each buffer holds
// at most one LBA less than a page. The room left counts what the buffers
// may still take, so a later state's payload plus its room is never more
// than the created one's.
uint64_t ftl_growth_bytes(const ImageState& state) {
  if (!state.ftl || state.config.host.lba_size_bytes == 0) return 0;
  uint64_t lbas_per_page = state.config.flash.page_size_bytes / state.config.host.lba_size_bytes;
  if (lbas_per_page == 0) return 0;
  uint64_t room_lbas = 0;
  for (const auto& buffer : state.ftl->buffers) {
    room_lbas += lbas_per_page - 1 - std::min<uint64_t>(buffer.size(), lbas_per_page - 1);
  }
  return room_lbas * 4;
}

// The slot create gives a state whose slot (header and payload) takes
// `slot_size` bytes: room for the configuration text to grow when a later
// save changes it, and for the FTL's buffers to fill.
uint64_t planned_slot_bytes(uint64_t slot_size, const ImageState& state) {
  uint64_t headroom_bytes = kSlotHeadroomBytes + config_to_toml(state.config).size();
  return round_up(slot_size + headroom_bytes + ftl_growth_bytes(state), kAlignBytes);
}

Result<ImageState> decode_payload(const uint8_t* data, size_t size) {
  static_assert(kLifetimeBytes == 24);
  ImageState state;
  ByteReader reader(data, size);
  uint32_t seen = 0;  // bit per known section type
  for (int index = 0; reader.remaining() > 0; ++index) {
    if (index == kSectionsMax) return Error{fmt::format("more than {} sections", kSectionsMax)};
    if (!reader.has(kSectionHeaderBytes)) return Error{"section header cut short"};
    uint32_t type = reader.u32();
    uint64_t length = reader.u64();
    if (!reader.has(length)) {
      return Error{fmt::format("section {} claims {} bytes but {} remain", index, length,
                               reader.remaining())};
    }
    const uint8_t* body = reader.take(length);
    // A section type this version does not know came from a later version
    // that added it as optional; skipping it is what the format promises.
    if (type == 0 || type > kSectionTypeLast) continue;
    uint32_t bit = 1u << type;
    if ((seen & bit) != 0) return Error{fmt::format("duplicate {} section", section_name(type))};
    seen |= bit;
    Outcome outcome = decode_section(type, body, length, state);
    if (!outcome) return Error{outcome.error()};
  }
  for (uint32_t type = 1; type <= kSectionTypeLast; ++type) {
    if ((seen & (1u << type)) == 0 && (kSectionsOptional & (1u << type)) == 0) {
      return Error{fmt::format("missing {} section", section_name(type))};
    }
  }
  // The FTL belongs to the block interface and the block map to ZNS.
  bool block = state.config.interface == "block";
  if (block && !state.ftl) return Error{"block-interface image without its ftl section"};
  if (!block && state.ftl) {
    return Error{fmt::format("ftl section in an image of interface '{}'", state.config.interface)};
  }
  if (block && (!state.zone_slots.empty() || !state.slots.empty())) {
    return Error{"block-map section in a block-interface image"};
  }
  // What decodes must encode again: create could not size a slot for more.
  if (state.ftl && planned_slot_bytes(kSlotHeaderBytes + size, state) > Image::kSlotBytesMax) {
    return Error{fmt::format("ftl section: {} page buffers could outgrow a slot",
                             state.ftl->buffers.size())};
  }
  return state;
}

// ---------------------------------------------------------------------------
// Slots: a 32-byte slot header, then the payload.

struct SlotHeader {
  uint64_t sequence = 0;
  uint64_t payload_bytes = 0;
  uint32_t crc = 0;
};

struct SlotContent {
  uint64_t sequence = 0;
  ImageState state;
};

Result<SlotHeader> decode_slot_header(const uint8_t* data, uint64_t slot_bytes) {
  if (std::all_of(data, data + kSlotHeaderBytes, [](uint8_t b) { return b == 0; })) {
    return Error{"never written"};
  }
  if (std::memcmp(data, kSlotMagic, sizeof kSlotMagic) != 0) return Error{"bad magic"};
  ByteReader reader(data + sizeof kSlotMagic, kSlotHeaderBytes - sizeof kSlotMagic);
  SlotHeader header;
  header.sequence = reader.u64();
  header.payload_bytes = reader.u64();
  reader.u32();  // reserved
  header.crc = reader.u32();
  if (header.payload_bytes > slot_bytes - kSlotHeaderBytes) {
    return Error{fmt::format("payload of {} bytes overflows the slot", header.payload_bytes)};
  }
  return header;
}

Result<SlotContent> decode_slot_payload(const uint8_t* slot_header_bytes, const SlotHeader& header,
                                        const uint8_t* payload) {
  uint32_t crc = crc32c(slot_header_bytes, kSlotChecksummedHeaderBytes);
  crc = crc32c(payload, header.payload_bytes, crc);
  if (crc != header.crc) return Error{"checksum mismatch"};
  if (header.sequence == 0) return Error{"sequence 0 is never written"};
  auto state = decode_payload(payload, header.payload_bytes);
  if (!state) return Error{state.error()};
  return SlotContent{header.sequence, std::move(state).value()};
}

// Encodes a slot and reads it back: an image must never hold a state that
// open() would refuse, so create and save reject such a state up front.
Result<std::vector<uint8_t>> encode_slot_checked(const ImageState& state, uint64_t sequence) {
  if (state.zones.size() > Image::kZoneCountMax) {
    return Error{fmt::format("{} zones is more than an image holds ({})", state.zones.size(),
                             Image::kZoneCountMax)};
  }
  if (state.erase_counts.size() > Image::kEraseCountsMax) {
    return Error{fmt::format("{} erase blocks is more than an image holds ({})",
                             state.erase_counts.size(), Image::kEraseCountsMax)};
  }
  std::vector<uint8_t> slot = Image::encode_metadata(state, sequence);
  auto decoded = decode_payload(slot.data() + kSlotHeaderBytes, slot.size() - kSlotHeaderBytes);
  if (!decoded) return Error{"the state would not read back: " + decoded.error()};
  if (config_to_toml(decoded->config) != config_to_toml(state.config)) {
    return Error{"the configuration would not read back unchanged"};
  }
  return slot;
}

// ---------------------------------------------------------------------------
// Reading an image from a file or from memory, with the same checks.

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  virtual uint64_t size() const = 0;
  // Fills `out` with `bytes` bytes at `offset`, which lie within size().
  virtual Outcome read(uint64_t offset, uint64_t bytes, uint8_t* out) = 0;
};

class MemorySource final : public ByteSource {
 public:
  MemorySource(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint64_t size() const override { return size_; }
  Outcome read(uint64_t offset, uint64_t bytes, uint8_t* out) override {
    ZL_ASSERT(offset <= size_ && bytes <= size_ - offset);
    if (bytes > 0) std::memcpy(out, data_ + offset, bytes);
    return {};
  }

 private:
  const uint8_t* data_;
  size_t size_;
};

// Reads up to `size` bytes at `offset`, fewer only at end of file; -1 with
// errno on failure. Short reads and interruptions are retried.
int64_t read_at(int fd, uint8_t* out, uint64_t size, uint64_t offset) {
  uint64_t done = 0;
  int interrupts = 0;
  while (done < size) {
    size_t chunk = std::min(size - done, kIoChunkBytes);
    ssize_t n = ::pread(fd, out + done, chunk, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR && ++interrupts < kEintrRetriesMax) continue;
      return -1;
    }
    if (n == 0) break;
    done += static_cast<uint64_t>(n);
  }
  return static_cast<int64_t>(done);
}

// Writes all `size` bytes at `offset`; false with errno on failure.
bool write_at(int fd, const uint8_t* data, uint64_t size, uint64_t offset) {
  uint64_t done = 0;
  int interrupts = 0;
  while (done < size) {
    size_t chunk = std::min(size - done, kIoChunkBytes);
    ssize_t n = ::pwrite(fd, data + done, chunk, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR && ++interrupts < kEintrRetriesMax) continue;
      return false;
    }
    if (n == 0) {
      errno = EIO;
      return false;
    }
    done += static_cast<uint64_t>(n);
  }
  return true;
}

bool sync_data(int fd) {
  for (int attempt = 0; attempt < kEintrRetriesMax; ++attempt) {
    if (::fdatasync(fd) == 0) return true;
    if (errno != EINTR) return false;
  }
  return false;
}

class FileSource final : public ByteSource {
 public:
  FileSource(int fd, uint64_t size) : fd_(fd), size_(size) {}
  uint64_t size() const override { return size_; }
  Outcome read(uint64_t offset, uint64_t bytes, uint8_t* out) override {
    int64_t n = read_at(fd_, out, bytes, offset);
    if (n < 0) return Error{fmt::format("read error: {}", std::strerror(errno))};
    if (static_cast<uint64_t>(n) != bytes) return Error{"truncated image (file shrank)"};
    return {};
  }

 private:
  int fd_;
  uint64_t size_;
};

struct Loaded {
  Header header;
  SlotContent content;
  int slot = 0;
};

Result<SlotContent> load_slot(ByteSource& source, const Header& header, int slot) {
  uint64_t offset = slot_offset(header, slot);
  uint8_t slot_header_bytes[kSlotHeaderBytes];
  Outcome read = source.read(offset, kSlotHeaderBytes, slot_header_bytes);
  if (!read) return Error{read.error()};
  auto slot_header = decode_slot_header(slot_header_bytes, header.slot_bytes);
  if (!slot_header) return Error{slot_header.error()};
  // Bounded: the payload lies inside the slot, and check_header made sure
  // the file holds both slots.
  std::vector<uint8_t> payload(slot_header->payload_bytes);
  read = source.read(offset + kSlotHeaderBytes, payload.size(), payload.data());
  if (!read) return Error{read.error()};
  return decode_slot_payload(slot_header_bytes, *slot_header, payload.data());
}

Result<Loaded> load_image(ByteSource& source) {
  uint64_t file_bytes = source.size();
  std::vector<uint8_t> head(std::min(file_bytes, Image::kHeaderBytes));
  Outcome read = source.read(0, head.size(), head.data());
  if (!read) return Error{read.error()};
  auto header = decode_header(head.data(), head.size(), file_bytes);
  if (!header) return Error{header.error()};

  std::optional<Loaded> best;
  std::string why[2];
  for (int slot = 0; slot < 2; ++slot) {
    auto content = load_slot(source, *header, slot);
    if (!content) {
      why[slot] = content.error();
      continue;
    }
    if (!best || content->sequence > best->content.sequence) {
      best = Loaded{*header, std::move(content).value(), slot};
    }
  }
  if (!best) {
    return Error{fmt::format("corrupt image: no valid metadata slot (slot A: {}; slot B: {})",
                             why[0], why[1])};
  }
  return std::move(*best);
}

// ---------------------------------------------------------------------------
// Planning a new image.

struct Plan {
  Header header;
  std::vector<uint8_t> slot;  // slot A, sequence 1
};

Result<Plan> plan_image(const ImageState& state, uint64_t data_bytes) {
  if (data_bytes > Image::kDataBytesMax) {
    return Error{fmt::format("a data region of {} bytes is larger than an image holds ({})",
                             data_bytes, Image::kDataBytesMax)};
  }
  auto slot = encode_slot_checked(state, 1);
  if (!slot) return Error{slot.error()};
  uint64_t slot_bytes = planned_slot_bytes(slot->size(), state);
  if (slot_bytes > Image::kSlotBytesMax) {
    return Error{fmt::format("metadata of {} bytes is larger than a slot holds ({})", slot->size(),
                             Image::kSlotBytesMax)};
  }
  Header header{slot_bytes, Image::kHeaderBytes + 2 * slot_bytes, data_bytes};
  return Plan{header, std::move(slot).value()};
}

// ---------------------------------------------------------------------------
// Files: descriptors, locks, the temporary file create() fills.

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    std::swap(fd_, other.fd_);
    return *this;
  }
  ~UniqueFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_ = -1;
};

std::string os_error(int err) { return std::strerror(err); }

std::string in_use_message(const std::string& path) {
  return fmt::format("{}: image is in use by another process", path);
}

// flock locks belong to the open file description, so a second open() of
// the same file conflicts even within one process.
Outcome lock_exclusive(int fd, const std::string& path) {
  for (int attempt = 0; attempt < kEintrRetriesMax; ++attempt) {
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return {};
    if (errno == EINTR) continue;
    if (errno == EWOULDBLOCK) return Error{in_use_message(path)};
    break;
  }
  return Error{fmt::format("{}: cannot lock image: {}", path, os_error(errno))};
}

bool path_exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

// With --force an existing image is replaced, but never one that another
// process has open: it would go on saving into the unlinked old file.
// Holds the old file's lock until the new image has taken its name.
Result<UniqueFd> lock_existing(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (fd.get() < 0) return UniqueFd();
  struct stat st;
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return UniqueFd();
  Outcome locked = lock_exclusive(fd.get(), path);
  if (!locked) return Error{locked.error()};
  return fd;
}

struct TempImage {
  UniqueFd fd;
  std::string path;
};

Result<TempImage> open_temp(const std::string& path) {
  for (int attempt = 0; attempt < kTempNameAttemptsMax; ++attempt) {
    std::string temp_path = fmt::format("{}.tmp-{}-{}", path, ::getpid(), attempt);
    int fd = ::open(temp_path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) return TempImage{UniqueFd(fd), temp_path};
    if (errno != EEXIST) {
      return Error{fmt::format("{}: cannot create image: {}", path, os_error(errno))};
    }
  }
  return Error{fmt::format("{}: cannot create image: no free temporary name", path)};
}

Outcome fill_temp(const TempImage& temp, const Plan& plan) {
  int fd = temp.fd.get();
  std::vector<uint8_t> header = encode_header(plan.header);
  uint64_t file_bytes = plan.header.data_offset_bytes + plan.header.data_bytes;
  bool ok = ::ftruncate(fd, static_cast<off_t>(file_bytes)) == 0 &&
            write_at(fd, header.data(), header.size(), 0) &&
            write_at(fd, plan.slot.data(), plan.slot.size(), slot_offset(plan.header, 0)) &&
            ::fsync(fd) == 0;
  if (!ok) return Error{os_error(errno)};
  return {};
}

// Gives the finished temporary file its name. Without force the name must
// still be free at this moment, so a racing create cannot be overwritten.
Outcome publish(const std::string& temp_path, const std::string& path, bool force) {
  if (force) {
    if (::rename(temp_path.c_str(), path.c_str()) == 0) return {};
    return Error{fmt::format("{}: cannot create image: {}", path, os_error(errno))};
  }
  int err = 0;
  if (::renameat2(AT_FDCWD, temp_path.c_str(), AT_FDCWD, path.c_str(), RENAME_NOREPLACE) == 0) {
    return {};
  }
  err = errno;
  if (err == EINVAL || err == ENOSYS || err == ENOTSUP) {
    // No RENAME_NOREPLACE on this file system; link() refuses an existing
    // name just the same.
    if (::link(temp_path.c_str(), path.c_str()) == 0) {
      ::unlink(temp_path.c_str());
      return {};
    }
    err = errno;
  }
  if (err == EEXIST) return Error{fmt::format("{}: file exists; use --force to overwrite", path)};
  return Error{fmt::format("{}: cannot create image: {}", path, os_error(err))};
}

// Makes the new name durable; failing here loses nothing that fsync of the
// file did not already keep, so it is best effort.
void sync_parent_dir(const std::string& path) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd.get() >= 0) ::fsync(fd.get());
}

// ---------------------------------------------------------------------------
// The file backing: LBA L lives at data_offset + L * lba_size.

class FileBacking final : public Backing {
 public:
  FileBacking(int fd, uint64_t data_offset_bytes, uint64_t data_bytes, uint64_t lba_size_bytes,
              std::string* error)
      : fd_(fd),
        data_offset_bytes_(data_offset_bytes),
        data_lbas_(data_bytes / lba_size_bytes),
        lba_size_bytes_(lba_size_bytes),
        error_(error) {}

  bool stores_data() const override { return true; }

  void write(uint64_t lba, uint32_t nlb, const uint8_t* data) override {
    if (!in_range("write", lba, nlb)) return;
    if (data == nullptr) {
      zero_range(lba, nlb);
      return;
    }
    if (!write_at(fd_, data, nlb * lba_size_bytes_, offset_of(lba))) fail("write", lba, errno);
  }

  void read(uint64_t lba, uint32_t nlb, uint8_t* out) override {
    uint64_t bytes = nlb * lba_size_bytes_;
    int64_t n = in_range("read", lba, nlb) ? read_at(fd_, out, bytes, offset_of(lba)) : 0;
    if (n < 0) {
      fail("read", lba, errno);
      n = 0;
    }
    // Past the end of the file is a hole that ftruncate did not make.
    std::memset(out + n, 0, bytes - static_cast<uint64_t>(n));
  }

  void discard(uint64_t lba, uint64_t nlb) override {
    if (in_range("discard", lba, nlb)) zero_range(lba, nlb);
  }

  bool sync() override {
    if (!sync_data(fd_)) fail("sync", 0, errno);
    return error_->empty();
  }

 private:
  uint64_t offset_of(uint64_t lba) const { return data_offset_bytes_ + lba * lba_size_bytes_; }

  bool in_range(const char* op, uint64_t lba, uint64_t nlb) {
    if (lba <= data_lbas_ && nlb <= data_lbas_ - lba) return true;
    if (error_->empty()) {
      *error_ = fmt::format("{} of {} blocks at LBA {} is outside the data region ({} blocks)", op,
                            nlb, lba, data_lbas_);
    }
    return false;
  }

  // A punched hole reads as zeros and frees the space; file systems that
  // cannot punch get zeros written instead.
  void zero_range(uint64_t lba, uint64_t nlb) {
    uint64_t offset = offset_of(lba);
    uint64_t bytes = nlb * lba_size_bytes_;
    if (bytes == 0) return;
    if (::fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(offset),
                    static_cast<off_t>(bytes)) == 0) {
      return;
    }
    if (errno != EOPNOTSUPP && errno != ENOSYS && errno != EINVAL) {
      fail("discard", lba, errno);
      return;
    }
    static const std::vector<uint8_t> kZeros(1 << 16, 0);
    for (uint64_t done = 0; done < bytes; done += kZeros.size()) {
      uint64_t chunk = std::min<uint64_t>(bytes - done, kZeros.size());
      if (!write_at(fd_, kZeros.data(), chunk, offset + done)) {
        fail("zero", lba, errno);
        return;
      }
    }
  }

  // The first error is kept: later ones are usually its consequences.
  void fail(const char* op, uint64_t lba, int err) {
    if (error_->empty()) *error_ = fmt::format("{} at LBA {} failed: {}", op, lba, os_error(err));
  }

  int fd_;
  uint64_t data_offset_bytes_;
  uint64_t data_lbas_;
  uint64_t lba_size_bytes_;
  std::string* error_;
};

}  // namespace

uint32_t crc32c(const uint8_t* data, size_t size, uint32_t crc) {
  crc = ~crc;
  for (size_t i = 0; i < size; ++i) crc = kCrcTable[(crc ^ data[i]) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

Image::~Image() {
  if (fd_ < 0) return;
  ::flock(fd_, LOCK_UN);
  ::close(fd_);
}

Result<std::unique_ptr<Image>> Image::create(const std::string& path, const ImageState& state,
                                             uint64_t data_bytes, bool force) {
  auto plan = plan_image(state, data_bytes);
  if (!plan) return Error{fmt::format("{}: cannot create image: {}", path, one_line(plan.error()))};
  if (!force && path_exists(path)) {
    return Error{fmt::format("{}: file exists; use --force to overwrite", path)};
  }
  UniqueFd old_image;
  if (force) {
    auto locked = lock_existing(path);
    if (!locked) return Error{locked.error()};
    old_image = std::move(locked).value();
  }
  auto opened = open_temp(path);
  if (!opened) return Error{opened.error()};
  TempImage temp = std::move(opened).value();
  Outcome made = lock_exclusive(temp.fd.get(), temp.path);
  if (made) made = fill_temp(temp, *plan);
  if (made) made = publish(temp.path, path, force);
  if (!made) {
    ::unlink(temp.path.c_str());
    std::string message = made.error();
    if (message.rfind(path, 0) != 0)
      message = fmt::format("{}: cannot create image: {}", path, message);
    return Error{message};
  }
  sync_parent_dir(path);

  auto image = std::unique_ptr<Image>(new Image());
  image->path_ = path;
  image->fd_ = temp.fd.release();
  image->state_ = state;
  image->sequence_ = 1;
  image->active_slot_ = 0;
  image->slot_bytes_ = plan->header.slot_bytes;
  image->data_offset_bytes_ = plan->header.data_offset_bytes;
  image->data_bytes_ = plan->header.data_bytes;
  return image;
}

Result<std::unique_ptr<Image>> Image::open(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CLOEXEC));
  if (fd.get() < 0) return Error{fmt::format("{}: cannot open image: {}", path, os_error(errno))};
  struct stat st;
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return Error{fmt::format("{}: not a zonelab image (not a regular file)", path)};
  }
  Outcome locked = lock_exclusive(fd.get(), path);
  if (!locked) return Error{locked.error()};
  auto image = std::unique_ptr<Image>(new Image());
  image->path_ = path;
  image->fd_ = fd.release();
  Outcome loaded = image->load();
  if (!loaded) return Error{loaded.error()};
  return image;
}

Outcome Image::load() {
  struct stat st;
  if (::fstat(fd_, &st) != 0) return Error{fmt::format("{}: {}", path_, os_error(errno))};
  FileSource source(fd_, static_cast<uint64_t>(st.st_size));
  auto result = load_image(source);
  if (!result) return Error{fmt::format("{}: {}", path_, one_line(result.error()))};
  Loaded loaded = std::move(result).value();
  state_ = std::move(loaded.content.state);
  sequence_ = loaded.content.sequence;
  active_slot_ = loaded.slot;
  slot_bytes_ = loaded.header.slot_bytes;
  data_offset_bytes_ = loaded.header.data_offset_bytes;
  data_bytes_ = loaded.header.data_bytes;
  return {};
}

Outcome Image::save(const ImageState& state) {
  ZL_ASSERT(fd_ >= 0);
  if (!data_error_.empty()) {
    return Error{fmt::format("{}: not saved: data I/O failed earlier ({})", path_, data_error_)};
  }
  if (sequence_ == UINT64_MAX) return Error{fmt::format("{}: sequence numbers exhausted", path_)};
  auto slot = encode_slot_checked(state, sequence_ + 1);
  if (!slot) return Error{fmt::format("{}: cannot save: {}", path_, one_line(slot.error()))};
  if (slot->size() > slot_bytes_) {
    return Error{fmt::format("{}: cannot save: metadata of {} bytes does not fit a slot of {}",
                             path_, slot->size(), slot_bytes_)};
  }
  // Data first: a slot must never describe data that is not yet durable.
  if (!sync_data(fd_))
    return Error{fmt::format("{}: data sync failed: {}", path_, os_error(errno))};
  int target = 1 - active_slot_;
  Header header{slot_bytes_, data_offset_bytes_, data_bytes_};
  if (!write_at(fd_, slot->data(), slot->size(), slot_offset(header, target)) || !sync_data(fd_)) {
    return Error{fmt::format("{}: metadata write failed: {}", path_, os_error(errno))};
  }
  state_ = state;
  sequence_ += 1;
  active_slot_ = target;
  return {};
}

std::unique_ptr<Backing> Image::file_backing(uint64_t lba_size_bytes) {
  ZL_ASSERT(fd_ >= 0);
  ZL_ASSERT(lba_size_bytes >= 512 && (lba_size_bytes & (lba_size_bytes - 1)) == 0);
  return std::make_unique<FileBacking>(fd_, data_offset_bytes_, data_bytes_, lba_size_bytes,
                                       &data_error_);
}

Result<ImageState> Image::decode(const uint8_t* data, size_t size) {
  MemorySource source(data, size);
  auto loaded = load_image(source);
  if (!loaded) return Error{one_line(loaded.error())};
  return std::move(loaded).value().content.state;
}

Result<std::vector<uint8_t>> Image::encode(const ImageState& state, uint64_t data_bytes) {
  if (data_bytes > kEncodeDataBytesMax) {
    return Error{
        fmt::format("an in-memory image holds at most {} data bytes", kEncodeDataBytesMax)};
  }
  auto plan = plan_image(state, data_bytes);
  if (!plan) return Error{one_line(plan.error())};
  std::vector<uint8_t> image = encode_header(plan->header);
  image.resize(plan->header.data_offset_bytes + data_bytes, 0);
  std::copy(plan->slot.begin(), plan->slot.end(),
            image.begin() + static_cast<ptrdiff_t>(slot_offset(plan->header, 0)));
  return image;
}

std::vector<uint8_t> Image::encode_metadata(const ImageState& state, uint64_t sequence) {
  std::vector<uint8_t> payload = encode_payload(state);
  std::vector<uint8_t> slot;
  slot.reserve(kSlotHeaderBytes + payload.size());
  ByteWriter writer(slot);
  writer.bytes(kSlotMagic, sizeof kSlotMagic);
  writer.u64(sequence);
  writer.u64(payload.size());
  writer.u32(0);  // reserved
  ZL_ASSERT(slot.size() == kSlotChecksummedHeaderBytes);
  uint32_t crc = crc32c(payload.data(), payload.size(), crc32c(slot.data(), slot.size()));
  writer.u32(crc);
  writer.bytes(payload.data(), payload.size());
  return slot;
}

}  // namespace zonelab
