// The step both first cuts end with (prefix_bisection.h, failing_segment.h): a few computations, each
// alone on loads of its inputs, the first that fails kept.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/search/search_runner.h"
#include "daemon/search/search_state.h"

namespace minifyd::search {

inline constexpr std::string_view failing_node_step = "failing-node";

// Graphs with fewer cut points than this are left to the driver, whose first levels cost as much.
inline constexpr std::size_t min_cut_points_to_bisect = 16;

// Each of `names` (computations of `state`, in graph order) alone on loads of its inputs, as one step
// (failing_node_step, as the prefix bisection's node alone): the first that fails, re-verified, or
// nullopt. Last first: a fused kernel ends in its epilogue (the activation after a convolution and its
// batch norm); on the conv net's crash on the CPU, tried after its kernel, 8 queries in all against 11
// and 12 in graph order. `reading`: whose eager values the inputs' loads read, as run_proposals().
std::optional<SearchState> first_failing_computation(SearchRunner& runner, const SearchState& state,
                                                     const std::vector<std::string>& names,
                                                     const SearchState* reading = nullptr);

}  // namespace minifyd::search
