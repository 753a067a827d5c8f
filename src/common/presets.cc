// The shipped presets. Each is a complete configuration; docs/presets.md
// gives the source of every value (seed paper and table) and marks the
// values the papers leave open. Channel transfer times follow ConfZNS's
// 1200 MT/s (seed 002, Table 2): page_size / 1.2 GB/s.
#include <string>
#include <string_view>
#include <vector>

namespace zonelab {

namespace {

constexpr std::string_view kSmall =
    R"(# small: a quick 3 GiB device, FU-mapped zones, capacity < size.
interface = "zns"
seed = 1
[flash]
channels = 4
dies_per_channel = 2
planes_per_die = 2
blocks_per_plane = 64
pages_per_block = 192
page_size = "16KiB"
read_latency = "50us"
program_latency = "500us"
erase_latency = "3500us"
transfer_latency = "13653ns"
[host]
lba_size = "4KiB"
command_overhead = "2us"
link_bandwidth = "4GB/s"
queue_depth = 256
scheduler = "none"
deadline.read_expire = "500ms"
deadline.write_expire = "5s"
deadline.fifo_batch = 16
deadline.writes_starved = 2
zinc.epoch = "64ms"
zinc.write_tokens = 20000
zinc.max_holds = 3
zinc.min_concurrency = 3
softfinish.chunk = "16KiB"
softfinish.pause = "0ns"
[zns]
channels_per_zone = 4
dies_per_zone = 2
zone_capacity = "48MiB"
zone_size = 0
zone_count = 0
max_open = 12
max_active = 14
zasl = "512KiB"
[zns.reset]
mode = "sync"
erase = "partial"
preemptive = false
[zns.finish]
granularity = "256KiB"
pause = "0ns"
dynamic = false
[zns.mapping]
blocks = "direct"
erase_on = "zone"
[block]
overprovisioning = "7%"
gc = "greedy"
streams = 1
gc_watermark = 2
[store]
backing = ""
)";

constexpr std::string_view kConfZnsPP =
    R"(# confznspp: seed 003 section 5.2 (ConfZNS++ evaluation device).
interface = "zns"
seed = 1
[flash]
channels = 4
dies_per_channel = 1
planes_per_die = 1
blocks_per_plane = 1056
pages_per_block = 768
page_size = "16KiB"
read_latency = "60us"
program_latency = "700us"
erase_latency = "3500us"
transfer_latency = "13653ns"
[host]
lba_size = "4KiB"
command_overhead = "15us"
link_bandwidth = "3940MB/s"
queue_depth = 1024
scheduler = "none"
deadline.read_expire = "500ms"
deadline.write_expire = "5s"
deadline.fifo_batch = 16
deadline.writes_starved = 2
zinc.epoch = "64ms"
zinc.write_tokens = 20000
zinc.max_holds = 3
zinc.min_concurrency = 3
softfinish.chunk = "16KiB"
softfinish.pause = "0ns"
[zns]
channels_per_zone = 4
dies_per_zone = 1
zone_capacity = "1056MiB"
zone_size = "2GiB"
zone_count = 48
max_open = 14
max_active = 14
zasl = "512KiB"
[zns.reset]
mode = "sync"
erase = "partial"
preemptive = false
[zns.finish]
granularity = "16KiB"
pause = "0ns"
dynamic = false
[zns.mapping]
blocks = "direct"
erase_on = "zone"
[block]
overprovisioning = "7%"
gc = "greedy"
streams = 1
gc_watermark = 2
[store]
backing = ""
)";

constexpr std::string_view kZn540 =
    R"(# zn540: a large-zone drive after the WD ZN540 (seed 000 Table 3, seed 003 Table 2).
interface = "zns"
seed = 1
[flash]
channels = 8
dies_per_channel = 4
planes_per_die = 1
blocks_per_plane = 904
pages_per_block = 384
page_size = "96KiB"
read_latency = "65us"
program_latency = "2664us"
erase_latency = "3500us"
transfer_latency = "81918ns"
[flash.suspend]
program = true
erase = true
latency = "30us"
resume = "20us"
max = 12
[host]
lba_size = "4KiB"
command_overhead = "2us"
link_bandwidth = "3940MB/s"
queue_depth = 1024
scheduler = "none"
deadline.read_expire = "500ms"
deadline.write_expire = "5s"
deadline.fifo_batch = 16
deadline.writes_starved = 2
zinc.epoch = "64ms"
zinc.write_tokens = 20000
zinc.max_holds = 3
zinc.min_concurrency = 3
softfinish.chunk = "16KiB"
softfinish.pause = "0ns"
[zns]
channels_per_zone = 8
dies_per_zone = 4
zone_capacity = "1077MiB"
zone_size = "2GiB"
zone_count = 904
max_open = 14
max_active = 14
zasl = "512KiB"
[zns.reset]
mode = "async"
erase = "partial"
preemptive = false
[zns.finish]
granularity = "16KiB"
pause = "0ns"
dynamic = false
[zns.mapping]
blocks = "lazy"
erase_on = "block"
[block]
overprovisioning = "7%"
gc = "greedy"
streams = 1
gc_watermark = 2
[buffer]
size = "16MiB"
power_loss_protection = "on"
internal_share = "18.75%"
[controller]
cores = 3
read = "10us"
write = "15us"
management = "10us"
flush = "10us"
map_update = "3290ns"
unmap = "15200us"
unmap_lock = "75%"
read_dispatch = "die"
[store]
backing = ""
)";

constexpr std::string_view kZssdSmall =
    R"(# zssd-small: the small-zone ZSSD1 (seed 002 Tables 1-2, seed 004 section III).
interface = "zns"
seed = 1
[flash]
channels = 8
dies_per_channel = 2
planes_per_die = 1
blocks_per_plane = 7296
pages_per_block = 384
page_size = "48KiB"
read_latency = "65us"
program_latency = "450us"
erase_latency = "3500us"
transfer_latency = "40960ns"
[host]
lba_size = "4KiB"
command_overhead = "2us"
link_bandwidth = "3940MB/s"
queue_depth = 1024
scheduler = "none"
deadline.read_expire = "500ms"
deadline.write_expire = "5s"
deadline.fifo_batch = 16
deadline.writes_starved = 2
zinc.epoch = "64ms"
zinc.write_tokens = 20000
zinc.max_holds = 3
zinc.min_concurrency = 3
softfinish.chunk = "16KiB"
softfinish.pause = "0ns"
[zns]
channels_per_zone = 1
dies_per_zone = 1
zone_capacity = "72MiB"
zone_size = "72MiB"
zone_count = 29172
max_open = 0
max_active = 0
zasl = "480KiB"
[zns.reset]
mode = "sync"
erase = "partial"
preemptive = false
[zns.finish]
granularity = "48KiB"
pause = "0ns"
dynamic = false
[zns.mapping]
blocks = "direct"
erase_on = "zone"
[block]
overprovisioning = "7%"
gc = "greedy"
streams = 1
gc_watermark = 2
[store]
backing = ""
)";

constexpr std::string_view kZenFsPlus =
    R"(# zenfsplus: seed 004's small-zone drive (section III, Fig. 3): 32 independent zone groups.
interface = "zns"
seed = 1
[flash]
channels = 8
dies_per_channel = 4
planes_per_die = 1
blocks_per_plane = 3648
pages_per_block = 384
page_size = "48KiB"
read_latency = "65us"
program_latency = "450us"
erase_latency = "3500us"
transfer_latency = "40960ns"
[host]
lba_size = "4KiB"
command_overhead = "2us"
link_bandwidth = "3940MB/s"
queue_depth = 1024
scheduler = "none"
deadline.read_expire = "500ms"
deadline.write_expire = "5s"
deadline.fifo_batch = 16
deadline.writes_starved = 2
zinc.epoch = "64ms"
zinc.write_tokens = 20000
zinc.max_holds = 3
zinc.min_concurrency = 3
softfinish.chunk = "16KiB"
softfinish.pause = "0ns"
[zns]
channels_per_zone = 1
dies_per_zone = 1
zone_capacity = "72MiB"
zone_size = "72MiB"
zone_count = 29172
max_open = 0
max_active = 0
zasl = "480KiB"
[zns.reset]
mode = "sync"
erase = "partial"
preemptive = false
[zns.finish]
granularity = "48KiB"
pause = "0ns"
dynamic = false
[zns.mapping]
blocks = "direct"
erase_on = "zone"
[block]
overprovisioning = "7%"
gc = "greedy"
streams = 1
gc_watermark = 2
[store]
backing = ""
)";

constexpr std::string_view kFlexZns =
    R"(# flexzns: the FEMU device of seed 001 Table II (2 GiB superblock zones).
interface = "zns"
seed = 1
[flash]
channels = 8
dies_per_channel = 8
planes_per_die = 4
blocks_per_plane = 128
pages_per_block = 2048
page_size = "4KiB"
read_latency = "50us"
program_latency = "500us"
erase_latency = "5ms"
transfer_latency = "3413ns"
# FEMU books a write's channel transfers from the command's arrival; here
# they wait for the data to cross the host link first, and the channel's
# idle time until then takes reads of other dies (docs/device-model.md).
channel_backfill = true
[host]
lba_size = "4KiB"
command_overhead = "2us"
link_bandwidth = "3940MB/s"
queue_depth = 1024
scheduler = "none"
deadline.read_expire = "500ms"
deadline.write_expire = "5s"
deadline.fifo_batch = 16
deadline.writes_starved = 2
zinc.epoch = "64ms"
zinc.write_tokens = 20000
zinc.max_holds = 3
zinc.min_concurrency = 3
softfinish.chunk = "16KiB"
softfinish.pause = "0ns"
[zns]
channels_per_zone = 8
dies_per_zone = 8
zone_capacity = "2016MiB"
zone_size = "2GiB"
zone_count = 128
max_open = 0
max_active = 0
zasl = "512KiB"
[zns.reset]
mode = "sync"
erase = "partial"
preemptive = false
[zns.finish]
granularity = "1MiB"
pause = "0ns"
dynamic = false
[zns.mapping]
blocks = "direct"
erase_on = "zone"
[block]
overprovisioning = "7%"
gc = "greedy"
streams = 1
gc_watermark = 2
[store]
backing = ""
)";

struct Preset {
  std::string_view name;
  std::string_view toml;
};

// Every preset, in one table: the configuration loader, the CLI's help, the
// RocksDB URI parser and the experiments read it.
constexpr Preset kPresets[] = {
    {"small", kSmall},          {"confznspp", kConfZnsPP}, {"zn540", kZn540},
    {"zssd-small", kZssdSmall}, {"zenfsplus", kZenFsPlus}, {"flexzns", kFlexZns},
};

}  // namespace

std::string_view preset_toml(std::string_view name) {
  for (const Preset& p : kPresets) {
    if (p.name == name) return p.toml;
  }
  return {};
}

std::vector<std::string> preset_names() {
  std::vector<std::string> out;
  for (const Preset& p : kPresets) out.emplace_back(p.name);
  return out;
}

}  // namespace zonelab
