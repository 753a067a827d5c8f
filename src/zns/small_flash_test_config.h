// A small flash for device tests that count blocks and erases: 2 channels x
// 1 die x 1 plane, 8 blocks of 4 pages of 16 KiB per plane, zones of 2
// blocks per unit (4 physical zones, 16 pages a zone), tPROG 700 us, tBERS
// 3.5 ms, a 10 us page transfer and 5 us of command overhead. Shared by the
// block-mapping and the first-write tests.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "zonelab/config.h"

namespace zonelab {

inline Config small_flash_config(const std::vector<std::string>& overrides = {}) {
  Config c = *preset_config("small");
  for (const char* kv : {"store.backing=none",
                         "flash.channels=2",
                         "flash.dies_per_channel=1",
                         "flash.planes_per_die=1",
                         "flash.blocks_per_plane=8",
                         "flash.pages_per_block=4",
                         "flash.page_size=16KiB",
                         "flash.program_latency=700us",
                         "flash.erase_latency=3500us",
                         "flash.read_latency=60us",
                         "flash.transfer_latency=10us",
                         "host.command_overhead=5us",
                         "zns.channels_per_zone=2",
                         "zns.dies_per_zone=1",
                         "zns.zone_capacity=256KiB",
                         "zns.zone_size=256KiB",
                         "zns.zone_count=0",
                         "zns.max_open=0",
                         "zns.max_active=0",
                         "zns.zasl=256KiB",
                         "zns.finish.granularity=0"}) {
    EXPECT_TRUE(apply_override(c, kv).ok()) << kv;
  }
  for (const std::string& kv : overrides) EXPECT_TRUE(apply_override(c, kv).ok()) << kv;
  return c;
}

}  // namespace zonelab
