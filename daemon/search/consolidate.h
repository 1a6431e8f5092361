// fx_minifier's _consolidate_placeholders: inputs to the front, leading loads become inputs.
#pragma once

#include "daemon/search/search_state.h"

namespace minifyd::search {

// Moves every input to the front, keeping their order, and turns each load that comes before the
// first computation into an input, in place among them. Everything else keeps its order. Each
// input keeps its own tensor: unlike the seed, which appends the new inputs' values after the old
// ones whatever their place among the placeholders, values are bound to placeholders by name.
void consolidate_placeholders(SearchState& state);

}  // namespace minifyd::search
