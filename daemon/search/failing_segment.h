// The search's first cuts to a few computations: a small failing kernel's computations each alone, and,
// when many candidates run at once, the graph's computations split into as many contiguous segments as
// the evaluator runs at once, each alone on loads of its inputs, the first that fails kept and split
// again. Inductor fuses a chain of pointwise operators into one kernel, so
// every prefix the bisection probes (search/prefix_bisection.h) is one kernel nearly as large as the
// graph, each compiled anew (a Triton kernel of 100 to 200 operators: 1 to 5.7 s on an H200); a
// segment is a kernel of 1/n of it. With n candidates at once a round shrinks the graph n-fold, as the
// bisection's shrinks it (n + 1)-fold, so below min_parallelism_to_split the segments would cost more
// rounds than they save. Like the bisection's probes, the segments follow the worker count: a failure in
// one operator ends at that operator alone with any count, but where a failure needs several operators,
// which of them a cut keeps may differ between counts (each result fails: only failing candidates are
// kept).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/search/computations_alone.h"
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

// The failing kernel's computations (SearchOptions::failing_kernel_nodes, those of `state`) each alone,
// before the kernel as a whole is tried, when they are fewer than min_cut_points_to_bisect: the
// kernel's candidate and its re-verification (a second of two cores' time on the conv net's crash)
// are then spent only when no computation fails alone. nullopt when none does or the kernel is larger.
std::optional<SearchState> try_kernel_computations_alone(SearchRunner& runner, const SearchState& state,
                                                         const std::vector<std::string>& kernel_nodes);

}  // namespace minifyd::search
