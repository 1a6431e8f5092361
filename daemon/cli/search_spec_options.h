// The options that say what a minification is (backend, check, strategies, budgets), shared by
// `minify run` and `minify submit`, and the RunSpec they make.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "common/expected.h"
#include "daemon/options/evaluation_options.h"
#include "daemon/run/run_spec.h"

namespace minifyd::cli {

struct SearchSpecOptions {
  options::EvaluationOptions evaluation;
  std::string match = "same";
  std::vector<std::string> strategies;
  std::size_t max_granularity = 0;
  bool skip_sanity = false;
  std::size_t max_queries = 0;
  double max_time_seconds = 0;
  bool analyze = false;
  bool analyze_first = false;
  bool no_failing_kernel_first = false;
  bool no_prefix_bisection = false;
  bool bisect = false;
  bool shrink_inputs = false;
  // Every option registered by add_to() that shapes the spec (`minify run --resume` refuses them).
  std::vector<CLI::Option*> registered;

  void add_to(CLI::App& command, bool backend_required);
  // The spec for the graph in `graph_dir` (made absolute), with the backend options of its origin.json
  // (graph_input.h) where the user gave none of the same key.
  Expected<run::RunSpec> spec(const std::string& graph_dir) const;
};

}  // namespace minifyd::cli
