// Remove unused inputs: every input nothing reads dropped.
#pragma once

#include "daemon/search/strategy.h"

namespace minifyd::search {

// One candidate, the state without its unread inputs, when it has any.
void propose_remove_unused_inputs(const SearchState& state, std::size_t granularity, const CandidateSink& offer);

}  // namespace minifyd::search
