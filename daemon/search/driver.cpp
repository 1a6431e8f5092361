// The port of fx_minifier's `while True` loop and try_granularity.
#include "daemon/search/driver.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "common/log.h"
#include "daemon/search/failing_segment.h"
#include "daemon/search/node_isolation.h"
#include "daemon/search/prefix_bisection.h"
#include "daemon/search/strategies/truncate_suffix.h"

namespace minifyd::search {
namespace {

std::size_t largest_power_of_two_at_most(std::size_t n) {
  std::size_t power = 1;
  while (power <= n / 2) power *= 2;
  return power;
}

class Driver {
 public:
  Driver(SearchRunner& runner, const SearchOptions& options) : runner_(runner), options_(options) {}

  SearchState run(SearchState state) {
    while (!runner_.stopped()) {
      std::size_t granularity = largest_power_of_two_at_most(state.document.graph.size());
      if (options_.max_granularity) granularity = std::min(granularity, *options_.max_granularity);
      if (auto next = try_granularity(state, granularity, true)) {
        state = std::move(*next);
        continue;
      }
      bool progressed = false;
      for (granularity /= 2; granularity >= 1 && !progressed; granularity /= 2) {
        if (auto next = try_granularity(state, granularity, false)) {
          state = std::move(*next);
          progressed = true;
        }
      }
      if (progressed) continue;
      if (auto next = run_role(StrategyRole::outputs, state, 1)) {
        state = std::move(*next);
        continue;
      }
      break;
    }
    return state;
  }

 private:
  std::optional<SearchState> try_granularity(const SearchState& state, std::size_t granularity,
                                             bool non_granular) {
    log::debug("trying granularity " + std::to_string(granularity));
    if (output_count(state.document.graph) > state.document.graph.size() / 2)
      if (auto next = run_role(StrategyRole::outputs, state, granularity)) return next;
    if (non_granular)
      if (auto next = run_role(StrategyRole::non_granular, state, granularity)) return next;
    return run_role(StrategyRole::granular, state, granularity);
  }

  std::optional<SearchState> run_role(StrategyRole role, const SearchState& state, std::size_t granularity) {
    for (const Strategy* strategy : options_.strategies) {
      if (strategy->role != role) continue;
      if (auto next = runner_.run_step(*strategy, state, granularity)) return next;
    }
    return std::nullopt;
  }

  SearchRunner& runner_;
  const SearchOptions& options_;
};

// `original` cut after `node`, when the runner accepts it; else nullopt.
std::optional<SearchState> try_first_end(SearchRunner& runner, const SearchState& original, const std::string& node) {
  std::vector<Node*> nodes = original.document.graph.nodes();
  auto found = std::find_if(nodes.begin(), nodes.end(), [&](const Node* n) { return n->name() == node; });
  if (found == nodes.end() || (*found)->op() != OpCode::call_function) {
    log::warn("the first try's end '" + node + "' is no computation of the graph: the search starts from the whole graph");
    return std::nullopt;
  }
  auto index = static_cast<std::size_t>(found - nodes.begin());
  return runner.run_proposals(first_divergence_step, original, 1,
                              [&](const CandidateSink& offer) { offer(truncated_at(original, index)); });
}

// `original` reduced to the failing kernel's nodes on loads of their inputs, when the runner accepts
// it; else nullopt.
std::optional<SearchState> try_failing_kernel(SearchRunner& runner, const SearchState& original,
                                              const std::vector<std::string>& nodes) {
  if (nodes.empty() || !runner.await_eager(original)) return std::nullopt;
  auto isolated = isolate_nodes(original, nodes);
  if (!isolated) {
    log::info("none of the failing kernel's " + std::to_string(nodes.size()) +
              " nodes is a computation of the graph: the search starts from the whole graph");
    return std::nullopt;
  }
  return runner.run_proposals(failing_kernel_step, original, 1,
                              [&](const CandidateSink& offer) { offer(std::move(*isolated)); });
}

// The first tries of a search from the original, in their order; a lineage that went ahead of one's
// accepted candidate starts at the next, or, past a failing segment, narrows it on.
enum class FirstTry { first_divergence, failing_kernel, narrowing, within_segment };

// search_on() after the first tries from `first`; `at_first_end`: `state` is the cut at the first
// divergence, where its failure starts.
SearchOutcome search_from(SearchRunner& runner, const SearchOptions& options, SearchState state, FirstTry first,
                          bool at_first_end) {
  if (first <= FirstTry::first_divergence && options.first_try_end) {
    if (auto cut = try_first_end(runner, state, *options.first_try_end)) {
      state = std::move(*cut);
      at_first_end = true;
    }
  }
  if (first <= FirstTry::failing_kernel && options.failing_kernel_nodes) {
    std::vector<std::string> kernel = options.failing_kernel_nodes();
    if (auto alone = try_kernel_computations_alone(runner, state, kernel)) {
      state = std::move(*alone);
      at_first_end = false;
    } else if (auto isolated = try_failing_kernel(runner, state, kernel)) {
      state = std::move(*isolated);
      at_first_end = false;
    }
  }
  if (first <= FirstTry::narrowing && options.bisect_prefix)
    state = at_first_end ? try_last_node_alone(runner, std::move(state))
                         : bisect_failing_prefix(runner, narrow_to_failing_segment(runner, std::move(state)));
  if (first == FirstTry::within_segment)
    state = bisect_failing_prefix(runner, narrow_failing_segment(runner, std::move(state)));
  return search_on(runner, options, std::move(state));
}

}  // namespace

SearchOutcome search_from_original(SearchRunner& runner, const SearchOptions& options, SearchState original) {
  return search_from(runner, options, std::move(original), FirstTry::first_divergence, false);
}

bool reads_values_before_bisecting(const SearchOptions& options, std::size_t parallelism) {
  return !options.bisect_prefix || options.first_try_end || options.failing_kernel_nodes ||
         parallelism >= min_parallelism_to_split;
}

SearchOutcome search_after(SearchRunner& runner, const SearchOptions& options, SearchState accepted,
                           std::string_view step) {
  if (step == first_divergence_step)
    return search_from(runner, options, std::move(accepted), FirstTry::failing_kernel, true);
  if (step == failing_kernel_step) return search_from(runner, options, std::move(accepted), FirstTry::narrowing, false);
  if (step == failing_segment_step)
    return search_from(runner, options, std::move(accepted), FirstTry::within_segment, false);
  return search_on(runner, options, std::move(accepted));
}

SearchOutcome search_on(SearchRunner& runner, const SearchOptions& options, SearchState state) {
  SearchState best = Driver(runner, options).run(std::move(state));
  std::optional<Error> final_error;
  // The final check, unless the graph was the last one checked afresh (the re-verification of the
  // step that made it, or the sanity check when no step was accepted) and failed then.
  if (!runner.stopped() && !runner.failed_when_last_checked(best)) {
    std::optional<bool> still_fails = runner.check(best);
    if (still_fails && !*still_fails)
      final_error = make_error(ErrorKind::invalid_input, "the final graph no longer fails");
  }
  SearchOutcome outcome = runner.outcome(std::move(best));
  if (final_error) {
    outcome.stop = StopReason::error;
    outcome.error = std::move(final_error);
  }
  return outcome;
}

}  // namespace minifyd::search
