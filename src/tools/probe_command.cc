// The IZG probe from the command line; see probe_command.h.
#include "tools/probe_command.h"

#include <fmt/format.h>

#include <map>

#include "common/units.h"
#include "fs/zoned_fs.h"

namespace zonelab::cli {
namespace {

// "0, 32, 64, ... (911 zones)": a group's zones for people.
std::string zones_text(const std::vector<uint32_t>& zones) {
  std::string out;
  const size_t shown = std::min<size_t>(zones.size(), 6);
  for (size_t i = 0; i < shown; ++i) out += fmt::format("{}{}", i == 0 ? "" : ", ", zones[i]);
  if (zones.size() > shown) out += ", ...";
  return out + fmt::format(" ({} zone{})", zones.size(), zones.size() == 1 ? "" : "s");
}

std::string us(uint64_t ns) { return fmt::format("{:.1f} us", static_cast<double>(ns) / 1000.0); }

}  // namespace

Json probe_json(const fs::IzgProbeResult& r) {
  Json groups = Json::array();
  uint32_t index = 0;
  for (const std::vector<uint32_t>& zones : r.map.members()) {
    groups.push_back(Json{{"group", index++}, {"count", zones.size()}, {"zones", zones}});
  }
  Json samples = Json::array();
  for (const fs::IzgSample& s : r.samples) {
    samples.push_back(Json{{"pivot", s.pivot},
                           {"needle", s.needle},
                           {"baseline_ns", s.baseline_ns},
                           {"contended_ns", s.contended_ns},
                           {"same_group", s.same_group}});
  }
  return Json{{"groups_found", r.map.groups},
              {"zones", r.map.group.size()},
              {"threshold_pct", static_cast<double>(r.threshold_bp) / 100.0},
              {"read_bytes", r.read_bytes},
              {"baseline_ns", {{"min", r.baseline_min_ns}, {"max", r.baseline_max_ns}}},
              {"same_group_ns", {{"min", r.same_min_ns}, {"max", r.same_max_ns}}},
              {"other_ns", {{"min", r.other_min_ns}, {"max", r.other_max_ns}}},
              {"measured_zones", r.measured_zones},
              {"period", r.period},
              {"inferred_zones", r.inferred_zones},
              {"verified", r.verified},
              {"verify_failures", r.verify_failures},
              {"unknown_zones", r.unknown_zones},
              {"needle_reads", r.needle_reads},
              {"device_ns", r.device_ns},
              {"wall_ns", r.wall_ns},
              {"all_interfere", r.all_interfere},
              {"warnings", r.warnings},
              {"groups", groups},
              {"scan", samples}};
}

void print_probe(const std::string& image, const fs::IzgProbeResult& r) {
  std::string how = fmt::format("{} measured", r.measured_zones);
  if (r.period != 0) {
    how += fmt::format(", {} by a period of {} ({} of {} checks passed)", r.inferred_zones,
                       r.period, r.verified, r.verified + r.verify_failures);
  }
  fmt::print("{}: {} independent zone group{} over {} zones ({})\n", image, r.map.groups,
             r.map.groups == 1 ? "" : "s", r.map.group.size(), how);
  fmt::print("threshold   +{:.1f} % over a needle's baseline\n",
             static_cast<double>(r.threshold_bp) / 100.0);
  fmt::print("baseline    {} (a needle's read of {} alone)\n", us(r.baseline_min_ns),
             format_size(r.read_bytes));
  if (r.same_max_ns != 0) {
    fmt::print("same group  {} to {} beside the pivot\n", us(r.same_min_ns), us(r.same_max_ns));
  }
  if (r.other_max_ns != 0) {
    fmt::print("other zones {} to {} beside the pivot\n", us(r.other_min_ns), us(r.other_max_ns));
  }
  fmt::print("probe       {} needle reads, {} of device time, {:.2f} s here\n", r.needle_reads,
             format_duration(r.device_ns), static_cast<double>(r.wall_ns) / 1e9);
  uint32_t index = 0;
  for (const std::vector<uint32_t>& zones : r.map.members()) {
    fmt::print("group {:<5} {}\n", index++, zones_text(zones));
  }
  if (r.unknown_zones != 0) fmt::print("no group    {} zones\n", r.unknown_zones);
}

void add_fs_probe_subcommand(CLI::App* fs, FsRequest& r) {
  auto* probe = fs->add_subcommand(
      "probe", "find the independent zone groups by timing reads (seed 004 Fig. 5)");
  probe->add_option("IMAGE", r.image, "device image holding a file system")->required();
  probe->add_flag("--json", r.json, "print JSON");
  probe
      ->add_option("--threshold", r.probe_threshold_pct,
                   "latency rise (percent) that puts two zones in one group; 0: chosen from "
                   "the gap between the rises seen (the default)")
      ->check(CLI::Range(0, 1000));
  probe
      ->add_option("--samples", r.probe_samples,
                   "zones measured before a period is looked for (512)")
      ->check(CLI::Range(2, 1 << 20));
  probe->callback([&r] { r.command = "probe"; });
}

int run_fs_probe(const FsRequest& r) {
  StackOptions options;
  options.read_only = true;
  auto stack = Stack::open(r.image, options);
  if (!stack) return bad_input(stack.error());
  if ((*stack)->info().interface != "zns") {
    return bad_input(fmt::format(
        "{}: a block device has no zones to group; the IZG probe needs a zoned image", r.image));
  }
  // A file system must be there: the probe is for its policy.
  fs::MountOptions mount;
  mount.read_only = true;
  mount.gc = false;
  auto mounted = fs::ZonedFs::mount(**stack, mount);
  if (!mounted) return bad_input(fmt::format("{}: {}", r.image, mounted.status().message()));
  const std::string policy((*mounted)->policy().name());
  const std::vector<uint32_t> stored = (*mounted)->policy().zone_groups();
  mounted->reset();

  fs::IzgProbeOptions probe;
  if (r.probe_threshold_pct) probe.threshold_pct = *r.probe_threshold_pct;
  if (r.probe_samples) probe.samples = *r.probe_samples;
  auto found = fs::probe_izg_of((*stack)->config(), probe);
  if (!found) return bad_input(fmt::format("{}: {}", r.image, found.status().message()));

  // The stored map, zone by zone, against what was found: the same
  // partition, whatever the groups' numbers.
  uint64_t differing = 0;
  if (!stored.empty()) {
    std::map<uint32_t, uint32_t> to_found;
    std::map<uint32_t, uint32_t> to_stored;
    for (size_t z = 0; z < stored.size() && z < found->map.group.size(); ++z) {
      auto [a, fresh_a] = to_found.emplace(stored[z], found->map.group[z]);
      auto [b, fresh_b] = to_stored.emplace(found->map.group[z], stored[z]);
      if (a->second != found->map.group[z] || b->second != stored[z]) ++differing;
    }
  }
  if (r.json) {
    Json out = status_json(Status::kSuccess);
    out["image"] = r.image;
    out.update(probe_json(*found));
    out["stored"] =
        Json{{"policy", policy}, {"has_map", !stored.empty()}, {"differing_zones", differing}};
    print_json(out);
  } else {
    print_probe(r.image, *found);
    if (stored.empty()) {
      fmt::print("stored map  none (policy {})\n", policy);
    } else if (differing == 0) {
      fmt::print("stored map  the same groups (policy {})\n", policy);
    } else {
      fmt::print("stored map  differs in {} zones (policy {}; mkfs --force makes a new one)\n",
                 differing, policy);
    }
  }
  for (const std::string& w : found->warnings) note(fmt::format("{}: {}", r.image, w));
  return kExitOk;
}

}  // namespace zonelab::cli
