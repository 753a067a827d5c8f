// The plotting tool (tools/plot/plot.py, in the source tree's .venv when
// `make plot-deps` made one) run on result documents that name their CSV
// and PNG: experiments' and sweeps'.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace zonelab {

// Draws each document's PNG. Empty on success; otherwise why not, in one
// line. ZONELAB_PYTHON and ZONELAB_PLOT name another Python or script.
std::string run_plotter(const std::vector<std::filesystem::path>& json_files);

}  // namespace zonelab
