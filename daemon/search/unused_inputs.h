// fx_minifier's remove_unused_inputs_unchecked: inputs nothing reads are dropped.
#pragma once

#include "daemon/search/search_state.h"

namespace minifyd::search {

// Erases every tensor input (a placeholder that is not a load) without users, with its tensor;
// SymInt inputs stay. Returns whether any was erased.
bool remove_unused_inputs(SearchState& state);

}  // namespace minifyd::search
