// The search: fx_minifier's driver loop (granularity schedule, strategy order, sanity and final
// checks) over a SearchRunner.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "common/expected.h"
#include "daemon/search/search_runner.h"

namespace minifyd::search {

struct SearchOptions {
  // Start each round at min(this, the largest power of two <= node count); a power of two.
  std::optional<std::size_t> max_granularity;
  bool skip_sanity = false;  // trust that the original fails instead of checking it first
  RunnerOptions runner;
  // The strategies to run, from select_strategies(); the driver decides when each runs by role.
  std::vector<const Strategy*> strategies;
};

struct SearchResult {
  // The smallest state known to fail: the last accepted one, or the original.
  SearchState best;
  StopReason stop = StopReason::finished;
  std::optional<Error> error;  // set when stop is error: the evaluator failed, or the final check passed
  SearchCounters counters;
  std::size_t start_nodes = 0;
  std::size_t start_inputs = 0;
};

// Minimises `original` (a valid document with its eager values) until no strategy makes progress,
// then checks the result once more. An original that does not fail ends it at once, with stop
// original_passes. Errors: invalid options or original, or an evaluator error while checking it. Later evaluator errors and spent budgets end the
// search with the best state so far. Runs on the calling thread; see CandidateEvaluator.
Expected<SearchResult> minify(SearchState original, CandidateEvaluator& evaluator, VerdictCache& cache,
                              const Clock& clock, const SearchOptions& options,
                              SearchObserver* observer = nullptr);

}  // namespace minifyd::search
