// See device_factory.h.
#include "workload/device_factory.h"

#include "conv/conv_device.h"
#include "zns/zns_device.h"

namespace zonelab {

Outcome check_device_config(const Config& config) {
  if (config.interface == "block") {
    auto geometry = conv_geometry(config);
    if (!geometry) return Error{geometry.error()};
    return {};
  }
  auto layout = ZoneLayout::make(config);
  if (!layout) return Error{layout.error()};
  return {};
}

Result<std::unique_ptr<ModeledDevice>> make_device(const Config& config, Simulator& sim) {
  if (config.interface == "block") {
    auto device = make_conv_device(config, sim);
    if (!device) return Error{device.error()};
    return std::unique_ptr<ModeledDevice>(std::move(device).value());
  }
  auto device = make_zns_device(config, sim);
  if (!device) return Error{device.error()};
  return std::unique_ptr<ModeledDevice>(std::move(device).value());
}

}  // namespace zonelab
