// Makes the device a configuration describes: the ZNS SSD or, with
// interface = "block", the conventional SSD on the same flash. The only
// place above the devices that names them; everything else sees a
// ModeledDevice.
#pragma once

#include <memory>

#include "controller/modeled_device.h"
#include "sim/simulator.h"
#include "store/backing.h"
#include "zonelab/config.h"
#include "zonelab/result.h"

namespace zonelab {

// Checks a configuration as a whole for the device it describes.
Outcome check_device_config(const Config& config);

// The attributes of the device a configuration describes, without building
// it (cheap for any size of flash); the configuration is checked first.
Result<DeviceInfo> device_info_of(const Config& config);

// `backing` may be null: store.backing then decides (none or memory; file
// needs a device image's backing).
Result<std::unique_ptr<ModeledDevice>> make_device(const Config& config, Simulator& sim,
                                                   std::unique_ptr<Backing> backing = nullptr);

}  // namespace zonelab
