// The file-system commands of the tool; see fs_command.h.
#include "tools/fs_command.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <utility>
#include <vector>

#include "common/file_kind.h"
#include "common/units.h"
#include "common/write_all.h"
#include "fs/zoned_fs.h"
#include "kv/runtime.h"
#include "tools/probe_command.h"

namespace zonelab::cli {
namespace {

// File data moves in pieces of this size: a file is never in memory whole.
constexpr uint64_t kChunkBytes = 1 << 20;
// A restore copies at most this many directories and files.
constexpr size_t kRestoreEntriesMax = 1'000'000;
// A metadata zone's header begins with these bytes (fs/journal.cc): a zone
// that starts with them held a file system, even if it no longer checks.

// --- options -------------------------------------------------------------------

// A whole number from `min` to `max`; a percentage may end with '%'.
CLI::Option* add_bounded_option(CLI::App* app, const std::string& name,
                                std::optional<uint64_t>& target, uint64_t min, uint64_t max,
                                bool percent, const std::string& help) {
  auto parse = [&target, name, min, max, percent](const std::string& value) {
    std::string_view digits = value;
    if (percent && !digits.empty() && digits.back() == '%') digits.remove_suffix(1);
    auto n = parse_count(digits);
    if (!n || *n < min || *n > max) {
      throw CLI::ValidationError(
          name, fmt::format("'{}' is not a whole {} from {} to {}", one_line(value, 64),
                            percent ? "percentage" : "number", min, max));
    }
    target = *n;
  };
  return app->add_option_function<std::string>(name, parse, help)->type_name(percent ? "PCT" : "N");
}

void add_mkfs_command(CLI::App& app, FsRequest& r) {
  auto* mkfs = app.add_subcommand("mkfs", "make a zoned file system on a device image");
  mkfs->add_option("IMAGE", r.image, "device image (store.backing = file)")->required();
  add_bounded_option(mkfs, "--finish-threshold", r.finish_threshold_pct, 0, 100, true,
                     "finish a zone a writer leaves with less than this share of it left (0)");
  add_bounded_option(mkfs, "--gc-free", r.gc_free_pct, 0, 50, true,
                     "garbage collection keeps this share of the data zones empty (10)");
  add_bounded_option(mkfs, "--meta-zones", r.meta_zones, fs::kMetaZonesMin, fs::kMetaZonesMax,
                     false, "zones for the superblock and the journal (2)");
  std::string policies;
  for (const fs::PolicyEntry& entry : fs::placement_policies()) {
    policies += fmt::format("{}{} ({})", policies.empty() ? "" : "; ", entry.name, entry.summary);
  }
  mkfs->add_option("--policy", r.policy,
                   "data placement policy: " + policies + "; zenfs is the default");
  std::string option_help;
  for (const fs::PolicyEntry& entry : fs::placement_policies()) {
    option_help +=
        fmt::format("{}{}: {}", option_help.empty() ? "" : " | ", entry.name, entry.options);
  }
  mkfs->add_option("-o,--policy-option", r.policy_options,
                   "a policy option KEY=VALUE (repeatable): " + option_help)
      ->type_name("KEY=VALUE");
  mkfs->add_option("--hot-set", r.hot_set,
                   "on FlexZNS zone sets: the set the hot levels' data goes to (default: the set "
                   "of the smallest zones; none: every level in every set)")
      ->type_name("SET|none");
  mkfs->add_option("--hot-levels", r.hot_levels,
                   fmt::format("the levels that go to the hot set, the rest to the others "
                               "(default wal,L0,L1; of {})",
                               fs::data_levels_text(fs::kAllLevels)))
      ->type_name("LIST");
  mkfs->add_flag("--spill-cold", r.spill_cold,
                 "on FlexZNS zone sets: the other levels' data goes to the hot set too while the "
                 "hot set holds a smaller share of its capacity in live data, so the sets fill "
                 "alike");
  mkfs->add_option("--tenant", r.tenants,
                   "on FlexZNS zone sets: a tenant whose files (those under /NAME) use only "
                   "these zone sets, which no other file uses (repeatable; e.g. a=0 b=1,2)")
      ->type_name("NAME=SETS");
  add_count_option(mkfs, "--uuid-seed", r.uuid_seed, "derive the UUID from this seed");
  mkfs->add_flag("--force", r.force, "replace a file system the device holds");
  mkfs->add_flag("--json", r.json, "print JSON");
  mkfs->callback([&r] { r.command = "mkfs"; });
}

CLI::App* add_fs_subcommand(CLI::App* fs, FsRequest& r, const std::string& name,
                            const std::string& help) {
  auto* sub = fs->add_subcommand(name, help);
  sub->add_option("IMAGE", r.image, "device image holding a file system")->required();
  sub->add_flag("--json", r.json, "print JSON");
  sub->callback([&r, name] { r.command = name; });
  return sub;
}

void add_fs_subcommands(CLI::App* fs, FsRequest& r) {
  auto* ls = add_fs_subcommand(fs, r, "ls", "list a directory (default /)");
  ls->add_option("DIR", r.path, "directory in the file system");
  ls->add_flag("-l", r.long_format, "kind, size, links and file id of each entry");
  ls->add_flag("-R", r.recursive, "the directories below too");
  auto* stat = add_fs_subcommand(fs, r, "stat", "a file's size, links, hints, time and extents");
  stat->add_option("PATH", r.path, "file or directory")->required();
  auto* cat = add_fs_subcommand(fs, r, "cat", "write a file's bytes to stdout");
  cat->add_option("PATH", r.path, "file")->required();
  add_fs_subcommand(fs, r, "df", "space: free, used, reclaimable; write amplification");
  auto* fsck = add_fs_subcommand(fs, r, "fsck", "check the file system (exit 3 on damage)");
  fsck->add_flag("--repair", r.repair, "mend what can be mended (opens the image for writing)");
  fsck->add_flag("--skip-databases", r.skip_databases,
                 "do not open the RocksDB databases found (a directory with a CURRENT file)");
  add_fs_subcommand(fs, r, "dump", "the superblock, every directory, file and zone as JSON");
  add_fs_subcommand(fs, r, "info", "the superblock: geometry, thresholds, placement policy");
  auto* backup = add_fs_subcommand(fs, r, "backup",
                                   "copy every directory and file (or those below --path) to DIR");
  backup->add_option("DIR", r.path, "host directory (made if missing)")->required();
  backup->add_flag("--force", r.force, "write into a directory that is not empty");
  backup->add_option("--path", r.subtree,
                     "copy only this directory of the file system; DIR holds what is below it");
  auto* restore =
      add_fs_subcommand(fs, r, "restore", "copy a host directory tree in (at / or --restore-path)");
  restore->add_option("DIR", r.path, "host directory")->required();
  restore->add_option("--restore-path", r.subtree,
                      "copy into this directory of the file system (made with its parents)");
}

// The commands that change the namespace, one name at a time.
void add_namespace_subcommands(CLI::App* fs, FsRequest& r) {
  auto* mkdir = add_fs_subcommand(fs, r, "mkdir", "make a directory");
  mkdir->add_option("PATH", r.path, "directory to make")->required();
  mkdir->add_flag("-p,--parents", r.parents,
                  "make the missing directories above it too; one that exists is no error");
  auto* rm = add_fs_subcommand(fs, r, "rm", "remove a file's name (the file goes with its last)");
  rm->add_option("PATH", r.path, "file")->required();
  auto* rmdir = add_fs_subcommand(fs, r, "rmdir", "remove an empty directory");
  rmdir->add_option("PATH", r.path, "directory")->required();
  auto* mv = add_fs_subcommand(fs, r, "mv", "rename a file, or a directory with all below it");
  mv->add_option("FROM", r.path, "file or directory")->required();
  mv->add_option("TO", r.to, "its new path")->required();
  mv->add_flag("--force", r.force, "replace a file, or an empty directory, at TO");
  auto* link = add_fs_subcommand(fs, r, "link", "give a file another name (a hard link)");
  link->add_option("FROM", r.path, "file")->required();
  link->add_option("TO", r.to, "the new name")->required();
  add_fs_probe_subcommand(fs, r);
}

// --- sessions ------------------------------------------------------------------

// An image opened and its file system mounted, for one command.
struct Session {
  std::unique_ptr<Stack> stack;
  std::unique_ptr<fs::ZonedFs> fs;  // destroyed before the stack it runs on
};

int exit_code_of(fs::Code code) {
  switch (code) {
    case fs::Code::kNoSpace:
    case fs::Code::kIoError:
    case fs::Code::kBusy:
      return kExitDeviceError;
    default:
      return kExitBadInput;
  }
}

// Prints "zonelab: error: WHERE: MESSAGE" and returns the status's exit code.
int fs_failure(const std::string& where, const fs::FsStatus& status) {
  bad_input(fmt::format("{}: {}", where, status.message()));
  return exit_code_of(status.code());
}

int open_stack(const std::string& image, bool writable, Session& s) {
  StackOptions options;
  options.read_only = !writable;
  auto stack = Stack::open(image, options);
  if (!stack) return bad_input(stack.error());
  s.stack = std::move(stack).value();
  for (const std::string& text : s.stack->notes()) note(text);
  return kExitOk;
}

fs::MountOptions mount_options(bool writable) {
  fs::MountOptions options;
  options.read_only = !writable;
  options.gc = writable;
  return options;
}

// Mounts the file system on the session's open stack.
int mount_fs(const std::string& image, bool writable, Session& s) {
  auto mounted = fs::ZonedFs::mount(*s.stack, mount_options(writable));
  if (!mounted) return fs_failure(image, mounted.status());
  s.fs = std::move(mounted).value();
  for (const std::string& text : s.fs->recovery_notes()) note(text);
  return kExitOk;
}

int mount(const std::string& image, bool writable, Session& s) {
  if (int code = open_stack(image, writable, s); code != kExitOk) return code;
  return mount_fs(image, writable, s);
}

// Unmounts and closes a writable session: its changes saved into the image.
int unmount(const std::string& image, Session& s) {
  fs::FsStatus unmounted = s.fs->unmount();
  s.fs.reset();
  Outcome saved = s.stack->close();
  if (!unmounted) return fs_failure(image, unmounted);
  if (!saved) {
    note(fmt::format("{}: not checkpointed ({}); its journal holds the changes", image,
                     saved.error()));
  }
  return kExitOk;
}

// Runs `check` on a read-only mount of the session's writable stack, before
// the file system is mounted for writing: a change it refuses leaves the
// image as it was (a writable mount journals the file system's counters
// when it goes, and recovery may write). Recovery's notes wait for the
// writable mount.
int check_before_writing(const std::string& image, Session& s,
                         const std::function<fs::FsStatus(const fs::ZonedFs&)>& check) {
  ZL_ASSERT(s.stack != nullptr && s.fs == nullptr);
  auto looked = fs::ZonedFs::mount(*s.stack, mount_options(false));
  if (!looked) return fs_failure(image, looked.status());
  if (fs::FsStatus ok = check(**looked); !ok) return fs_failure(image, ok);
  return kExitOk;
}

// An absolute, normalized-looking path: a leading '/' added when missing,
// trailing ones dropped; the file system checks the rest.
std::string fs_path(const std::string& given) {
  std::string path = given.empty() || given[0] != '/' ? "/" + given : given;
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

// "1 file", "2 files".
std::string counted(uint64_t n, const char* one, const char* many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

std::string join(const std::string& dir, const std::string& name) {
  return dir == "/" ? "/" + name : dir + "/" + name;
}

// How many directories `path` and those above it lack (0: it is one); a file
// on the way is the reason it cannot become one. `path` is normalized.
fs::FsResult<uint32_t> missing_dirs(const fs::ZonedFs& zfs, const std::string& path) {
  uint32_t missing = 0;
  // Bounded: each turn takes a component off, and "/" is a directory.
  for (std::string dir = path;; dir = fs::parent_of(dir)) {
    auto st = zfs.stat(dir);
    if (st && !st->is_dir) {
      return fs::FsStatus(fs::Code::kNotDirectory, fmt::format("{} is a file", dir));
    }
    if (st) return missing;
    if (st.status().code() != fs::Code::kNotFound) return st.status();
    ZL_ASSERT(dir != "/");
    ++missing;
  }
}

// The directory a new name goes into must be one.
fs::FsStatus check_parent_dir(const fs::ZonedFs& zfs, const std::string& path) {
  const std::string parent = fs::parent_of(path);
  auto missing = missing_dirs(zfs, parent);
  if (!missing) return missing.status();
  if (*missing > 0) {
    return fs::FsStatus(fs::Code::kNotFound, fmt::format("no directory {}", parent));
  }
  return {};
}

// JSON on one line (or indented); bytes that are not UTF-8 in names become
// U+FFFD rather than failing the output.
void print_fs_json(const Json& json, int indent = -1) {
  std::string text = json.dump(indent, ' ', false, Json::error_handler_t::replace);
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fputc('\n', stdout);
}

// --- mkfs ----------------------------------------------------------------------

// Why the device cannot hold a file system that the file system's own checks
// do not see, if it cannot.
std::optional<std::string> mkfs_device_problem(const Stack& stack) {
  if (stack.config().store.backing == "memory") {
    return "the image keeps no data between processes (store.backing = memory); a file system "
           "needs store.backing = file";
  }
  return std::nullopt;
}

fs::MkfsOptions mkfs_options(const FsRequest& r) {
  fs::MkfsOptions o;
  // Each value was checked against its range when it was parsed.
  if (r.finish_threshold_pct)
    o.finish_threshold_pct = static_cast<uint32_t>(*r.finish_threshold_pct);
  if (r.gc_free_pct) o.gc_free_pct = static_cast<uint32_t>(*r.gc_free_pct);
  if (r.meta_zones) o.meta_zones = static_cast<uint32_t>(*r.meta_zones);
  o.uuid_seed = r.uuid_seed;
  o.policy = r.policy;
  for (const std::string& option : r.policy_options) {
    o.policy_options += (o.policy_options.empty() ? "" : ",") + option;
  }
  o.hot_set = r.hot_set;
  if (r.hot_levels) o.hot_levels = *r.hot_levels;
  o.spill_cold = r.spill_cold;
  o.tenants = r.tenants;
  o.force = r.force;
  return o;
}

// One field of the superblock: its JSON key and value (mkfs --json, fs
// dump, fs info --json) and its line in fs info. Every field of
// fs::Superblock has a row in superblock_fields, in the order it is stored;
// a field added there gets its row here, and every command shows it.
struct SuperblockField {
  const char* key;
  const char* label;
  Json value;
  std::string text;
};

std::vector<SuperblockField> superblock_fields(const fs::Superblock& sb) {
  const uint64_t block_bytes = sb.block_bytes;
  auto blocks = [block_bytes](uint64_t lbas) {
    return fmt::format("{} blocks ({})", lbas, format_size(lbas * block_bytes));
  };
  const std::string uuid = fs::uuid_text(sb.uuid);
  std::vector<SuperblockField> fields{
      {"uuid", "uuid", uuid, uuid},
      {"block_bytes", "block size", sb.block_bytes, fmt::format("{} bytes", sb.block_bytes)},
      {"zone_size_lbas", "zone size", sb.zone_size_lbas, blocks(sb.zone_size_lbas)},
      {"zone_capacity_lbas", "zone capacity", sb.zone_capacity_lbas, blocks(sb.zone_capacity_lbas)},
      {"zone_count", "zones", sb.zone_count, fmt::format("{}", sb.zone_count)},
      {"meta_zones", "metadata zones", sb.meta_zones, fmt::format("{}", sb.meta_zones)},
      {"finish_threshold_pct", "finish threshold", sb.finish_threshold_pct,
       fmt::format("{}% of a zone's capacity", sb.finish_threshold_pct)},
      {"gc_free_pct", "gc free", sb.gc_free_pct,
       fmt::format("{}% of the data zones kept empty", sb.gc_free_pct)},
      {"policy", "policy", sb.policy, one_line(sb.policy, fs::kPolicyNameBytes * 4)},
  };
  if (!sb.zone_sets.empty()) {
    Json sets = Json::array();
    std::string text;
    for (const fs::SuperZoneSet& set : sb.zone_sets) {
      sets.push_back({{"zone_size_lbas", set.size_lbas},
                      {"zone_capacity_lbas", set.capacity_lbas},
                      {"zones", set.count}});
      text += fmt::format("{}{} x {} (capacity {})", text.empty() ? "" : " + ", set.count,
                          format_size(set.size_lbas * block_bytes),
                          format_size(set.capacity_lbas * block_bytes));
    }
    fields.push_back({"zone_sets", "zone sets", std::move(sets), text});
    const bool none = sb.hot_set == fs::kNoHotSet;
    fields.push_back({"hot_set", "hot set", none ? Json(nullptr) : Json(sb.hot_set),
                      none ? std::string("none: every level in every set")
                           : fmt::format("{} (the other sets take the other levels)", sb.hot_set)});
    fields.push_back({"hot_levels", "hot levels", fs::data_levels_text(sb.hot_levels),
                      none ? std::string("-") : fs::data_levels_text(sb.hot_levels)});
    fields.push_back({"spill_cold", "spill cold", sb.spill_cold != 0,
                      none ? std::string("-")
                      : sb.spill_cold != 0
                          ? std::string("on: the other levels fill the hot set alike")
                          : std::string("off")});
    Json tenants = Json::array();
    std::string tenants_text;
    for (const fs::SuperTenant& t : sb.tenants) {
      const std::vector<uint32_t> set_list = fs::set_mask_sets(t.sets);
      tenants.push_back({{"name", t.name}, {"directory", "/" + t.name}, {"sets", set_list}});
      tenants_text += fmt::format("{}/{} in set{} {}", tenants_text.empty() ? "" : "; ", t.name,
                                  set_list.size() == 1 ? "" : "s", fs::set_mask_text(t.sets));
    }
    fields.push_back({"tenants", "tenants", std::move(tenants),
                      tenants_text.empty() ? std::string("none") : tenants_text});
  }
  return fields;
}

// The data zones, set by set: "54 of 128MiB" or "30 of 128MiB + 24 of
// 512MiB" (a set whose zones all hold metadata has none).
std::string data_zones_text(const fs::FsSpace& space) {
  if (space.sets.empty()) {
    return fmt::format("{} of {}", space.data_zones, format_size(space.zone_bytes));
  }
  std::string out;
  for (const fs::FsSetSpace& set : space.sets) {
    if (set.data_zones == 0) continue;
    out += fmt::format("{}{} of {}", out.empty() ? "" : " + ", set.data_zones,
                       format_size(set.zone_bytes));
  }
  return out;
}

Json superblock_json(const fs::Superblock& sb) {
  Json out = Json::object();
  for (SuperblockField& field : superblock_fields(sb)) out[field.key] = std::move(field.value);
  return out;
}

// The policy's options and what it keeps, for people and JSON.
Json policy_json(const fs::PlacementPolicy& policy) {
  Json options = Json::object();
  for (const auto& [key, value] : policy.describe()) options[key] = value;
  return Json{{"name", std::string(policy.name())}, {"options", options}};
}

std::string policy_text(const fs::PlacementPolicy& policy) {
  std::string out(policy.name());
  for (const auto& [key, value] : policy.describe()) out += fmt::format(" {}={}", key, value);
  return out;
}

void print_mkfs(const std::string& image, const fs::ZonedFs& zfs, bool json,
                const fs::MkfsReport& report) {
  const fs::Superblock& sb = zfs.superblock();
  const uint32_t data_zones = sb.zone_count - sb.meta_zones;
  const uint64_t zone_capacity_bytes = sb.zone_capacity_lbas * sb.block_bytes;
  if (json) {
    Json out = status_json(Status::kSuccess);
    out["image"] = image;
    out.update(superblock_json(sb));
    out["data_zones"] = data_zones;
    out["zone_capacity_bytes"] = zone_capacity_bytes;
    out["placement"] = policy_json(zfs.policy());
    if (report.probe) out["probe"] = probe_json(*report.probe);
    print_fs_json(out);
    return;
  }
  const std::string zones =
      sb.zone_sets.empty()
          ? fmt::format("{} data zones of {}", data_zones, format_size(zone_capacity_bytes))
          : fmt::format("{} data zones: {}", data_zones, data_zones_text(zfs.space()));
  fmt::print(
      "{}: file system {}, {} (+{} metadata), finish threshold {}%, gc keeps {}% free, policy "
      "{}\n",
      image, fs::uuid_text(sb.uuid), zones, sb.meta_zones, sb.finish_threshold_pct, sb.gc_free_pct,
      policy_text(zfs.policy()));
  if (report.probe) print_probe(image, *report.probe);
}

int run_mkfs(const FsRequest& r) {
  if (!fs::known_placement_policy(r.policy)) {
    return bad_input(fmt::format("--policy {}: the known policies are {}", r.policy,
                                 fs::placement_policy_names()));
  }
  Session s;
  if (int code = open_stack(r.image, true, s); code != kExitOk) return code;
  if (auto problem = mkfs_device_problem(*s.stack)) {
    return bad_input(fmt::format("{}: {}", r.image, *problem));
  }
  fs::MkfsReport report;
  if (fs::FsStatus made = fs::ZonedFs::mkfs(*s.stack, mkfs_options(r), &report); !made) {
    return fs_failure(r.image, made);
  }
  // Mounted read-only, only to read back what was made.
  auto mounted = fs::ZonedFs::mount(*s.stack, mount_options(false));
  if (!mounted) return fs_failure(r.image, mounted.status());
  print_mkfs(r.image, **mounted, r.json, report);
  for (const std::string& w : report.warnings) note(fmt::format("{}: {}", r.image, w));
  mounted->reset();
  Outcome saved = s.stack->close();
  if (!saved) note(fmt::format("{}: not checkpointed ({})", r.image, saved.error()));
  return kExitOk;
}

// --- ls and stat -----------------------------------------------------------------

struct Listed {
  std::string path;      // absolute
  std::string relative;  // to the directory listed
  fs::FileStat stat;
};

// The entries of `dir` -- with `recursive`, those below it too, each
// directory's entries right after it -- or the one file `dir` names.
fs::FsResult<std::vector<Listed>> list_tree(const fs::ZonedFs& zfs, const std::string& dir,
                                            bool recursive) {
  auto top = zfs.stat(dir);
  if (!top) return top.status();
  if (!top->is_dir) return std::vector<Listed>{Listed{dir, dir, *top}};
  struct Frame {
    std::string path;
    std::string relative;
    std::vector<std::string> names;
    size_t next = 0;
  };
  auto names = zfs.list(dir);
  if (!names) return names.status();
  std::vector<Listed> out;
  // Bounded: a frame a directory level, and a path is at most 1024 bytes.
  std::vector<Frame> frames{{dir, "", std::move(names).value()}};
  while (!frames.empty()) {
    Frame& f = frames.back();
    if (f.next == f.names.size()) {
      frames.pop_back();
      continue;
    }
    const std::string& name = f.names[f.next++];
    Listed entry{join(f.path, name), f.relative.empty() ? name : f.relative + "/" + name, {}};
    auto st = zfs.stat(entry.path);
    if (!st) return st.status();
    entry.stat = *st;
    out.push_back(entry);
    if (!recursive || !entry.stat.is_dir) continue;
    auto children = zfs.list(entry.path);
    if (!children) return children.status();
    frames.push_back({entry.path, entry.relative, std::move(children).value()});
  }
  return out;
}

Json extents_json(const fs::FileStat& st, uint64_t block_bytes) {
  Json extents = Json::array();
  for (const fs::Extent& e : st.extents) {
    extents.push_back({{"zone", e.zone},
                       {"lba", e.lba},
                       {"length", e.length},
                       {"blocks", e.blocks(block_bytes)}});
  }
  return extents;
}

Json entry_json(const Listed& e) {
  Json j = {{"name", e.relative}, {"path", e.path}, {"type", e.stat.is_dir ? "dir" : "file"}};
  if (!e.stat.is_dir) {
    j["size"] = e.stat.size;
    j["links"] = e.stat.nlink;
    j["id"] = e.stat.id;
  }
  return j;
}

void print_entry(const Listed& e, bool long_format) {
  std::string name = one_line(e.relative, 4096) + (e.stat.is_dir ? "/" : "");
  if (!long_format) {
    fmt::print("{}\n", name);
  } else if (e.stat.is_dir) {
    fmt::print("dir  {:>14} {:>5} {:>8}  {}\n", "-", "-", "-", name);
  } else {
    fmt::print("file {:>14} {:>5} {:>8}  {}\n", e.stat.size, e.stat.nlink, e.stat.id, name);
  }
}

int run_ls(const FsRequest& r, fs::ZonedFs& zfs) {
  std::string dir = fs_path(r.path.empty() ? "/" : r.path);
  auto entries = list_tree(zfs, dir, r.recursive);
  if (!entries) return fs_failure(r.image, entries.status());
  if (r.json) {
    Json out = status_json(Status::kSuccess);
    out["dir"] = dir;
    Json list = Json::array();
    for (const Listed& e : *entries) list.push_back(entry_json(e));
    out["entries"] = list;
    print_fs_json(out);
    return kExitOk;
  }
  for (const Listed& e : *entries) print_entry(e, r.long_format);
  return kExitOk;
}

int run_stat(const FsRequest& r, fs::ZonedFs& zfs) {
  std::string path = fs_path(r.path);
  auto st = zfs.stat(path);
  if (!st) return fs_failure(r.image, st.status());
  const uint64_t bs = zfs.block_bytes();
  if (r.json) {
    Json out = status_json(Status::kSuccess);
    out["path"] = path;
    out["type"] = st->is_dir ? "dir" : "file";
    if (!st->is_dir) {
      out.update({{"size", st->size},
                  {"links", st->nlink},
                  {"id", st->id},
                  {"lifetime", fs::lifetime_name(st->lifetime)},
                  {"io_class", fs::io_class_name(st->io_class)},
                  {"mtime_ns", st->mtime_ns},
                  {"extents", extents_json(*st, bs)}});
    }
    print_fs_json(out);
    return kExitOk;
  }
  fmt::print("path      {}\n", one_line(path, 4096));
  fmt::print("type      {}\n", st->is_dir ? "directory" : "file");
  if (st->is_dir) return kExitOk;
  fmt::print("size      {} bytes\n", st->size);
  fmt::print("links     {}\n", st->nlink);
  fmt::print("id        {}\n", st->id);
  fmt::print("lifetime  {}\n", fs::lifetime_name(st->lifetime));
  fmt::print("io class  {}\n", fs::io_class_name(st->io_class));
  fmt::print("mtime     {} ns (device clock)\n", st->mtime_ns);
  fmt::print("extents   {}\n", st->extents.size());
  for (const fs::Extent& e : st->extents) {
    fmt::print("  zone {:>6}  lba {:>12}  length {:>10}  ({})\n", e.zone, e.lba, e.length,
               counted(e.blocks(bs), "block", "blocks"));
  }
  return kExitOk;
}

// --- reading files out -------------------------------------------------------------

using ChunkSink = std::function<Outcome(const uint8_t* data, uint64_t bytes)>;

// Reads the file at `path` in chunks into `sink`, adding its bytes to
// `copied_bytes`. A problem is printed; the exit code is returned.
int stream_file(fs::ZonedFs& zfs, const std::string& image, const std::string& path,
                const ChunkSink& sink, uint64_t& copied_bytes) {
  auto file = zfs.open_read(path);
  if (!file) return fs_failure(image, file.status());
  std::vector<uint8_t> chunk(kChunkBytes);
  for (;;) {
    auto got = (*file)->read_next(chunk.size(), chunk.data());
    if (!got) return fs_failure(fmt::format("{}: {}", image, path), got.status());
    if (*got == 0) return kExitOk;
    if (Outcome put = sink(chunk.data(), *got); !put) return bad_input(put.error());
    copied_bytes += *got;
  }
}

int run_cat(const FsRequest& r, fs::ZonedFs& zfs) {
  uint64_t bytes = 0;
  int code = stream_file(
      zfs, r.image, fs_path(r.path),
      [](const uint8_t* data, uint64_t n) -> Outcome {
        if (std::fwrite(data, 1, n, stdout) != n) {
          return Error{fmt::format("stdout: {}", std::strerror(errno))};
        }
        return {};
      },
      bytes);
  if (code == kExitOk && std::fflush(stdout) != 0) {
    return bad_input(fmt::format("stdout: {}", std::strerror(errno)));
  }
  return code;
}

// --- df -------------------------------------------------------------------------------

Json df_json(const fs::FsSpace& sp, const fs::Superblock& sb) {
  Json out = status_json(Status::kSuccess);
  out.update({{"size_bytes", sp.size_bytes},
              {"free_bytes", sp.free_bytes},
              {"used_bytes", sp.used_bytes},
              {"reclaimable_bytes", sp.reclaimable_bytes},
              {"lost_bytes", sp.lost_bytes},
              {"write_amplification", sp.write_amplification},
              {"data_zones", sp.data_zones},
              {"empty_zones", sp.empty_zones},
              {"active_zones", sp.active_zones},
              {"zone_bytes", sp.zone_bytes},
              {"files", sp.files},
              {"file_bytes", sp.file_bytes}});
  if (!sp.sets.empty()) out["sets"] = fs::space_sets_json(sp, sb);
  if (!sp.tenants.empty()) out["tenants"] = fs::space_tenants_json(sp);
  return out;
}

// A size as df -h shows one: three significant digits at most, in the
// largest binary unit that keeps it at 1 or more ("2.7GiB", "4.8MiB", "512").
std::string human_size(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  if (bytes < 1024) return fmt::format("{}", bytes);
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  for (value /= 1024; value >= 1024 && unit + 1 < std::size(kUnits); value /= 1024) ++unit;
  return value < 10 ? fmt::format("{:.1f}{}", value, kUnits[unit])
                    : fmt::format("{:.0f}{}", value, kUnits[unit]);
}

int run_df(const FsRequest& r, fs::ZonedFs& zfs) {
  const fs::FsSpace sp = zfs.space();
  if (r.json) {
    Json out = df_json(sp, zfs.superblock());
    out["image"] = r.image;
    out["placement"] = policy_json(zfs.policy());
    print_fs_json(out);
    return kExitOk;
  }
  const uint64_t size = sp.size_bytes;
  const uint64_t taken = size - sp.free_bytes;
  const uint64_t use_pct = size == 0 ? 0 : (taken * 100 + size - 1) / size;
  fmt::print("{:<20} {:>10} {:>10} {:>12} {:>10} {:>10} {:>5}\n", "File system", "Size", "Used",
             "Reclaimable", "Lost", "Free", "Use%");
  fmt::print("{:<20} {:>10} {:>10} {:>12} {:>10} {:>10} {:>4}%\n", one_line(r.image, 200),
             human_size(size), human_size(sp.used_bytes), human_size(sp.reclaimable_bytes),
             human_size(sp.lost_bytes), human_size(sp.free_bytes), use_pct);
  if (sp.sets.empty()) {
    fmt::print("data zones           {} of {} ({} empty, {} active)\n", sp.data_zones,
               format_size(sp.zone_bytes), sp.empty_zones, sp.active_zones);
  }
  for (size_t i = 0; i < sp.sets.size(); ++i) {
    const fs::FsSetSpace& set = sp.sets[i];
    fmt::print(
        "zone set {:<11} {} of {} ({} empty, {} active): used {}, reclaimable {}, free {}, write "
        "amplification {:.3f}\n",
        i, set.data_zones, format_size(set.zone_bytes), set.empty_zones, set.active_zones,
        human_size(set.used_bytes), human_size(set.reclaimable_bytes), human_size(set.free_bytes),
        set.write_amplification);
  }
  for (const fs::FsTenantSpace& t : sp.tenants) {
    fmt::print(
        "tenant {:<13} /{} in set{} {}: used {}, reclaimable {}, free {}, {} files, write "
        "amplification {:.3f}\n",
        t.name, t.name, std::popcount(t.sets) == 1 ? "" : "s", fs::set_mask_text(t.sets),
        human_size(t.space.used_bytes), human_size(t.space.reclaimable_bytes),
        human_size(t.space.free_bytes), t.files, t.space.write_amplification);
  }
  fmt::print("files                {}, {} bytes\n", sp.files, sp.file_bytes);
  fmt::print("write amplification  {:.3f}\n", sp.write_amplification);
  fmt::print("placement            {}\n", policy_text(zfs.policy()));
  return kExitOk;
}

// --- info -----------------------------------------------------------------------------

// The superblock, field by field, and what follows from it: the data zones,
// and where the journal writes now.
int run_info(const FsRequest& r, const fs::ZonedFs& zfs) {
  const fs::Superblock& sb = zfs.superblock();
  const uint32_t data_zones = sb.zone_count - sb.meta_zones;
  const uint64_t zone_capacity_bytes = sb.zone_capacity_lbas * sb.block_bytes;
  if (r.json) {
    Json out = status_json(Status::kSuccess);
    out["image"] = r.image;
    out.update(superblock_json(sb));
    out["data_zones"] = data_zones;
    out["zone_capacity_bytes"] = zone_capacity_bytes;
    out["journal"] = {{"zone", zfs.journal_zone()}, {"sequence", zfs.journal_sequence()}};
    out["placement"] = policy_json(zfs.policy());
    print_fs_json(out);
    return kExitOk;
  }
  std::vector<std::pair<std::string, std::string>> lines{{"image", one_line(r.image, 4096)}};
  for (const SuperblockField& field : superblock_fields(sb)) {
    lines.emplace_back(field.label, field.text);
  }
  const fs::FsSpace space = zfs.space();
  lines.emplace_back("data zones",
                     fmt::format("{} ({})", data_zones_text(space), format_size(space.size_bytes)));
  lines.emplace_back("journal", fmt::format("metadata zone {}, header sequence {}",
                                            zfs.journal_zone(), zfs.journal_sequence()));
  for (const auto& [key, value] : zfs.policy().describe()) {
    lines.emplace_back("policy " + key, value);
  }
  size_t width = 0;
  for (const auto& [label, text] : lines) width = std::max(width, label.size());
  for (const auto& [label, text] : lines) fmt::print("{:<{}}  {}\n", label, width, text);
  return kExitOk;
}

// --- fsck -----------------------------------------------------------------------------

struct FsckOutcome {
  std::vector<std::string> problems;
  std::vector<std::string> repairs;
  std::vector<std::string> losses;     // what a repair gave up
  std::vector<std::string> remaining;  // after repairs
  std::vector<std::string> notes;      // what recovery did or noticed, not a problem
  uint64_t files = 0;
  uint64_t extents = 0;
  uint64_t journal_groups = 0;
  std::vector<rocksdb_plugin::DbCheck> databases;
  bool repaired = false;
  std::string unmountable;  // why the file system does not mount, if it does not
  // A repair that lost data is no clean outcome: what the lost records or
  // cut files held is gone, and a program may not open its files.
  bool clean() const { return repaired ? remaining.empty() && losses.empty() : problems.empty(); }
};

void print_fsck_report(const FsRequest& r, const FsckOutcome& o) {
  if (r.json) {
    Json out = status_json(Status::kSuccess);
    out.update({{"image", r.image},
                {"clean", o.clean()},
                {"problems", o.problems},
                {"repairs", o.repairs},
                {"losses", o.losses},
                {"notes", o.notes},
                {"files", o.files},
                {"extents", o.extents},
                {"journal_groups", o.journal_groups}});
    if (o.repaired) out["remaining_problems"] = o.remaining;
    Json dbs = Json::array();
    for (const auto& d : o.databases) {
      dbs.push_back({{"dir", d.dir},
                     {"opened", d.opened},
                     {"unchecked", d.unchecked},
                     {"error", d.error},
                     {"column_families", d.column_families},
                     {"table_files", d.table_files},
                     {"wal_files", d.wal_files},
                     {"options_file", d.options_file != 0}});
    }
    out["databases"] = dbs;
    print_fs_json(out);
    return;
  }
  for (const std::string& p : o.problems) fmt::print("problem: {}\n", one_line(p, 1000));
  for (const std::string& p : o.repairs) fmt::print("repaired: {}\n", one_line(p, 1000));
  for (const std::string& p : o.losses) fmt::print("lost: {}\n", one_line(p, 1000));
  for (const std::string& p : o.remaining) fmt::print("remains: {}\n", one_line(p, 1000));
  for (const std::string& p : o.notes) fmt::print("note: {}\n", one_line(p, 1000));
  for (const auto& d : o.databases) {
    if (d.opened) {
      fmt::print("database {}: opens ({}, {}, {})\n", d.dir,
                 counted(d.column_families.size(), "column family", "column families"),
                 counted(d.table_files, "table file", "table files"),
                 counted(d.wal_files, "log", "logs"));
    } else if (d.unchecked) {
      fmt::print("database {}: not checked: {}\n", d.dir, one_line(d.error, 1000));
    }
  }
  if (o.clean()) {
    fmt::print("{}: clean ({} files, {} extents, {} journal groups)\n", r.image, o.files, o.extents,
               o.journal_groups);
  }
}

// The report on stdout; damage also as one line on stderr, and exit 3.
int answer_fsck(const FsRequest& r, const FsckOutcome& o) {
  print_fsck_report(r, o);
  if (o.clean()) return kExitOk;
  std::fflush(stdout);
  if (!o.unmountable.empty()) {
    bad_input(fmt::format("{}: the file system is damaged: it does not mount: {}", r.image,
                          o.unmountable));
  } else if (o.repaired && !o.remaining.empty()) {
    bad_input(fmt::format("{}: {} after repair", r.image,
                          counted(o.remaining.size(), "problem remains", "problems remain")));
  } else if (o.repaired) {
    bad_input(
        fmt::format("{}: repaired with {}: the file system is consistent, but what they "
                    "name is gone (programs may not open their files)",
                    r.image, counted(o.losses.size(), "loss", "losses")));
  } else {
    bad_input(
        fmt::format("{}: the file system is damaged: {} found (fs fsck --repair mends what "
                    "it can)",
                    r.image, counted(o.problems.size(), "problem", "problems")));
  }
  return kExitDeviceError;
}

// The report, and what recovery did at mount: on a writable mount that is
// a repair (a torn journal tail left behind, a file's tail given back); on
// a read-only one a note, unless the report has it as a problem already.
void take_report(const fs::ZonedFs::FsckReport& report,
                 const std::vector<std::string>& recovery_notes, bool repair, FsckOutcome& o) {
  o.problems = report.problems;
  for (const std::string& n : recovery_notes) {
    if (repair) {
      o.repairs.push_back("at mount: " + n);
    } else if (std::find(o.problems.begin(), o.problems.end(), n) == o.problems.end()) {
      o.notes.push_back(n);
    }
  }
  o.repairs.insert(o.repairs.end(), report.repairs.begin(), report.repairs.end());
  o.losses = report.losses;
  o.files = report.files;
  o.extents = report.extents;
  o.journal_groups = report.journal_groups;
}

// RocksDB opens every database the file system holds, or fsck is not clean:
// a file system consistent in itself can still hold a database that lost
// what it needs (a repair's losses, a bug).
// Without RocksDB (its library cannot be loaded) fsck cannot say clean: the
// run ends in one line that says why and how to check the rest alone.
int check_databases(const FsRequest& r, fs::ZonedFs& zfs, FsckOutcome& o) {
  if (r.skip_databases) return kExitOk;
  auto runtime = rocksdb_plugin::rocksdb_runtime();
  if (!runtime) {
    bad_input(
        fmt::format("{}: the databases cannot be checked: {} (--skip-databases checks "
                    "the file system alone)",
                    r.image, runtime.error()));
    return kExitInternal;
  }
  o.databases = (*runtime)->check_databases(zfs);
  for (const auto& d : o.databases) {
    if (!d.damaged()) continue;
    std::string problem = fmt::format("database {}: RocksDB does not open it: {}", d.dir, d.error);
    (o.repaired ? o.remaining : o.problems).push_back(problem);
  }
  return kExitOk;
}

int run_fsck(const FsRequest& r) {
  Session s;
  if (int code = open_stack(r.image, r.repair, s); code != kExitOk) return code;
  fs::MountOptions options = mount_options(r.repair);
  options.cut_lost_data = true;  // reported as damage, or repaired
  // A damaged journal: refused for writing, unless the repair is to cut it
  // (reported as losses).
  options.cut_damaged_journal = r.repair;
  auto mounted = fs::ZonedFs::mount(*s.stack, options);
  if (!mounted) {
    // A file system that was there and no longer mounts is damage; no file
    // system at all is input fsck cannot use.
    if (mounted.status().code() != fs::Code::kCorruption) {
      return fs_failure(r.image, mounted.status());
    }
    FsckOutcome o;
    o.unmountable = mounted.status().message();
    o.problems.push_back("the file system does not mount: " + o.unmountable);
    return answer_fsck(r, o);
  }
  s.fs = std::move(mounted).value();
  FsckOutcome o;
  take_report(s.fs->fsck(r.repair), s.fs->recovery_notes(), r.repair, o);
  if (r.repair) {
    o.repaired = true;
    if (fs::FsStatus synced = s.fs->sync_metadata(); !synced) return fs_failure(r.image, synced);
    o.remaining = s.fs->fsck(false).problems;
  }
  const int checked = check_databases(r, *s.fs, o);
  if (r.repair) {
    if (int code = unmount(r.image, s); code != kExitOk) return code;
  }
  if (checked != kExitOk) return checked;
  return answer_fsck(r, o);
}

// --- dump -----------------------------------------------------------------------------

int run_dump(const FsRequest& r, fs::ZonedFs& zfs) {
  std::string text = zfs.dump_json();
  Json out = status_json(Status::kSuccess);
  out["image"] = r.image;
  out["superblock"] = superblock_json(zfs.superblock());
  out["placement"] = policy_json(zfs.policy());
  Json dump = Json::parse(text);
  for (auto& [key, value] : dump.items()) out[key] = value;
  out["journal"]["zone"] = zfs.journal_zone();
  out["journal"]["sequence"] = zfs.journal_sequence();
  print_fs_json(out, r.json ? -1 : 2);
  return kExitOk;
}

// --- host files -------------------------------------------------------------------------

// A file descriptor, closed when it goes.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    std::swap(fd_, other.fd_);
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  bool ok() const { return fd_ >= 0; }
  // Closes now, for the error close() may report (a write that failed late).
  int close() {
    int fd = std::exchange(fd_, -1);
    return fd < 0 ? 0 : ::close(fd);
  }

 private:
  int fd_ = -1;
};

// Why an open of `name` in `dir` failed, worded for a person.
std::string open_error(int dir, const std::string& name, int err) {
  struct stat st;
  if ((err == ELOOP || err == ENOTDIR) &&
      ::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
    if (S_ISLNK(st.st_mode)) return "is a symlink (never followed)";
    if (err == ENOTDIR) return "is not a directory";
  }
  return std::strerror(err);
}

// Opens the directory `relative` ("a/b"; "" is `root` itself) below `root`,
// one component at a time, never through a symlink; with `make`, makes the
// missing ones. A problem comes back as "COMPONENT-PATH: why".
Result<Fd> open_dir_below(int root, const std::string& relative, bool make) {
  Fd dir(::dup(root));
  if (!dir.ok()) return Error{std::strerror(errno)};
  size_t start = 0;
  while (start < relative.size()) {
    size_t end = std::min(relative.find('/', start), relative.size());
    std::string name = relative.substr(start, end - start);
    std::string so_far = relative.substr(0, end);
    if (make && ::mkdirat(dir.get(), name.c_str(), 0755) != 0 && errno != EEXIST) {
      return Error{fmt::format("{}: {}", so_far, std::strerror(errno))};
    }
    Fd next(::openat(dir.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!next.ok()) return Error{fmt::format("{}: {}", so_far, open_error(dir.get(), name, errno))};
    dir = std::move(next);
    start = end + 1;
  }
  return dir;
}

std::string parent_relative(const std::string& relative) {
  size_t slash = relative.rfind('/');
  return slash == std::string::npos ? "" : relative.substr(0, slash);
}

std::string last_name(const std::string& relative) {
  size_t slash = relative.rfind('/');
  return slash == std::string::npos ? relative : relative.substr(slash + 1);
}

// --- backup ---------------------------------------------------------------------------

// Checks the backup directory before anything is read: missing (made
// later), or an empty directory (any directory with --force); never a
// symlink.
std::optional<std::string> check_backup_dir(const std::string& dir, bool force) {
  struct stat st;
  if (::lstat(dir.c_str(), &st) != 0) {
    if (errno == ENOENT) return std::nullopt;
    return fmt::format("{}: {}", dir, std::strerror(errno));
  }
  if (S_ISLNK(st.st_mode)) return fmt::format("{}: is a symlink (never followed)", dir);
  if (!S_ISDIR(st.st_mode)) return fmt::format("{}: is not a directory", dir);
  if (force) return std::nullopt;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return fmt::format("{}: {}", dir, std::strerror(errno));
  bool empty = true;
  while (const dirent* e = ::readdir(d)) {
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) empty = false;
  }
  ::closedir(d);
  if (!empty) return fmt::format("{}: is not empty (--force writes into it)", dir);
  return std::nullopt;
}

// The backup directory, made with its parents if missing.
Result<Fd> open_backup_root(const std::string& dir) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) return Error{fmt::format("{}: cannot make the directory: {}", dir, error.message())};
  Fd root(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!root.ok()) return Error{fmt::format("{}: {}", dir, open_error(AT_FDCWD, dir, errno))};
  return root;
}

struct CopyTotals {
  uint64_t directories = 0;
  uint64_t files = 0;
  uint64_t bytes = 0;
  std::vector<std::string> skipped;
};

int backup_file(const FsRequest& r, fs::ZonedFs& zfs, int root, const Listed& e, CopyTotals& t) {
  auto parent = open_dir_below(root, parent_relative(e.relative), false);
  if (!parent) return bad_input(fmt::format("{}/{}", r.path, parent.error()));
  const std::string name = last_name(e.relative);
  Fd out(::openat(parent->get(), name.c_str(), O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (!out.ok()) {
    return bad_input(
        fmt::format("{}/{}: {}", r.path, e.relative, open_error(parent->get(), name, errno)));
  }
  const std::string where = fmt::format("{}/{}", r.path, e.relative);
  // Emptied only once it is known not to be the image (a backup into the
  // image's own directory, with --force, names a file like it).
  if (is_image_file(out.get(), r.image)) {
    return bad_input(fmt::format("{}: is the image itself (not overwritten)", where));
  }
  if (::ftruncate(out.get(), 0) != 0) {
    return bad_input(fmt::format("{}: {}", where, std::strerror(errno)));
  }
  int code = stream_file(
      zfs, r.image, e.path,
      [&](const uint8_t* data, uint64_t n) -> Outcome {
        Outcome written = write_all(out.get(), data, n);
        if (!written) return Error{fmt::format("{}: {}", where, written.error())};
        return {};
      },
      t.bytes);
  if (code != kExitOk) return code;
  if (out.close() != 0) return bad_input(fmt::format("{}: {}", where, std::strerror(errno)));
  ++t.files;
  return kExitOk;
}

// The directory of the file system a backup copies out or a restore copies
// into: --path or --restore-path, the root without it.
std::string subtree_of(const FsRequest& r) { return fs_path(r.subtree.empty() ? "/" : r.subtree); }

// "dev.img", or "/a in dev.img" for a subtree.
std::string where_in_image(const FsRequest& r) {
  const std::string top = subtree_of(r);
  return top == "/" ? r.image : fmt::format("{} in {}", top, r.image);
}

void print_copy(const FsRequest& r, const CopyTotals& t, const std::string& line) {
  if (r.json) {
    Json out = status_json(Status::kSuccess);
    out.update({{"image", r.image},
                {"dir", r.path},
                {"path", subtree_of(r)},
                {"directories", t.directories},
                {"files", t.files},
                {"bytes", t.bytes},
                {"skipped", t.skipped}});
    print_fs_json(out);
  } else {
    fmt::print("{}\n", one_line(line, 4096));
  }
}

// The directory --path names; the reason if it names none.
fs::FsStatus check_backup_subtree(const fs::ZonedFs& zfs, const std::string& top) {
  auto st = zfs.stat(top);
  if (!st && st.status().code() == fs::Code::kNotFound) {
    return fs::FsStatus(fs::Code::kNotFound, fmt::format("--path {}: no such directory", top));
  }
  if (!st) return st.status();
  if (!st->is_dir) {
    return fs::FsStatus(fs::Code::kNotDirectory,
                        fmt::format("--path {}: is a file (--path takes a directory)", top));
  }
  return {};
}

int run_backup(const FsRequest& r, fs::ZonedFs& zfs) {
  const std::string top = subtree_of(r);
  if (fs::FsStatus ok = check_backup_subtree(zfs, top); !ok) return fs_failure(r.image, ok);
  auto entries = list_tree(zfs, top, true);
  if (!entries) return fs_failure(r.image, entries.status());
  auto root = open_backup_root(r.path);
  if (!root) return bad_input(root.error());
  CopyTotals t;
  for (const Listed& e : *entries) {
    if (e.stat.is_dir) {
      auto made = open_dir_below(root->get(), e.relative, true);
      if (!made) return bad_input(fmt::format("{}/{}", r.path, made.error()));
      ++t.directories;
      continue;
    }
    if (int code = backup_file(r, zfs, root->get(), e, t); code != kExitOk) return code;
  }
  print_copy(r, t,
             fmt::format("backed up {} and {} ({} bytes) from {} to {}",
                         counted(t.directories, "directory", "directories"),
                         counted(t.files, "file", "files"), t.bytes, where_in_image(r), r.path));
  return kExitOk;
}

// --- restore --------------------------------------------------------------------------

struct HostEntry {
  std::string relative;  // "a/b"
  bool is_dir = false;
};

// The names in an open directory, sorted, "." and ".." left out.
Result<std::vector<std::string>> read_names(int dir) {
  int copy = ::dup(dir);
  if (copy < 0) return Error{std::strerror(errno)};
  DIR* d = ::fdopendir(copy);
  if (d == nullptr) {
    ::close(copy);
    return Error{std::strerror(errno)};
  }
  std::vector<std::string> names;
  errno = 0;
  while (const dirent* e = ::readdir(d)) {
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) {
      names.emplace_back(e->d_name);
    }
  }
  int err = errno;
  ::closedir(d);
  if (err != 0) return Error{std::strerror(err)};
  std::sort(names.begin(), names.end());
  return names;
}

// A host directory tree, scanned whole before a restore writes anything:
// every directory and regular file, parents before children, each path
// checked as a file-system path below `top`. Symlinks, special files and the
// image itself are skipped (a note each).
class HostScan {
 public:
  HostScan(const std::string& host_dir, int root, const struct stat& image, const std::string& top)
      : host_dir_(host_dir), root_(root), image_(image), top_(top) {}

  Outcome run() {
    std::vector<std::string> pending{""};
    while (!pending.empty()) {
      std::string relative = std::move(pending.back());
      pending.pop_back();
      if (Outcome ok = scan_dir(relative, pending); !ok) return ok;
    }
    return {};
  }
  const std::vector<HostEntry>& entries() const { return entries_; }
  const std::vector<std::string>& skipped() const { return skipped_; }

 private:
  const char* skip_reason(const struct stat& st) const {
    if (st.st_dev == image_.st_dev && st.st_ino == image_.st_ino) return "the image itself";
    if (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)) return nullptr;
    return file_kind(st.st_mode);
  }

  // One directory's entries; its subdirectories go to `pending`, the first
  // one last so that it is scanned next.
  Outcome scan_dir(const std::string& relative, std::vector<std::string>& pending) {
    auto dir = open_dir_below(root_, relative, false);
    if (!dir) return Error{fmt::format("{}/{}", host_dir_, dir.error())};
    auto names = read_names(dir->get());
    if (!names) return Error{fmt::format("{}/{}: {}", host_dir_, relative, names.error())};
    std::vector<std::string> subdirs;
    for (const std::string& name : *names) {
      std::string rel = relative.empty() ? name : relative + "/" + name;
      struct stat st;
      if (::fstatat(dir->get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        return Error{fmt::format("{}/{}: {}", host_dir_, rel, std::strerror(errno))};
      }
      if (const char* why = skip_reason(st)) {
        skipped_.push_back(rel);
        note(fmt::format("{}/{}: {}, skipped", host_dir_, rel, why));
        continue;
      }
      if (fs::FsStatus ok = fs::check_path(join(top_, rel)); !ok) {
        // The reason first: the path may be long enough to be cut.
        return Error{fmt::format("{}: {}/{}", ok.message(), host_dir_, rel)};
      }
      if (entries_.size() == kRestoreEntriesMax) {
        return Error{
            fmt::format("{}: more than {} directories and files", host_dir_, kRestoreEntriesMax)};
      }
      entries_.push_back({rel, S_ISDIR(st.st_mode)});
      if (S_ISDIR(st.st_mode)) subdirs.push_back(rel);
    }
    pending.insert(pending.end(), subdirs.rbegin(), subdirs.rend());
    return {};
  }

  std::string host_dir_;
  int root_;
  struct stat image_;
  std::string top_;
  std::vector<HostEntry> entries_;
  std::vector<std::string> skipped_;
};

// Copies one host file into the file system, creating or replacing it. On
// a failure the file is removed again, so no half copy is left.
int restore_file(const FsRequest& r, fs::ZonedFs& zfs, int root, const std::string& top,
                 const HostEntry& e, CopyTotals& t) {
  const std::string where = fmt::format("{}/{}", r.path, e.relative);
  auto parent = open_dir_below(root, parent_relative(e.relative), false);
  if (!parent) return bad_input(fmt::format("{}/{}", r.path, parent.error()));
  const std::string name = last_name(e.relative);
  Fd in(::openat(parent->get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  struct stat st;
  if (!in.ok() || ::fstat(in.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    // Changed since the scan (a symlink now, or gone).
    t.skipped.push_back(e.relative);
    note(fmt::format("{}: no longer a regular file, skipped", where));
    return kExitOk;
  }
  const std::string path = join(top, e.relative);
  auto file = zfs.open_write(path, {});
  if (!file) return fs_failure(r.image, file.status());
  std::vector<uint8_t> chunk(kChunkBytes);
  fs::FsStatus status;
  uint64_t bytes = 0;
  for (;;) {
    ssize_t n = ::read(in.get(), chunk.data(), chunk.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      status = fs::FsStatus(fs::Code::kInvalid, fmt::format("{}: {}", where, std::strerror(errno)));
    }
    if (n <= 0) break;
    status = (*file)->append(chunk.data(), static_cast<uint64_t>(n));
    if (!status) break;
    bytes += static_cast<uint64_t>(n);
  }
  fs::FsStatus closed = (*file)->close();
  file->reset();
  if (status && !closed) status = closed;
  if (!status) {
    (void)zfs.remove(path);
    return fs_failure(fmt::format("{}: {}", r.image, path), status);
  }
  ++t.files;
  t.bytes += bytes;
  return kExitOk;
}

// Where the tree goes may be refused: a file there, or on the way to it, or
// of a name the tree has as a directory (or the other way round). Checked
// whole before anything is written.
fs::FsStatus check_restore_target(const fs::ZonedFs& zfs, const std::string& top,
                                  const std::vector<HostEntry>& entries) {
  if (auto missing = missing_dirs(zfs, top); !missing) {
    return fs::FsStatus(missing.status().code(),
                        fmt::format("--restore-path: {}", missing.status().message()));
  }
  for (const HostEntry& e : entries) {
    const std::string path = join(top, e.relative);
    auto st = zfs.stat(path);
    if (!st && st.status().code() == fs::Code::kNotFound) continue;
    if (!st) return st.status();
    if (st->is_dir && !e.is_dir) {
      return fs::FsStatus(fs::Code::kIsDirectory, fmt::format("{} is a directory", path));
    }
    if (!st->is_dir && e.is_dir) {
      return fs::FsStatus(fs::Code::kNotDirectory, fmt::format("{} is a file", path));
    }
  }
  return {};
}

int restore_tree(const FsRequest& r, fs::ZonedFs& zfs, int root, const std::string& top,
                 const std::vector<HostEntry>& entries, CopyTotals& t) {
  if (fs::FsStatus made = zfs.create_dir(top, true); !made) return fs_failure(r.image, made);
  for (const HostEntry& e : entries) {
    if (!e.is_dir) {
      if (int code = restore_file(r, zfs, root, top, e, t); code != kExitOk) return code;
      continue;
    }
    if (fs::FsStatus made = zfs.create_dir(join(top, e.relative), true); !made) {
      return fs_failure(r.image, made);
    }
    ++t.directories;
  }
  return kExitOk;
}

int run_restore(const FsRequest& r) {
  if (r.path.empty()) return bad_input("'': an empty path is not a directory");
  const std::string top = subtree_of(r);
  if (fs::FsStatus ok = fs::check_path(top); !ok) {
    return bad_input(fmt::format("--restore-path: {}", ok.message()));
  }
  Fd root(::open(r.path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!root.ok()) return bad_input(fmt::format("{}: {}", r.path, std::strerror(errno)));
  // The image is locked first, then the tree checked whole -- by itself,
  // and against the file system on a read-only mount -- and only then is
  // the file system mounted for writing.
  Session s;
  if (int code = open_stack(r.image, true, s); code != kExitOk) return code;
  struct stat image;
  if (::stat(r.image.c_str(), &image) != 0) {
    return bad_input(fmt::format("{}: {}", r.image, std::strerror(errno)));
  }
  HostScan scan(r.path, root.get(), image, top);
  if (Outcome scanned = scan.run(); !scanned) return bad_input(scanned.error());
  if (int code = check_before_writing(
          r.image, s,
          [&](const fs::ZonedFs& zfs) { return check_restore_target(zfs, top, scan.entries()); });
      code != kExitOk) {
    return code;
  }
  if (int code = mount_fs(r.image, true, s); code != kExitOk) return code;
  CopyTotals t;
  t.skipped = scan.skipped();
  int code = restore_tree(r, *s.fs, root.get(), top, scan.entries(), t);
  // What was copied stays, even when a later file failed.
  int closed = unmount(r.image, s);
  if (code != kExitOk) return code;
  if (closed != kExitOk) return closed;
  std::string skipped = t.skipped.empty() ? "" : fmt::format("; {} skipped", t.skipped.size());
  print_copy(
      r, t,
      fmt::format("restored {} and {} ({} bytes) from {} into {}{}",
                  counted(t.directories, "directory", "directories"),
                  counted(t.files, "file", "files"), t.bytes, r.path, where_in_image(r), skipped));
  return kExitOk;
}

// --- namespace changes: mkdir, rm, rmdir, mv, link --------------------------------------

// What a change reports once it is made: its JSON fields and its line.
struct ChangeAnswer {
  Json fields = Json::object();
  std::string line;
  bool changes = true;  // false: nothing to do (mkdir -p of a directory there)
};

// One namespace change. `check` finds, on a read-only mount, every reason
// the change would be refused and fills the answer; `apply` makes it on a
// writable mount (one journal record group, durable when it returns).
struct NamespaceCommand {
  const char* name;
  fs::FsStatus (*check)(const FsRequest& r, const fs::ZonedFs& zfs, ChangeAnswer& answer);
  fs::FsStatus (*apply)(const FsRequest& r, fs::ZonedFs& zfs);
};

fs::FsStatus check_mkdir(const FsRequest& r, const fs::ZonedFs& zfs, ChangeAnswer& answer) {
  const std::string path = fs_path(r.path);
  if (fs::FsStatus ok = fs::check_path(path); !ok) return ok;
  if (auto st = zfs.stat(path); st && !(st->is_dir && r.parents)) {
    return fs::FsStatus(fs::Code::kExists, st->is_dir ? fmt::format("{} exists", path)
                                                      : fmt::format("{} exists as a file", path));
  }
  auto missing = missing_dirs(zfs, path);
  if (!missing) return missing.status();
  if (*missing > 1 && !r.parents) {
    return fs::FsStatus(fs::Code::kNotFound,
                        fmt::format("no directory {} (-p makes it)", fs::parent_of(path)));
  }
  answer.fields = {{"path", path}, {"made", *missing}};
  answer.changes = *missing > 0;
  if (*missing == 0) {
    answer.line = fmt::format("{} is a directory of {} already", path, r.image);
  } else if (*missing == 1) {
    answer.line = fmt::format("made {} in {}", path, r.image);
  } else {
    answer.line = fmt::format("made {} in {} (and {} above it)", path, r.image,
                              counted(*missing - 1, "directory", "directories"));
  }
  return {};
}

fs::FsStatus check_rm(const FsRequest& r, const fs::ZonedFs& zfs, ChangeAnswer& answer) {
  const std::string path = fs_path(r.path);
  auto st = zfs.stat(path);
  if (!st) return st.status();
  if (st->is_dir) {
    return fs::FsStatus(fs::Code::kIsDirectory,
                        fmt::format("{} is a directory (fs rmdir removes an empty one)", path));
  }
  const uint32_t links_left = st->nlink - 1;
  answer.fields = {{"path", path}, {"id", st->id}, {"links", links_left}};
  answer.line = links_left == 0
                    ? fmt::format("removed {} from {}", path, r.image)
                    : fmt::format("removed {} from {}; its file keeps {}", path, r.image,
                                  counted(links_left, "other name", "other names"));
  return {};
}

fs::FsStatus check_rmdir(const FsRequest& r, const fs::ZonedFs& zfs, ChangeAnswer& answer) {
  const std::string path = fs_path(r.path);
  if (path == "/") return fs::FsStatus(fs::Code::kInvalid, "/ cannot be removed");
  auto st = zfs.stat(path);
  if (!st && st.status().code() == fs::Code::kNotFound) {
    return fs::FsStatus(fs::Code::kNotFound, fmt::format("no directory {}", path));
  }
  if (!st) return st.status();
  if (!st->is_dir) {
    return fs::FsStatus(fs::Code::kNotDirectory,
                        fmt::format("{} is a file (fs rm removes a file)", path));
  }
  auto names = zfs.list(path);
  if (!names) return names.status();
  if (!names->empty()) {
    return fs::FsStatus(fs::Code::kNotEmpty,
                        fmt::format("{} is not empty: it holds {} (fs rm and fs rmdir them first)",
                                    path, counted(names->size(), "entry", "entries")));
  }
  answer.fields = {{"path", path}};
  answer.line = fmt::format("removed directory {} from {}", path, r.image);
  return {};
}

// A directory takes every path below it along: each must still fit.
fs::FsStatus check_paths_moved(const fs::ZonedFs& zfs, const std::string& from,
                               const std::string& to) {
  auto below = list_tree(zfs, from, true);
  if (!below) return below.status();
  for (const Listed& e : *below) {
    const std::string moved = to + e.path.substr(from.size());
    if (fs::FsStatus ok = fs::check_path(moved); !ok) {
      // The reason first: the path may be long enough to be cut.
      return fs::FsStatus(ok.code(), fmt::format("{}: {}", ok.message(), moved));
    }
  }
  return {};
}

// What is at TO, when something is: what rename would replace, or why not.
fs::FsStatus check_mv_target(const FsRequest& r, const fs::ZonedFs& zfs, const fs::FileStat& from,
                             const std::string& to, bool& replaces) {
  auto st = zfs.stat(to);
  replaces = st.ok();
  if (!st) return st.status().code() == fs::Code::kNotFound ? fs::FsStatus() : st.status();
  if (!from.is_dir && st->is_dir) {
    return fs::FsStatus(fs::Code::kIsDirectory, fmt::format("{} is a directory", to));
  }
  if (from.is_dir && !st->is_dir) {
    return fs::FsStatus(fs::Code::kNotDirectory, fmt::format("{} is a file", to));
  }
  if (!from.is_dir && st->id == from.id) {
    return fs::FsStatus(fs::Code::kInvalid,
                        fmt::format("{} and {} are two names of one file", fs_path(r.path), to));
  }
  if (st->is_dir) {
    auto names = zfs.list(to);
    if (!names) return names.status();
    if (!names->empty()) {
      return fs::FsStatus(fs::Code::kNotEmpty, fmt::format("{} is not empty", to));
    }
  }
  if (!r.force) {
    return fs::FsStatus(fs::Code::kExists, fmt::format("{} exists (--force replaces it)", to));
  }
  return {};
}

fs::FsStatus check_mv(const FsRequest& r, const fs::ZonedFs& zfs, ChangeAnswer& answer) {
  const std::string from = fs_path(r.path);
  const std::string to = fs_path(r.to);
  if (fs::FsStatus ok = fs::check_path(to); !ok) return ok;
  if (from == "/") return fs::FsStatus(fs::Code::kInvalid, "/ cannot be renamed");
  auto st = zfs.stat(from);
  if (!st) return st.status();
  if (from == to) {
    return fs::FsStatus(fs::Code::kInvalid, fmt::format("{} is both FROM and TO", from));
  }
  if (st->is_dir && to.size() > from.size() && to.compare(0, from.size(), from) == 0 &&
      to[from.size()] == '/') {
    return fs::FsStatus(fs::Code::kInvalid, fmt::format("{} cannot move into itself", from));
  }
  bool replaces = false;
  if (fs::FsStatus ok = check_mv_target(r, zfs, *st, to, replaces); !ok) return ok;
  if (fs::FsStatus ok = check_parent_dir(zfs, to); !ok) return ok;
  if (st->is_dir) {
    if (fs::FsStatus ok = check_paths_moved(zfs, from, to); !ok) return ok;
  }
  answer.fields = {{"from", from}, {"to", to}, {"replaced", replaces}};
  answer.line = fmt::format(
      "renamed {} to {} in {}{}", from, to, r.image,
      replaces ? fmt::format(" (the {} there replaced)", st->is_dir ? "empty directory" : "file")
               : "");
  return {};
}

fs::FsStatus check_link(const FsRequest& r, const fs::ZonedFs& zfs, ChangeAnswer& answer) {
  const std::string from = fs_path(r.path);
  const std::string to = fs_path(r.to);
  if (fs::FsStatus ok = fs::check_path(to); !ok) return ok;
  auto st = zfs.stat(from);
  if (!st) return st.status();
  if (st->is_dir) {
    return fs::FsStatus(fs::Code::kIsDirectory,
                        fmt::format("{} is a directory (a hard link names a file)", from));
  }
  if (zfs.exists(to)) return fs::FsStatus(fs::Code::kExists, fmt::format("{} exists", to));
  if (fs::FsStatus ok = check_parent_dir(zfs, to); !ok) return ok;
  const uint32_t links = st->nlink + 1;
  answer.fields = {{"from", from}, {"to", to}, {"id", st->id}, {"links", links}};
  answer.line = fmt::format("linked {} to {} in {} (file {} has {} now)", to, from, r.image, st->id,
                            counted(links, "name", "names"));
  return {};
}

constexpr NamespaceCommand kNamespaceCommands[] = {
    {"mkdir", check_mkdir,
     [](const FsRequest& r, fs::ZonedFs& zfs) {
       return zfs.create_dir(fs_path(r.path), r.parents);
     }},
    {"rm", check_rm,
     [](const FsRequest& r, fs::ZonedFs& zfs) { return zfs.remove(fs_path(r.path)); }},
    {"rmdir", check_rmdir,
     [](const FsRequest& r, fs::ZonedFs& zfs) { return zfs.remove_dir(fs_path(r.path)); }},
    {"mv", check_mv,
     [](const FsRequest& r, fs::ZonedFs& zfs) {
       return zfs.rename(fs_path(r.path), fs_path(r.to));
     }},
    {"link", check_link,
     [](const FsRequest& r, fs::ZonedFs& zfs) { return zfs.link(fs_path(r.path), fs_path(r.to)); }},
};

const NamespaceCommand* namespace_command(const std::string& name) {
  for (const NamespaceCommand& c : kNamespaceCommands) {
    if (name == c.name) return &c;
  }
  return nullptr;
}

// Checked on a read-only mount, made on a writable one, unmounted: the
// image holds the change when the answer is printed.
int run_namespace_change(const FsRequest& r, const NamespaceCommand& command) {
  Session s;
  if (int code = open_stack(r.image, true, s); code != kExitOk) return code;
  ChangeAnswer answer;
  if (int code = check_before_writing(
          r.image, s, [&](const fs::ZonedFs& zfs) { return command.check(r, zfs, answer); });
      code != kExitOk) {
    return code;
  }
  if (answer.changes) {
    if (int code = mount_fs(r.image, true, s); code != kExitOk) return code;
    const fs::FsStatus applied = command.apply(r, *s.fs);
    const int closed = unmount(r.image, s);
    if (!applied) return fs_failure(r.image, applied);
    if (closed != kExitOk) return closed;
  }
  if (r.json) {
    Json out = status_json(Status::kSuccess);
    out["image"] = r.image;
    out.update(answer.fields);
    print_fs_json(out);
  } else {
    fmt::print("{}\n", one_line(answer.line, 4096));
  }
  return kExitOk;
}

// --- dispatch ---------------------------------------------------------------------------

// The commands that only read, on a read-only mount.
int run_read_only(const FsRequest& r) {
  if (r.command == "backup") {
    if (r.path.empty()) return bad_input("'': an empty path is not a directory");
    if (auto problem = check_backup_dir(r.path, r.force)) return bad_input(*problem);
  }
  Session s;
  if (int code = mount(r.image, false, s); code != kExitOk) return code;
  if (r.command == "ls") return run_ls(r, *s.fs);
  if (r.command == "stat") return run_stat(r, *s.fs);
  if (r.command == "cat") return run_cat(r, *s.fs);
  if (r.command == "df") return run_df(r, *s.fs);
  if (r.command == "info") return run_info(r, *s.fs);
  if (r.command == "dump") return run_dump(r, *s.fs);
  if (r.command == "backup") return run_backup(r, *s.fs);
  return bad_input(fmt::format("unknown fs command '{}'", r.command));
}

constexpr const char* kFsCommands =
    "ls, stat, cat, df, info, fsck, dump, backup, restore, mkdir, rm, rmdir, mv, link, probe";

}  // namespace

std::optional<std::string> fs_usage_problem(const std::vector<std::string>& args) {
  if (args.empty() || args[0] != "fs") return std::nullopt;
  if (args.size() == 1) {
    return fmt::format("fs: name a command ({}; see zonelab fs --help)", kFsCommands);
  }
  const std::string& word = args[1];
  if (word.empty() || word[0] == '-') return std::nullopt;
  std::string known = std::string(", ") + kFsCommands + ",";
  if (known.find(", " + word + ",") != std::string::npos) return std::nullopt;
  return fmt::format("unknown fs command '{}' (fs commands: {}; see zonelab fs --help)", word,
                     kFsCommands);
}

void add_fs_commands(CLI::App& app, FsRequest& request) {
  add_mkfs_command(app, request);
  auto* fs =
      app.add_subcommand("fs", fmt::format("the zoned file system on an image: {}", kFsCommands));
  fs->require_subcommand(1);
  add_fs_subcommands(fs, request);
  add_namespace_subcommands(fs, request);
}

int run_fs_command(const FsRequest& r) {
  if (r.command == "mkfs") return run_mkfs(r);
  if (r.command == "fsck") return run_fsck(r);
  if (r.command == "restore") return run_restore(r);
  if (r.command == "probe") return run_fs_probe(r);
  if (const NamespaceCommand* change = namespace_command(r.command)) {
    return run_namespace_change(r, *change);
  }
  return run_read_only(r);
}

}  // namespace zonelab::cli
