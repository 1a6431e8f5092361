// A run's outputs in OUT_DIR beside its store: graph.json (the minimized graph, so OUT_DIR is a graph
// directory), repro.py, report.md and graph.dot.
#pragma once

#include "common/expected.h"
#include <filesystem>
#include <functional>
#include <string>

#include "daemon/run/checkpoint.h"
#include "daemon/run/standby_python.h"

namespace minifyd::run {

inline constexpr const char* repro_file_name = "repro.py";
inline constexpr const char* report_file_name = "report.md";
inline constexpr const char* dot_file_name = "graph.dot";
// repro.py's inputs (worker/python/minifyd/after_aot_repro.py's INPUTS_DIR).
inline constexpr const char* repro_inputs_dir_name = "repro_inputs";

struct OutputPlace {
  std::filesystem::path out_dir;  // holds the run's store, or a store with the result's blobs
  std::string minify_executable;  // written into repro.py for backends plain PyTorch cannot run
  // The python that writes repro.py for the torch.compile backends; asked only for those.
  std::function<Expected<std::string>()> python;
  // A python of the run's started ahead to write repro.py (run/standby_python.h); unset or not waiting:
  // a fresh one writes it.
  StandbyPython* standby = nullptr;
};

// Writes the outputs for checkpoint.state but report.md, each file atomically.
Expected<void> write_graph_outputs(const Checkpoint& checkpoint, const OutputPlace& place);
// write_graph_outputs(), then report.md, last (so a directory with a report has every output); `report`
// is its text (render_report()).
Expected<void> write_outputs(const Checkpoint& checkpoint, const std::string& report, const OutputPlace& place);
// Removes what write_graph_outputs() wrote into out_dir: written while the plain check ran, for a run
// that then turned out to have nothing minimized.
Expected<void> remove_graph_outputs(const std::filesystem::path& out_dir);

}  // namespace minifyd::run
