// Little-endian encoding of the on-disk structures, byte by byte so a layout
// never depends on the host, and CRC-32C (Castagnoli), the checksum of every
// checksummed structure. Each layer encodes its own persisted state with
// these (a device image's sections, journal records).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "zonelab/assert.h"

namespace zonelab {

// CRC-32C; `crc` continues an earlier value, so a checksum can span pieces.
uint32_t crc32c(const uint8_t* data, size_t size, uint32_t crc = 0);

inline void store_u32(uint8_t* p, uint32_t value) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(value >> (8 * i));
}

inline void store_u64(uint8_t* p, uint64_t value) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(value >> (8 * i));
}

inline uint32_t load_u32(const uint8_t* p) {
  uint32_t value = 0;
  for (int i = 3; i >= 0; --i) value = (value << 8) | p[i];
  return value;
}

inline uint64_t load_u64(const uint8_t* p) {
  uint64_t value = 0;
  for (int i = 7; i >= 0; --i) value = (value << 8) | p[i];
  return value;
}

// Appends to a byte vector.
class ByteWriter {
 public:
  explicit ByteWriter(std::vector<uint8_t>& out) : out_(out) {}
  void u8(uint8_t value) { out_.push_back(value); }
  void u16(uint16_t value) {
    out_.push_back(static_cast<uint8_t>(value));
    out_.push_back(static_cast<uint8_t>(value >> 8));
  }
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
  // A count followed by that many u32 values.
  void u32s(const std::vector<uint32_t>& values) {
    u32(static_cast<uint32_t>(values.size()));
    for (uint32_t value : values) u32(value);
  }

 private:
  std::vector<uint8_t>& out_;
};

// A cursor over bytes. Every read is preceded by has(): a reader never
// reads past its end, whatever the bytes claim.
class ByteReader {
 public:
  ByteReader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  size_t remaining() const { return size_ - pos_; }
  bool has(uint64_t bytes) const { return bytes <= remaining(); }
  uint8_t u8() {
    ZL_ASSERT(has(1));
    return data_[pos_++];
  }
  uint16_t u16() {
    ZL_ASSERT(has(2));
    auto value = static_cast<uint16_t>(data_[pos_] | (data_[pos_ + 1] << 8));
    pos_ += 2;
    return value;
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
  // A count (at most `limit`) followed by that many u32 values; false when
  // the count is over the limit or the values are not all there.
  bool u32s(uint64_t limit, std::vector<uint32_t>& values) {
    if (!has(4)) return false;
    uint32_t count = u32();
    if (count > limit || !has(uint64_t{count} * 4)) return false;
    values.resize(count);
    for (uint32_t& value : values) value = u32();
    return true;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

}  // namespace zonelab
