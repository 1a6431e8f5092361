// Eliminate dead code: every node without users and without side effects erased.
#pragma once

#include "daemon/search/strategy.h"

namespace minifyd::search {

// One candidate, the state after dead-code elimination, when that erased anything.
void propose_eliminate_dead_code(const SearchState& state, std::size_t granularity, const CandidateSink& offer);

}  // namespace minifyd::search
