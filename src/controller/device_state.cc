// See device_state.h; the byte layouts are in docs/image-format.md.
#include "controller/device_state.h"

#include <fmt/format.h>

namespace zonelab {
namespace {

constexpr uint64_t kZoneRecordBytes = 29;
constexpr uint64_t kLifetimeBytes = 24;

}  // namespace

Result<const std::vector<uint8_t>*> required_section(const ImageState& state, uint32_t type,
                                                     const char* name) {
  auto it = state.sections.find(type);
  if (it == state.sections.end()) return Error{fmt::format("missing {} section", name)};
  return &it->second;
}

void put_zone_records(ImageState& state, const std::vector<ZoneRecord>& zones) {
  std::vector<uint8_t>& body = state.sections[kSectionZones];
  body.clear();
  body.reserve(4 + zones.size() * kZoneRecordBytes);
  ByteWriter writer(body);
  writer.u32(static_cast<uint32_t>(zones.size()));
  for (const ZoneRecord& zone : zones) {
    writer.u8(zone.state);
    writer.u64(zone.wp);
    writer.u64(zone.data_end);
    writer.u32(zone.pages_programmed);
    writer.u64(zone.open_seq);
  }
}

Result<std::vector<ZoneRecord>> get_zone_records(const ImageState& state) {
  auto body = required_section(state, kSectionZones, "zones");
  if (!body) return Error{body.error()};
  const std::vector<uint8_t>& bytes = **body;
  if (bytes.size() < 4) return Error{"zones section is shorter than its count"};
  uint32_t count = load_u32(bytes.data());
  if (count > kImageZoneCountMax) {
    return Error{fmt::format("zones section: {} zones (limit {})", count, kImageZoneCountMax)};
  }
  uint64_t length_expected = 4 + count * kZoneRecordBytes;
  if (bytes.size() != length_expected) {
    return Error{fmt::format("zones section: {} bytes for {} zones (expected {})", bytes.size(),
                             count, length_expected)};
  }
  ByteReader reader(bytes.data() + 4, bytes.size() - 4);
  std::vector<ZoneRecord> zones(count);
  for (uint32_t i = 0; i < count; ++i) {
    ZoneRecord& zone = zones[i];
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
  return zones;
}

void put_next_open_seq(ImageState& state, uint64_t next_open_seq) {
  std::vector<uint8_t>& body = state.sections[kSectionNextOpenSeq];
  body.clear();
  ByteWriter(body).u64(next_open_seq);
}

Result<uint64_t> get_next_open_seq(const ImageState& state) {
  auto body = required_section(state, kSectionNextOpenSeq, "next-open-seq");
  if (!body) return Error{body.error()};
  if ((*body)->size() != 8) {
    return Error{fmt::format("next-open-seq section has {} bytes (expected 8)", (*body)->size())};
  }
  return load_u64((*body)->data());
}

void put_lifetime(ImageState& state, const LifetimeCounters& lifetime) {
  std::vector<uint8_t>& body = state.sections[kSectionLifetime];
  body.clear();
  ByteWriter writer(body);
  writer.u64(lifetime.host_write_bytes);
  writer.u64(lifetime.host_read_bytes);
  writer.u64(lifetime.commands);
}

Result<LifetimeCounters> get_lifetime(const ImageState& state) {
  auto body = required_section(state, kSectionLifetime, "lifetime");
  if (!body) return Error{body.error()};
  if ((*body)->size() != kLifetimeBytes) {
    return Error{fmt::format("lifetime section has {} bytes (expected {})", (*body)->size(),
                             kLifetimeBytes)};
  }
  const uint8_t* p = (*body)->data();
  return LifetimeCounters{load_u64(p), load_u64(p + 8), load_u64(p + 16)};
}

}  // namespace zonelab
