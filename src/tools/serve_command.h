// `zonelab serve IMAGE MOUNTPOINT`: a block-interface image shown to the
// kernel as one file through FUSE, the device modeled in real time, until
// SIGINT or SIGTERM (serve/served_image.h). `zonelab vm IMAGE -- COMMAND`:
// User-Mode Linux booted on that file, a kernel file system made and
// mounted on it, COMMAND run inside (tools/vm_command.cc).
#pragma once

#include <signal.h>

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "serve/served_image.h"
#include "tools/cli.h"

namespace zonelab::cli {

// What serve and vm share: the image, how its device runs, and statistics.
struct ServeFlags {
  std::string image;
  std::string timing = "modeled";
  std::optional<std::string> time_scale;
  std::string scheduler;
  std::string pacing = "auto";
  std::optional<uint64_t> threads;
  std::string stats_path;
  bool json = false;
};

struct ServeCommandOptions {
  ServeFlags flags;
  std::string mount_point;
  std::string file_name = "disk";
  std::string vhost_socket;
  std::string stream_hints;
  bool pass_through = false;
};

struct VmCommandOptions {
  ServeFlags flags;
  std::string fs = "ext4";
  std::string disk = "virtio";
  std::string discard = "off";
  std::string memory = "512MiB";
  std::string out;
  std::string mkfs_options;
  std::string mount_options;
  bool no_mkfs = false;
  bool fsck = false;
  bool verbose = false;
  bool write_hints = false;
  std::vector<std::string> command;
};

// Pieces both commands use.
Result<serve::ServeOptions> serve_options(const ServeFlags& flags, const std::string& mount_point,
                                          const std::string& file_name,
                                          const std::string& vhost_socket = {});
void add_serve_flags(CLI::App* app, ServeFlags& flags);
// SIGINT, SIGTERM, SIGHUP, SIGUSR1: blocked in every thread and waited for.
sigset_t stop_signals();
// The statistics, as stack_report.h's write_stats_file writes them;
// nothing without a path.
Outcome write_stats_file(const std::string& path, const Json& stats);
void print_serve_summary(std::FILE* out, const Json& stats, double seconds);

void add_serve_command(CLI::App& app, ServeCommandOptions& options);
int run_serve_command(const ServeCommandOptions& options);
void add_vm_command(CLI::App& app, VmCommandOptions& options);
int run_vm_command(const VmCommandOptions& options);

}  // namespace zonelab::cli
