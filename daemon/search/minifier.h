// The search: the original checked (the sanity check), fx_minifier's driver over a SearchRunner
// (search/driver.h), and speculation past slow verdicts when SpeculationOptions::after is set.
#pragma once

#include <cstddef>
#include <optional>

#include "common/expected.h"
#include "daemon/search/candidate_evaluator.h"
#include "daemon/search/clock.h"
#include "daemon/search/search_observer.h"
#include "daemon/search/search_options.h"
#include "daemon/search/search_state.h"
#include "daemon/search/search_status.h"
#include "daemon/search/verdict_cache.h"

namespace minifyd::search {

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
// then checks the result once more (unless it was the graph last re-verified). An original that does not fail ends it at once, with stop
// original_passes. Errors: invalid options or original, or an evaluator error while checking it.
// Later evaluator errors and spent budgets end the search with the best state so far. Runs on the
// calling thread; see CandidateEvaluator.
Expected<SearchResult> minify(SearchState original, CandidateEvaluator& evaluator, VerdictCache& cache,
                              const Clock& clock, const SearchOptions& options,
                              SearchObserver* observer = nullptr);

}  // namespace minifyd::search
