// What a minification run is asked to do, as data: saved in its checkpoint so `minify run --resume`
// continues with the same settings (and, for the daemon, a job's spec). How many workers evaluate
// is not part of it: the result is the same for every count.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/expected.h"
#include "common/json_view.h"
#include "daemon/verdict/evaluation_spec.h"
#include "daemon/verdict/failure_judge.h"

namespace minifyd::run {

struct RunSpec {
  std::string graph_dir;  // where the original came from (absolute), for the report
  verdict::EvaluationSpec evaluation;
  verdict::MatchMode match = verdict::MatchMode::same;
  std::vector<std::string> strategies;  // by name; empty: all
  std::optional<std::size_t> max_granularity;
  bool skip_sanity = false;
  std::optional<std::size_t> max_queries;   // over the whole run, resumed parts included
  std::optional<double> max_time_seconds;   // likewise
  // The original analyzed before the search (`minify analyze`'s both modes): its files go with the
  // outputs (--analyze).
  bool analyze = false;
  // The search first tries the original cut after the analysis's first divergence (--analyze-first);
  // without `analyze`, the analysis reads the values in place only: one worker request.
  bool analyze_first = false;
  // With Inductor, the sanity check asks for the generated code and the search first tries the nodes
  // of the kernel that failed alone (search::SearchOptions::failing_kernel_nodes); off with
  // --no-failing-kernel-first.
  bool failing_kernel_first = true;
  // A new search first bisects for the shortest failing prefix and tries its last node alone
  // (search::SearchOptions::bisect_prefix); off with --no-prefix-bisection.
  bool bisect_prefix = true;
  // After the search, the minimized graph is bisected (bisect/bisector.h, --bisect): the stage and
  // subsystem of the compiler its failure comes from.
  bool bisect = false;
  // After the search, the minimized graph's data is shrunk (shrink/input_shrink.h, --shrink-inputs):
  // stored tensors replaced by fills, requires_grad dropped, where the failure stays.
  bool shrink_inputs = false;
  // No --timeout was given: candidates after the original get a limit that follows its measured
  // time (candidate_timeout.h), evaluation.timeout being the ceiling.
  bool timeout_follows_original = true;
};

nlohmann::json encode(const RunSpec& spec);
Expected<void> decode(const JsonView& view, RunSpec& spec);

// The verdict cache's key for everything besides the candidate: backend, options and check.
std::string evaluation_key(const RunSpec& spec);

}  // namespace minifyd::run
