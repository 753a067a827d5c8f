// Validation of a configuration's geometry and the zone -> flash mapping;
// see zone_layout.h.
#include "zns/zone_layout.h"

#include <fmt/format.h>

#include <bit>

#include "common/units.h"
#include "zonelab/assert.h"

namespace zonelab {
namespace {

constexpr uint64_t kMaxFlashBytes = 1ULL << 52;  // 4 PiB
constexpr uint64_t kMaxBlocks = 1ULL << 26;
constexpr uint64_t kU32Max = UINT32_MAX;

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
  if (!z.format.empty() || z.parity_placement != "none") return make_flex(c);
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
  l.sets_ = uniform_zone_sets(l.zone_size_lbas_, l.zone_capacity_lbas_, l.zone_count_);
  l.plan_unit_planes();
  l.zone_size_divisor_ = Divisor(l.zone_size_lbas_);
  l.page_divisor_ = Divisor(l.lbas_per_page_);
  auto limits = l.set_limits(c);
  if (!limits) return Error{limits.error()};
  return l;
}

Outcome ZoneLayout::set_limits(const Config& c) {
  const FlashConfig& f = c.flash;
  const ZnsConfig& z = c.zns;
  ZoneLayout& l = *this;
  const uint64_t lba = l.lba_size_bytes_;
  const uint64_t count = l.zone_count_;
  if (z.max_open != 0 && z.max_active != 0 && z.max_open > z.max_active) {
    return Error{fmt::format("zns.max_open ({}) must not exceed zns.max_active ({})", z.max_open,
                             z.max_active)};
  }
  // A FlexZNS format may make fewer zones than the controller's limits: the
  // limits then stop at the zone count.
  if (l.flex()) {
    l.max_active_ = static_cast<uint32_t>(std::min<uint64_t>(z.max_active, count));
    l.max_open_ = static_cast<uint32_t>(std::min<uint64_t>(z.max_open, count));
  } else if (z.max_active > count || z.max_open > count) {
    return Error{fmt::format("zns.max_open/max_active ({}/{}) exceed the zone count ({})",
                             z.max_open, z.max_active, count)};
  }
  if (!l.flex()) {
    l.max_active_ = static_cast<uint32_t>(z.max_active);
    l.max_open_ = static_cast<uint32_t>(z.max_open);
  }
  l.max_open_blocks_ = z.max_open_blocks;
  if (z.max_open_blocks != 0) {
    // The widest zone decides: the limits hold whichever zones are opened.
    uint32_t widest = 0;
    for (uint32_t set = 0; set < l.sets_.size(); ++set) {
      widest = std::max(widest, l.open_blocks_of_set(set));
    }
    if (z.max_open_blocks < widest) {
      if (l.flex()) {
        return Error{fmt::format(
            "zns.max_open_blocks ({}) cannot keep one zone open: a zone of the widest set holds "
            "{} open blocks ({} dies x {} planes)",
            z.max_open_blocks, widest, widest / f.planes_per_die, f.planes_per_die)};
      }
      return Error{fmt::format(
          "zns.max_open_blocks ({}) cannot keep one zone open: a zone holds {} open blocks ({} "
          "channels x {} dies x {} planes)",
          z.max_open_blocks, l.units_per_zone_, z.channels_per_zone, z.dies_per_zone,
          f.planes_per_die)};
    }
    const auto budget =
        static_cast<uint32_t>(std::min<uint64_t>(z.max_open_blocks / widest, count));
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
  return {};
}

uint32_t ZoneLayout::open_blocks_of_set(uint32_t set) const {
  if (!flex()) return units_per_zone_;
  return flex_->sets[set].dies_per_fbg * planes_per_die_;
}

uint32_t ZoneLayout::budget_zones_of_set(uint32_t set) const {
  if (max_open_blocks_ == 0) return 0;
  return static_cast<uint32_t>(
      std::min<uint64_t>(max_open_blocks_ / open_blocks_of_set(set), sets_[set].zone_count));
}

Result<ZoneLayout> ZoneLayout::make_flex(const Config& c) {
  const FlashConfig& f = c.flash;
  const ZnsConfig& z = c.zns;
  auto placement = parse_parity_placement(z.parity_placement);
  if (!placement) return Error{placement.error()};
  auto entries = parse_zone_format(z.format);
  if (!entries) return Error{"zns.format: " + entries.error()};
  const FlexGeometry geometry = flex_geometry(f);
  std::vector<ZoneSetSpec> specs;
  for (const ZoneFormatEntry& e : *entries) {
    specs.push_back({e.zone_bytes, static_cast<uint32_t>(e.count), e.first_die, e.dies});
  }
  if (specs.empty()) {
    // Parity without a format: one set of zns.zone_size zones, as many as
    // zns.zone_count or as fit.
    uint64_t size =
        z.zone_size_bytes != 0 ? z.zone_size_bytes : std::bit_ceil(z.zone_capacity_bytes);
    if (z.zone_count != 0) {
      specs.push_back({size, static_cast<uint32_t>(std::min<uint64_t>(z.zone_count, kU32Max))});
    } else {
      // The most zones that fit: fewer each step until the plan fits.
      uint64_t hi = size == 0 ? 0 : geometry.flash_bytes() / size;
      uint64_t lo = 0;
      while (lo < hi) {
        uint64_t mid = (lo + hi + 1) / 2;
        ZoneSetSpec one{size, static_cast<uint32_t>(mid)};
        if (plan_flex_layout(geometry, {&one, 1}, *placement)) {
          lo = mid;
        } else {
          hi = mid - 1;
        }
      }
      specs.push_back({size, static_cast<uint32_t>(std::max<uint64_t>(lo, 1))});
    }
  }
  auto plan = plan_flex_layout(geometry, specs, *placement);
  if (!plan) return Error{"zns.format: " + plan.error()};

  ZoneLayout l;
  l.lba_size_bytes_ = c.host.lba_size_bytes;
  l.page_size_bytes_ = f.page_size_bytes;
  l.lbas_per_page_ = static_cast<uint32_t>(f.page_size_bytes / l.lba_size_bytes_);
  l.dies_per_channel_ = static_cast<uint32_t>(f.dies_per_channel);
  l.planes_per_die_ = static_cast<uint32_t>(f.planes_per_die);
  l.pages_per_block_ = static_cast<uint32_t>(f.pages_per_block);
  l.channels_ = static_cast<uint32_t>(f.channels);
  l.flex_ = std::make_shared<const FlexLayout>(std::move(plan).value());
  const uint64_t lba = l.lba_size_bytes_;
  uint32_t first_zone = 0;
  uint64_t first_lba = 0;
  for (uint32_t set = 0; set < l.flex_->sets.size(); ++set) {
    const ZoneSetLayout& s = l.flex_->sets[set];
    if (s.zone_bytes % lba != 0 || s.capacity_bytes % lba != 0) {
      return Error{fmt::format("zns.format: zone size {} is not a multiple of host.lba_size",
                               format_size(s.zone_bytes))};
    }
    if (uint64_t{first_zone} + s.count > kU32Max) return Error{"zns.format: too many zones"};
    l.sets_.push_back({s.zone_bytes / lba, s.capacity_bytes / lba, s.count, first_zone, first_lba});
    for (uint32_t i = 0; i < s.count; ++i) {
      const Fbg& fbg = s.fbgs[i];
      FlexSlot slot;
      slot.set = set;
      slot.superblock = fbg.superblock;
      slot.first_die = fbg.first_die;
      slot.dies = fbg.dies;
      slot.data_dies = l.flex_->placement == ParityPlacement::kInZone ? fbg.dies - 1 : fbg.dies;
      if (l.flex_->placement == ParityPlacement::kInZone) {
        slot.parity.push_back({fbg.superblock, fbg.first_die + fbg.dies - 1});
      } else if (l.flex_->placement == ParityPlacement::kSeparate) {
        slot.parity = s.parity[i];
      }
      l.slots_.push_back(std::move(slot));
    }
    first_zone += s.count;
    first_lba += s.zone_bytes / lba * s.count;
  }
  const ZoneSetInfo& first = l.sets_.front();
  l.zone_count_ = first_zone;
  l.zone_size_lbas_ = first.zone_size_lbas;
  l.zone_capacity_lbas_ = first.zone_capacity_lbas;
  l.units_per_zone_ = l.slots_.front().data_dies * l.planes_per_die_;
  l.pages_per_zone_ = l.units_per_zone_ * l.pages_per_block_;
  l.pages_per_zone_unit_ = l.pages_per_block_;
  l.blocks_per_zone_unit_ = 1;
  l.stripe_bytes_ = l.units_per_zone_ * f.page_size_bytes;
  l.groups_ = 1;
  l.max_zones_ = l.zone_count_;
  l.capacity_lbas_ = first_lba;
  l.page_divisor_ = Divisor(l.lbas_per_page_);
  auto limits = l.set_limits(c);
  if (!limits) return Error{limits.error()};
  return l;
}

uint32_t ZoneLayout::flex_unit_plane(uint32_t slot, uint32_t unit) const {
  const FlexSlot& s = slots_[slot];
  ZL_ASSERT(unit < s.data_dies * planes_per_die_);
  return flex_die(s.first_die + unit % s.data_dies) * planes_per_die_ + unit / s.data_dies;
}

void ZoneLayout::plan_unit_planes() {
  // The flat plane (channel x dies_per_channel + die) x planes_per_die +
  // plane is a sum of the group's part and the unit's part: group g takes
  // channels (g mod channel_groups) x channels_per_zone on and dies
  // (g / channel_groups) x dies_per_zone on; unit u is channel u mod
  // channels_per_zone, die (u / channels_per_zone) mod dies_per_zone and
  // plane u / (channels_per_zone x dies_per_zone) within them.
  group_plane_.resize(groups_);
  for (uint32_t group = 0; group < groups_; ++group) {
    uint32_t channel = (group % channel_groups_) * channels_per_zone_;
    uint32_t die = (group / channel_groups_) * dies_per_zone_;
    group_plane_[group] = (channel * dies_per_channel_ + die) * planes_per_die_;
  }
  unit_plane_offset_.resize(units_per_zone_);
  for (uint32_t unit = 0; unit < units_per_zone_; ++unit) {
    uint32_t channel = unit % channels_per_zone_;
    uint32_t die = (unit / channels_per_zone_) % dies_per_zone_;
    uint32_t plane = unit / (channels_per_zone_ * dies_per_zone_);
    unit_plane_offset_[unit] = (channel * dies_per_channel_ + die) * planes_per_die_ + plane;
  }
}

FlashPage ZoneLayout::parity_page(uint32_t slot, uint32_t copy, uint32_t stripe) const {
  const FlexSlot& s = slots_[slot];
  ZL_ASSERT(copy < s.parity.size() && stripe < stripes_of_slot(slot));
  const ParityChunk& chunk = s.parity[copy];
  return FlashPage{flex_die(chunk.die) * planes_per_die_ + stripe % planes_per_die_,
                   chunk.superblock, stripe / planes_per_die_};
}

FlashPage ZoneLayout::locate(uint32_t slot, uint32_t page) const {
  ZL_ASSERT(page < slot_pages(slot));
  uint32_t unit = page % slot_units(slot);
  uint32_t unit_page = page / slot_units(slot);
  return FlashPage{unit_plane(slot, unit), first_block(slot) + unit_page / pages_per_block_,
                   unit_page % pages_per_block_};
}

}  // namespace zonelab
