// See ftl_state.h; the byte layout is in docs/image-format.md.
#include "conv/ftl_state.h"

#include <fmt/format.h>

#include <algorithm>

namespace zonelab {
namespace {

constexpr uint64_t kFtlBlockRecordBytes = 17;
constexpr uint8_t kFtlBlockStateLast = 2;

Outcome read_u32s(ByteReader& reader, const char* what, uint64_t limit,
                  std::vector<uint32_t>& values) {
  if (reader.u32s(limit, values)) return {};
  return Error{fmt::format("ftl section: {} do not fit (limit {}, {} bytes left)", what, limit,
                           reader.remaining())};
}

}  // namespace

void put_ftl(ImageState& state, const FtlState& ftl) {
  std::vector<uint8_t>& body = state.sections[kSectionFtl];
  body.clear();
  body.reserve(4 + ftl.l2p.size() * 4 + 4 + ftl.blocks.size() * kFtlBlockRecordBytes);
  ByteWriter writer(body);
  writer.u32s(ftl.l2p);
  writer.u32(static_cast<uint32_t>(ftl.blocks.size()));
  for (const FtlBlockState& block : ftl.blocks) {
    writer.u8(block.state);
    writer.u32(block.next_page);
    writer.u32(block.valid_lbas);
    writer.u64(block.last_write_ns);
  }
  writer.u32(static_cast<uint32_t>(ftl.planes.size()));
  for (const FtlPlaneState& plane : ftl.planes) {
    writer.u32s(plane.free);
    writer.u32s(plane.open);
  }
  writer.u32(static_cast<uint32_t>(ftl.buffers.size()));
  for (const auto& buffer : ftl.buffers) writer.u32s(buffer);
  writer.u32s(ftl.cursors);
  writer.u64(ftl.gc_runs);
  writer.u64(ftl.gc_moved_lbas);
  writer.u64(ftl.trimmed_lbas);
  writer.u64(ftl.skipped_planes);
  writer.u64(ftl.clock_ns);
  for (const auto* times : {&ftl.plane_free_at_ns, &ftl.channel_free_at_ns}) {
    writer.u32(static_cast<uint32_t>(times->size()));
    for (uint64_t t : *times) writer.u64(t);
  }
}

Result<FtlState> get_ftl(const ImageState& state) {
  auto it = state.sections.find(kSectionFtl);
  if (it == state.sections.end()) return Error{"missing ftl section"};
  const std::vector<uint8_t>& body = it->second;
  ByteReader reader(body.data(), body.size());
  FtlState ftl;
  Outcome read = read_u32s(reader, "logical blocks", kImageFtlLbasMax, ftl.l2p);
  if (!read) return Error{read.error()};
  if (!reader.has(4)) return Error{"ftl section: block count cut short"};
  uint32_t blocks = reader.u32();
  if (blocks > kImageFtlBlocksMax || !reader.has(uint64_t{blocks} * kFtlBlockRecordBytes)) {
    return Error{fmt::format("ftl section: {} blocks do not fit in {} bytes", blocks, body.size())};
  }
  ftl.blocks.resize(blocks);
  for (uint32_t b = 0; b < blocks; ++b) {
    FtlBlockState& block = ftl.blocks[b];
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
  for (FtlPlaneState& plane : ftl.planes) {
    if (!(read = read_u32s(reader, "free blocks", blocks, plane.free))) return Error{read.error()};
    if (!(read = read_u32s(reader, "open blocks", blocks, plane.open))) return Error{read.error()};
  }
  if (!reader.has(4)) return Error{"ftl section: buffer count cut short"};
  uint32_t buffers = reader.u32();
  if (!reader.has(uint64_t{buffers} * 4)) {
    return Error{fmt::format("ftl section: {} buffers do not fit", buffers)};
  }
  ftl.buffers.resize(buffers);
  for (auto& buffer : ftl.buffers) {
    read = read_u32s(reader, "buffered LBAs", ftl.l2p.size(), buffer);
    if (!read) return Error{read.error()};
  }
  if (!(read = read_u32s(reader, "stream cursors", buffers, ftl.cursors))) {
    return Error{read.error()};
  }
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
  return ftl;
}

uint64_t ftl_growth_bytes(const FtlState& ftl, uint64_t lbas_per_page) {
  if (lbas_per_page == 0) return 0;
  uint64_t room_lbas = 0;
  for (const auto& buffer : ftl.buffers) {
    room_lbas += lbas_per_page - 1 - std::min<uint64_t>(buffer.size(), lbas_per_page - 1);
  }
  return room_lbas * 4;
}

}  // namespace zonelab
