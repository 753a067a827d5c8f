// `zonelab fs probe IMAGE`: the IZG probe (fs/izg.h) on a file system's
// device, and `zonelab mkfs --policy P -o KEY=VALUE`'s report of the probe
// it ran. The probe runs on a device built from the image's configuration
// (no data kept), so the image is never changed; the groups it finds are
// compared with the map the file system's policy stored, if any.
#pragma once

#include "fs/izg.h"
#include "tools/cli.h"
#include "tools/fs_command.h"

namespace zonelab::cli {

void add_fs_probe_subcommand(CLI::App* fs, FsRequest& request);
int run_fs_probe(const FsRequest& request);

// The probe's findings as JSON, and as lines for people (mkfs prints them
// too).
Json probe_json(const fs::IzgProbeResult& result);
void print_probe(const std::string& image, const fs::IzgProbeResult& result);

}  // namespace zonelab::cli
