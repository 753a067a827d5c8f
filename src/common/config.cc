// Configuration keys, TOML loading, overrides and printing; see
// zonelab/config.h. Every key is declared once in keys() below: its name,
// kind, limits and where it lives in Config. Loading, printing and the
// configuration reference all walk that one table.
#include "zonelab/config.h"

#include <fmt/format.h>

#include <functional>
#include <limits>
#include <nlohmann/json.hpp>

#include "common/schedulers.h"
#include "common/text_input.h"
#include "common/units.h"

namespace zonelab {

std::string_view preset_toml(std::string_view name);  // presets.cc

namespace {

enum class Kind { kCount, kSize, kTime, kRate, kBool, kChoice, kPercent, kZoneFormat };

struct Key {
  std::string name;
  Kind kind;
  uint64_t min;
  uint64_t max;
  std::vector<std::string> choices;  // kChoice only
  std::string description;
  std::function<uint64_t&(Config&)> number;   // numeric kinds
  std::function<std::string&(Config&)> text;  // kChoice
};

constexpr uint64_t kU32 = std::numeric_limits<uint32_t>::max();
constexpr uint64_t kU64 = std::numeric_limits<uint64_t>::max();
constexpr uint64_t kTenSecondsNs = 10'000'000'000ULL;
constexpr uint64_t kPiB = 1ULL << 50;
constexpr uint64_t kTiB = 1ULL << 40;

#define ZL_NUM(path) [](Config& c) -> uint64_t& { return c.path; }
#define ZL_TEXT(path) [](Config& c) -> std::string& { return c.path; }

std::vector<Key> make_keys() {
  std::vector<Key> k;
  auto num = [&k](std::string name, Kind kind, uint64_t min, uint64_t max, std::string desc,
                  std::function<uint64_t&(Config&)> ref) {
    k.push_back(Key{std::move(name), kind, min, max, {}, std::move(desc), std::move(ref), {}});
  };
  auto choice = [&k](std::string name, std::vector<std::string> choices, std::string desc,
                     std::function<std::string&(Config&)> ref) {
    k.push_back(Key{std::move(name),
                    Kind::kChoice,
                    0,
                    0,
                    std::move(choices),
                    std::move(desc),
                    {},
                    std::move(ref)});
  };
  choice("interface", {"zns", "block"},
         "device interface: `zns`, or `block` (a conventional SSD with an FTL on the same flash)",
         ZL_TEXT(interface));
  num("seed", Kind::kCount, 0, kU64, "the one source of randomness", ZL_NUM(seed));

  num("flash.channels", Kind::kCount, 1, 1024, "channels", ZL_NUM(flash.channels));
  num("flash.dies_per_channel", Kind::kCount, 1, 1024, "dies (ways) on each channel",
      ZL_NUM(flash.dies_per_channel));
  num("flash.planes_per_die", Kind::kCount, 1, 16, "planes in each die",
      ZL_NUM(flash.planes_per_die));
  num("flash.blocks_per_plane", Kind::kCount, 1, 1 << 22, "erase blocks in each plane",
      ZL_NUM(flash.blocks_per_plane));
  num("flash.pages_per_block", Kind::kCount, 1, 1 << 16, "pages in each block",
      ZL_NUM(flash.pages_per_block));
  num("flash.page_size", Kind::kSize, 512, 1 << 20, "flash page size",
      ZL_NUM(flash.page_size_bytes));
  num("flash.read_latency", Kind::kTime, 0, kTenSecondsNs, "tR: page read into the register",
      ZL_NUM(flash.read_latency_ns));
  num("flash.program_latency", Kind::kTime, 0, kTenSecondsNs, "tPROG: page program",
      ZL_NUM(flash.program_latency_ns));
  num("flash.erase_latency", Kind::kTime, 0, kTenSecondsNs, "tBERS: block erase",
      ZL_NUM(flash.erase_latency_ns));
  num("flash.transfer_latency", Kind::kTime, 0, kTenSecondsNs,
      "one full page over the channel (a partial page takes its share)",
      ZL_NUM(flash.transfer_latency_ns));
  num("flash.suspend.program", Kind::kBool, 0, 1,
      "a read that finds its plane programming suspends the program (production NAND "
      "controllers); off for the emulator presets",
      ZL_NUM(flash.suspend_program));
  num("flash.suspend.erase", Kind::kBool, 0, 1,
      "a read that finds its plane erasing suspends the erase", ZL_NUM(flash.suspend_erase));
  num("flash.suspend.latency", Kind::kTime, 0, 1'000'000,
      "tSUS: from the read's arrival until the plane is free to sense (shorter than tPROG)",
      ZL_NUM(flash.suspend_latency_ns));
  num("flash.suspend.resume", Kind::kTime, 0, 1'000'000,
      "time the suspended operation loses when it resumes", ZL_NUM(flash.suspend_resume_ns));
  num("flash.suspend.max", Kind::kCount, 1, 1024,
      "suspensions one program or erase allows; later reads wait for it",
      ZL_NUM(flash.suspend_max));
  num("flash.channel_backfill", Kind::kBool, 0, 1,
      "a channel's idle time before work booked for later (a write's transfers, booked for "
      "when its data will have crossed the host link) takes work ready earlier that fits; off: "
      "first come, first served with no back-filling (ConfZNS's local clocks)",
      ZL_NUM(flash.channel_backfill));

  num("host.lba_size", Kind::kSize, 512, 1 << 16, "logical block size (a power of two)",
      ZL_NUM(host.lba_size_bytes));
  num("host.command_overhead", Kind::kTime, 0, kTenSecondsNs,
      "controller time added to every command", ZL_NUM(host.command_overhead_ns));
  num("host.link_bandwidth", Kind::kRate, 1, kTiB, "host link bandwidth (data in and out)",
      ZL_NUM(host.link_bandwidth_bytes_per_s));
  num("host.queue_depth", Kind::kCount, 1, 65536,
      "commands the device works on at once; more wait in its submission queue",
      ZL_NUM(host.queue_depth));
  std::string scheduler_help = "host I/O scheduler in front of the device: ";
  for (size_t i = 0; i < schedulers().size(); ++i) {
    const SchedulerEntry& s = schedulers()[i];
    if (i > 0) scheduler_help += i + 1 == schedulers().size() ? " or " : ", ";
    scheduler_help += fmt::format("{} ({})", s.name, s.summary);
  }
  choice("host.scheduler", scheduler_names(), scheduler_help, ZL_TEXT(host.scheduler));
  num("host.deadline.read_expire", Kind::kTime, 1000, kTenSecondsNs * 6,
      "mq-deadline: a read waiting this long is served first",
      ZL_NUM(host.deadline_read_expire_ns));
  num("host.deadline.write_expire", Kind::kTime, 1000, kTenSecondsNs * 6,
      "mq-deadline: a write waiting this long is served first",
      ZL_NUM(host.deadline_write_expire_ns));
  num("host.deadline.fifo_batch", Kind::kCount, 1, 4096,
      "mq-deadline: requests dispatched in one direction before it looks again",
      ZL_NUM(host.deadline_fifo_batch));
  num("host.deadline.writes_starved", Kind::kCount, 1, 1024,
      "mq-deadline: read batches that may pass waiting writes",
      ZL_NUM(host.deadline_writes_starved));
  num("host.zinc.epoch", Kind::kTime, 1000, kTenSecondsNs,
      "zinc: the window after which a held reset/finish is reconsidered (reset epoch)",
      ZL_NUM(host.zinc_epoch_ns));
  num("host.zinc.write_tokens", Kind::kCount, 0, kU32,
      "zinc: I/O dispatched since the last management command that lets the next one go",
      ZL_NUM(host.zinc_write_tokens));
  num("host.zinc.max_holds", Kind::kCount, 0, 1 << 20,
      "zinc: epochs a management command may be held before it goes anyway",
      ZL_NUM(host.zinc_max_holds));
  num("host.zinc.min_concurrency", Kind::kCount, 0, 1 << 20,
      "zinc: below this many I/Os in flight or queued, management commands go at once",
      ZL_NUM(host.zinc_min_concurrency));
  num("host.softfinish.chunk", Kind::kSize, 512, 1ULL << 30,
      "softfinish: bytes per host write that fills the zone (a multiple of host.lba_size)",
      ZL_NUM(host.softfinish_chunk_bytes));
  num("host.softfinish.pause", Kind::kTime, 0, kTenSecondsNs,
      "softfinish: pause between its writes", ZL_NUM(host.softfinish_pause_ns));

  num("zns.channels_per_zone", Kind::kCount, 1, 1024,
      "channels one zone spans (SU = 1x1, FU = all x all)", ZL_NUM(zns.channels_per_zone));
  num("zns.dies_per_zone", Kind::kCount, 1, 1024, "dies per channel one zone spans",
      ZL_NUM(zns.dies_per_zone));
  num("zns.zone_capacity", Kind::kSize, 1, kTiB, "writable capacity of a zone",
      ZL_NUM(zns.zone_capacity_bytes));
  num("zns.zone_size", Kind::kSize, 0, kTiB,
      "LBA span of a zone; 0 = next power of two >= capacity", ZL_NUM(zns.zone_size_bytes));
  num("zns.zone_count", Kind::kCount, 0, 1 << 24, "zones; 0 = as many as the flash holds",
      ZL_NUM(zns.zone_count));
  num("zns.max_open", Kind::kCount, 0, kU32, "maximum open resources (MOR+1); 0 = no limit",
      ZL_NUM(zns.max_open));
  num("zns.max_active", Kind::kCount, 0, kU32, "maximum active resources (MAR+1); 0 = no limit",
      ZL_NUM(zns.max_active));
  num("zns.max_open_blocks", Kind::kCount, 0, kU32,
      "open flash blocks the controller keeps; a zone holds one per plane it spans while active; "
      "0 = no budget",
      ZL_NUM(zns.max_open_blocks));
  num("zns.zasl", Kind::kSize, 512, kTiB, "zone append size limit", ZL_NUM(zns.zasl_bytes));
  choice("zns.reset.mode", {"sync", "async"},
         "sync: a reset erases at once; async: it changes metadata only and the erase is fused "
         "with the zone's first write",
         ZL_TEXT(zns.reset_mode));
  choice("zns.reset.erase", {"partial", "full"},
         "reset erases only the blocks that hold data (partial) or every block of the zone (full)",
         ZL_TEXT(zns.reset_erase));
  num("zns.reset.preemptive", Kind::kBool, 0, 1,
      "a reset's erases go one block per plane at a time and wait while host reads or writes "
      "are in flight",
      ZL_NUM(zns.reset_preemptive));
  choice("zns.mapping.blocks", {"direct", "lazy"},
         "direct: a zone always uses the same blocks; lazy: a zone takes free blocks at its "
         "first write and a reset returns them to a pool (seed 003 4.3)",
         ZL_TEXT(zns.mapping_blocks));
  choice("zns.mapping.erase_on", {"zone", "block"},
         "blocks that still hold old data are erased all at the zone's first write (zone) or "
         "each at the first write to it (block)",
         ZL_TEXT(zns.mapping_erase_on));
  k.push_back(
      Key{"zns.format",
          Kind::kZoneFormat,
          0,
          0,
          {},
          "FlexZNS zone sets, SIZE:COUNT[@DIES],... in LBA order (e.g. \"512MiB:64,2GiB:480\", "
          "or an array of {size, count, dies} tables); each zone a flash block group in "
          "superblocks of its set, mapped at its first write (seed 001 §III-B); @0-3 "
          "binds a set to dies 0 to 3 (§IV-D); replaces "
          "zone_size, zone_capacity, zone_count and the zone -> unit mapping; empty: "
          "zones of one size",
          {},
          ZL_TEXT(zns.format)});
  choice("zns.parity.placement", {"none", "in-zone", "separate"},
         "die-level RAID parity of each zone: none, in-zone (one die of the zone holds it, so "
         "capacity < size, Table I) or separate (FlexZNS's parity area: capacity = size)",
         ZL_TEXT(zns.parity_placement));
  num("zns.finish.granularity", Kind::kSize, 0, kTiB,
      "finish fills the zone with device writes of this size, one at a time (seed 003 4.1); "
      "0 = no fill, only the partly written page is padded",
      ZL_NUM(zns.finish_granularity_bytes));
  num("zns.finish.pause", Kind::kTime, 0, kTenSecondsNs, "pause between finish fill writes",
      ZL_NUM(zns.finish_pause_ns));
  num("zns.finish.dynamic", Kind::kBool, 0, 1,
      "finish fill writes wait while host reads or writes are in flight",
      ZL_NUM(zns.finish_dynamic));

  num("block.overprovisioning", Kind::kPercent, 1, 40000,
      "block interface: spare flash as a share of the host capacity (host capacity = flash / "
      "(1 + OP))",
      ZL_NUM(block.overprovisioning_bp));
  choice("block.gc", {"greedy", "cost-benefit"},
         "block interface: garbage collection victim, the block with the fewest valid pages "
         "(greedy) or the best (1 - u) / 2u x age (cost-benefit)",
         ZL_TEXT(block.gc));
  num("block.streams", Kind::kCount, 1, 16,
      "block interface: write streams, each filling its own open blocks", ZL_NUM(block.streams));
  choice("block.zone_reset", {"trim", "keep"},
         "block interface: what a zone reset of the zoned view tells the FTL: trim (the range is "
         "stale at once) or keep (nothing; the data stays valid until written again, as under a "
         "file system that never discards)",
         ZL_TEXT(block.zone_reset));
  num("block.gc_watermark", Kind::kCount, 1, 1024,
      "block interface: a plane with fewer free blocks than this collects garbage until it has "
      "one more",
      ZL_NUM(block.gc_watermark));

  num("buffer.size", Kind::kSize, 0, kTiB,
      "controller write-back buffer: writes complete when their data is in it, and it drains "
      "to flash a page at a time; 0 = none (writes complete when programmed)",
      ZL_NUM(buffer.size_bytes));
  choice("buffer.power_loss_protection", {"on", "off"},
         "on: the buffer survives a power cut (capacitors); off: a volatile write cache, whose "
         "data not yet on flash is lost at a power cut unless a Flush completed",
         ZL_TEXT(buffer.power_loss_protection));

  num("buffer.internal_share", Kind::kPercent, 1, 10000,
      "the share of the buffer a finish fill (device-internal writes) may hold at once; host "
      "writes keep the rest",
      ZL_NUM(buffer.internal_share_bp));

  num("controller.cores", Kind::kCount, 0, 1024,
      "firmware cores that serve every command for its service time; 0 = none (only "
      "host.command_overhead, as an emulator)",
      ZL_NUM(controller.cores));
  num("controller.read", Kind::kTime, 0, kTenSecondsNs / 10, "firmware service time of a read",
      ZL_NUM(controller.read_ns));
  num("controller.write", Kind::kTime, 0, kTenSecondsNs / 10,
      "firmware service time of a write or append", ZL_NUM(controller.write_ns));
  num("controller.management", Kind::kTime, 0, kTenSecondsNs / 10,
      "firmware service time of a zone management command", ZL_NUM(controller.management_ns));
  num("controller.flush", Kind::kTime, 0, kTenSecondsNs / 10, "firmware service time of a Flush",
      ZL_NUM(controller.flush_ns));
  num("controller.map_update", Kind::kTime, 0, 1'000'000,
      "mapping-table time a write takes per 4 KiB (a resource shared with reset bookkeeping)",
      ZL_NUM(controller.map_update_ns));
  num("controller.unmap", Kind::kTime, 0, kTenSecondsNs,
      "time a zone reset's bookkeeping takes per GiB of the zone's mapped data, on a core and "
      "holding the mapping table for its unmap_lock share (0 = none)",
      ZL_NUM(controller.unmap_ns_per_gib));
  num("controller.unmap_lock", Kind::kPercent, 1, 10000,
      "the share of a reset's bookkeeping that holds the mapping table (from its start); the "
      "rest runs on its core alone, and resets are booked one at a time",
      ZL_NUM(controller.unmap_lock_bp));
  choice("controller.read_dispatch", {"arrival", "die"},
         "arrival: a read takes a firmware core as it arrives, in arrival order; die: the "
         "firmware queues reads by die and takes one only when no other read is in flight on "
         "its die, the oldest such read first (a flash scheduler's per-die queues)",
         ZL_TEXT(controller.read_dispatch));

  choice("store.backing", {"", "none", "memory", "file"},
         "where data lives: none (metadata only), memory, or file (the image); empty = file "
         "for images, none otherwise",
         ZL_TEXT(store.backing));
  (void)kPiB;
  return k;
}

#undef ZL_NUM
#undef ZL_TEXT

const std::vector<Key>& keys() {
  static const std::vector<Key> kKeys = make_keys();
  return kKeys;
}

const Key* find_key(std::string_view name) {
  for (const auto& key : keys()) {
    if (key.name == name) return &key;
  }
  return nullptr;
}

std::string unknown_key_message(std::string_view name, std::string_view origin) {
  return fmt::format("{}: unknown configuration key '{}' (see docs/configuration.md)", origin,
                     name);
}

Result<uint64_t> parse_number(const Key& key, std::string_view text) {
  switch (key.kind) {
    case Kind::kCount:
      return parse_count(text);
    case Kind::kSize:
      return parse_size_bytes(text);
    case Kind::kTime:
      return parse_time_ns(text);
    case Kind::kRate:
      return parse_rate_bytes_per_s(text);
    case Kind::kBool:
      if (text == "true") return uint64_t{1};
      if (text == "false") return uint64_t{0};
      return Error{fmt::format("'{}' is not true or false", one_line(text, 40))};
    case Kind::kPercent:
      return parse_percent_basis_points(text);
    case Kind::kChoice:
    case Kind::kZoneFormat:
      break;
  }
  return Error{"internal: not a numeric key"};
}

std::string render_number(const Key& key, uint64_t value) {
  switch (key.kind) {
    case Kind::kSize:
      return format_size(value);
    case Kind::kTime:
      return format_time(value);
    case Kind::kRate:
      return format_rate(value);
    case Kind::kBool:
      return value != 0 ? "true" : "false";
    case Kind::kPercent:
      return format_percent_basis_points(value);
    default:
      return fmt::format("{}", value);
  }
}

std::string printable(std::string_view text) { return one_line(text, 80); }

// Sets `key` from its textual form; the one place limits are checked.
Outcome set_from_text(Config& config, const Key& key, std::string_view text,
                      std::string_view origin) {
  if (key.kind == Kind::kZoneFormat) {
    auto sets = parse_zone_format(text);
    if (!sets) return Error{fmt::format("{}: {}: {}", origin, key.name, sets.error())};
    key.text(config) = zone_format_text(*sets);
    return {};
  }
  if (key.kind == Kind::kChoice) {
    for (const auto& choice : key.choices) {
      if (choice == text) {
        key.text(config) = std::string(text);
        return {};
      }
    }
    std::string allowed;
    for (const auto& choice : key.choices) {
      if (choice.empty()) continue;
      allowed += allowed.empty() ? choice : ", " + choice;
    }
    return Error{
        fmt::format("{}: {} = '{}' is not one of: {}", origin, key.name, printable(text), allowed)};
  }
  auto value = parse_number(key, text);
  if (!value) {
    return Error{fmt::format("{}: {}: invalid value '{}'", origin, key.name, printable(text))};
  }
  if (*value < key.min || *value > key.max) {
    return Error{fmt::format("{}: {} = {} is out of range [{}, {}]", origin, key.name,
                             printable(text), render_number(key, key.min),
                             render_number(key, key.max))};
  }
  key.number(config) = *value;
  return {};
}

// zns.format as TOML's array of tables: [{size = "512MiB", count = 64}, ...].
Result<std::string> zone_format_from_array(const toml::array& array) {
  if (array.size() > kMaxZoneSets) {
    return Error{fmt::format("{} zone sets; at most {}", array.size(), kMaxZoneSets)};
  }
  std::string text;
  for (const auto& item : array) {
    const auto* set = item.as_table();
    if (set == nullptr) return Error{"each zone set is a table {size = \"...\", count = N}"};
    std::string size;
    std::string count;
    std::string dies;
    for (const auto& [name, value] : *set) {
      std::string field;
      if (auto v = value.as_string()) {
        field = v->get();
      } else if (auto n = value.as_integer(); n && n->get() >= 0) {
        field = fmt::format("{}", n->get());
      } else {
        return Error{
            fmt::format("zone set field '{}' must be a size or a count", printable(name.str()))};
      }
      if (name.str() == "size") {
        size = field;
      } else if (name.str() == "count") {
        count = field;
      } else if (name.str() == "dies") {
        dies = field;
      } else {
        return Error{
            fmt::format("zone set field '{}' is not size, count or dies", printable(name.str()))};
      }
    }
    if (size.empty() || count.empty()) return Error{"each zone set needs a size and a count"};
    if (size.find_first_of(":,@") != std::string::npos ||
        count.find_first_of(":,@") != std::string::npos ||
        dies.find_first_of(":,@") != std::string::npos) {
      return Error{"a zone set's size, count and dies are a size, a count and dies (\"0-3\")"};
    }
    text += (text.empty() ? "" : ",") + size + ":" + count + (dies.empty() ? "" : "@" + dies);
  }
  return text;
}

Outcome set_from_node(Config& config, const Key& key, const toml::node& node,
                      std::string_view origin) {
  if (key.kind == Kind::kZoneFormat) {
    if (const auto* array = node.as_array()) {
      auto text = zone_format_from_array(*array);
      if (!text) return Error{fmt::format("{}: {}: {}", origin, key.name, text.error())};
      return set_from_text(config, key, *text, origin);
    }
    if (auto s = node.as_string()) return set_from_text(config, key, s->get(), origin);
    return Error{
        fmt::format("{}: {} must be \"SIZE:COUNT,...\" or an array of tables", origin, key.name)};
  }
  if (auto s = node.as_string()) return set_from_text(config, key, s->get(), origin);
  if (auto i = node.as_integer()) {
    if (key.kind == Kind::kChoice || key.kind == Kind::kBool) {
      return Error{fmt::format("{}: {} must be a {}", origin, key.name,
                               key.kind == Kind::kBool ? "boolean" : "string")};
    }
    if (i->get() < 0) {
      return Error{fmt::format("{}: {} = {} must not be negative", origin, key.name, i->get())};
    }
    return set_from_text(config, key, fmt::format("{}", i->get()), origin);
  }
  if (auto b = node.as_boolean()) {
    if (key.kind != Kind::kBool) {
      return Error{fmt::format("{}: {} must not be a boolean", origin, key.name)};
    }
    return set_from_text(config, key, b->get() ? "true" : "false", origin);
  }
  if (auto f = node.as_floating_point()) {
    if (key.kind == Kind::kChoice || key.kind == Kind::kCount || key.kind == Kind::kBool) {
      return Error{fmt::format("{}: {} must be a whole number", origin, key.name)};
    }
    return set_from_text(config, key, fmt::format("{}", f->get()), origin);
  }
  return Error{
      fmt::format("{}: {} has the wrong type (expected a number or a string)", origin, key.name)};
}

Outcome apply_table(Config& config, const toml::table& table, const std::string& prefix,
                    std::string_view origin) {
  for (const auto& [name, node] : table) {
    std::string full =
        prefix.empty() ? std::string(name.str()) : prefix + "." + std::string(name.str());
    if (const auto* sub = node.as_table()) {
      auto outcome = apply_table(config, *sub, full, origin);
      if (!outcome) return outcome;
      continue;
    }
    const Key* key = find_key(full);
    if (key == nullptr) return Error{unknown_key_message(printable(full), origin)};
    auto outcome = set_from_node(config, *key, node, origin);
    if (!outcome) return outcome;
  }
  return {};
}

std::string key_value_text(const Key& key, Config& config) {
  if (key.kind == Kind::kChoice || key.kind == Kind::kZoneFormat) return key.text(config);
  return render_number(key, key.number(config));
}

}  // namespace

Outcome apply_toml(Config& config, std::string_view toml_text, std::string_view origin) {
  auto table = parse_toml(toml_text, origin);
  if (!table) return Error{table.error()};
  Config candidate = config;
  auto outcome = apply_table(candidate, *table, "", origin);
  if (!outcome) return outcome;
  config = candidate;
  return {};
}

Outcome apply_toml_file(Config& config, const std::string& path) {
  auto text = read_text_file(path, "configuration file");
  if (!text) return Error{text.error()};
  return apply_toml(config, *text, path);
}

Outcome apply_override(Config& config, std::string_view assignment) {
  auto eq = assignment.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    return Error{fmt::format("--set '{}': expected KEY=VALUE, e.g. zns.max_open=8", assignment)};
  }
  std::string_view name = assignment.substr(0, eq);
  std::string_view value = assignment.substr(eq + 1);
  while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
    value = value.substr(1, value.size() - 2);
  }
  const Key* key = find_key(name);
  if (key == nullptr) return Error{unknown_key_message(printable(name), "--set")};
  return set_from_text(config, *key, value, "--set");
}

std::string config_to_toml(const Config& config) {
  Config copy = config;
  std::string out;
  std::string section;
  for (const auto& key : keys()) {
    auto dot = key.name.find('.');
    std::string this_section = dot == std::string::npos ? "" : key.name.substr(0, dot);
    std::string leaf = dot == std::string::npos ? key.name : key.name.substr(dot + 1);
    if (this_section != section) {
      section = this_section;
      out += fmt::format("\n[{}]\n", section);
    }
    std::string value = key_value_text(key, copy);
    // TOML integers are signed 64-bit: larger counts (a seed) go as strings.
    bool quoted = (key.kind != Kind::kCount && key.kind != Kind::kBool) ||
                  key.number(copy) > static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
    out +=
        quoted ? fmt::format("{} = \"{}\"\n", leaf, value) : fmt::format("{} = {}\n", leaf, value);
  }
  return out;
}

std::string config_to_json(const Config& config) {
  Config copy = config;
  nlohmann::ordered_json root = nlohmann::ordered_json::object();
  for (const auto& key : keys()) {
    // "zns.finish.pause" -> root["zns"]["finish"]["pause"]
    nlohmann::ordered_json* slot = &root;
    size_t begin = 0;
    for (size_t dot = key.name.find('.'); dot != std::string::npos;
         begin = dot + 1, dot = key.name.find('.', begin)) {
      slot = &(*slot)[key.name.substr(begin, dot - begin)];
    }
    slot = &(*slot)[key.name.substr(begin)];
    if (key.kind == Kind::kCount) {
      *slot = key.number(copy);
    } else if (key.kind == Kind::kBool) {
      *slot = key.number(copy) != 0;
    } else {
      *slot = key_value_text(key, copy);
    }
  }
  return root.dump();
}

std::vector<ConfigKeyInfo> config_keys() {
  std::vector<ConfigKeyInfo> out;
  for (const auto& key : keys()) {
    static constexpr const char* kKindNames[] = {"count", "size",   "time",    "rate",
                                                 "bool",  "choice", "percent", "zone-format"};
    out.push_back({key.name, kKindNames[static_cast<int>(key.kind)], key.description});
  }
  return out;
}

Result<std::pair<uint32_t, uint32_t>> parse_die_range(std::string_view text) {
  // FIRST-LAST or one die; the flash decides whether the dies exist.
  size_t dash = text.find('-');
  auto first = parse_count(text.substr(0, dash));
  auto last = dash == std::string_view::npos ? first : parse_count(text.substr(dash + 1));
  if (!first || !last || *first > kU32 || *last > kU32) {
    return Error{
        fmt::format("'{}' is not a range of dies (FIRST-LAST, e.g. 0-3)", one_line(text, 40))};
  }
  if (*last < *first) {
    return Error{fmt::format("dies {}: the last die comes before the first", one_line(text, 40))};
  }
  if (*last - *first + 1 > kU32) return Error{fmt::format("dies {}: too many", one_line(text, 40))};
  return std::pair<uint32_t, uint32_t>{static_cast<uint32_t>(*first),
                                       static_cast<uint32_t>(*last - *first + 1)};
}

std::string die_range_text(uint32_t first_die, uint32_t dies) {
  return dies == 1 ? fmt::format("{}", first_die)
                   : fmt::format("{}-{}", first_die, uint64_t{first_die} + dies - 1);
}

Result<std::vector<ZoneFormatEntry>> parse_zone_format(std::string_view text) {
  std::vector<ZoneFormatEntry> sets;
  if (text.empty()) return sets;
  if (text.size() > 4096) return Error{"a zone format is at most 4096 characters"};
  size_t begin = 0;
  while (begin <= text.size()) {
    size_t comma = text.find(',', begin);
    std::string_view item = text.substr(
        begin, comma == std::string_view::npos ? std::string_view::npos : comma - begin);
    size_t colon = item.find(':');
    if (colon == std::string_view::npos) {
      return Error{
          fmt::format("zone set '{}' is not SIZE:COUNT (e.g. 512MiB:64)", one_line(item, 40))};
    }
    auto size = parse_size_bytes(item.substr(0, colon));
    if (!size || *size == 0) {
      return Error{fmt::format("zone set '{}': '{}' is not a zone size", one_line(item, 40),
                               one_line(item.substr(0, colon), 40))};
    }
    std::string_view count_text = item.substr(colon + 1);
    ZoneFormatEntry entry;
    if (size_t at = count_text.find('@'); at != std::string_view::npos) {
      auto dies = parse_die_range(count_text.substr(at + 1));
      if (!dies) {
        return Error{fmt::format("zone set '{}': {}", one_line(item, 40), dies.error())};
      }
      entry.first_die = dies->first;
      entry.dies = dies->second;
      count_text = count_text.substr(0, at);
    }
    auto count = parse_count(count_text);
    if (!count) {
      return Error{fmt::format("zone set '{}': '{}' is not a zone count", one_line(item, 40),
                               one_line(count_text, 40))};
    }
    if (*count == 0 || *count > kU32) {
      return Error{
          fmt::format("zone set '{}': the count must be 1 to {}", one_line(item, 40), kU32)};
    }
    if (sets.size() == kMaxZoneSets) {
      return Error{fmt::format("more than {} zone sets", kMaxZoneSets)};
    }
    entry.zone_bytes = *size;
    entry.count = *count;
    sets.push_back(entry);
    if (comma == std::string_view::npos) break;
    begin = comma + 1;
  }
  return sets;
}

std::string zone_format_text(const std::vector<ZoneFormatEntry>& sets) {
  std::string text;
  for (const auto& set : sets) {
    text += fmt::format("{}{}:{}", text.empty() ? "" : ",", format_size(set.zone_bytes), set.count);
    if (set.dies != 0) text += "@" + die_range_text(set.first_die, set.dies);
  }
  return text;
}

Config default_config() {
  auto config = preset_config("small");
  return config.value();
}

Result<Config> preset_config(std::string_view name) {
  std::string_view text = preset_toml(name);
  if (text.empty()) {
    std::string names;
    for (const auto& n : preset_names()) names += names.empty() ? n : ", " + n;
    return Error{fmt::format("unknown preset '{}' (presets: {})", name, names)};
  }
  Config config;
  auto outcome = apply_toml(config, text, fmt::format("preset {}", name));
  if (!outcome) return Error{outcome.error()};
  return config;
}

}  // namespace zonelab
