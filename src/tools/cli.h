// Shared pieces of the `zonelab` command-line tool: exit codes, the device
// configuration options (--preset, --config, --set), opening an image as a
// device session, running one command synchronously, the data pattern that
// `write --seed` and `read --expect-seed` agree on, and JSON output.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "conv/conv_device.h"
#include "sim/simulator.h"
#include "store/image.h"
#include "zns/zns_device.h"
#include "zonelab/config.h"

namespace zonelab::cli {

using Json = nlohmann::ordered_json;

// The contract's exit codes.
enum Exit : int { kExitOk = 0, kExitInternal = 1, kExitBadInput = 2, kExitDeviceError = 3 };

// Prints "zonelab: error: MESSAGE" on stderr and returns kExitBadInput.
int bad_input(const std::string& message);

struct ConfigOptions {
  std::string preset;
  std::string config_file;
  std::vector<std::string> overrides;
};
void add_config_options(CLI::App& app, ConfigOptions& options);
// preset (or default) -> file -> overrides, then (unless `check` is false)
// checked as a whole.
Result<Config> resolve_config(const ConfigOptions& options, bool check = true);

// A device image opened for the length of one command (or one batch). The
// image's interface decides the device: exactly one of `zns` and `conv`
// points at `device`.
struct Session {
  Simulator sim;
  std::unique_ptr<Image> image;
  std::unique_ptr<ModeledDevice> device;
  ZnsDevice* zns = nullptr;
  ConvDevice* conv = nullptr;

  bool stores_data() const {
    return zns != nullptr ? zns->backing().stores_data() : conv->backing().stores_data();
  }
};
// Builds the device the configuration's interface names into `session`
// (`device` and the matching typed pointer).
Outcome make_session_device(Session& session, const Config& config,
                            std::unique_ptr<Backing> backing);
// The session's device state, as an image keeps it.
void export_session_state(const Session& session, ImageState& state);
Result<std::unique_ptr<Session>> open_session(const std::string& path);
// Writes the device state back into the image.
Outcome save_session(Session& session);

// Submits one command and runs the simulator until it completes.
void run_command(Session& session, Command& command);

// Deterministic contents of LBA `lba` for pattern `seed` (lba_size bytes).
void fill_pattern(uint64_t seed, uint64_t lba, uint8_t* out, uint64_t lba_size);

// {"status","sct","sc"} for a status.
Json status_json(Status status);
// Prints JSON on one line.
void print_json(const Json& json);

}  // namespace zonelab::cli
