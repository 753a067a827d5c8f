// See device_factory.h.
#include "stack/device_factory.h"

#include "controller/drive.h"
#include "conv/conv_device.h"
#include "zns/zns_device.h"

namespace zonelab {

Outcome check_device_config(const Config& config) {
  Outcome drive = check_drive_config(config);
  if (!drive) return drive;
  if (config.interface == "block") {
    auto geometry = conv_geometry(config);
    if (!geometry) return Error{geometry.error()};
    return {};
  }
  auto layout = ZoneLayout::make(config);
  if (!layout) return Error{layout.error()};
  return {};
}

Result<DeviceInfo> device_info_of(const Config& config) {
  DeviceInfo info;
  if (config.interface == "block") {
    auto geometry = conv_geometry(config);
    if (!geometry) return Error{geometry.error()};
    info.interface = "block";
    info.lba_size_bytes = config.host.lba_size_bytes;
    info.zone_size_lbas = geometry->zone_capacity_lbas;
    info.zone_capacity_lbas = geometry->zone_capacity_lbas;
    info.zone_count = geometry->zone_count;
    info.capacity_lbas = uint64_t{geometry->zone_count} * geometry->zone_capacity_lbas;
    info.zone_sets =
        uniform_zone_sets(info.zone_size_lbas, info.zone_capacity_lbas, info.zone_count);
    return info;
  }
  auto layout = ZoneLayout::make(config);
  if (!layout) return Error{layout.error()};
  info.interface = "zns";
  info.lba_size_bytes = layout->lba_size_bytes();
  info.zone_size_lbas = layout->zone_size_lbas();
  info.zone_capacity_lbas = layout->zone_capacity_lbas();
  info.zone_count = layout->zone_count();
  info.capacity_lbas = layout->capacity_lbas();
  info.max_open = layout->max_open();
  info.max_active = layout->max_active();
  info.zasl_lbas = layout->zasl_lbas();
  info.zone_sets = layout->sets();
  info.stored_lbas = layout->backing_lbas();
  info.volatile_write_cache = has_volatile_write_cache(config);
  return info;
}

Result<std::unique_ptr<ModeledDevice>> make_device(const Config& config, Simulator& sim,
                                                   std::unique_ptr<Backing> backing) {
  Outcome drive = check_drive_config(config);
  if (!drive) return Error{drive.error()};
  if (config.interface == "block") {
    auto device = make_conv_device(config, sim, std::move(backing));
    if (!device) return Error{device.error()};
    return std::unique_ptr<ModeledDevice>(std::move(device).value());
  }
  auto device = make_zns_device(config, sim, std::move(backing));
  if (!device) return Error{device.error()};
  return std::unique_ptr<ModeledDevice>(std::move(device).value());
}

}  // namespace zonelab
