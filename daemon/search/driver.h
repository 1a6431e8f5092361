// fx_minifier's driver: its `while True` loop and try_granularity (granularity schedule, strategy
// order by role) over a SearchRunner, then the final check.
#pragma once

#include "daemon/search/search_options.h"
#include "daemon/search/search_runner.h"
#include "daemon/search/search_state.h"
#include "daemon/search/search_status.h"

namespace minifyd::search {

// Searches from `state` (known to fail) until no strategy makes progress or the runner stops, then
// checks the result once more: one that no longer fails ends the search with an error. Runs on the
// runner's thread: the search's own, or a lineage's.
SearchOutcome search_on(SearchRunner& runner, const SearchOptions& options, SearchState state);

}  // namespace minifyd::search
