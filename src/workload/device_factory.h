// Makes the device a configuration describes: the ZNS SSD or, with
// interface = "block", the conventional SSD on the same flash.
#pragma once

#include <memory>

#include "flash/host_interface.h"
#include "sim/simulator.h"
#include "zonelab/config.h"
#include "zonelab/result.h"

namespace zonelab {

// Checks a configuration as a whole for the device it describes.
Outcome check_device_config(const Config& config);

Result<std::unique_ptr<ModeledDevice>> make_device(const Config& config, Simulator& sim);

}  // namespace zonelab
