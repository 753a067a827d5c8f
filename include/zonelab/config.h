// The device configuration: every key of the contract's configuration table,
// in base units (bytes, nanoseconds, bytes per second). Configurations are
// built from a preset, then a TOML file, then `--set key=value` overrides,
// and checked as a whole before any device is made from them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "zonelab/result.h"

namespace zonelab {

struct FlashConfig {
  uint64_t channels = 0;
  uint64_t dies_per_channel = 0;
  uint64_t planes_per_die = 0;
  uint64_t blocks_per_plane = 0;
  uint64_t pages_per_block = 0;
  uint64_t page_size_bytes = 0;
  uint64_t read_latency_ns = 0;      // tR
  uint64_t program_latency_ns = 0;   // tPROG
  uint64_t erase_latency_ns = 0;     // tBERS
  uint64_t transfer_latency_ns = 0;  // one full page over the channel
  // Program and erase suspend: a read that finds its plane busy with a
  // program (or an erase) suspends it after `suspend_latency_ns`, is sensed,
  // and the suspended operation resumes `suspend_resume_ns` later; an
  // operation is suspended at most `suspend_max` times. Off (0) by default.
  uint64_t suspend_program = 0;
  uint64_t suspend_erase = 0;
  uint64_t suspend_latency_ns = 0;
  uint64_t suspend_resume_ns = 0;
  uint64_t suspend_max = 1;
  // A channel's idle gap before work booked for later takes work ready
  // earlier that fits (src/flash/timeline.h, ChannelTimeline). Off (0) by
  // default: ConfZNS's local clocks, no back-filling.
  uint64_t channel_backfill = 0;
};

struct HostConfig {
  uint64_t lba_size_bytes = 0;
  uint64_t command_overhead_ns = 0;
  uint64_t link_bandwidth_bytes_per_s = 0;
  uint64_t queue_depth = 0;
  // The host block layer in front of the device (src/host): "none",
  // "mq-deadline" or "zinc" (seed 003 §3.2).
  std::string scheduler = "none";
  // mq-deadline, as Linux sets it by default.
  uint64_t deadline_read_expire_ns = 500'000'000;
  uint64_t deadline_write_expire_ns = 5'000'000'000;
  uint64_t deadline_fifo_batch = 16;
  uint64_t deadline_writes_starved = 2;
  // ZINC (seed 003 §3.2 and §5.1: the configuration used on the ZN540).
  uint64_t zinc_epoch_ns = 64'000'000;
  uint64_t zinc_write_tokens = 20'000;
  uint64_t zinc_max_holds = 3;
  uint64_t zinc_min_concurrency = 3;
  // softfinish (seed 003 §3.1): finish as host writes of `chunk` bytes,
  // `pause` apart.
  uint64_t softfinish_chunk_bytes = 16 << 10;
  uint64_t softfinish_pause_ns = 0;
};

struct ZnsConfig {
  uint64_t channels_per_zone = 0;
  uint64_t dies_per_zone = 0;
  uint64_t zone_capacity_bytes = 0;
  uint64_t zone_size_bytes = 0;  // 0: next power of two >= capacity
  uint64_t zone_count = 0;       // 0: as many as the flash holds
  uint64_t max_open = 0;         // 0: no limit
  uint64_t max_active = 0;       // 0: no limit
  // The controller's budget of open (partly written) flash blocks: a zone
  // holds one in each plane it spans while active (seed 001 §III-D), so
  // this bounds the active and open zones. 0: no budget.
  uint64_t max_open_blocks = 0;
  uint64_t zasl_bytes = 0;
  // Finish designs (seed 003 section 4.1).
  uint64_t finish_granularity_bytes = 0;  // 0: no fill, pad the partial page only
  uint64_t finish_pause_ns = 0;
  uint64_t finish_dynamic = 0;  // 1: fill writes wait for host I/O in flight
  // Reset designs (seed 003 section 4.2): "partial" erases the blocks that
  // hold data, "full" every block of the zone.
  std::string reset_erase = "partial";
  // "sync" erases at the reset; "async" only updates metadata and the erase
  // happens with the zone's first write.
  std::string reset_mode = "sync";
  // 1: a reset's erases go one block per plane at a time, and wait while host
  // reads or writes are in flight (preemptive zone reset).
  uint64_t reset_preemptive = 0;
  // Block mapping (seed 003 section 4.3): "direct" keeps a zone on the same
  // blocks; "lazy" maps a zone to free blocks at its first write.
  std::string mapping_blocks = "direct";
  // Deferred erases (async reset, lazy reuse) happen all at the zone's first
  // write ("zone") or each at the first write to its block ("block").
  std::string mapping_erase_on = "zone";
  // FlexZNS (seed 001 §III): zone sets of several sizes, as text
  // "SIZE:COUNT,..." in canonical form ("512MiB:64,2GiB:480"); empty: one
  // size, from zone_size/zone_capacity/zone_count and the zone mapping
  // above. A format replaces those keys.
  std::string format;
  // Die-level RAID parity: "none", "in-zone" (a chunk of each zone holds it,
  // capacity < size, Table I) or "separate" (FlexZNS's parity area).
  std::string parity_placement = "none";
};

// One zone set of zns.format.
// `dies` > 0 binds the set to the FlexZNS dies [first_die, first_die +
// dies) ("SIZE:COUNT@FIRST-LAST"): its zones take flash block groups on
// those dies only (seed 001 §IV-D, tenants on their own dies).
struct ZoneFormatEntry {
  uint64_t zone_bytes = 0;
  uint64_t count = 0;
  uint32_t first_die = 0;
  uint32_t dies = 0;  // 0: every die
};
inline constexpr size_t kMaxZoneSets = 16;
// "512MiB:64,2GiB:480" -> its sets (sizes as config sizes; at most
// kMaxZoneSets; counts > 0); "512MiB:64@0-3" binds a set to dies 0 to 3.
// Checks syntax only; the flash decides the rest.
Result<std::vector<ZoneFormatEntry>> parse_zone_format(std::string_view text);
std::string zone_format_text(const std::vector<ZoneFormatEntry>& sets);
// "0-3" or "5" -> (first die, dies); "0-3" back from (0, 4).
Result<std::pair<uint32_t, uint32_t>> parse_die_range(std::string_view text);
std::string die_range_text(uint32_t first_die, uint32_t dies);

// The conventional (block-interface) SSD on the same flash (seed 000 2.1,
// 5.1): a page-mapped FTL with over-provisioning and garbage collection.
struct BlockConfig {
  // Spare flash as a share of the host capacity, in hundredths of a percent
  // (700 = 7%): host capacity = flash capacity / (1 + overprovisioning).
  uint64_t overprovisioning_bp = 700;
  std::string gc = "greedy";  // victim selection: "greedy" or "cost-benefit"
  uint64_t streams = 1;       // write streams, each with its own open blocks
  uint64_t gc_watermark = 2;  // a plane with fewer free blocks collects garbage
  // What the zoned view's zone reset tells the FTL: "trim" (the range's data
  // is stale at once, as a host that discards) or "keep" (nothing: the old
  // data stays valid until its LBAs are written again, as under a file
  // system that never discards).
  std::string zone_reset = "trim";
};

// The controller's write-back buffer: a write completes once its data is in
// the buffer, which drains to flash page by page; with power-loss
// protection off the buffer is a volatile write cache (NVMe VWC) that a
// power cut empties unless a Flush made it durable. 0 bytes: no buffer.
struct BufferConfig {
  uint64_t size_bytes = 0;
  std::string power_loss_protection = "on";  // "on" or "off"
  // The share of the buffer a finish fill may hold at once, in hundredths
  // of a percent (host writes keep the rest).
  uint64_t internal_share_bp = 10000;
};

// The controller's own work. `cores` firmware cores serve each command for
// its service time before the fixed host.command_overhead (0 cores: no
// service, as an emulator). The mapping table is one more shared resource:
// a write updates it for `map_update_ns` per 4 KiB (with a buffer after the
// write completes, and the pages' buffer space waits for it), and a zone
// reset's bookkeeping takes `unmap_ns_per_gib` per GiB mapped on a core (one
// reset at a time), holding the table for the first `unmap_lock_bp`
// hundredths of a percent of it; the erase itself waits for the blocks'
// reuse (zns.reset.mode = async). Reads do not touch the table.
struct ControllerConfig {
  uint64_t cores = 0;
  uint64_t read_ns = 0;
  uint64_t write_ns = 0;
  uint64_t management_ns = 0;
  uint64_t flush_ns = 0;
  uint64_t map_update_ns = 0;
  uint64_t unmap_ns_per_gib = 0;
  uint64_t unmap_lock_bp = 10000;
  // "arrival": a read takes a core when it arrives, in arrival order; "die":
  // the firmware queues reads by die and takes one only when no other read
  // is in flight on its die, the oldest such read first.
  std::string read_dispatch = "arrival";
};

struct StoreConfig {
  // "none", "memory", "file", or empty: the context decides (file for an
  // image made by `create`, none for a device that lives only in memory).
  std::string backing;
};

struct Config {
  std::string interface = "zns";
  uint64_t seed = 0;
  FlashConfig flash;
  HostConfig host;
  ZnsConfig zns;
  BlockConfig block;
  BufferConfig buffer;
  ControllerConfig controller;
  StoreConfig store;
};

// Names of the shipped presets, in the order `zonelab presets` lists them.
std::vector<std::string> preset_names();
// The defaults (preset "small").
Config default_config();
Result<Config> preset_config(std::string_view name);

// Applies a TOML document over `config`; unknown keys and bad values are
// errors. `origin` names the source in error messages.
Outcome apply_toml(Config& config, std::string_view toml_text, std::string_view origin);
Outcome apply_toml_file(Config& config, const std::string& path);
// Applies one "a.b=value" override.
Outcome apply_override(Config& config, std::string_view assignment);

// The configuration as a TOML document / JSON text with every key.
std::string config_to_toml(const Config& config);
std::string config_to_json(const Config& config);

// One entry of the configuration reference.
struct ConfigKeyInfo {
  std::string name;
  std::string kind;  // count, size, time, rate, choice, text
  std::string description;
};
std::vector<ConfigKeyInfo> config_keys();

}  // namespace zonelab
