// torch.fx's Graph.eliminate_dead_code over a search state.
#pragma once

#include "daemon/search/search_state.h"

namespace minifyd::search {

// Erases every node without users that has no side effect, last to first, so chains of dead nodes
// go at once. Inputs and the output stay (fx treats placeholders as impure); loads are computations
// in the seed (load_tensor calls), so dead ones go with their inputs. Returns whether anything went.
bool eliminate_dead_code(SearchState& state);

// fx's Node.is_impure without operator schemas: in-place and out= variants by ATen's naming
// convention, and the assertion and profiler operators fx lists as side-effectful.
bool has_side_effects(const Node& node);

}  // namespace minifyd::search
