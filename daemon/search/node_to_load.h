// fx_minifier's _convert_node_to_placeholder: nodes replaced by their stored eager values.
#pragma once

#include <cstddef>
#include <set>
#include <string>

#include "daemon/search/search_state.h"

namespace minifyd::search {

// Replaces each node at positions [begin, end) of the graph that has a stored eager value by a load
// of that value (a placeholder with the same name, at the same position). A tuple-valued node (no
// stored value, read through getitem) is replaced at its users instead, recursively. Placeholders,
// loads, the output and nodes whose value was not stored stay. Returns whether any node was
// replaced; the state is unchanged when none was. Nodes left without users stay until dead-code
// elimination. A node named in `kept` is never replaced.
bool convert_to_loads(SearchState& state, std::size_t begin, std::size_t end,
                      const std::set<std::string, std::less<>>& kept = {});

}  // namespace minifyd::search
