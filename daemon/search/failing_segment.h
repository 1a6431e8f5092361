// The search's first cut when many candidates run at once: the graph's computations split into as
// many contiguous segments as the evaluator runs at once, each alone on loads of its inputs, the first
// that fails kept and split again. Inductor fuses a chain of pointwise operators into one kernel, so
// every prefix the bisection probes (search/prefix_bisection.h) is one kernel nearly as large as the
// graph, each compiled anew (a Triton kernel of 100 to 200 operators: 1 to 5.7 s on an H200); a
// segment is a kernel of 1/n of it. With n candidates at once a round shrinks the graph n-fold, as the
// bisection's shrinks it (n + 1)-fold, so below min_parallelism_to_split the segments would cost more
// rounds than they save.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

#include "daemon/search/search_runner.h"
#include "daemon/search/search_state.h"

namespace minifyd::search {

inline constexpr std::string_view failing_segment_step = "failing-segment";

inline constexpr std::size_t min_parallelism_to_split = 4;

// When `state` has at least min_cut_points_to_bisect computations and the runner runs at least
// min_parallelism_to_split candidates at once: its computations split into runner.parallelism()
// contiguous segments of nearly equal counts, each alone on loads of its inputs (isolate_nodes), as one
// step (failing_segment_step) whose first failing segment is accepted, re-verified, and split in turn;
// once they are no more than the candidates run at once, first_failing_computation(). Ends with the
// last accepted segment, or `state` itself when none failed (a failure that needs operators of two
// segments shows in none: one round of queries).
SearchState narrow_to_failing_segment(SearchRunner& runner, SearchState state);

// The rounds of narrow_to_failing_segment() from `segment`, one that failing_segment_step accepted
// (where a lineage that went ahead of it goes on), whatever its size.
SearchState narrow_failing_segment(SearchRunner& runner, SearchState segment);

// The failing kernel's nodes alone (what failing_kernel_step accepted): with fewer than
// min_cut_points_to_bisect computations, first_failing_computation()'s when one fails; else the kernel,
// for the segments and the bisection.
SearchState narrow_failing_kernel(SearchRunner& runner, SearchState kernel);

// Each computation of `state` alone on loads of its inputs, as one step (failing_node_step, as the
// prefix bisection's node alone): the first that fails, re-verified, or nullopt. Last first: a fused
// kernel ends in its epilogue (the activation after a convolution and its batch norm); on the conv net's
// crash on the CPU, 8 queries in all against 11 and 12 in graph order.
std::optional<SearchState> first_failing_computation(SearchRunner& runner, const SearchState& state);

}  // namespace minifyd::search
