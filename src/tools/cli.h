// Shared pieces of the `zonelab` command-line tool: exit codes, the device
// configuration options (--preset, --config, --set), the data pattern that
// `write --seed` and `read --expect-seed` agree on, and JSON output. Devices
// are opened and run through the stack (stack/stack.h).
#pragma once

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "stack/stack.h"
#include "zonelab/config.h"

namespace zonelab::cli {

using Json = nlohmann::ordered_json;

// The contract's exit codes.
enum Exit : int { kExitOk = 0, kExitInternal = 1, kExitBadInput = 2, kExitDeviceError = 3 };

// Prints "zonelab: error: MESSAGE" on stderr, on one line whatever the
// message holds, and returns kExitBadInput.
int bad_input(const std::string& message);
// Prints "zonelab: note: MESSAGE" on stderr (on one line).
void note(const std::string& message);

// Registers `NAME VALUE` as a whole number from 0 to 2^64 - 1, written as
// the user likes ("4096", "0x1000" is not one); anything else (empty, a
// sign, a fraction, a value past 2^64) fails the parse with a message that
// names the option and the value as written.
CLI::Option* add_count_option(CLI::App* app, const std::string& name, uint64_t& target,
                              const std::string& help);
CLI::Option* add_count_option(CLI::App* app, const std::string& name,
                              std::optional<uint64_t>& target, const std::string& help);

struct ConfigOptions {
  std::string preset;
  std::string config_file;
  std::vector<std::string> overrides;
};
void add_config_options(CLI::App& app, ConfigOptions& options);
// preset (or default) -> file -> overrides, then (unless `check` is false)
// checked as a whole.
Result<Config> resolve_config(const ConfigOptions& options, bool check = true);
// The image's stack when `image` is given, else a throwaway device of the
// configuration the options resolve to (bench's and replay's IMAGE or --preset).
Result<std::unique_ptr<Stack>> open_or_make_stack(const std::string& image,
                                                  const ConfigOptions& config,
                                                  const StackOptions& options);

// Deterministic contents of LBA `lba` for pattern `seed` (lba_size bytes).
void fill_pattern(uint64_t seed, uint64_t lba, uint8_t* out, uint64_t lba_size);

// Progress on stderr for a long run: a line at most every 2 s of wall time
// (none when quiet). `due()` says whether one is due now; `wall_s()` is the
// time since the run began.
class ProgressThrottle {
 public:
  explicit ProgressThrottle(bool quiet)
      : quiet_(quiet), start_(std::chrono::steady_clock::now()), last_(start_) {}
  bool due();
  double wall_s() const;

 private:
  bool quiet_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_;
};
// bench's and replay's line: "progress: virtual X s, N commands, W s wall".
void print_virtual_progress(ProgressThrottle& throttle, uint64_t virtual_ns, uint64_t commands);

// {"status","sct","sc"} for a status.
Json status_json(Status status);
// Prints JSON on one line.
void print_json(const Json& json);

// The refusal of an output file that option `flag` names at `path` when it
// is the image file `image` (by another name or a link: writing it would
// destroy the image); nullopt when it is not or either does not exist.
std::optional<std::string> output_is_image(std::string_view flag, const std::string& path,
                                           const std::string& image);
// Whether the open file `fd` is the image file `image`.
bool is_image_file(int fd, const std::string& image);

}  // namespace zonelab::cli
