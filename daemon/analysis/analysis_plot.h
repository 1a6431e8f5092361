// analysis.svg, drawn by matplotlib (worker/python/minifyd/analysis_plot.py) from analysis.json (the
// files' names are analysis_files.h's).
#pragma once

#include <filesystem>
#include <string>

#include "common/expected.h"

namespace minifyd::analysis {

// Draws `svg` from the analysis.json at `json` with the first python3 that has matplotlib:
// $MINIFYD_PLOT_PYTHON, /usr/bin/python3, python3. Errors say why there is no plot.
Expected<std::filesystem::path> draw_analysis_plot(const std::filesystem::path& json, const std::filesystem::path& svg);

}  // namespace minifyd::analysis
