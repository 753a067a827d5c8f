// The emulator-style front end: the overrides that turn the production-drive
// features of a preset (zn540) off and put back the flash geometry and
// timings the emulator presets use: two planes a die of 16 KiB pages, each
// programmed alone (the emulators have no one-shot word-line programs).
// Experiments that compare the ZNS and the block interface on one flash as
// the emulator papers did use it, so both sides run without them.
#pragma once

#include <string>
#include <vector>

namespace zonelab {

inline const std::vector<std::string>& emulator_front_end() {
  static const std::vector<std::string> kOverrides = {
      "flash.planes_per_die=2",
      "flash.page_size=16KiB",
      "flash.transfer_latency=13653ns",
      "flash.read_latency=60us",
      "flash.program_latency=700us",
      "flash.suspend.program=false",
      "flash.suspend.erase=false",
      "buffer.size=0",
      "buffer.internal_share=100%",
      "controller.cores=0",
      "controller.read=0ns",
      "controller.write=0ns",
      "controller.management=0ns",
      "controller.flush=0ns",
      "controller.map_update=0ns",
      "controller.unmap=0ns",
      "controller.unmap_lock=100%",
      "controller.read_dispatch=arrival",
      "zns.reset.mode=sync",
      "zns.mapping.blocks=direct",
      "zns.mapping.erase_on=zone",
      "zns.finish.granularity=1MiB",
  };
  return kOverrides;
}

}  // namespace zonelab
