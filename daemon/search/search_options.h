// Every option of a search: its schedule and strategies, the runner's budgets and checks, and
// speculation past slow verdicts.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/graph_targets.h"
#include "daemon/search/strategy.h"

namespace minifyd::search {

struct SearchBudget {
  std::optional<std::size_t> max_queries;                       // evaluations, cache hits excluded
  std::optional<std::chrono::steady_clock::duration> max_time;  // from the runner's construction
};

// The step runner's (search/search_runner.h).
struct RunnerOptions {
  SearchBudget budget;
  // Evaluate an accepted candidate once more and drop it unless it fails again, as the seed does
  // (a guard against flaky failures; it costs one query per accepted reduction).
  bool reverify = true;
  // Set from another thread to stop the search before its next query (StopReason::interrupted).
  const std::atomic<bool>* interrupt = nullptr;
  // Set from another thread when the failure being minimized is refuted (run/plain_confirmation.h):
  // the search stops before its next query (StopReason::unconfirmed).
  const std::atomic<bool>* refuted = nullptr;
  // The namespaces the run's operator libraries add to the graph rule: a candidate calling them is valid.
  OperatorScope operators;
};

// Lineages past slow verdicts (search/speculation.h).
struct SpeculationOptions {
  // When the verdict that decides the search's next move has been pending this long, and longer
  // than the evaluator's slow_beyond(), a lineage searches on as if the candidate fails. Needs an
  // evaluator that can be shared with other threads; nullopt: never (the search is sequential).
  std::optional<std::chrono::milliseconds> after;
  std::size_t max_lineages = 64;  // running at once, over the whole search
  // Go past a verdict pending for `after` however long passing verdicts take (the torch.compile
  // backends, whose every candidate compiles for a second or more: no verdict is quick enough to wait
  // for while a worker idles); else only once it has also been pending past the evaluator's
  // slow_beyond(), the time a passing verdict takes.
  bool regardless_of_passes = false;
};

struct SearchOptions {
  // Start each round at min(this, the largest power of two <= node count); a power of two.
  std::optional<std::size_t> max_granularity;
  bool skip_sanity = false;  // trust that the original fails instead of checking it first
  RunnerOptions runner;
  SpeculationOptions speculation;
  // The strategies to run, from select_strategies(); the driver decides when each runs by role.
  std::vector<const Strategy*> strategies;
  // A node of the original: before the driver, the search tries the original cut after it, as one
  // step named first_divergence_step (`minify run --analyze-first`: the analysis's first divergence).
  std::optional<std::string> first_try_end;
  // When set, no lineage goes ahead of the sanity check, and once it found the original failing the
  // search first tries the nodes this names (those the sanity check's failing kernel was made of,
  // PoolEvaluator): fewer than 16 computations each alone first (search/failing_segment.h), then all
  // of them alone on loads of their inputs, as one step named failing_kernel_step; nothing is tried
  // when it names none of the graph's nodes.
  std::function<std::vector<std::string>()> failing_kernel_nodes;
  // After those tries, the search narrows the graph to a failing segment of it when many candidates
  // run at once (search/failing_segment.h), then bisects for the shortest failing prefix and tries its
  // last node alone (search/prefix_bisection.h); after an accepted cut at first_try_end, which is where
  // the failure starts, only that node alone.
  bool bisect_prefix = false;
};

inline constexpr std::string_view first_divergence_step = "first-divergence";
inline constexpr std::string_view failing_kernel_step = "failing-kernel";

}  // namespace minifyd::search
