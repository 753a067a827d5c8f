// The device image file: a checksummed header, two metadata slots written in
// turn, a sparse data region, and a journal region; plus the file backing
// over the data region. The byte layout is described in
// docs/image-format.md; this file frames the layers' sections, and is the
// only code that reads or writes the file.
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

#include "common/file_kind.h"
#include "zonelab/assert.h"

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
constexpr uint64_t kJournalSectionBytes = 16;
constexpr uint32_t kJournalMagic = 0x524A4C5A;  // "ZLJR"
constexpr uint64_t kJournalRecordHeaderBytes = 24;
constexpr uint64_t kJournalRecordTrailerBytes = 4;
constexpr uint64_t kEncodeDataBytesMax = 64 << 20;
constexpr uint64_t kEncodeJournalBytes = 4096;  // in memory: small, for tests and the fuzzer
constexpr uint64_t kIoChunkBytes = 1 << 30;
constexpr int kEintrRetriesMax = 1000;
constexpr int kTempNameAttemptsMax = 100;

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
// The payload: sections of (type u32, length u64, bytes). The configuration
// (type 1) and the journal's place (type 8) are the image's own; every other
// section belongs to a layer of the device and passes through unread.

// Where the journal region lies; absent in images made before it existed.
struct JournalPlace {
  uint64_t offset = 0;
  uint64_t bytes = 0;
};

void put_section(ByteWriter& writer, uint32_t type, const uint8_t* body, uint64_t size) {
  writer.u32(type);
  writer.u64(size);
  writer.bytes(body, size);
}

std::vector<uint8_t> encode_payload(const ImageState& state, const JournalPlace& journal) {
  std::vector<uint8_t> payload;
  ByteWriter writer(payload);
  std::string config_text = config_to_toml(state.config);
  put_section(writer, Image::kSectionConfig, reinterpret_cast<const uint8_t*>(config_text.data()),
              config_text.size());
  for (const auto& [type, body] : state.sections) {
    ZL_ASSERT(type != Image::kSectionConfig && type != Image::kSectionJournal && type != 0);
    put_section(writer, type, body.data(), body.size());
  }
  if (journal.bytes != 0) {
    std::vector<uint8_t> body;
    ByteWriter body_writer(body);
    body_writer.u64(journal.offset);
    body_writer.u64(journal.bytes);
    put_section(writer, Image::kSectionJournal, body.data(), body.size());
  }
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

Outcome decode_journal_place(const uint8_t* body, uint64_t length, JournalPlace& place) {
  if (length != kJournalSectionBytes) {
    return Error{
        fmt::format("journal section has {} bytes (expected {})", length, kJournalSectionBytes)};
  }
  place.offset = load_u64(body);
  place.bytes = load_u64(body + 8);
  if (place.bytes == 0 || place.bytes > Image::kJournalBytesMax || place.bytes % kAlignBytes != 0 ||
      place.offset % kAlignBytes != 0) {
    return Error{fmt::format("journal section: a region of {} bytes at {} is not allowed",
                             place.bytes, place.offset)};
  }
  return {};
}

struct Payload {
  ImageState state;
  JournalPlace journal;
};

// The slot create gives a state whose slot (header and payload) takes
// `slot_size` bytes: room for the configuration text to grow when a later
// save changes it, and for the sections to grow as their layer says.
uint64_t planned_slot_bytes(uint64_t slot_size, const ImageState& state) {
  uint64_t headroom_bytes = kSlotHeadroomBytes + config_to_toml(state.config).size() +
                            kSectionHeaderBytes + kJournalSectionBytes;
  return round_up(slot_size + headroom_bytes + state.growth_bytes, kAlignBytes);
}

Result<Payload> decode_payload(const uint8_t* data, size_t size) {
  Payload payload;
  ByteReader reader(data, size);
  bool config_seen = false;
  bool journal_seen = false;
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
    if (type == 0) return Error{fmt::format("section {} has type 0", index)};
    if (type == Image::kSectionConfig) {
      if (config_seen) return Error{"duplicate config section"};
      config_seen = true;
      Outcome outcome = decode_config(body, length, payload.state.config);
      if (!outcome) return Error{outcome.error()};
      continue;
    }
    if (type == Image::kSectionJournal) {
      if (journal_seen) return Error{"duplicate journal section"};
      journal_seen = true;
      Outcome outcome = decode_journal_place(body, length, payload.journal);
      if (!outcome) return Error{outcome.error()};
      continue;
    }
    auto [it, inserted] =
        payload.state.sections.emplace(type, std::vector<uint8_t>(body, body + length));
    if (!inserted) return Error{fmt::format("duplicate section of type {}", type)};
  }
  if (!config_seen) return Error{"missing config section"};
  return payload;
}

// ---------------------------------------------------------------------------
// The journal region: records back to back from its start, each
//   magic u32 | payload bytes u32 | epoch u64 | index u64 | payload | CRC u32
// where the epoch is the sequence of the slot the records follow and the
// index counts from 0. The records of a slot end at the first that does not
// check (torn by a kill, or an older epoch's).

std::vector<uint8_t> journal_record(uint64_t epoch, uint64_t index,
                                    const std::vector<uint8_t>& payload) {
  std::vector<uint8_t> record;
  record.reserve(kJournalRecordHeaderBytes + payload.size() + kJournalRecordTrailerBytes);
  ByteWriter writer(record);
  writer.u32(kJournalMagic);
  writer.u32(static_cast<uint32_t>(payload.size()));
  writer.u64(epoch);
  writer.u64(index);
  writer.bytes(payload.data(), payload.size());
  writer.u32(crc32c(record.data(), record.size()));
  return record;
}

// The valid records of `epoch` at the start of `region`; `used` is where
// they end.
std::vector<std::vector<uint8_t>> parse_journal(const uint8_t* region, uint64_t bytes,
                                                uint64_t epoch, uint64_t& used) {
  std::vector<std::vector<uint8_t>> records;
  used = 0;
  ByteReader reader(region, bytes);
  while (reader.has(kJournalRecordHeaderBytes + kJournalRecordTrailerBytes)) {
    const uint8_t* start = region + used;
    if (reader.u32() != kJournalMagic) break;
    uint32_t length = reader.u32();
    uint64_t record_epoch = reader.u64();
    uint64_t index = reader.u64();
    if (length > Image::kJournalRecordBytesMax || record_epoch != epoch ||
        index != records.size() || !reader.has(uint64_t{length} + kJournalRecordTrailerBytes)) {
      break;
    }
    const uint8_t* body = reader.take(length);
    uint32_t crc = reader.u32();
    if (crc != crc32c(start, kJournalRecordHeaderBytes + length)) break;
    records.emplace_back(body, body + length);
    used += kJournalRecordHeaderBytes + length + kJournalRecordTrailerBytes;
  }
  return records;
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
  Payload payload;
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
  auto decoded = decode_payload(payload, header.payload_bytes);
  if (!decoded) return Error{decoded.error()};
  return SlotContent{header.sequence, std::move(decoded).value()};
}

std::vector<uint8_t> encode_slot(const ImageState& state, uint64_t sequence,
                                 const JournalPlace& journal) {
  std::vector<uint8_t> payload = encode_payload(state, journal);
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

// Encodes a slot and reads it back: an image must never hold a state that
// open() would refuse, so create and save reject such a state up front.
Result<std::vector<uint8_t>> encode_slot_checked(const ImageState& state, uint64_t sequence,
                                                 const JournalPlace& journal) {
  for (const auto& [type, body] : state.sections) {
    if (type == 0 || type == Image::kSectionConfig || type == Image::kSectionJournal) {
      return Error{fmt::format("section type {} is the image's own", type)};
    }
    if (body.size() > Image::kSectionBytesMax) {
      return Error{fmt::format("a section of {} bytes is more than an image holds", body.size())};
    }
  }
  if (state.sections.size() + 2 > kSectionsMax) {
    return Error{fmt::format("{} sections is more than a slot holds", state.sections.size())};
  }
  std::vector<uint8_t> slot = encode_slot(state, sequence, journal);
  auto decoded = decode_payload(slot.data() + kSlotHeaderBytes, slot.size() - kSlotHeaderBytes);
  if (!decoded) return Error{"the state would not read back: " + decoded.error()};
  if (config_to_toml(decoded->state.config) != config_to_toml(state.config)) {
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
  std::string fallback_note;  // the newest slot was unreadable
  std::vector<std::vector<uint8_t>> journal;
  uint64_t journal_used = 0;
};

// The slot's sequence as its header claims, checked or not (0: none).
uint64_t claimed_sequence(ByteSource& source, const Header& header, int slot) {
  uint8_t bytes[kSlotHeaderBytes];
  if (!source.read(slot_offset(header, slot), kSlotHeaderBytes, bytes)) return 0;
  if (std::memcmp(bytes, kSlotMagic, sizeof kSlotMagic) != 0) return 0;
  return load_u64(bytes + 8);
}

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

Outcome load_journal(ByteSource& source, Loaded& loaded) {
  const JournalPlace& place = loaded.content.payload.journal;
  if (place.bytes == 0) return {};
  uint64_t data_end = loaded.header.data_offset_bytes + loaded.header.data_bytes;
  if (place.offset < data_end) {
    return Error{fmt::format(
        "corrupt image: the journal region at {} overlaps the data region (which ends at {})",
        place.offset, data_end)};
  }
  if (place.offset > source.size() || place.bytes > source.size() - place.offset) {
    return Error{fmt::format("truncated image ({} bytes, its journal ends at {})", source.size(),
                             place.offset + place.bytes)};
  }
  std::vector<uint8_t> region(place.bytes);
  Outcome read = source.read(place.offset, place.bytes, region.data());
  if (!read) return read;
  loaded.journal =
      parse_journal(region.data(), region.size(), loaded.content.sequence, loaded.journal_used);
  return {};
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
      best = Loaded{*header, std::move(content).value(), slot, {}, {}, 0};
    }
  }
  if (!best) {
    return Error{fmt::format("corrupt image: no valid metadata slot (slot A: {}; slot B: {})",
                             why[0], why[1])};
  }
  // A slot that is there but does not check, and claims to be newer (or
  // cannot say), was the newest: say that the older one is used.
  int other = 1 - best->slot;
  if (!why[other].empty() && why[other] != "never written" &&
      claimed_sequence(source, *header, other) != best->content.sequence - 1) {
    best->fallback_note = fmt::format(
        "metadata slot {} (the newest) is unreadable ({}); using slot {} (sequence {})",
        other == 0 ? "A" : "B", why[other], best->slot == 0 ? "A" : "B", best->content.sequence);
  }
  Outcome journal = load_journal(source, *best);
  if (!journal) return Error{journal.error()};
  return std::move(*best);
}

// ---------------------------------------------------------------------------
// Planning a new image: header, slots, data, then the journal region.

struct Plan {
  Header header;
  JournalPlace journal;
  std::vector<uint8_t> slot;  // slot A, sequence 1
  uint64_t file_bytes = 0;
};

Result<Plan> plan_image(const ImageState& state, uint64_t data_bytes, uint64_t journal_bytes) {
  if (data_bytes > Image::kDataBytesMax) {
    return Error{fmt::format("a data region of {} bytes is larger than an image holds ({})",
                             data_bytes, Image::kDataBytesMax)};
  }
  // The journal's place is known before the slot size only roughly; encode
  // once to size the slots, then again with the real place (same length).
  auto sized = encode_slot_checked(state, 1, JournalPlace{kAlignBytes, Image::kJournalBytes});
  if (!sized) return Error{sized.error()};
  uint64_t slot_bytes = planned_slot_bytes(sized->size(), state);
  if (slot_bytes > Image::kSlotBytesMax) {
    return Error{fmt::format("metadata of {} bytes is larger than a slot holds ({})", sized->size(),
                             Image::kSlotBytesMax)};
  }
  Plan plan;
  plan.header = Header{slot_bytes, Image::kHeaderBytes + 2 * slot_bytes, data_bytes};
  plan.journal.offset = round_up(plan.header.data_offset_bytes + data_bytes, kAlignBytes);
  plan.journal.bytes = journal_bytes;
  plan.file_bytes = plan.journal.offset + plan.journal.bytes;
  auto slot = encode_slot_checked(state, 1, plan.journal);
  ZL_ASSERT(slot.ok() && slot->size() == sized->size());
  plan.slot = std::move(slot).value();
  return plan;
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
// the same file conflicts even within one process. Writers take the lock
// exclusively, readers shared.
Outcome lock_image(int fd, const std::string& path, bool shared = false) {
  for (int attempt = 0; attempt < kEintrRetriesMax; ++attempt) {
    if (::flock(fd, (shared ? LOCK_SH : LOCK_EX) | LOCK_NB) == 0) return {};
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
  Outcome locked = lock_image(fd.get(), path);
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

// Allocates a range of the file so later writes to it cannot fail for want
// of space; file systems that cannot say so are left to do their best.
bool preallocate(int fd, uint64_t offset, uint64_t bytes) {
  if (bytes == 0) return true;
  if (::fallocate(fd, 0, static_cast<off_t>(offset), static_cast<off_t>(bytes)) == 0) return true;
  return errno == EOPNOTSUPP || errno == ENOSYS || errno == EINVAL;
}

Outcome fill_temp(const TempImage& temp, const Plan& plan) {
  int fd = temp.fd.get();
  std::vector<uint8_t> header = encode_header(plan.header);
  bool ok = ::ftruncate(fd, static_cast<off_t>(plan.file_bytes)) == 0 &&
            preallocate(fd, 0, plan.header.data_offset_bytes) &&
            preallocate(fd, plan.journal.offset, plan.journal.bytes) &&
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
  // While `*replaying` the data is already in place: writes and discards
  // are skipped. A read-only image takes neither (a journal replayed in
  // memory only).
  FileBacking(int fd, uint64_t data_offset_bytes, uint64_t data_bytes, uint64_t lba_size_bytes,
              std::string* error, const bool* replaying, const bool* frozen, bool read_only)
      : fd_(fd),
        data_offset_bytes_(data_offset_bytes),
        data_lbas_(data_bytes / lba_size_bytes),
        lba_size_bytes_(lba_size_bytes),
        error_(error),
        replaying_(replaying),
        frozen_(frozen),
        read_only_(read_only) {}

  bool stores_data() const override { return true; }

  bool write(uint64_t lba, uint32_t nlb, const uint8_t* data) override {
    if (*frozen_) return true;
    if (*replaying_ || read_only_) return !read_only_ || *replaying_;
    if (!in_range("write", lba, nlb)) return false;
    if (data == nullptr) return zero_range(lba, nlb);
    if (write_at(fd_, data, nlb * lba_size_bytes_, offset_of(lba))) return true;
    fail("write", lba, errno);
    return false;
  }

  bool read(uint64_t lba, uint32_t nlb, uint8_t* out) override {
    uint64_t bytes = nlb * lba_size_bytes_;
    if (!in_range("read", lba, nlb)) return false;
    int64_t n = read_at(fd_, out, bytes, offset_of(lba));
    if (n < 0) {
      fail("read", lba, errno);
      return false;
    }
    // Past the end of the file is a hole that ftruncate did not make.
    std::memset(out + n, 0, bytes - static_cast<uint64_t>(n));
    return true;
  }

  // Not while replaying: the data region already holds what later commands
  // wrote over a zone the journal resets. A discard skipped leaves old data
  // above a write pointer, which nothing reads.
  void discard(uint64_t lba, uint64_t nlb) override {
    if (read_only_ || *replaying_ || *frozen_) return;
    if (in_range("discard", lba, nlb)) zero_range(lba, nlb);
  }

  bool sync() override {
    if (sync_data(fd_)) return true;
    fail("sync", 0, errno);
    return false;
  }

 private:
  uint64_t offset_of(uint64_t lba) const { return data_offset_bytes_ + lba * lba_size_bytes_; }

  bool in_range(const char* op, uint64_t lba, uint64_t nlb) {
    if (lba <= data_lbas_ && nlb <= data_lbas_ - lba) return true;
    *error_ = fmt::format("{} of {} blocks at LBA {} is outside the data region ({} blocks)", op,
                          nlb, lba, data_lbas_);
    return false;
  }

  // A punched hole reads as zeros and frees the space; file systems that
  // cannot punch get zeros written instead.
  bool zero_range(uint64_t lba, uint64_t nlb) {
    uint64_t offset = offset_of(lba);
    uint64_t bytes = nlb * lba_size_bytes_;
    if (bytes == 0) return true;
    if (::fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(offset),
                    static_cast<off_t>(bytes)) == 0) {
      return true;
    }
    if (errno != EOPNOTSUPP && errno != ENOSYS && errno != EINVAL) {
      fail("discard", lba, errno);
      return false;
    }
    static const std::vector<uint8_t> kZeros(1 << 16, 0);
    for (uint64_t done = 0; done < bytes; done += kZeros.size()) {
      uint64_t chunk = std::min<uint64_t>(bytes - done, kZeros.size());
      if (!write_at(fd_, kZeros.data(), chunk, offset + done)) {
        fail("zero", lba, errno);
        return false;
      }
    }
    return true;
  }

  // The latest error, for the message of the command it failed.
  void fail(const char* op, uint64_t lba, int err) {
    *error_ = fmt::format("{} at LBA {} failed: {}", op, lba, os_error(err));
  }

  int fd_;
  uint64_t data_offset_bytes_;
  uint64_t data_lbas_;
  uint64_t lba_size_bytes_;
  std::string* error_;
  const bool* replaying_;
  const bool* frozen_;
  bool read_only_;
};

}  // namespace

Image::~Image() {
  if (fd_ < 0) return;
  if (!read_only() && !frozen_) (void)journal_flush();
  ::flock(fd_, LOCK_UN);
  ::close(fd_);
}

Result<std::unique_ptr<Image>> Image::create(const std::string& path, const ImageState& state,
                                             uint64_t data_bytes, bool force) {
  auto plan = plan_image(state, data_bytes, kJournalBytes);
  if (!plan) return Error{fmt::format("{}: cannot create image: {}", path, one_line(plan.error()))};
  // Only a regular file is ever replaced (with --force): a device file, a
  // fifo, a socket or a symlink at the path is left as it is.
  struct stat existing;
  if (::lstat(path.c_str(), &existing) == 0 && !S_ISREG(existing.st_mode)) {
    return Error{fmt::format(
        "{}: cannot create image: it is {}; an image is made at a new path or over a regular "
        "file",
        path, file_kind(existing.st_mode))};
  }
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
  Outcome made = lock_image(temp.fd.get(), temp.path);
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
  image->journal_offset_ = plan->journal.offset;
  image->journal_bytes_ = plan->journal.bytes;
  return image;
}

Result<std::unique_ptr<Image>> Image::open(const std::string& path, Access access) {
  bool read_only = access == Access::kReadOnly;
  // O_NONBLOCK: opening a FIFO to read would wait for a writer; the check
  // below refuses whatever is not a regular file, whose I/O ignores the flag.
  UniqueFd fd(::open(path.c_str(), (read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC | O_NONBLOCK));
  if (fd.get() < 0) {
    int err = errno;
    if (!read_only && (err == EACCES || err == EROFS)) {
      return Error{fmt::format("{}: image is read-only ({})", path, os_error(err))};
    }
    return Error{fmt::format("{}: cannot open image: {}", path, os_error(err))};
  }
  struct stat st;
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return Error{fmt::format("{}: not a zonelab image (not a regular file)", path)};
  }
  Outcome locked = lock_image(fd.get(), path, read_only);
  if (!locked) return Error{locked.error()};
  auto image = std::unique_ptr<Image>(new Image());
  image->path_ = path;
  image->fd_ = fd.release();
  image->access_ = access;
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
  state_ = std::move(loaded.content.payload.state);
  sequence_ = loaded.content.sequence;
  active_slot_ = loaded.slot;
  slot_bytes_ = loaded.header.slot_bytes;
  data_offset_bytes_ = loaded.header.data_offset_bytes;
  data_bytes_ = loaded.header.data_bytes;
  fallback_note_ = std::move(loaded.fallback_note);
  journal_offset_ = loaded.content.payload.journal.offset;
  journal_bytes_ = loaded.content.payload.journal.bytes;
  journal_found_ = std::move(loaded.journal);
  journal_used_ = journal_flushed_ = loaded.journal_used;
  journal_count_ = journal_found_.size();
  return {};
}

uint64_t Image::file_bytes() const {
  uint64_t end = data_offset_bytes_ + data_bytes_;
  return has_journal() ? std::max(end, journal_offset_ + journal_bytes_) : end;
}

Outcome Image::write_at_checked(const uint8_t* data, uint64_t size, uint64_t offset,
                                const char* what) {
  if (write_at(fd_, data, size, offset)) return {};
  return Error{fmt::format("{}: {} failed: {}", path_, what, os_error(errno))};
}

Outcome Image::save(const ImageState& state) {
  ZL_ASSERT(fd_ >= 0);
  if (read_only()) return Error{fmt::format("{}: not saved: opened read-only", path_)};
  if (frozen_) return Error{fmt::format("{}: not saved: the power is cut", path_)};
  if (sequence_ == UINT64_MAX) return Error{fmt::format("{}: sequence numbers exhausted", path_)};
  JournalPlace journal{journal_offset_, journal_bytes_};
  auto slot = encode_slot_checked(state, sequence_ + 1, journal);
  if (!slot) return Error{fmt::format("{}: cannot save: {}", path_, one_line(slot.error()))};
  if (slot->size() > slot_bytes_) {
    return Error{fmt::format("{}: cannot save: metadata of {} bytes does not fit a slot of {}",
                             path_, slot->size(), slot_bytes_)};
  }
  // Data first: a slot must never describe data that is not yet durable.
  if (!sync_data(fd_)) {
    return Error{fmt::format("{}: data sync failed: {}", path_, os_error(errno))};
  }
  int target = 1 - active_slot_;
  Header header{slot_bytes_, data_offset_bytes_, data_bytes_};
  Outcome written =
      write_at_checked(slot->data(), slot->size(), slot_offset(header, target), "metadata write");
  if (!written) return written;
  if (!sync_data(fd_)) {
    return Error{fmt::format("{}: metadata sync failed: {}", path_, os_error(errno))};
  }
  state_ = state;
  sequence_ += 1;
  active_slot_ = target;
  // The new slot holds everything the journal held: it starts again, and
  // records of the old sequence left in the region no longer count.
  journal_buffer_.clear();
  journal_found_.clear();
  journal_used_ = journal_flushed_ = journal_count_ = 0;
  fallback_note_.clear();
  return {};
}

Outcome Image::add_journal() {
  if (has_journal()) return {};
  if (read_only()) return Error{fmt::format("{}: opened read-only", path_)};
  struct stat st;
  if (::fstat(fd_, &st) != 0) return Error{fmt::format("{}: {}", path_, os_error(errno))};
  uint64_t offset = round_up(
      std::max<uint64_t>(static_cast<uint64_t>(st.st_size), data_offset_bytes_ + data_bytes_),
      kAlignBytes);
  if (::ftruncate(fd_, static_cast<off_t>(offset + kJournalBytes)) != 0 ||
      !preallocate(fd_, offset, kJournalBytes)) {
    int err = errno;
    (void)::ftruncate(fd_, st.st_size);
    return Error{fmt::format("{}: cannot add a journal: {}", path_, os_error(err))};
  }
  journal_offset_ = offset;
  journal_bytes_ = kJournalBytes;
  Outcome saved = save(state_);
  if (!saved) {
    journal_offset_ = journal_bytes_ = 0;
    (void)::ftruncate(fd_, st.st_size);
  }
  return saved;
}

bool Image::journal_append(const std::vector<uint8_t>& record) {
  ZL_ASSERT(has_journal() && !read_only());
  ZL_ASSERT(record.size() <= kJournalRecordBytesMax);
  if (frozen_) return true;  // the power is cut: nothing reaches the file
  uint64_t bytes = kJournalRecordHeaderBytes + record.size() + kJournalRecordTrailerBytes;
  if (journal_used_ + bytes > journal_bytes_) return false;
  std::vector<uint8_t> framed = journal_record(sequence_, journal_count_, record);
  journal_buffer_.insert(journal_buffer_.end(), framed.begin(), framed.end());
  journal_used_ += bytes;
  ++journal_count_;
  return true;
}

Outcome Image::journal_flush() {
  if (journal_buffer_.empty() || frozen_) return {};
  ZL_ASSERT(journal_flushed_ + journal_buffer_.size() == journal_used_);
  Outcome written = write_at_checked(journal_buffer_.data(), journal_buffer_.size(),
                                     journal_offset_ + journal_flushed_, "journal write");
  if (!written) return written;
  journal_flushed_ = journal_used_;
  journal_buffer_.clear();
  return {};
}

std::unique_ptr<Backing> Image::file_backing(uint64_t lba_size_bytes) {
  ZL_ASSERT(fd_ >= 0);
  ZL_ASSERT(lba_size_bytes >= 512 && (lba_size_bytes & (lba_size_bytes - 1)) == 0);
  return std::make_unique<FileBacking>(fd_, data_offset_bytes_, data_bytes_, lba_size_bytes,
                                       &data_error_, &replaying_, &frozen_, read_only());
}

Result<ImageState> Image::decode(const uint8_t* data, size_t size,
                                 std::vector<std::vector<uint8_t>>* journal) {
  MemorySource source(data, size);
  auto loaded = load_image(source);
  if (!loaded) return Error{one_line(loaded.error())};
  if (journal != nullptr) *journal = std::move(loaded->journal);
  return std::move(loaded).value().content.payload.state;
}

Result<std::vector<uint8_t>> Image::encode(const ImageState& state, uint64_t data_bytes) {
  if (data_bytes > kEncodeDataBytesMax) {
    return Error{
        fmt::format("an in-memory image holds at most {} data bytes", kEncodeDataBytesMax)};
  }
  auto plan = plan_image(state, data_bytes, kEncodeJournalBytes);
  if (!plan) return Error{one_line(plan.error())};
  std::vector<uint8_t> image = encode_header(plan->header);
  image.resize(plan->file_bytes, 0);
  std::copy(plan->slot.begin(), plan->slot.end(),
            image.begin() + static_cast<ptrdiff_t>(slot_offset(plan->header, 0)));
  return image;
}

std::vector<uint8_t> Image::encode_metadata(const ImageState& state, uint64_t sequence,
                                            uint64_t journal_offset, uint64_t journal_bytes) {
  return encode_slot(state, sequence, JournalPlace{journal_offset, journal_bytes});
}

std::vector<uint8_t> Image::encode_journal_record(uint64_t epoch, uint64_t index,
                                                  const std::vector<uint8_t>& payload) {
  return journal_record(epoch, index, payload);
}

}  // namespace zonelab
