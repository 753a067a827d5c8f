// The device commands of the tool (create, info, report, zone, write,
// append, read, inject, batch). Each device command is parsed into a
// DeviceRequest, the same way from the command line and from `batch` lines,
// and executed on an open device stack.
#pragma once

#include <optional>
#include <string>

#include "tools/cli.h"

namespace zonelab::cli {

struct DeviceRequest {
  std::string command;  // info, report, zone, write, append, read, flush, inject
  std::string image;
  bool json = false;
  std::string action;  // zone: open|close|finish|reset|offline
  std::optional<uint64_t> zone;
  std::optional<uint64_t> lba;
  bool all = false;
  uint64_t blocks = 0;
  uint64_t seed = 0;
  std::optional<uint64_t> expect_seed;
  std::string state;        // inject: read-only|offline|failed; report: filter
  std::string die;          // inject: CHANNEL:DIE
  bool power_loss = false;  // inject: the power goes and comes back
  std::string data_file;    // write/append: the data to write; read: where to put it
  uint64_t from_lba = 0;
  uint64_t limit = 0;
};

// Registers the per-image device commands on `app`. `with_image` adds the
// IMAGE positional and --json (the command line); batch lines have neither.
void add_device_commands(CLI::App& app, DeviceRequest& request, bool with_image);
bool is_device_command(const std::string& name);

// Checks a request against the device before it runs; the problem, if any.
std::optional<std::string> validate_request(const Stack& stack, const DeviceRequest& request);
// Runs a request on an open stack; fills `out` (JSON) and returns the exit
// code. Bad input inside the request (a zone number out of range) returns
// kExitBadInput with the message in out["error"].
int execute_request(Stack& stack, const DeviceRequest& request, Json& out);
// Prints `out` for a person.
void print_human(const DeviceRequest& request, const Json& out);
bool request_mutates(const DeviceRequest& request);

int run_device_command(const DeviceRequest& request);
int run_create(const std::string& image, const ConfigOptions& options, bool force, bool json);
// Refuses, the image unchanged, an image that holds a zoned file system
// (which the format would destroy) unless `force`.
int run_format(const std::string& image, const std::string& zones, const std::string& parity,
               bool force, bool json);
// "160 zones of 512MiB (capacity 512MiB)" or, for several sets, "544 zones:
// 64 x 512MiB + 480 x 2GiB".
std::string zones_text(const DeviceInfo& info);
// Batch output is always JSON, one object a line.
int run_batch(const std::string& image);

}  // namespace zonelab::cli
