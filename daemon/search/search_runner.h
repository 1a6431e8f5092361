// Runs strategies against a CandidateEvaluator as fx_minifier's strategy wrapper does: only valid
// candidates that made progress are evaluated, the first still failing one in proposal order wins
// and is re-verified; with the verdict cache, the query count and the budgets. Work may run ahead
// of a slow verdict through one hook (search/lookahead.h); the runner needs none.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string_view>

#include "common/expected.h"
#include "daemon/search/candidate_evaluator.h"
#include "daemon/search/clock.h"
#include "daemon/search/lookahead.h"
#include "daemon/search/search_event.h"
#include "daemon/search/search_observer.h"
#include "daemon/search/search_options.h"
#include "daemon/search/search_status.h"
#include "daemon/search/strategy.h"
#include "daemon/search/verdict_cache.h"

namespace minifyd::search {

// Not thread-safe: one search thread drives it (see CandidateEvaluator for the callbacks). Runners
// of one search on other threads (lineages) share the cache, which locks.
// Once stopped (a budget ran out, the evaluator reported an error, or work ahead of it took the
// search over), it evaluates nothing more.
class SearchRunner {
 public:
  // Where a runner that continues another's search starts: the original's size, when the search
  // started (for the time budget) and its counters so far (for the query budget).
  struct Continuation {
    std::size_t start_nodes = 0;
    std::chrono::steady_clock::time_point started;
    SearchCounters counters;
  };

  // The search's own runner: its events are logged and told to `observer`.
  SearchRunner(CandidateEvaluator& evaluator, VerdictCache& cache, const Clock& clock, RunnerOptions options,
               std::size_t start_nodes, SearchObserver* observer = nullptr);
  // A runner going on with another's search from `from`; its events go to `events`.
  SearchRunner(CandidateEvaluator& evaluator, VerdictCache& cache, const Clock& clock, RunnerOptions options,
               const Continuation& from, EventSink& events);
  SearchRunner(const SearchRunner&) = delete;
  SearchRunner& operator=(const SearchRunner&) = delete;

  // Lets `lookahead` run ahead of slow fronts; it outlives the runner's searching.
  void look_ahead_with(Lookahead& lookahead) { lookahead_ = &lookahead; }

  // A fresh evaluation of `state`, whatever the cache says (the final check); the verdict is
  // cached. nullopt when the runner is or becomes stopped.
  std::optional<bool> check(const SearchState& state);
  // Whether the runner's latest fresh evaluation (a check, or a re-verification) was of `state`'s
  // very graph and found it failing: a final check of it now would ask the same question again.
  bool failed_when_last_checked(const SearchState& state) const;
  // check() of a state the search goes on from when it fails (the sanity check): the runner's front
  // while pending, unless `ahead` is false (what follows depends on more than whether it fails).
  // When it fails and work went ahead of it, that work's result is the search's (handed_over()).
  std::optional<bool> check_to_continue(const SearchState& state, bool ahead = true);

  // One strategy at one granularity: its candidates in proposal order, up to parallelism() of
  // them in flight; the first one that is valid, made progress over `state` and still fails is
  // accepted once every candidate before it is known to pass, the rest being cancelled. So the
  // result is the one a sequential search finds, however results arrive. nullopt when none
  // qualifies, re-verification disagrees, the runner stopped, or the search was handed over.
  std::optional<SearchState> run_step(const Strategy& strategy, const SearchState& state,
                                      std::size_t granularity);
  // run_step() of the candidates `propose` offers, as a step named `name` (one that is no
  // strategy's, as the first try at an analysis's first divergence). `reading`: the state whose
  // eager values `propose` reads, when not `state` (the bisection's steps from the original, which
  // read its failing prefix's alone).
  std::optional<SearchState> run_proposals(std::string_view name, const SearchState& state, std::size_t granularity,
                                           const std::function<void(const CandidateSink&)>& propose,
                                           const SearchState* reading = nullptr);
  // The candidates `propose` offers, evaluated as run_proposals() evaluates a step's (the verdict
  // cache, up to parallelism() in flight, the budgets), but none accepted: the first that fails once
  // every one before it is known to pass, as it is (not re-verified), or nullopt. No work goes ahead
  // of them: they are probes (a bisection's), whose failing one is only a bound.
  std::optional<SearchState> first_failing(std::string_view name, const SearchState& state, std::size_t granularity,
                                           const std::function<void(const CandidateSink&)>& propose);
  // Asks for `state`'s eager values and turns the evaluator until they have arrived (search_state.h),
  // so that a step may turn nodes into loads: true once they are there; false when none will come (the runner
  // stops with an error) or the runner stopped meanwhile. run_proposals() awaits them itself.
  bool await_eager(const SearchState& state);
  // Candidates the evaluator runs at once.
  std::size_t parallelism() const { return std::max<std::size_t>(1, evaluator_.parallelism()); }
  // Re-verifies `candidate` (unless RunnerOptions::reverify is off) and records it as accepted.
  // nullopt when it passes this time, the runner stopped, or the search was handed over.
  // `known_slow`: its first evaluation was slow, so work may go ahead of the re-verification at once.
  std::optional<SearchState> confirm(const Acceptance& acceptance, SearchState candidate, bool known_slow = false);

  bool stopped() const { return stop_.has_value(); }
  // finished while not stopped.
  StopReason stop_reason() const { return stop_.value_or(StopReason::finished); }
  // Set when stop_reason() is error.
  const std::optional<Error>& error() const { return error_; }
  const SearchCounters& counters() const { return counters_; }
  bool interrupted() const;
  // Work ahead of a front that failed finished the search: its stop reason, error and counters are
  // this runner's, its best is outcome()'s.
  bool handed_over() const { return handed_over_best_.has_value(); }
  // The search's outcome from here: `best`, or that of the work it was handed over to.
  SearchOutcome outcome(std::optional<SearchState> best);
  // Where a runner going on with this search from now would start.
  Continuation continuation() const { return Continuation{start_nodes_, started_, counters_}; }
  SearchProgress progress(std::string_view strategy, std::size_t granularity, std::size_t nodes) const;

 private:
  class StepWindow;

  // A step's window over the candidates `propose` offers (its start told to the events): the first
  // that fails once every one before it is known to pass, or nullopt. `ahead`: work may go ahead of
  // its front (run_proposals(), not first_failing()).
  std::optional<SearchState> first_failing_of(const Acceptance& step, const SearchState& state,
                                              const std::function<void(const CandidateSink&)>& propose, bool ahead);
  // False (and stopped) when `pending` more queries would exceed a budget.
  bool may_query(std::size_t pending);
  void halt(StopReason reason, std::optional<Error> error = std::nullopt);
  // The evaluation behind the checks; as the runner's front when `front` (known slow or not), the
  // sanity check's when `original`, a re-verification of what `accepted_by` accepted when named.
  std::optional<bool> evaluate_fresh(const SearchState& state, bool front, bool known_slow, bool original = false,
                                     std::string_view accepted_by = {});
  // Waits for the evaluator to report. With a lookahead, wakes every lookahead_interval to report
  // `front` (when given) and to notice an interrupt.
  void await(const Front* front);
  void report_pending(const Front& front);
  // The front passed or is given up: work ahead of it is stopped, its cost counted.
  void drop_ahead();
  // The front failed: work that went ahead of it takes the search over from `current` (the best
  // state when it confirmed none), or is found wrong at its first re-verification (the runner goes
  // on without it). Whether any had gone ahead.
  bool hand_over(const SearchState& current);
  void record_accepted(const Acceptance& acceptance, const SearchState& state);
  // The accepted candidate passed its re-verification: a warning.
  void warn_not_reproduced(const Acceptance& acceptance);

  CandidateEvaluator& evaluator_;
  VerdictCache& cache_;
  const Clock& clock_;
  RunnerOptions options_;
  std::size_t start_nodes_;
  std::chrono::steady_clock::time_point started_;
  SearchCounters counters_;
  ObserverSink observed_;  // the search's own runner's events
  EventSink& events_;
  Lookahead* lookahead_ = nullptr;
  std::optional<StopReason> stop_;
  std::optional<Error> error_;
  std::optional<SearchState> handed_over_best_;
  std::optional<std::string> last_fresh_failing_;  // canonical hash
};

}  // namespace minifyd::search
