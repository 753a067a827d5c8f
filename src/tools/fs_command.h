// `zonelab mkfs` and `zonelab fs ls|stat|cat|df|info|fsck|dump|backup|restore|
// mkdir|rm|rmdir|mv|link`: the zoned file system (src/fs) on a device image,
// from the command line, as ZenFS's own tool has it. Commands that only look
// (ls, stat, cat, df, info, dump, backup, fsck without --repair) open the
// image shared and mount the file system read-only: they work on a file the
// user may only read and never change it. mkfs, fsck --repair, restore and
// the namespace changes (mkdir, rm, rmdir, mv, link) open it exclusively; a
// namespace change is checked on a read-only mount first, so one refused
// leaves the image as it was.
//
// Exit codes as every command has them: 0 success; 2 bad input (a bad
// option, no such image or path, no file system on the device, a name too
// long, the image in use); 3 the file system or the device could not do it
// (no space, an I/O error) and fsck's damage; 1 an internal error.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tools/cli.h"

namespace zonelab::cli {

struct FsRequest {
  std::string command;  // mkfs, or an fs command: ls, stat, cat, ..., mv, link, probe
  std::string image;
  // ls: DIR; stat, cat, mkdir, rm, rmdir: PATH; mv, link: FROM; backup,
  // restore: the host directory.
  std::string path;
  std::string to;  // mv, link: TO
  // backup --path, restore --restore-path: the directory of the file system
  // copied out or into (empty: the root).
  std::string subtree;
  bool json = false;
  bool long_format = false;     // ls -l
  bool recursive = false;       // ls -R
  bool repair = false;          // fsck --repair
  bool skip_databases = false;  // fsck --skip-databases: RocksDB's databases not opened
  bool parents = false;         // mkdir -p
  // mkfs over a file system; backup into a non-empty directory; mv over a
  // file or an empty directory.
  bool force = false;
  // mkfs: unset values take the file system's defaults (fs::MkfsOptions).
  std::optional<uint64_t> finish_threshold_pct;
  std::optional<uint64_t> gc_free_pct;
  std::optional<uint64_t> meta_zones;
  std::optional<uint64_t> uuid_seed;
  std::string policy = "zenfs";
  std::vector<std::string> policy_options;  // mkfs -o KEY=VALUE
  std::string hot_set;                      // mkfs --hot-set (zone sets)
  std::optional<std::string> hot_levels;    // mkfs --hot-levels
  bool spill_cold = false;                  // mkfs --spill-cold
  std::vector<std::string> tenants;         // mkfs --tenant NAME=SETS
  // fs probe
  std::optional<uint32_t> probe_threshold_pct;
  std::optional<uint32_t> probe_samples;
};

// Registers `mkfs` and `fs` (with its subcommands) on `app`; a parsed one
// sets `request.command`.
void add_fs_commands(CLI::App& app, FsRequest& request);
int run_fs_command(const FsRequest& request);
// A problem with the words after `zonelab` that CLI11 would word poorly
// (`zonelab fs` alone, `zonelab fs bogus`), if any.
std::optional<std::string> fs_usage_problem(const std::vector<std::string>& args);

}  // namespace zonelab::cli
