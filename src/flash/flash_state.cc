// See flash_state.h.
#include "flash/flash_state.h"

#include <fmt/format.h>

namespace zonelab {

void put_erase_counts(ImageState& state, const std::vector<uint32_t>& erase_counts) {
  std::vector<uint8_t>& body = state.sections[kSectionEraseCounts];
  body.clear();
  body.reserve(4 + erase_counts.size() * 4);
  ByteWriter(body).u32s(erase_counts);
}

Result<std::vector<uint32_t>> get_erase_counts(const ImageState& state) {
  auto it = state.sections.find(kSectionEraseCounts);
  if (it == state.sections.end()) return Error{"missing erase-counts section"};
  const std::vector<uint8_t>& body = it->second;
  if (body.size() < 4) return Error{"erase-counts section is shorter than its count"};
  uint32_t count = load_u32(body.data());
  if (count > kImageEraseCountsMax) {
    return Error{
        fmt::format("erase-counts section: {} blocks (limit {})", count, kImageEraseCountsMax)};
  }
  uint64_t length_expected = 4 + uint64_t{count} * 4;
  if (body.size() != length_expected) {
    return Error{fmt::format("erase-counts section: {} bytes for {} blocks (expected {})",
                             body.size(), count, length_expected)};
  }
  std::vector<uint32_t> counts(count);
  for (uint32_t i = 0; i < count; ++i) counts[i] = load_u32(body.data() + 4 + uint64_t{i} * 4);
  return counts;
}

}  // namespace zonelab
