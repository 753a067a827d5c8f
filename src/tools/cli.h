// Shared pieces of the `zonelab` command-line tool: exit codes, the device
// configuration options (--preset, --config, --set), the data pattern that
// `write --seed` and `read --expect-seed` agree on, and JSON output. Devices
// are opened and run through the stack (stack/stack.h).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "stack/stack.h"
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

// Deterministic contents of LBA `lba` for pattern `seed` (lba_size bytes).
void fill_pattern(uint64_t seed, uint64_t lba, uint8_t* out, uint64_t lba_size);

// {"status","sct","sc"} for a status.
Json status_json(Status status);
// Prints JSON on one line.
void print_json(const Json& json);

}  // namespace zonelab::cli
