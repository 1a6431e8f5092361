// The port of fx_minifier's `while True` loop and try_granularity.
#include "daemon/search/minifier.h"

#include "common/log.h"

namespace minifyd::search {
namespace {

bool is_power_of_two(std::size_t n) { return n != 0 && (n & (n - 1)) == 0; }

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

// The search from `state` on, on whichever thread runs `runner`: the acceptance that led to it
// confirmed first (a lineage's start), then the driver loop, then the final check.
LineageOutcome search_from(SearchRunner& runner, const SearchOptions& options, SearchState state,
                           std::optional<Acceptance> accepted) {
  if (accepted) {
    std::optional<SearchState> confirmed = runner.confirm(*accepted, std::move(state), true);
    if (runner.adopted() || runner.stopped()) return runner.outcome(std::nullopt);
    if (!confirmed) {
      LineageOutcome rejected = runner.outcome(std::nullopt);
      rejected.rejected = true;
      return rejected;
    }
    state = std::move(*confirmed);
  }
  SearchState best = Driver(runner, options).run(std::move(state));
  if (runner.adopted()) return runner.outcome(std::nullopt);
  std::optional<Error> final_error;
  if (!runner.stopped()) {
    std::optional<bool> still_fails = runner.check(best);
    if (still_fails && !*still_fails)
      final_error = make_error(ErrorKind::invalid_input, "the final graph no longer fails");
  }
  LineageOutcome outcome = runner.outcome(std::move(best));
  if (final_error) {
    outcome.stop = StopReason::error;
    outcome.error = std::move(final_error);
  }
  return outcome;
}

}  // namespace

Expected<SearchResult> minify(SearchState original, CandidateEvaluator& evaluator, VerdictCache& cache,
                              const Clock& clock, const SearchOptions& options, SearchObserver* observer) {
  if (options.max_granularity && !is_power_of_two(*options.max_granularity))
    return make_error(ErrorKind::invalid_input,
                      "max granularity " + std::to_string(*options.max_granularity) + " is not a power of two");
  std::vector<std::string> problems = document_problems(original.document);
  if (!problems.empty()) return make_error(ErrorKind::invalid_input, "the original graph: " + problems.front());
  if (original.eager == nullptr) original.eager = std::make_shared<const EagerValues>();

  SearchResult result;
  result.start_nodes = original.document.graph.size();
  result.start_inputs = input_count(original);
  SearchRunner runner(evaluator, cache, clock, options.runner, result.start_nodes, observer);
  if (options.runner.speculate_after) {
    auto speculation = std::make_shared<Speculation>();
    speculation->continue_search = [&options](SearchRunner& lineage, SearchState state,
                                              std::optional<Acceptance> accepted) {
      return search_from(lineage, options, std::move(state), accepted);
    };
    runner.enable_speculation(std::move(speculation));
  }
  log::info("started off with " + std::to_string(result.start_nodes) + " nodes");
  LineageOutcome outcome;
  std::optional<bool> fails = true;
  if (!options.skip_sanity) fails = runner.check_then_continue(original, [] {});
  if (!fails && runner.error()) return runner.error()->with_context("checking the original graph");
  if (fails && *fails && !runner.adopted()) {
    outcome = search_from(runner, options, std::move(original), std::nullopt);
  } else {  // stopped, adopted a lineage that went ahead of the check, or nothing to minimize
    outcome = runner.outcome(std::move(original));
    if (fails && !*fails) outcome.stop = StopReason::original_passes;
  }
  result.best = std::move(*outcome.best);
  result.stop = outcome.stop;
  result.error = std::move(outcome.error);
  result.counters = outcome.counters;
  log::info("made " + std::to_string(result.counters.queries) + " queries (" +
            std::to_string(result.counters.cache_hits) + " cache hits)");
  return result;
}

}  // namespace minifyd::search
