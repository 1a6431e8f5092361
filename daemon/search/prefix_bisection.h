// The search's first cut: the shortest prefix of the original that still fails, found by bisection,
// then that prefix's last node alone. fx_minifier's schedule reaches the node where a failure starts
// by halving its granularity, two or three queries a level (46 queries on a 200-operator chain whose
// one fused kernel fails at its relu); a bisection over the cut points asks log(n) rounds of as many
// cuts as the evaluator runs at once, and a failing operator then needs one query alone.
#pragma once

#include <cstddef>
#include <string_view>

#include "daemon/search/computations_alone.h"
#include "daemon/search/search_runner.h"
#include "daemon/search/search_state.h"

namespace minifyd::search {

inline constexpr std::string_view failing_prefix_step = "failing-prefix";


// `original` (known to fail) cut after the first of its nodes where a cut still fails, as found by
// probes of up to runner.parallelism() cuts a round (truncated_at: the cut node becomes the output),
// each round narrowing the range between the longest cut known to pass and the shortest known to
// fail; a probe's failure is only a bound and is not re-verified. Then, as one step, that node alone
// on loads of its inputs (failing_node_step), else the cut (failing_prefix_step), the one accepted
// re-verified as any step's; both read the prefix's eager values alone, so a search that asked for
// none before asks for those only (reads_values_before_bisecting). When no cut fails, try_last_node_alone(); the original when nothing is
// accepted or it has fewer than min_cut_points_to_bisect cut points. Whatever the predicate's shape (a
// failure that needs two nodes apart, one that comes and goes with the cut), the result fails: only
// a failing candidate is kept.
SearchState bisect_failing_prefix(SearchRunner& runner, SearchState original);

// `state`'s last computation alone on loads of its inputs (failing_node_step), when accepted; else
// `state`. For a graph already cut where its failure starts (the analysis's first divergence).
SearchState try_last_node_alone(SearchRunner& runner, SearchState state);

}  // namespace minifyd::search
