// Validation of a configuration's geometry and the zone -> flash mapping;
// see zone_layout.h.
#include "zns/zone_layout.h"

#include <fmt/format.h>

#include <bit>

#include "zonelab/assert.h"

namespace zonelab {
namespace {

constexpr uint64_t kMaxFlashBytes = 1ULL << 52;  // 4 PiB
constexpr uint64_t kMaxBlocks = 1ULL << 26;

}  // namespace

Result<ZoneLayout> ZoneLayout::make(const Config& c) {
  const FlashConfig& f = c.flash;
  const ZnsConfig& z = c.zns;
  if (c.interface != "zns") {
    return Error{fmt::format(
        "interface '{}' has no zone layout (the block interface's zones are a view over its "
        "FTL); interference runs take interface = \"zns\"",
        c.interface)};
  }
  if (f.channels == 0 || f.dies_per_channel == 0 || f.planes_per_die == 0 ||
      f.blocks_per_plane == 0 || f.pages_per_block == 0) {
    return Error{"flash geometry: channels, dies, planes, blocks and pages must all be > 0"};
  }
  uint64_t lba = c.host.lba_size_bytes;
  if (!std::has_single_bit(lba)) {
    return Error{fmt::format("host.lba_size = {} is not a power of two", lba)};
  }
  if (f.page_size_bytes % lba != 0) {
    return Error{fmt::format("flash.page_size ({}) is not a multiple of host.lba_size ({})",
                             f.page_size_bytes, lba)};
  }
  uint64_t planes = f.channels * f.dies_per_channel * f.planes_per_die;
  uint64_t blocks = planes * f.blocks_per_plane;
  if (blocks > kMaxBlocks) {
    return Error{
        fmt::format("flash geometry has {} blocks; at most {} are supported", blocks, kMaxBlocks)};
  }
  uint64_t block_bytes = f.pages_per_block * f.page_size_bytes;
  if (blocks * block_bytes > kMaxFlashBytes) {
    return Error{"flash geometry is larger than 4 PiB"};
  }
  if (z.channels_per_zone == 0 || f.channels % z.channels_per_zone != 0) {
    return Error{fmt::format("zns.channels_per_zone ({}) must divide flash.channels ({})",
                             z.channels_per_zone, f.channels)};
  }
  if (z.dies_per_zone == 0 || f.dies_per_channel % z.dies_per_zone != 0) {
    return Error{fmt::format("zns.dies_per_zone ({}) must divide flash.dies_per_channel ({})",
                             z.dies_per_zone, f.dies_per_channel)};
  }
  ZoneLayout l;
  l.lba_size_bytes_ = lba;
  l.page_size_bytes_ = f.page_size_bytes;
  l.lbas_per_page_ = static_cast<uint32_t>(f.page_size_bytes / lba);
  l.dies_per_channel_ = static_cast<uint32_t>(f.dies_per_channel);
  l.planes_per_die_ = static_cast<uint32_t>(f.planes_per_die);
  l.pages_per_block_ = static_cast<uint32_t>(f.pages_per_block);
  l.channels_per_zone_ = static_cast<uint32_t>(z.channels_per_zone);
  l.dies_per_zone_ = static_cast<uint32_t>(z.dies_per_zone);
  l.units_per_zone_ =
      static_cast<uint32_t>(z.channels_per_zone * z.dies_per_zone * f.planes_per_die);
  l.channel_groups_ = static_cast<uint32_t>(f.channels / z.channels_per_zone);
  l.groups_ = l.channel_groups_ * static_cast<uint32_t>(f.dies_per_channel / z.dies_per_zone);
  l.stripe_bytes_ = l.units_per_zone_ * f.page_size_bytes;

  if (z.zone_capacity_bytes == 0 || z.zone_capacity_bytes % l.stripe_bytes_ != 0) {
    return Error{fmt::format(
        "zns.zone_capacity ({} bytes) is not a multiple of the stripe ({} bytes = {} units x "
        "{}-byte pages)",
        z.zone_capacity_bytes, l.stripe_bytes_, l.units_per_zone_, f.page_size_bytes)};
  }
  uint64_t pages_per_unit = z.zone_capacity_bytes / l.stripe_bytes_;
  uint64_t blocks_per_unit = (pages_per_unit + f.pages_per_block - 1) / f.pages_per_block;
  if (blocks_per_unit > f.blocks_per_plane) {
    return Error{fmt::format(
        "zns.zone_capacity needs {} blocks in each plane of the zone, but a plane has {}",
        blocks_per_unit, f.blocks_per_plane)};
  }
  l.pages_per_zone_unit_ = static_cast<uint32_t>(pages_per_unit);
  l.pages_per_zone_ = static_cast<uint32_t>(pages_per_unit * l.units_per_zone_);
  l.blocks_per_zone_unit_ = static_cast<uint32_t>(blocks_per_unit);
  l.max_zones_ = static_cast<uint32_t>(l.groups_ * (f.blocks_per_plane / blocks_per_unit));

  uint64_t zone_size = z.zone_size_bytes;
  if (zone_size == 0) zone_size = std::bit_ceil(z.zone_capacity_bytes);
  if (zone_size < z.zone_capacity_bytes || zone_size % lba != 0) {
    return Error{fmt::format(
        "zns.zone_size ({} bytes) must be >= zns.zone_capacity ({} bytes) and a multiple of "
        "host.lba_size",
        zone_size, z.zone_capacity_bytes)};
  }
  l.zone_size_lbas_ = zone_size / lba;
  l.zone_capacity_lbas_ = z.zone_capacity_bytes / lba;
  uint64_t count = z.zone_count == 0 ? l.max_zones_ : z.zone_count;
  if (count > l.max_zones_) {
    return Error{fmt::format("zns.zone_count = {} but the flash holds at most {} zones", count,
                             l.max_zones_)};
  }
  if (count == 0) return Error{"the flash holds no zone of this capacity"};
  l.zone_count_ = static_cast<uint32_t>(count);
  if (z.max_open != 0 && z.max_active != 0 && z.max_open > z.max_active) {
    return Error{fmt::format("zns.max_open ({}) must not exceed zns.max_active ({})", z.max_open,
                             z.max_active)};
  }
  if (z.max_active > count || z.max_open > count) {
    return Error{fmt::format("zns.max_open/max_active ({}/{}) exceed the zone count ({})",
                             z.max_open, z.max_active, count)};
  }
  l.max_active_ = static_cast<uint32_t>(z.max_active);
  l.max_open_ = static_cast<uint32_t>(z.max_open);
  if (z.max_open_blocks != 0) {
    if (z.max_open_blocks < l.units_per_zone_) {
      return Error{fmt::format(
          "zns.max_open_blocks ({}) cannot keep one zone open: a zone holds {} open blocks ({} "
          "channels x {} dies x {} planes)",
          z.max_open_blocks, l.units_per_zone_, z.channels_per_zone, z.dies_per_zone,
          f.planes_per_die)};
    }
    const auto budget =
        static_cast<uint32_t>(std::min<uint64_t>(z.max_open_blocks / l.units_per_zone_, count));
    if (l.max_active_ == 0 || l.max_active_ > budget) l.max_active_ = budget;
    if (l.max_open_ == 0 || l.max_open_ > l.max_active_) l.max_open_ = l.max_active_;
  }
  if (z.zasl_bytes % lba != 0 || z.zasl_bytes < lba) {
    return Error{fmt::format("zns.zasl ({} bytes) must be a non-zero multiple of host.lba_size",
                             z.zasl_bytes)};
  }
  l.zasl_lbas_ = z.zasl_bytes / lba;
  if (z.finish_granularity_bytes % lba != 0) {
    return Error{fmt::format("zns.finish.granularity ({} bytes) is not a multiple of host.lba_size",
                             z.finish_granularity_bytes)};
  }
  if (c.host.queue_depth == 0) return Error{"host.queue_depth must be > 0"};
  if (c.host.link_bandwidth_bytes_per_s == 0) return Error{"host.link_bandwidth must be > 0"};
  return l;
}

uint32_t ZoneLayout::unit_plane(uint32_t slot, uint32_t unit) const {
  ZL_ASSERT(slot < max_zones_ && unit < units_per_zone_);
  uint32_t group = slot % groups_;
  uint32_t channel = (group % channel_groups_) * channels_per_zone_ + unit % channels_per_zone_;
  uint32_t die =
      (group / channel_groups_) * dies_per_zone_ + (unit / channels_per_zone_) % dies_per_zone_;
  uint32_t plane = unit / (channels_per_zone_ * dies_per_zone_);
  return (channel * dies_per_channel_ + die) * planes_per_die_ + plane;
}

FlashPage ZoneLayout::locate(uint32_t slot, uint32_t page) const {
  ZL_ASSERT(page < pages_per_zone_);
  uint32_t unit = page % units_per_zone_;
  uint32_t unit_page = page / units_per_zone_;
  return FlashPage{unit_plane(slot, unit), first_block(slot) + unit_page / pages_per_block_,
                   unit_page % pages_per_block_};
}

}  // namespace zonelab
