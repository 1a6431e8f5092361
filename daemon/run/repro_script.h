// repro.py for a minimized graph: the template worker/python/minifyd/repro_template.py with the graph
// loader of minifyd/graph_format.py and this run's settings filled in (docs/cli.md, "repro.py").
#pragma once

#include <map>
#include <optional>
#include <string>

#include "protocol/verdict.h"

namespace minifyd::run {

struct ReproSpec {
  std::string graph_dir;  // absolute path of the graph directory the repro loads by default
  std::string backend;    // "eager", "torchscript" or "plugin:/abs/path.so" (as the worker sees it)
  std::map<std::string, std::string> backend_options;
  protocol::AccuracyMode accuracy = protocol::AccuracyMode::off;
  bool nan_check = false;  // fail when the compiled output holds NaN/Inf while no input does
  std::optional<std::string> check_str;  // regex a failure must match
  double timeout_seconds = 60;
  std::string minify_executable;  // absolute path of `minify`, for backends plain PyTorch cannot run
};

// The text of a standalone repro.py (Python 3, needs only torch).
std::string repro_script(const ReproSpec& spec);

}  // namespace minifyd::run
