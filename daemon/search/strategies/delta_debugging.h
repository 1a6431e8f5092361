// Delta debugging: a range of nodes replaced by their stored eager values.
#pragma once

#include "daemon/search/strategy.h"

namespace minifyd::search {

// For each range [s, s + g) of node positions, in order, where some node could be replaced: the
// state with those nodes replaced by loads of their eager values, dead code eliminated,
// placeholders consolidated and unused inputs removed.
void propose_delta_debugging(const SearchState& state, std::size_t granularity, const CandidateSink& offer);

}  // namespace minifyd::search
