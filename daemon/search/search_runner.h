// Runs strategies against a CandidateEvaluator as fx_minifier's strategy wrapper does: only valid
// candidates that made progress are evaluated, the first still failing one in proposal order wins
// and is re-verified; with the verdict cache, the query count and the budgets.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <optional>
#include <string>

#include "common/expected.h"
#include "daemon/search/candidate_evaluator.h"
#include "daemon/search/clock.h"
#include "daemon/search/search_observer.h"
#include "daemon/search/strategy.h"
#include "daemon/search/verdict_cache.h"

namespace minifyd::search {

struct SearchBudget {
  std::optional<std::size_t> max_queries;                       // evaluations, cache hits excluded
  std::optional<std::chrono::steady_clock::duration> max_time;  // from the runner's construction
};

struct RunnerOptions {
  SearchBudget budget;
  // Evaluate an accepted candidate once more and drop it unless it fails again, as the seed does
  // (a guard against flaky failures; it costs one query per accepted reduction).
  bool reverify = true;
  // Set from another thread to stop the search before its next query (StopReason::interrupted).
  const std::atomic<bool>* interrupt = nullptr;
};

enum class StopReason {
  finished,
  original_passes,  // the sanity check found nothing to minimize
  query_budget,
  time_budget,
  interrupted,  // RunnerOptions::interrupt was set
  error,
};
const char* to_string(StopReason reason);

struct SearchCounters {
  std::size_t queries = 0;             // candidates sent to the evaluator, re-checks included
  std::size_t cache_hits = 0;          // candidates answered by the cache (or by an identical one in flight)
  std::size_t invalid_candidates = 0;  // refused by lint()/document_problems(), never evaluated
  std::size_t unproductive_candidates = 0;  // no progress, never evaluated
  std::size_t accepted = 0;
};

// Not thread-safe: one search thread drives it (see CandidateEvaluator for the callbacks).
// Once stopped (a budget ran out, or the evaluator reported an error), it evaluates nothing more.
class SearchRunner {
 public:
  SearchRunner(CandidateEvaluator& evaluator, VerdictCache& cache, const Clock& clock,
               RunnerOptions options, std::size_t start_nodes, SearchObserver* observer = nullptr);
  SearchRunner(const SearchRunner&) = delete;
  SearchRunner& operator=(const SearchRunner&) = delete;

  // A fresh evaluation of `state`, whatever the cache says (the sanity and final checks); the
  // verdict is cached. nullopt when the runner is or becomes stopped.
  std::optional<bool> check(const SearchState& state);

  // One strategy at one granularity: its candidates in proposal order, up to parallelism() of
  // them in flight; the first one that is valid, made progress over `state` and still fails is
  // accepted once every candidate before it is known to pass, the rest being cancelled. So the
  // result is the one a sequential search finds, however results arrive. nullopt when none
  // qualifies, re-verification disagrees, or the runner stopped.
  std::optional<SearchState> run_step(const Strategy& strategy, const SearchState& state,
                                      std::size_t granularity);

  bool stopped() const { return stop_.has_value(); }
  // finished while not stopped.
  StopReason stop_reason() const { return stop_.value_or(StopReason::finished); }
  // Set when stop_reason() is error.
  const std::optional<Error>& error() const { return error_; }
  const SearchCounters& counters() const { return counters_; }
  SearchProgress progress(std::string_view strategy, std::size_t granularity, std::size_t nodes) const;

 private:
  class StepWindow;

  // False (and stopped) when `pending` more queries would exceed a budget.
  bool may_query(std::size_t pending);
  void halt(StopReason reason, std::optional<Error> error = std::nullopt);

  CandidateEvaluator& evaluator_;
  VerdictCache& cache_;
  const Clock& clock_;
  RunnerOptions options_;
  std::size_t start_nodes_;
  SearchObserver* observer_;
  std::chrono::steady_clock::time_point started_;
  SearchCounters counters_;
  std::optional<StopReason> stop_;
  std::optional<Error> error_;
};

}  // namespace minifyd::search
