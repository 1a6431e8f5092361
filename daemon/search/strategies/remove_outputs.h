// Remove outputs: chunks of the returned values dropped.
#pragma once

#include "daemon/search/strategy.h"

namespace minifyd::search {

// The returned values sorted by the position of their node (others last); for each chunk of
// max(1, g / 2) of them, in order: the graph returning the rest. Nothing when the graph returns a
// single node or a one-element sequence.
void propose_remove_outputs(const SearchState& state, std::size_t granularity, const CandidateSink& offer);

}  // namespace minifyd::search
