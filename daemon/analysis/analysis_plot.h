// analysis.svg, drawn by matplotlib (worker/python/minifyd/analysis_plot.py) from analysis.json.
#pragma once

#include <filesystem>
#include <string>

#include "common/expected.h"

namespace minifyd::analysis {

inline constexpr const char* analysis_plot_name = "analysis.svg";

// Draws dir/analysis.svg from dir/analysis.json with the first python3 that has matplotlib:
// $MINIFYD_PLOT_PYTHON, /usr/bin/python3, python3. Errors say why there is no plot.
Expected<std::filesystem::path> draw_analysis_plot(const std::filesystem::path& dir);

}  // namespace minifyd::analysis
