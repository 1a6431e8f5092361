// A run's outputs in OUT_DIR beside its store: graph.json (the minimized graph, so OUT_DIR is a graph
// directory), repro.py, report.md and graph.dot.
#pragma once

#include "common/expected.h"
#include "daemon/run/minification.h"

namespace minifyd::run {

inline constexpr const char* repro_file_name = "repro.py";
inline constexpr const char* report_file_name = "report.md";
inline constexpr const char* dot_file_name = "graph.dot";

// Writes the outputs for checkpoint.state, each file atomically.
Expected<void> write_outputs(const Checkpoint& checkpoint, const RunResult& result, const RunSettings& settings);

}  // namespace minifyd::run
