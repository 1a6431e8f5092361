// `minify analyze`'s isolated mode: one node compiled alone on its real eager inputs.
#pragma once

#include <string>

#include "common/expected.h"
#include "common/graph_document.h"
#include "daemon/search/search_state.h"

namespace minifyd::analysis {

// The graph of `node` alone, returning its value: each value it reads is a load of its stored eager
// value (fx_minifier's _convert_node_to_placeholder), and only what the node still needs is kept:
// a value propagate did not store (a view, a tuple read through getitem) is computed again from
// loads, and an earlier in-place operator on a value the node reads stays, on its load. A
// tuple-valued node returns its getitems' values. Errors: no call_function node of that name.
Expected<GraphDocument> isolate_node(const search::SearchState& original, const std::string& node);

}  // namespace minifyd::analysis
