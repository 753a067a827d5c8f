// Device commands of the `zonelab` tool; see device_commands.h.
#include "tools/device_commands.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "common/units.h"
#include "fs/device_io.h"
#include "fs/journal.h"
#include "fs/zoned_fs.h"
#include "stack/stack_report.h"
#include "zonelab/assert.h"

namespace zonelab::cli {
namespace {

constexpr uint64_t kMaxBlocks = 65536;              // NVMe NLB is 16 bits
constexpr uint64_t kMaxCommandBytes = 64ULL << 20;  // one CLI command's buffer
constexpr size_t kMaxBatchLineBytes = 4096;
constexpr const char* kBatchCommands =
    "commands: info, report, zone, write, append, read, inject, help";

void add_image(CLI::App* sub, DeviceRequest& r, bool with_image) {
  if (!with_image) return;
  sub->add_option("IMAGE", r.image, "device image file")->required();
  sub->add_flag("--json", r.json, "print JSON");
}

Json command_json(const Command& c) {
  Json j = status_json(c.status);
  j["latency_ns"] = c.latency_ns();
  return j;
}

// Zone number from --zone or --lba; returns false with an error in `out`.
bool target_lba(const DeviceInfo& info, const DeviceRequest& r, uint64_t& lba, Json& out) {
  if (r.zone) {
    if (*r.zone >= info.zone_count) {
      out["error"] = fmt::format("zone {} does not exist (the device has zones 0-{})", *r.zone,
                                 info.zone_count - 1);
      return false;
    }
    lba = info.zone_start_lba(static_cast<uint32_t>(*r.zone));
    return true;
  }
  if (r.lba) {
    lba = *r.lba;
    return true;
  }
  out["error"] = "name a zone with --zone N or --lba L (or --all)";
  return false;
}

bool check_blocks(const DeviceInfo& info, uint64_t blocks, Json& out) {
  uint64_t bytes = blocks * info.lba_size_bytes;
  if (blocks == 0 || blocks > kMaxBlocks || bytes > kMaxCommandBytes) {
    out["error"] = fmt::format("--blocks {} is out of range (1 to {}, at most 64 MiB)", blocks,
                               std::min(kMaxBlocks, kMaxCommandBytes / info.lba_size_bytes));
    return false;
  }
  return true;
}

// Zones by state and the open and active counts, from the zone report.
void zone_counts(const Device& device, Json& j) {
  const DeviceInfo& info = device.info();
  std::array<uint64_t, kZoneStateCount> counts{};
  uint64_t open = 0;
  uint64_t active = 0;
  for (uint32_t z = 0; z < info.zone_count; ++z) {
    ZoneState state = device.zone(z).state;
    ++counts[static_cast<size_t>(state)];
    if (zone_is_open(state)) ++open;
    if (zone_is_active(state)) ++active;
  }
  j["open_zones"] = open;
  j["active_zones"] = active;
  Json by_state = Json::object();
  for (int s = 0; s < kZoneStateCount; ++s) {
    by_state[std::string(zone_state_name(static_cast<ZoneState>(s)))] =
        counts[static_cast<size_t>(s)];
  }
  j["zones_by_state"] = by_state;
}

Json info_json(const Stack& stack) {
  Json j = status_json(Status::kSuccess);
  stack.inspect([&j](const ModeledDevice& device) {
    j.update(device_info_json(device.info()));
    zone_counts(device, j);
    const auto& erases = device.flash().erase_counts();
    uint64_t erase_total = 0;
    uint32_t erase_max = 0;
    uint32_t erase_min = erases.empty() ? 0 : UINT32_MAX;
    for (uint32_t e : erases) {
      erase_total += e;
      erase_max = std::max(erase_max, e);
      erase_min = std::min(erase_min, e);
    }
    j["wear"] = {{"blocks", erases.size()},
                 {"erases", erase_total},
                 {"min_erases_per_block", erase_min},
                 {"max_erases_per_block", erase_max}};
    device.describe_state(j);
    LifetimeCounters lifetime = device.lifetime();
    j["lifetime"] = {{"host_write_bytes", lifetime.host_write_bytes},
                     {"host_read_bytes", lifetime.host_read_bytes},
                     {"commands", lifetime.commands}};
    j["config"] = Json::parse(config_to_json(device.config()));
  });
  return j;
}

Json zone_json(const DeviceInfo& info, const ZoneDescriptor& d) {
  return Json{{"zone", d.zone},
              {"start", d.start_lba},
              {"capacity", d.capacity_lbas},
              {"wp", d.wp_lba},
              {"state", std::string(zone_state_name(d.state))},
              {"size", info.zone_size_of(d.zone)},
              {"set", info.uniform_zones() ? 0 : zone_set_of_zone(info.zone_sets, d.zone)}};
}

int report(const Stack& stack, const DeviceRequest& r, Json& out) {
  std::optional<ZoneState> filter;
  if (!r.state.empty()) {
    filter = zone_state_from_name(r.state);
    if (!filter) {
      out["error"] = fmt::format(
          "--state {}: expected empty, implicitly-opened, "
          "explicitly-opened, closed, full, read-only or offline",
          r.state);
      return kExitBadInput;
    }
  }
  const DeviceInfo& info = stack.info();
  out = status_json(Status::kSuccess);
  Json zones = Json::array();
  uint64_t first =
      r.from_lba < info.capacity_lbas ? info.zone_of_lba(r.from_lba) : uint64_t{info.zone_count};
  for (uint64_t z = first; z < info.zone_count; ++z) {
    if (r.limit != 0 && zones.size() >= r.limit) break;
    ZoneDescriptor d = stack.zone(static_cast<uint32_t>(z));
    if (filter && d.state != *filter) continue;
    zones.push_back(zone_json(info, d));
  }
  // FlexZNS: the dies of each zone's flash block group, once its first
  // write mapped one (null before); a set bound to dies keeps them there.
  stack.inspect([&zones](const ModeledDevice& device) {
    for (Json& z : zones) {
      Json described;
      device.describe_zone(z["zone"].get<uint32_t>(), described);
      if (!described.contains("fbg")) {
        if (described.contains("zone_set")) z["dies"] = nullptr;
        continue;
      }
      const Json& fbg = described["fbg"];
      z["dies"] = die_range_text(fbg["first_die"].get<uint32_t>(), fbg["dies"].get<uint32_t>());
    }
  });
  out["zones"] = zones;
  return kExitOk;
}

int zone_action(Stack& s, const DeviceRequest& r, Json& out) {
  auto action = zone_action_from_name(r.action);
  if (!action) {
    out["error"] =
        fmt::format("unknown zone action '{}' (open, close, finish, reset, offline)", r.action);
    return kExitBadInput;
  }
  Command c;
  c.opcode = Opcode::kZoneManagementSend;
  c.action = *action;
  c.select_all = r.all;
  if (!r.all && !target_lba(s.info(), r, c.slba, out)) return kExitBadInput;
  s.io().submit_wait(c);
  out = command_json(c);
  out["action"] = r.action;
  if (r.all) {
    out["all"] = true;
  } else {
    out["lba"] = c.slba;
    out["zone"] = c.slba < s.info().capacity_lbas ? s.info().zone_of_lba(c.slba)
                                                  : c.slba / s.info().zone_size_lbas;
  }
  return c.status == Status::kSuccess ? kExitOk : kExitDeviceError;
}

// NVMe Flush: what a volatile write cache holds becomes durable.
int flush(Stack& s, Json& out) {
  Command c;
  c.opcode = Opcode::kFlush;
  s.io().submit_wait(c);
  out = command_json(c);
  out["volatile_write_cache"] = s.info().volatile_write_cache;
  return c.status == Status::kSuccess ? kExitOk : kExitDeviceError;
}

// The bytes of --data FILE for a write of `bytes` bytes; false with the
// problem in out["error"].
bool read_data_file(const std::string& path, uint64_t bytes, std::vector<uint8_t>& data,
                    Json& out) {
  std::error_code error;
  auto status = std::filesystem::status(path, error);
  if (error || !std::filesystem::is_regular_file(status)) {
    out["error"] = fmt::format("--data {}: {}", path,
                               error ? error.message() : std::string("not a regular file"));
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  data.assign(bytes, 0);
  in.read(reinterpret_cast<char*>(data.data()), static_cast<std::streamsize>(bytes));
  if (static_cast<uint64_t>(in.gcount()) != bytes) {
    out["error"] =
        fmt::format("--data {}: holds {} bytes; the write needs {}", path, in.gcount(), bytes);
    return false;
  }
  return true;
}

// Writes the blocks read into --data FILE; false with the problem.
bool write_data_file(const std::string& path, const std::vector<uint8_t>& data, Json& out) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) {
    out["error"] = fmt::format("--data {}: is a directory", path);
    return false;
  }
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
  file.close();
  if (!file) {
    out["error"] = fmt::format("--data {}: cannot write: {}", path, std::strerror(errno));
    return false;
  }
  return true;
}

// A WRITE_FAULT or UNRECOVERED_READ_ERROR comes from the image's file (a
// full disk, a file-size limit): something the user can fix, said in one
// line, rather than a device error.
int answer(const Stack& s, const Command& c, Json& out) {
  if (c.status == Status::kWriteFault || c.status == Status::kUnrecoveredReadError) {
    std::string why = s.journal_error().empty() ? s.data_error() : s.journal_error();
    if (why.empty()) {
      // Not the image's file: the modeled media lost the data (a failed die
      // its stripe cannot rebuild). The device's answer, exit 3.
      out["reason"] = "the media could not return the data (a failed die, not rebuildable)";
      return kExitDeviceError;
    }
    out["error"] = fmt::format("{}: {}", s.image_path(), why);
    return kExitBadInput;
  }
  return c.status == Status::kSuccess ? kExitOk : kExitDeviceError;
}

int write_or_append(Stack& s, const DeviceRequest& r, Json& out, bool append) {
  const DeviceInfo& info = s.info();
  if (!check_blocks(info, r.blocks, out)) return kExitBadInput;
  uint64_t lba_size = info.lba_size_bytes;
  Command c;
  c.opcode = append ? Opcode::kAppend : Opcode::kWrite;
  c.nlb = static_cast<uint32_t>(r.blocks);
  if (append) {
    if (!target_lba(info, r, c.slba, out)) return kExitBadInput;
  } else {
    c.slba = r.lba.value_or(0);
  }
  // The pattern of an append depends on where it lands, which the device
  // decides; the model stores it at the write pointer it chooses.
  uint64_t base =
      append ? s.zone(c.slba < info.capacity_lbas ? info.zone_of_lba(c.slba) : info.zone_count - 1)
                   .wp_lba
             : c.slba;
  std::vector<uint8_t> data;
  if (!r.data_file.empty()) {
    if (!read_data_file(r.data_file, r.blocks * lba_size, data, out)) return kExitBadInput;
    c.data = data.data();
  } else if (s.stores_data()) {
    // Without a data store the pattern would be built only to be dropped.
    data.resize(r.blocks * lba_size);
    for (uint64_t i = 0; i < r.blocks; ++i)
      fill_pattern(r.seed, base + i, data.data() + i * lba_size, lba_size);
    c.data = data.data();
  }
  if (!s.io().submit_wait(c)) {
    out["error"] = fmt::format("{}: the device takes no more commands ({})", s.image_path(),
                               s.journal_error());
    return kExitBadInput;
  }
  out = command_json(c);
  if (append && info.zasl_lbas == 0) out["reason"] = "the block interface has no Zone Append";
  out["lba"] = append ? c.result_lba : c.slba;
  out["blocks"] = r.blocks;
  return answer(s, c, out);
}

int read(Stack& s, const DeviceRequest& r, Json& out) {
  if (!check_blocks(s.info(), r.blocks, out)) return kExitBadInput;
  uint64_t lba_size = s.info().lba_size_bytes;
  if (r.expect_seed && !s.stores_data()) {
    out["error"] =
        "read --expect-seed needs stored data: an image created with store.backing = \"file\" "
        "(\"memory\" keeps data only within one process, such as one batch session)";
    return kExitBadInput;
  }
  if (auto problem = output_is_image("--data", r.data_file, r.image)) {
    out["error"] = *problem;
    return kExitBadInput;
  }
  std::vector<uint8_t> data;
  Command c;
  c.opcode = Opcode::kRead;
  c.slba = r.lba.value_or(0);
  c.nlb = static_cast<uint32_t>(r.blocks);
  if (s.stores_data() || !r.data_file.empty()) {
    data.resize(r.blocks * lba_size);
    c.data = data.data();
  }
  s.io().submit_wait(c);
  out = command_json(c);
  out["lba"] = c.slba;
  out["blocks"] = r.blocks;
  if (c.status != Status::kSuccess) return answer(s, c, out);
  if (!r.data_file.empty() && !write_data_file(r.data_file, data, out)) return kExitBadInput;
  if (r.expect_seed) {
    std::vector<uint8_t> want(lba_size);
    uint64_t mismatches = 0;
    std::optional<uint64_t> first_bad;
    for (uint64_t i = 0; i < r.blocks; ++i) {
      fill_pattern(*r.expect_seed, c.slba + i, want.data(), lba_size);
      if (std::memcmp(want.data(), data.data() + i * lba_size, lba_size) != 0) {
        ++mismatches;
        if (!first_bad) first_bad = c.slba + i;
      }
    }
    out["verified"] = mismatches == 0;
    if (mismatches != 0) {
      out["mismatched_blocks"] = mismatches;
      out["first_mismatch_lba"] = *first_bad;
      return kExitDeviceError;
    }
  }
  return kExitOk;
}

// "C:D" -> channel and die; false with the problem in out["error"].
bool parse_die(const Config& config, const std::string& text, uint32_t& channel, uint32_t& way,
               Json& out) {
  auto colon = text.find(':');
  auto number = [](std::string_view part, uint64_t& value) {
    if (part.empty() || part.size() > 9) return false;
    value = 0;
    for (char ch : part) {
      if (ch < '0' || ch > '9') return false;
      value = value * 10 + static_cast<uint64_t>(ch - '0');
    }
    return true;
  };
  uint64_t c = 0;
  uint64_t d = 0;
  if (colon == std::string::npos || !number(std::string_view(text).substr(0, colon), c) ||
      !number(std::string_view(text).substr(colon + 1), d)) {
    out["error"] =
        fmt::format("--die {}: expected CHANNEL:DIE, e.g. --die 0:3", one_line(text, 40));
    return false;
  }
  if (c >= config.flash.channels || d >= config.flash.dies_per_channel) {
    out["error"] = fmt::format("--die {}: no such die (the flash has channels 0-{} and dies 0-{})",
                               one_line(text, 40), config.flash.channels - 1,
                               config.flash.dies_per_channel - 1);
    return false;
  }
  channel = static_cast<uint32_t>(c);
  way = static_cast<uint32_t>(d);
  return true;
}

int inject_die(Stack& s, const DeviceRequest& r, Json& out) {
  uint32_t channel = 0;
  uint32_t way = 0;
  if (!parse_die(s.config(), r.die, channel, way, out)) return kExitBadInput;
  Outcome changed = s.inject_die(channel, way, r.state == "failed");
  if (!changed) {
    out["error"] = changed.error();
    return kExitBadInput;
  }
  out = status_json(Status::kSuccess);
  out["die"] = fmt::format("{}:{}", channel, way);
  out["state"] = r.state;
  return kExitOk;
}

int inject(Stack& s, const DeviceRequest& r, Json& out) {
  if (r.power_loss) {
    uint32_t zones = s.power_loss();
    out = status_json(Status::kSuccess);
    out["power_loss"] = true;
    out["volatile_write_cache"] = s.info().volatile_write_cache;
    out["zones_lost_data"] = zones;
    return kExitOk;
  }
  if (!r.die.empty()) return inject_die(s, r, out);
  auto state = zone_state_from_name(r.state);
  if (!state || (*state != ZoneState::kReadOnly && *state != ZoneState::kOffline)) {
    out["error"] = fmt::format("--state {}: expected read-only or offline", r.state);
    return kExitBadInput;
  }
  uint64_t lba = 0;
  if (!target_lba(s.info(), r, lba, out)) return kExitBadInput;
  if (lba >= s.info().capacity_lbas) {
    out["error"] = fmt::format("LBA {} is beyond the device", lba);
    return kExitBadInput;
  }
  auto zone = s.info().zone_of_lba(lba);
  Outcome injected = s.inject_zone(zone, *state);
  if (!injected) {
    out["error"] = injected.error();
    return kExitBadInput;
  }
  out = status_json(Status::kSuccess);
  out["zone"] = zone;
  out["state"] = r.state;
  return kExitOk;
}

std::string latency_text(const Json& out) {
  if (!out.contains("latency_ns")) return "";
  return fmt::format(" (latency {})", format_duration(out["latency_ns"].get<uint64_t>()));
}

}  // namespace

std::optional<std::string> validate_request(const Stack& s, const DeviceRequest& r) {
  const DeviceInfo& info = s.info();
  if (r.command == "inject" && info.interface == "block" && !r.power_loss) {
    return r.die.empty()
               ? "inject: a block-interface device has no zone states to change (interface = "
                 "\"block\")"
               : "inject --die: the block-interface device does not model die failures "
                 "(interface = \"block\")";
  }
  if (r.zone && *r.zone >= info.zone_count) {
    return fmt::format("zone {} does not exist (the device has zones 0-{})", *r.zone,
                       info.zone_count - 1);
  }
  Json scratch;
  if ((r.command == "write" || r.command == "append" || r.command == "read") &&
      !check_blocks(info, r.blocks, scratch)) {
    return scratch["error"].get<std::string>();
  }
  if (r.command == "zone") {
    if (!zone_action_from_name(r.action)) {
      return fmt::format("unknown zone action '{}' (open, close, finish, reset, offline)",
                         r.action);
    }
    if (!r.all && !r.zone && !r.lba) return "name a zone with --zone N or --lba L (or --all)";
  }
  if (r.command == "inject" && r.power_loss) {
    if (r.zone || !r.die.empty() || !r.state.empty()) {
      return "inject --power-loss takes no --zone, --die or --state: the whole drive loses power";
    }
  } else if (r.command == "inject" && !r.die.empty()) {
    if (r.zone) return "inject: name a zone (--zone) or a die (--die), not both";
    if (r.state != "failed" && r.state != "ok") {
      return fmt::format("--state {}: a die is made failed, or ok again (--state failed|ok)",
                         one_line(r.state, 40));
    }
    Json problem;
    uint32_t channel = 0;
    uint32_t way = 0;
    if (!parse_die(s.config(), r.die, channel, way, problem)) {
      return problem["error"].get<std::string>();
    }
  } else if (r.command == "inject") {
    if (!r.zone) return "inject: name a zone (--zone N), a die (--die C:D) or --power-loss";
    if (r.state.empty()) return "inject --zone: say what it becomes (--state read-only|offline)";
    auto state = zone_state_from_name(r.state);
    if (!state || (*state != ZoneState::kReadOnly && *state != ZoneState::kOffline)) {
      return fmt::format("--state {}: expected read-only or offline", r.state);
    }
  }
  if (r.command == "report" && !r.state.empty() && !zone_state_from_name(r.state)) {
    return fmt::format(
        "--state {}: expected empty, implicitly-opened, explicitly-opened, closed, "
        "full, read-only or offline",
        r.state);
  }
  if (r.command == "read" && r.expect_seed && !s.stores_data()) {
    return "read --expect-seed needs stored data (store.backing = \"file\" or \"memory\")";
  }
  return std::nullopt;
}

namespace {}  // namespace

bool is_device_command(const std::string& name) {
  return name == "info" || name == "report" || name == "zone" || name == "write" ||
         name == "append" || name == "read" || name == "flush" || name == "inject";
}

bool request_mutates(const DeviceRequest& r) {
  return r.command == "zone" || r.command == "write" || r.command == "append" ||
         r.command == "flush" || r.command == "inject";
}

void add_device_commands(CLI::App& app, DeviceRequest& r, bool with_image) {
  auto* info = app.add_subcommand("info", "device attributes, zone counts, wear and configuration");
  add_image(info, r, with_image);

  auto* report = app.add_subcommand("report", "zone report: start, capacity, write pointer, state");
  add_image(report, r, with_image);
  report->add_option("--state", r.state,
                     "only zones in this state: empty, implicitly-opened, explicitly-opened, "
                     "closed, full, read-only or offline");
  add_count_option(report, "--from-lba", r.from_lba, "start at the zone holding this LBA");
  add_count_option(report, "--limit", r.limit, "at most N zones (0: all)");

  auto* zone =
      app.add_subcommand("zone", "Zone Management Send: open, close, finish, reset, offline");
  add_image(zone, r, with_image);
  zone->add_option("ACTION", r.action, "open|close|finish|reset|offline")->required();
  auto* zone_n = add_count_option(zone, "--zone", r.zone, "zone number");
  auto* zone_lba = add_count_option(zone, "--lba", r.lba, "zone start LBA");
  auto* zone_all = zone->add_flag("-a,--all,--select-all", r.all, "Select All: every zone");
  zone_n->excludes(zone_lba)->excludes(zone_all);
  zone_lba->excludes(zone_all);

  auto* write = app.add_subcommand("write", "write blocks at an LBA (must be the write pointer)");
  add_image(write, r, with_image);
  add_count_option(write, "--lba", r.lba, "starting LBA")->required();
  add_count_option(write, "--blocks", r.blocks, "number of logical blocks")->required();
  add_count_option(write, "--seed", r.seed, "data pattern seed (default 0)");
  write->add_option("--data", r.data_file,
                    "write the bytes of this file instead of a pattern (as nvme write --data)");

  auto* append = app.add_subcommand("append", "zone append: the device picks the LBA");
  add_image(append, r, with_image);
  add_count_option(append, "--zone", r.zone, "zone number")->required();
  add_count_option(append, "--blocks", r.blocks, "number of logical blocks")->required();
  add_count_option(append, "--seed", r.seed, "data pattern seed (default 0)");
  append->add_option("--data", r.data_file, "append the bytes of this file instead of a pattern");

  auto* read = app.add_subcommand("read", "read blocks; unwritten blocks read as zeros");
  add_image(read, r, with_image);
  add_count_option(read, "--lba", r.lba, "starting LBA")->required();
  add_count_option(read, "--blocks", r.blocks, "number of logical blocks")->required();
  add_count_option(read, "--expect-seed", r.expect_seed, "verify against the pattern of this seed");
  read->add_option("--data", r.data_file,
                   "write the blocks read into this file (as nvme read --data)");

  auto* flush = app.add_subcommand(
      "flush", "NVMe Flush: data in a volatile write cache becomes durable (a no-op without one)");
  add_image(flush, r, with_image);

  auto* inject = app.add_subcommand(
      "inject", "test hook: make a zone read-only or offline, fail a die, or cut the power");
  add_image(inject, r, with_image);
  add_count_option(inject, "--zone", r.zone, "zone number");
  inject->add_option("--die", r.die,
                     "CHANNEL:DIE -- the die fails (--state failed): its pages are read back from "
                     "their stripe's parity when the device has it; --state ok brings it back");
  inject->add_option("--state", r.state, "read-only|offline (a zone), failed|ok (a die)");
  inject->add_flag("--power-loss", r.power_loss,
                   "the power goes and comes back: a volatile write cache "
                   "(buffer.power_loss_protection = off) loses what no Flush covered");

  for (auto* sub : {info, report, zone, write, append, read, flush, inject}) {
    sub->callback([&r, sub] { r.command = sub->get_name(); });
  }
}

int execute_request(Stack& s, const DeviceRequest& r, Json& out) {
  out = Json::object();
  if (r.command == "info") {
    out = info_json(s);
    return kExitOk;
  }
  if (r.command == "report") return report(s, r, out);
  if (r.command == "zone") return zone_action(s, r, out);
  if (r.command == "write") return write_or_append(s, r, out, false);
  if (r.command == "append") return write_or_append(s, r, out, true);
  if (r.command == "read") return read(s, r, out);
  if (r.command == "flush") return flush(s, out);
  if (r.command == "inject") return inject(s, r, out);
  out["error"] = fmt::format("unknown command '{}'", r.command);
  return kExitBadInput;
}

void print_human(const DeviceRequest& r, const Json& out) {
  std::string status = out.value("status", "");
  if (r.command == "info") {
    fmt::print("interface        {}\n", out["interface"].get<std::string>());
    fmt::print("lba size         {}\n", format_size(out["lba_size"].get<uint64_t>()));
    uint64_t lba = out["lba_size"].get<uint64_t>();
    if (out["zone_sets"].size() > 1) {
      std::string sets;
      for (const auto& set : out["zone_sets"]) {
        sets += fmt::format("{}{} x {}", sets.empty() ? "" : " + ", set["count"].get<uint64_t>(),
                            format_size(set["size_lbas"].get<uint64_t>() * lba));
      }
      fmt::print("zones            {} in {} sets: {}\n", out["zone_count"].get<uint64_t>(),
                 out["zone_sets"].size(), sets);
    } else {
      fmt::print("zones            {} x {} (capacity {})\n", out["zone_count"].get<uint64_t>(),
                 format_size(out["zone_size_lbas"].get<uint64_t>() * lba),
                 format_size(out["zone_capacity_lbas"].get<uint64_t>() * lba));
    }
    fmt::print("capacity         {} LBAs\n", out["capacity_lbas"].get<uint64_t>());
    fmt::print("limits           max open {}, max active {} (0 = none), zasl {}\n",
               out["max_open"].get<uint64_t>(), out["max_active"].get<uint64_t>(),
               format_size(out["zasl_lbas"].get<uint64_t>() * lba));
    fmt::print("open / active    {} / {}\n", out["open_zones"].get<uint64_t>(),
               out["active_zones"].get<uint64_t>());
    std::string states;
    for (const auto& [name, count] : out["zones_by_state"].items()) {
      if (count.get<uint64_t>() != 0) states += fmt::format("{} {}  ", name, count.get<uint64_t>());
    }
    fmt::print("zone states      {}\n", states);
    fmt::print("backing          {}\n", out["config"]["store"]["backing"].get<std::string>());
    fmt::print("erases           {} (per block: min {}, max {})\n",
               out["wear"]["erases"].get<uint64_t>(),
               out["wear"]["min_erases_per_block"].get<uint64_t>(),
               out["wear"]["max_erases_per_block"].get<uint64_t>());
    if (out.contains("block_map")) {
      fmt::print("block mapping    {}, {} of {} physical zones free, {} pages awaiting erase\n",
                 out["block_map"]["mapping"].get<std::string>(),
                 out["block_map"]["free_physical_zones"].get<uint64_t>(),
                 out["block_map"]["physical_zones"].get<uint64_t>(),
                 out["block_map"]["stale_pages"].get<uint64_t>());
    }
    if (out.contains("flexzns")) {
      const Json& f = out["flexzns"];
      for (const auto& set : f["zone_sets"]) {
        fmt::print("zone set {:<7} {} x {} (capacity {}), zones {}-{}, {} dies each{}{}\n",
                   set["set"].get<uint64_t>(), set["zone_count"].get<uint64_t>(),
                   format_size(set["zone_size_bytes"].get<uint64_t>()),
                   format_size(set["zone_capacity_bytes"].get<uint64_t>()),
                   set["first_zone"].get<uint64_t>(),
                   set["first_zone"].get<uint64_t>() + set["zone_count"].get<uint64_t>() - 1,
                   set["dies_per_zone"].get<uint64_t>(),
                   set["dies_bound"].get<bool>()
                       ? fmt::format(", on dies {} only", set["dies"].get<std::string>())
                       : std::string(),
                   set["max_open_by_budget"].get<uint64_t>() != 0
                       ? fmt::format(", {} open at most by the block budget",
                                     set["max_open_by_budget"].get<uint64_t>())
                       : std::string());
      }
      fmt::print("parity           {}: {} ({:.3f} % of the flash), parity area {}\n",
                 f["parity"].get<std::string>(), format_size(f["parity_bytes"].get<uint64_t>()),
                 f["parity_percent_of_flash"].get<double>(),
                 format_size(f["parity_area_bytes"].get<uint64_t>()));
    }
    if (!out.value("failed_dies", Json::array()).empty()) {
      std::string dies;
      for (const auto& d : out["failed_dies"])
        dies += (dies.empty() ? "" : ", ") + d.get<std::string>();
      fmt::print("failed dies      {}\n", dies);
    }
    if (out.contains("ftl")) {
      const Json& f = out["ftl"];
      fmt::print(
          "ftl              {} of {} LBAs valid, {} free blocks, {} GC runs ({} LBAs moved)\n",
          f["valid_lbas"].get<uint64_t>(), f["host_lbas"].get<uint64_t>(),
          f["free_blocks"].get<uint64_t>(), f["gc_runs"].get<uint64_t>(),
          f["gc_moved_lbas"].get<uint64_t>());
    }
    return;
  }
  if (r.command == "report") {
    bool dies = false;
    for (const auto& z : out["zones"]) dies = dies || z.contains("dies");
    fmt::print("{:>8} {:>14} {:>10} {:>14}  {:<18} {:>10} {:>4}{}\n", "zone", "start", "capacity",
               "wp", "state", "size", "set", dies ? "  dies" : "");
    for (const auto& z : out["zones"]) {
      std::string die_text;
      if (dies) {
        die_text =
            "  " + (z.contains("dies") && z["dies"].is_string() ? z["dies"].get<std::string>()
                                                                : std::string("-"));
      }
      fmt::print("{:>8} {:>14} {:>10} {:>14}  {:<18} {:>10} {:>4}{}\n", z["zone"].get<uint64_t>(),
                 z["start"].get<uint64_t>(), z["capacity"].get<uint64_t>(), z["wp"].get<uint64_t>(),
                 z["state"].get<std::string>(), z["size"].get<uint64_t>(), z["set"].get<uint64_t>(),
                 die_text);
    }
    return;
  }
  if (r.command == "zone") {
    std::string target =
        out.contains("all") ? "all zones" : fmt::format("zone {}", out["zone"].get<uint64_t>());
    fmt::print("{} {}: {}{}\n", r.action, target, status, latency_text(out));
  } else if (r.command == "write") {
    fmt::print("write LBA {} +{}: {}{}\n", out["lba"].get<uint64_t>(), r.blocks, status,
               latency_text(out));
  } else if (r.command == "append") {
    std::string where =
        status == "SUCCESS" ? fmt::format(" at LBA {}", out["lba"].get<uint64_t>()) : "";
    std::string reason =
        out.contains("reason") ? " (" + out["reason"].get<std::string>() + ")" : "";
    fmt::print("append zone {} +{}: {}{}{}{}\n", r.zone.value_or(0), r.blocks, status, where,
               latency_text(out), reason);
  } else if (r.command == "read") {
    std::string verified;
    if (out.contains("verified"))
      verified = out["verified"].get<bool>() ? ", verified" : ", MISMATCH";
    fmt::print("read LBA {} +{}: {}{}{}\n", out["lba"].get<uint64_t>(), r.blocks, status,
               latency_text(out), verified);
  } else if (r.command == "flush") {
    fmt::print("flush: {}{}{}\n", status, latency_text(out),
               out.value("volatile_write_cache", false) ? "" : " (no volatile write cache)");
  } else if (r.command == "inject") {
    if (out.contains("power_loss")) {
      fmt::print("power lost and restored: {} zone(s) lost data{}\n",
                 out["zones_lost_data"].get<uint64_t>(),
                 out["volatile_write_cache"].get<bool>()
                     ? ""
                     : " (no volatile write cache: nothing acknowledged is lost)");
    } else if (out.contains("die")) {
      fmt::print("die {} is now {}\n", out["die"].get<std::string>(),
                 out["state"].get<std::string>());
    } else {
      fmt::print("zone {} is now {}\n", out["zone"].get<uint64_t>(),
                 out["state"].get<std::string>());
    }
  }
}

int run_device_command(const DeviceRequest& r) {
  // What changes nothing opens the image shared, so it works on a file the
  // user may only read, and beside other readers.
  StackOptions options;
  options.read_only = !request_mutates(r);
  auto stack = Stack::open(r.image, options);
  if (!stack) return bad_input(stack.error());
  for (const std::string& text : (*stack)->notes()) note(text);
  if (auto problem = validate_request(**stack, r)) return bad_input(*problem);
  Json out;
  int code = execute_request(**stack, r, out);
  if (code == kExitBadInput) return bad_input(out.value("error", "bad input"));
  if (code == kExitOk && request_mutates(r)) {
    auto saved = (*stack)->close();
    if (!saved) {
      note(fmt::format("{}: not checkpointed ({}); its journal holds the command", r.image,
                       saved.error()));
    }
  }
  if (r.json) {
    print_json(out);
  } else {
    print_human(r, out);
  }
  return code;
}

namespace {

// The metadata a block-interface image needs, estimated from the flash
// before any map is built: 4 bytes per host LBA for the map, about 25 per
// flash block (FTL block record, erase count, list entry), 29 per zone.
std::optional<std::string> block_image_too_large(const Config& c) {
  const FlashConfig& f = c.flash;
  double blocks = static_cast<double>(f.channels) * static_cast<double>(f.dies_per_channel) *
                  static_cast<double>(f.planes_per_die) * static_cast<double>(f.blocks_per_plane);
  double slots = blocks * static_cast<double>(f.pages_per_block) *
                 static_cast<double>(f.page_size_bytes / c.host.lba_size_bytes);
  double host_lbas =
      slots * 10'000.0 / (10'000.0 + static_cast<double>(c.block.overprovisioning_bp));
  double zones =
      host_lbas /
      std::max(1.0, static_cast<double>(c.zns.zone_capacity_bytes / c.host.lba_size_bytes));
  double needed = 4 * host_lbas + 25 * blocks + 29 * zones;
  if (needed <= static_cast<double>(Image::kSlotBytesMax)) return std::nullopt;
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  return fmt::format(
      "a block-interface image of this device needs about {:.1f} GiB of metadata for its FTL map "
      "({} LBAs); an image holds at most {} (use a smaller flash or a larger host.lba_size)",
      needed / kGiB, static_cast<uint64_t>(std::min(host_lbas, 1e18)),
      format_size(Image::kSlotBytesMax));
}

}  // namespace

int run_create(const std::string& image, const ConfigOptions& options, bool force, bool json) {
  auto unchecked = resolve_config(options, false);
  if (!unchecked) return bad_input(unchecked.error());
  if (unchecked->interface == "block" && unchecked->host.lba_size_bytes != 0) {
    if (auto problem = block_image_too_large(*unchecked)) return bad_input(*problem);
  }
  auto config = resolve_config(options);
  if (!config) return bad_input(config.error());
  auto created = Stack::create_image(image, *config, force);
  if (!created) return bad_input(created.error());
  const DeviceInfo& info = created->info;
  Json out = status_json(Status::kSuccess);
  out["image"] = image;
  out["zone_count"] = info.zone_count;
  out["capacity_lbas"] = info.capacity_lbas;
  out["backing"] = created->backing;
  if (json) {
    print_json(out);
  } else {
    fmt::print("created {}: {}, backing {}\n", image, zones_text(info), created->backing);
  }
  return kExitOk;
}

std::string zones_text(const DeviceInfo& info) {
  const uint64_t lba = info.lba_size_bytes;
  if (info.uniform_zones()) {
    return fmt::format("{} zones of {} (capacity {})", info.zone_count,
                       format_size(info.zone_size_lbas * lba),
                       format_size(info.zone_capacity_lbas * lba));
  }
  std::string sets;
  for (const ZoneSetInfo& set : info.zone_sets) {
    sets += fmt::format("{}{} x {}", sets.empty() ? "" : " + ", set.zone_count,
                        format_size(set.zone_size_lbas * lba));
    if (set.zone_capacity_lbas != set.zone_size_lbas) {
      sets += fmt::format(" (capacity {})", format_size(set.zone_capacity_lbas * lba));
    }
  }
  return fmt::format("{} zones: {}", info.zone_count, sets);
}

namespace {

std::string counted(uint64_t n, const char* one, const char* many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

// What a format would destroy: the zoned file system the image holds (as
// mkfs finds one: its journal recovers, or its metadata zone begins with
// the file system's magic but no longer checks), said in one line; nothing
// when there is none. Only read: the image is opened shared, the file system
// mounted read-only. An image that does not open is left for the format to
// refuse with its own message.
std::optional<std::string> file_system_format_destroys(const std::string& image) {
  StackOptions read_only;
  read_only.read_only = true;
  auto stack = Stack::open(image, read_only);
  if (!stack) return std::nullopt;
  // The file system takes only ZNS devices.
  if ((*stack)->config().interface != "zns") return std::nullopt;
  fs::StackDevice stack_device(**stack);
  fs::DeviceIo io(stack_device);
  auto found = fs::Journal::recover(io);
  if (!found.ok() && found.status().code() == fs::Code::kNotFound) return std::nullopt;
  const std::string tail = "; format resets every zone and destroys it; --force to format anyway";
  if (!found.ok()) {
    return fmt::format("{} holds a zoned file system that does not mount ({}){}", image,
                       found.status().message(), tail);
  }
  fs::MountOptions options;
  options.read_only = true;
  options.gc = false;
  auto mounted = fs::ZonedFs::mount(**stack, options);
  if (!mounted) {
    return fmt::format("{} holds a zoned file system that does not mount ({}){}", image,
                       mounted.status().message(), tail);
  }
  fs::FsSpace space = (*mounted)->space();
  return fmt::format("{} holds a zoned file system ({}, {}){}", image,
                     counted(space.files, "file", "files"),
                     counted(space.file_bytes, "byte", "bytes"), tail);
}

}  // namespace

int run_format(const std::string& image, const std::string& zones, const std::string& parity,
               bool force, bool json) {
  if (!force) {
    if (auto destroys = file_system_format_destroys(image)) return bad_input(*destroys);
  }
  auto formatted = Stack::format_image(image, zones, parity);
  if (!formatted) return bad_input(formatted.error());
  const DeviceInfo& info = formatted->info;
  Json out = status_json(Status::kSuccess);
  out["image"] = image;
  out["zone_count"] = info.zone_count;
  out["capacity_lbas"] = info.capacity_lbas;
  Json sets = Json::array();
  for (const ZoneSetInfo& set : info.zone_sets) {
    sets.push_back({{"zone_size_bytes", set.zone_size_lbas * info.lba_size_bytes},
                    {"zone_capacity_bytes", set.zone_capacity_lbas * info.lba_size_bytes},
                    {"zone_count", set.zone_count},
                    {"first_zone", set.first_zone}});
  }
  out["zone_sets"] = sets;
  if (json) {
    print_json(out);
  } else {
    fmt::print("formatted {}: {}\n", image, zones_text(info));
  }
  return kExitOk;
}

namespace {

std::vector<std::string> split_words(const std::string& line) {
  std::vector<std::string> words;
  std::istringstream in(line);
  std::string word;
  while (in >> word) words.push_back(word);
  return words;
}

}  // namespace

namespace {

// One line of stdin, at most kMaxBatchLineBytes: what is read is bounded
// while it is read. A longer line is consumed to its end and reported.
struct BatchLine {
  std::string text;
  bool too_long = false;
};

std::optional<BatchLine> read_batch_line(std::FILE* in) {
  BatchLine line;
  int c = std::getc(in);
  if (c == EOF) return std::nullopt;
  for (; c != EOF && c != '\n'; c = std::getc(in)) {
    if (line.text.size() < kMaxBatchLineBytes) {
      line.text.push_back(static_cast<char>(c));
    } else {
      line.too_long = true;
    }
  }
  return line;
}

std::string help_of(CLI::App& parser, const std::string& command) {
  CLI::App* sub = command.empty() ? &parser : parser.get_subcommand(command);
  std::string text = sub->help();
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

// One batch line run: its answer printed and flushed before the next line
// is read (the command is then in the image), and its exit code.
int run_batch_line(Stack& stack, const std::string& image, size_t number, const BatchLine& line) {
  Json out;
  auto refuse = [&](const std::string& error) {
    out = Json{{"status", "INVALID_INPUT"}, {"line", number}, {"error", one_line(error)}};
    print_json(out);
    return kExitBadInput;
  };
  if (line.too_long) {
    return refuse(fmt::format("a line is at most {} bytes", kMaxBatchLineBytes));
  }
  std::string text = line.text;
  if (auto hash = text.find('#'); hash != std::string::npos) text.resize(hash);
  std::vector<std::string> words = split_words(text);
  if (words.empty()) return kExitOk;
  DeviceRequest request;
  CLI::App parser("batch line: a device command without `zonelab IMAGE`", "batch");
  parser.require_subcommand(1);
  add_device_commands(parser, request, false);
  bool help_line = words[0] == "help" || words[0] == "--help";
  if (help_line || std::find(words.begin(), words.end(), "--help") != words.end()) {
    std::string command = help_line ? (words.size() > 1 ? words[1] : "") : words[0];
    if (!command.empty() && !is_device_command(command)) {
      return refuse(fmt::format("unknown command '{}' ({})", command, kBatchCommands));
    }
    print_json(
        Json{{"status", "SUCCESS"}, {"command", "help"}, {"help", help_of(parser, command)}});
    return kExitOk;
  }
  if (!is_device_command(words[0])) {
    return refuse(fmt::format("unknown command '{}' ({})", words[0], kBatchCommands));
  }
  std::vector<std::string> args(words.rbegin(), words.rend());
  try {
    parser.parse(args);
  } catch (const CLI::ParseError& e) {
    return refuse(e.what());
  }
  request.command = words[0];
  request.image = image;
  if (auto problem = validate_request(stack, request)) return refuse(*problem);
  int code = execute_request(stack, request, out);
  if (code == kExitBadInput) {
    if (out.value("status", "") == "" || out.value("status", "") == "SUCCESS") {
      out["status"] = "INVALID_INPUT";
    }
    out["line"] = number;
  }
  out["command"] = request.command;
  print_json(out);
  return code;
}

}  // namespace

int run_batch(const std::string& image) {
  auto opened = Stack::open(image);
  if (!opened) return bad_input(opened.error());
  Stack& stack = **opened;
  for (const std::string& text : stack.notes()) note(text);
  int worst = kExitOk;
  size_t number = 0;
  while (auto line = read_batch_line(stdin)) {
    ++number;
    int code = run_batch_line(stack, image, number, *line);
    std::fflush(stdout);
    if (code != kExitOk && (worst == kExitOk || code == kExitBadInput)) worst = code;
  }
  Outcome saved = stack.close();
  if (!saved) {
    // Every command answered SUCCESS is in the image's journal already; what
    // failed is folding them into its metadata (or the journal itself, and
    // then the commands after the failure were answered WRITE_FAULT).
    note(saved.error());
    return kExitBadInput;
  }
  return worst;
}

}  // namespace zonelab::cli
