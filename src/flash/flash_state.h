// The flash's part of a device image: every block's erase count (section 4,
// docs/image-format.md), so wear carries over from process to process.
#pragma once

#include <cstdint>
#include <vector>

#include "store/image.h"
#include "zonelab/result.h"

namespace zonelab {

inline constexpr uint32_t kSectionEraseCounts = 4;
inline constexpr uint64_t kImageEraseCountsMax = 1ULL << 26;

void put_erase_counts(ImageState& state, const std::vector<uint32_t>& erase_counts);
// Refuses a missing section, a count over the limit, or one that disagrees
// with the section's length.
Result<std::vector<uint32_t>> get_erase_counts(const ImageState& state);

}  // namespace zonelab
