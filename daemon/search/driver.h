// fx_minifier's driver: its `while True` loop and try_granularity (granularity schedule, strategy
// order by role) over a SearchRunner, then the final check.
#pragma once

#include <cstddef>
#include <string_view>

#include "daemon/search/search_options.h"
#include "daemon/search/search_runner.h"
#include "daemon/search/search_state.h"
#include "daemon/search/search_status.h"

namespace minifyd::search {

// Searches from `state` (known to fail) until no strategy makes progress or the runner stops, then
// checks the result once more, unless the runner's latest fresh evaluation was of the result and
// failed (its re-verification): one that no longer fails ends the search with an error. Runs on the
// runner's thread: the search's own, or a lineage's.
SearchOutcome search_on(SearchRunner& runner, const SearchOptions& options, SearchState state);

// search_on() from the original once the sanity check found it failing, after the first tries
// (SearchOptions::first_try_end, failing_kernel_nodes, then bisect_prefix): the search's own start, and that of a
// lineage that went ahead of the sanity check.
SearchOutcome search_from_original(SearchRunner& runner, const SearchOptions& options, SearchState original);

// Whether search_from_original() may read eager values before the prefix bisection has narrowed the
// search to its failing prefix (no bisection, a first try, or segments): the original's values are
// then asked for at the search's start, to come beside the sanity check; otherwise the bisection asks
// for the failing prefix's alone, all the search reads from there on.
bool reads_values_before_bisecting(const SearchOptions& options, std::size_t parallelism);

// The search from a candidate that `step` accepted: after one of the first tries (first_divergence_step,
// failing_kernel_step, failing_segment_step), the tries search_from_original() makes after it, then
// search_on(); after any other step, or none named, search_on(). For a lineage that went ahead of that
// candidate or of its re-verification.
SearchOutcome search_after(SearchRunner& runner, const SearchOptions& options, SearchState accepted,
                           std::string_view step);

}  // namespace minifyd::search
