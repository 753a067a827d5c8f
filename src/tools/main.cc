// zonelab: a deterministic ZNS SSD laboratory. Entry point of the
// command-line tool: parses the command line and dispatches.
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <optional>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include "common/units.h"
#include "stack/device_factory.h"
#include "tools/bench_command.h"
#include "tools/cli.h"
#include "tools/device_commands.h"
#include "tools/experiment_command.h"
#include "tools/fs_command.h"
#include "tools/interference_command.h"
#include "tools/kv_command.h"
#include "tools/replay_command.h"
#include "tools/serve_command.h"
#include "tools/sweep_command.h"

namespace zonelab::cli {
namespace {

constexpr const char* kDescription =
    "zonelab: a deterministic NVMe ZNS SSD model in userspace.\n"
    "\n"
    "Make a device image, then drive it like nvme-cli and fio would:\n"
    "  zonelab create dev.img --preset small\n"
    "  zonelab write dev.img --lba 0 --blocks 8 --seed 7\n"
    "  zonelab read dev.img --lba 0 --blocks 8 --expect-seed 7\n"
    "  zonelab report dev.img --limit 4\n"
    "  zonelab bench --preset small --rw write --bs 64KiB --iodepth 8\n"
    "\n"
    "Exit codes: 0 success, 2 bad input, 3 the device answered with an error status,\n"
    "1 internal error. Every command takes --json.";

int run_presets(bool json) {
  if (json) {
    Json out = status_json(Status::kSuccess);
    Json list = Json::array();
    for (const auto& name : preset_names()) {
      Config c = *preset_config(name);
      DeviceInfo info = *device_info_of(c);
      list.push_back({{"name", name},
                      {"zone_count", info.zone_count},
                      {"zone_size_bytes", info.zone_size_lbas * info.lba_size_bytes},
                      {"zone_capacity_bytes", info.zone_capacity_lbas * info.lba_size_bytes}});
    }
    out["presets"] = list;
    print_json(out);
    return kExitOk;
  }
  for (const auto& name : preset_names()) {
    Config c = *preset_config(name);
    DeviceInfo info = *device_info_of(c);
    fmt::print(
        "{:<12} {:>6} zones of {:>8} (capacity {}), {} ch x {} dies x {} planes, zone on "
        "{} ch x {} dies\n",
        name, info.zone_count, format_size(info.zone_size_lbas * info.lba_size_bytes),
        format_size(info.zone_capacity_lbas * info.lba_size_bytes), c.flash.channels,
        c.flash.dies_per_channel, c.flash.planes_per_die, c.zns.channels_per_zone,
        c.zns.dies_per_zone);
  }
  return kExitOk;
}

int run_config_keys(bool json) {
  if (json) {
    Json out = status_json(Status::kSuccess);
    Json keys = Json::array();
    for (const auto& key : config_keys()) {
      keys.push_back({{"key", key.name}, {"kind", key.kind}, {"description", key.description}});
    }
    out["keys"] = keys;
    print_json(out);
    return kExitOk;
  }
  for (const auto& key : config_keys()) {
    fmt::print("{:<26} {:<7} {}\n", key.name, key.kind, key.description);
  }
  return kExitOk;
}

int run_config(const ConfigOptions& options, bool json) {
  auto config = resolve_config(options);
  if (!config) return bad_input(config.error());
  if (json) {
    Json out = status_json(Status::kSuccess);
    out["config"] = Json::parse(config_to_json(*config));
    print_json(out);
  } else {
    fmt::print("{}", config_to_toml(*config));
  }
  return kExitOk;
}

// What `zonelab --version` prints.
constexpr const char* kVersion = "zonelab " ZONELAB_VERSION;

// The words before the command: `zonelab help [COMMAND]` is `zonelab
// [COMMAND] --help`, as git and nvme-cli have it.
std::vector<std::string> arguments(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args[0] == "help") {
    args.erase(args.begin());
    args.push_back("--help");
  }
  return args;
}

std::string command_names(const CLI::App& app) {
  std::string names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    names += (names.empty() ? "" : ", ") + sub->get_name();
  }
  return names;
}

// An option given an empty value ("--preset ''", "--out="), or an image,
// trace or spec given as an empty path, which would otherwise read as one
// not given (bench and replay without an image run on a fresh device); the
// options whose empty value means something (no extra mkfs or mount
// options) may have one. Other positional values (a file system's paths, a
// guest's command) are the commands' own to judge.
std::optional<std::string> empty_option_value(const CLI::App& app) {
  static const std::set<std::string> kMayBeEmpty = {"--mkfs-options", "--mount-options"};
  static const std::set<std::string> kPaths = {"IMAGE", "TRACE", "SPEC"};
  for (const CLI::Option* option : app.get_options()) {
    if (option->get_expected_min() == 0 ||
        std::ranges::none_of(option->results(), [](const std::string& v) { return v.empty(); })) {
      continue;
    }
    std::string name = option->get_name();
    if (!option->nonpositional()) {
      if (kPaths.contains(name)) return fmt::format("{}: an empty path", name);
    } else if (!kMayBeEmpty.contains(name)) {
      return fmt::format("{}: an empty value (leave the option out for its default)", name);
    }
  }
  for (const CLI::App* sub : app.get_subcommands()) {
    if (auto empty = empty_option_value(*sub)) return empty;
  }
  return std::nullopt;
}

int main_impl(int argc, char** argv) {
  CLI::App app(kDescription, "zonelab");
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "help for every command");
  app.set_version_flag("--version", kVersion);

  ConfigOptions create_config;
  std::string create_image;
  bool create_force = false;
  bool create_json = false;
  auto* create = app.add_subcommand("create", "make a device image from a preset/config");
  create->add_option("IMAGE", create_image, "image file to create")->required();
  add_config_options(*create, create_config);
  create->add_flag("--force", create_force, "overwrite an existing image");
  create->add_flag("--json", create_json, "print JSON");

  std::string format_image;
  std::string format_zones;
  std::string format_parity;
  bool format_force = false;
  bool format_json = false;
  auto* format = app.add_subcommand(
      "format",
      "FlexZNS zone_format: remake the zones as sets of sizes (every zone empty, data gone)");
  format->add_option("IMAGE", format_image, "device image")->required();
  format
      ->add_option("--zones", format_zones,
                   "SIZE:COUNT,... in LBA order, e.g. 512MiB:64,2GiB:480 (sizes: powers of "
                   "two, whole flash block groups)")
      ->required();
  format->add_option("--parity", format_parity,
                     "none|in-zone|separate (default: the image's zns.parity.placement)");
  format->add_flag("--force", format_force,
                   "format an image that holds a zoned file system (it is destroyed)");
  format->add_flag("--json", format_json, "print JSON");

  DeviceRequest request;
  add_device_commands(app, request, true);

  std::string batch_image;
  bool batch_json = false;
  auto* batch = app.add_subcommand(
      "batch",
      "run device commands from stdin, one a line (as on the command line without `zonelab "
      "IMAGE`: `write --lba 0 --blocks 8`; `#` comments; `help`, `CMD --help`), answering each "
      "with one JSON line as it completes; see docs/cli.md");
  batch->add_option("IMAGE", batch_image, "device image")->required();
  batch->add_flag("--json", batch_json, "print JSON (batch always prints one JSON object a line)");

  BenchOptions bench_options;
  add_bench_command(app, bench_options);
  ReplayCommandOptions replay_options;
  add_replay_command(app, replay_options);
  SweepCommandOptions sweep_options;
  add_sweep_command(app, sweep_options);
  InterferenceOptions interference_options;
  add_interference_command(app, interference_options);

  ExperimentOptions experiment_options;
  add_experiment_command(app, experiment_options);

  FsRequest fs_request;
  add_fs_commands(app, fs_request);
  KvCommandOptions kv_options;
  add_kv_command(app, kv_options);
  ServeCommandOptions serve_options;
  add_serve_command(app, serve_options);
  VmCommandOptions vm_options;
  add_vm_command(app, vm_options);

  bool presets_json = false;
  auto* presets = app.add_subcommand("presets", "list the shipped presets");
  presets->add_flag("--json", presets_json, "print JSON");

  ConfigOptions show_config;
  bool config_json = false;
  auto* config = app.add_subcommand("config", "print a resolved configuration (TOML or JSON)");
  add_config_options(*config, show_config);
  config->add_flag("--json", config_json, "print JSON");
  bool config_keys_only = false;
  config->add_flag("--keys", config_keys_only, "list every configuration key");

  std::vector<std::string> args = arguments(argc, argv);
  auto known = [&app](const std::string& name) {
    try {
      app.get_subcommand(name);
      return true;
    } catch (const CLI::OptionNotFound&) {
      return false;
    }
  };
  if (!args.empty() && !args[0].empty() && args[0][0] != '-' && !known(args[0])) {
    return bad_input(fmt::format("unknown command '{}' (commands: {}; see zonelab --help)", args[0],
                                 command_names(app)));
  }
  if (args.empty()) {
    return bad_input(
        fmt::format("no command given (commands: {}; see zonelab --help)", command_names(app)));
  }
  if (auto problem = fs_usage_problem(args)) return bad_input(*problem);
  std::reverse(args.begin(), args.end());  // CLI11 takes them last first
  try {
    app.parse(args);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return bad_input(e.what());
  }
  if (auto empty = empty_option_value(app)) return bad_input(*empty);

  if (create->parsed()) return run_create(create_image, create_config, create_force, create_json);
  if (format->parsed()) {
    return run_format(format_image, format_zones, format_parity, format_force, format_json);
  }
  if (batch->parsed()) return run_batch(batch_image);
  if (app.got_subcommand("bench")) return run_bench(bench_options);
  if (app.got_subcommand("replay")) return run_replay_command(replay_options);
  if (app.got_subcommand("sweep")) return run_sweep_command(sweep_options);
  if (app.got_subcommand("interference")) return run_interference_command(interference_options);
  if (app.got_subcommand("experiment")) return run_experiment_command(experiment_options);
  if (!fs_request.command.empty()) return run_fs_command(fs_request);
  if (app.got_subcommand("kv")) return run_kv_command(kv_options);
  if (app.got_subcommand("serve")) return run_serve_command(serve_options);
  if (app.got_subcommand("vm")) return run_vm_command(vm_options);
  if (presets->parsed()) return run_presets(presets_json);
  if (config->parsed()) {
    return config_keys_only ? run_config_keys(config_json) : run_config(show_config, config_json);
  }
  if (!request.command.empty()) return run_device_command(request);
  return bad_input("no command given (see zonelab --help)");
}

}  // namespace
}  // namespace zonelab::cli

int main(int argc, char** argv) {
  // A file-size limit answers a write with EFBIG, which the image reports,
  // instead of killing the process halfway.
  std::signal(SIGXFSZ, SIG_IGN);
  int code = zonelab::cli::kExitInternal;
  try {
    code = zonelab::cli::main_impl(argc, argv);
  } catch (const std::system_error& e) {
    // Output the operating system would not take (stdout or stderr on a full
    // disk, a closed pipe): said with a call that cannot throw.
    std::fprintf(stderr, "zonelab: error: cannot write the output: %s\n",
                 zonelab::one_line(e.what()).c_str());
    return zonelab::cli::kExitBadInput;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "zonelab: internal error: %s\n", zonelab::one_line(e.what()).c_str());
    return zonelab::cli::kExitInternal;
  }
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    std::fprintf(stderr, "zonelab: error: cannot write the output: %s\n", std::strerror(errno));
    return code == zonelab::cli::kExitOk ? zonelab::cli::kExitBadInput : code;
  }
  return code;
}
