// Finding a python3 with matplotlib and running the plot module in it.
#include "daemon/analysis/analysis_plot.h"

#include <cstdlib>
#include <vector>

#include "daemon/process/python_helper.h"

namespace minifyd::analysis {

Expected<std::filesystem::path> draw_analysis_plot(const std::filesystem::path& json, const std::filesystem::path& svg) {
  std::vector<std::string> pythons;
  if (const char* configured = std::getenv("MINIFYD_PLOT_PYTHON")) pythons.push_back(configured);
  pythons.push_back("/usr/bin/python3");
  pythons.push_back("python3");
  std::string why;
  for (const std::string& python : pythons) {
    auto drawn = process::run_python_main(python, "analysis_plot", {json.string(), svg.string()},
                                 process::helper_timeout_seconds);
    if (drawn) return svg;
    why += (why.empty() ? "" : "; ") + python + ": " + drawn.error().message;
  }
  return make_error(ErrorKind::io, "no plot: " + why);
}

}  // namespace minifyd::analysis
