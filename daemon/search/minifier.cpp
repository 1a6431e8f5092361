// The search from the original: options and original checked, the sanity check, the driver.
#include "daemon/search/minifier.h"

#include <string>
#include <vector>

#include "common/log.h"
#include "daemon/search/driver.h"
#include "daemon/search/search_runner.h"
#include "daemon/search/speculation.h"

namespace minifyd::search {
namespace {

bool is_power_of_two(std::size_t n) { return n != 0 && (n & (n - 1)) == 0; }

}  // namespace

Expected<SearchResult> minify(SearchState original, CandidateEvaluator& evaluator, VerdictCache& cache,
                              const Clock& clock, const SearchOptions& options, SearchObserver* observer) {
  if (options.max_granularity && !is_power_of_two(*options.max_granularity))
    return make_error(ErrorKind::invalid_input,
                      "max granularity " + std::to_string(*options.max_granularity) + " is not a power of two");
  std::vector<std::string> problems = document_problems(original.document, options.runner.operators);
  if (!problems.empty()) return make_error(ErrorKind::invalid_input, "the original graph: " + problems.front());
  if (original.eager == nullptr) original.eager = std::make_shared<const EagerValues>();

  SearchResult result;
  result.start_nodes = original.document.graph.size();
  result.start_inputs = input_count(original);
  std::optional<Speculation> speculation;
  SearchRunner runner(evaluator, cache, clock, options.runner, result.start_nodes, observer);
  if (options.speculation.after) runner.look_ahead_with(speculation.emplace(options, evaluator, cache, clock));
  log::info("started off with " + std::to_string(result.start_nodes) + " nodes");
  SearchOutcome outcome;
  std::optional<bool> fails = true;
  if (reads_values_before_bisecting(options, runner.parallelism())) original.eager->ask(original.document);
  // The failing kernel's nodes come with the sanity check's verdict: nothing goes ahead of it.
  if (!options.skip_sanity) fails = runner.check_to_continue(original, !options.failing_kernel_nodes);
  if (!fails && runner.error()) return runner.error()->with_context("checking the original graph");
  if (fails && *fails && !runner.handed_over()) {
    outcome = search_from_original(runner, options, std::move(original));
  } else {  // stopped, handed over to a lineage that went ahead of the check, or nothing to minimize
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
