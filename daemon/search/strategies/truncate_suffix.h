// Truncate suffix: the graph cut after one node, which becomes the output.
#pragma once

#include "daemon/search/strategy.h"

namespace minifyd::search {

// Whether `state` can be cut after `node`: a computation (a load, which is a node here as in the
// seed's load_tensor call, or an operator; not an input, not the output).
bool is_cut_point(const SearchState& state, const Node& node);

// `state` cut after its node at `index` (a computation): nodes [0, index] with output (node,), the
// SymInt inputs after the cut kept.
SearchState truncated_at(const SearchState& state, std::size_t index);

// For each computation at index i with i % g == 0 and i % 2g != 0 (multiples of 2g were tried at
// the coarser granularity), in order: nodes [0, i] with output (node_i,).
void propose_truncate_suffix(const SearchState& state, std::size_t granularity, const CandidateSink& offer);

}  // namespace minifyd::search
