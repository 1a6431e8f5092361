// Consolidate inputs: loads before the first computation become inputs.
#pragma once

#include "daemon/search/strategy.h"

namespace minifyd::search {

// One candidate, the consolidated state, when that made a load an input. The seed's version that
// compares against the input list it has already extended never fires; this one compares counts.
void propose_consolidate_inputs(const SearchState& state, std::size_t granularity, const CandidateSink& offer);

}  // namespace minifyd::search
