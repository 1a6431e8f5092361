// Nodes alone on loads of their stored inputs: `minify analyze`'s isolated mode (one node at a time)
// and the search's first try of the failing kernel's nodes (SearchOptions::failing_kernel_nodes).
#pragma once

#include <string>
#include <vector>

#include "common/expected.h"
#include "daemon/search/search_state.h"

namespace minifyd::search {

// The graph of the call_function nodes of `original` named in `names` (names of no such node are
// ignored), returning the values of those no other of them reads: each value they read from outside
// is a load of its stored eager value (fx_minifier's _convert_node_to_placeholder), and only what
// they still need is kept: a value propagate did not store (a view, a tuple read through getitem) is
// computed again from loads, and an earlier in-place operator on a value they read stays, on its
// load. A tuple-valued node returns its getitems' values. Leading loads become inputs. Errors: no
// name is a call_function node of the graph.
Expected<SearchState> isolate_nodes(const SearchState& original, const std::vector<std::string>& names);

}  // namespace minifyd::search
