// Runs strategies against a CandidateEvaluator as fx_minifier's strategy wrapper does: only valid
// candidates that made progress are evaluated, the first still failing one in proposal order wins
// and is re-verified; with the verdict cache, the query count, the budgets, and speculation past
// slow verdicts (search/lineage.h).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "common/expected.h"
#include "daemon/search/candidate_evaluator.h"
#include "daemon/search/clock.h"
#include "daemon/search/lineage.h"
#include "daemon/search/search_observer.h"
#include "daemon/search/search_status.h"
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
  // When the verdict that decides the search's next move has been pending this long, and longer
  // than the evaluator's slow_beyond(), a lineage searches on as if the candidate fails
  // (search/lineage.h). Needs an evaluator that can be shared with other threads; nullopt: never.
  std::optional<std::chrono::milliseconds> speculate_after;
  std::size_t max_lineages = 64;  // running at once, over the whole search
};

class SearchRunner;

// A candidate the search accepts, for its log line and report step.
struct Acceptance {
  std::string_view strategy;
  std::size_t granularity = 0;
  std::size_t nodes_before = 0;
};

// How lineages continue the search: the driver loop lives above the runner (search/minifier.h).
struct Speculation {
  // From `state` on, `accepted` (when set) re-verified first, as if the parent had accepted it.
  std::function<LineageOutcome(SearchRunner& runner, SearchState state, std::optional<Acceptance> accepted)>
      continue_search;
  std::atomic<std::size_t> live{0};
};

// Not thread-safe: one search thread drives it (see CandidateEvaluator for the callbacks); each
// lineage has a runner of its own on its own thread, sharing the cache (which locks).
// Once stopped (a budget ran out, the evaluator reported an error, or a lineage was adopted), it
// evaluates nothing more.
class SearchRunner {
 public:
  SearchRunner(CandidateEvaluator& evaluator, VerdictCache& cache, const Clock& clock,
               RunnerOptions options, std::size_t start_nodes, SearchObserver* observer = nullptr);
  SearchRunner(const SearchRunner&) = delete;
  SearchRunner& operator=(const SearchRunner&) = delete;

  // Lets slow verdicts start lineages (RunnerOptions::speculate_after must be set too).
  void enable_speculation(std::shared_ptr<Speculation> speculation) { speculation_ = std::move(speculation); }

  // A fresh evaluation of `state`, whatever the cache says (the final check); the verdict is
  // cached. nullopt when the runner is or becomes stopped.
  std::optional<bool> check(const SearchState& state);
  // check() of a state the search continues from when it fails (the sanity check, a
  // re-verification). While the check is slow, a lineage may search on from `state`: when the state
  // fails, `on_fails` runs, then that lineage is adopted (the runner stops, adopted() is set);
  // when it passes, the lineage is stopped.
  std::optional<bool> check_then_continue(const SearchState& state, const std::function<void()>& on_fails,
                                          bool known_slow = false);

  // One strategy at one granularity: its candidates in proposal order, up to parallelism() of
  // them in flight; the first one that is valid, made progress over `state` and still fails is
  // accepted once every candidate before it is known to pass, the rest being cancelled. So the
  // result is the one a sequential search finds, however results arrive. nullopt when none
  // qualifies, re-verification disagrees, the runner stopped, or a lineage was adopted.
  std::optional<SearchState> run_step(const Strategy& strategy, const SearchState& state,
                                      std::size_t granularity);
  // Re-verifies `candidate` (unless RunnerOptions::reverify is off) and records it as accepted.
  // nullopt when it passes this time, the runner stopped, or a lineage was adopted. `known_slow`:
  // its first evaluation was slow (a lineage starts from it), so a lineage goes ahead of the
  // re-verification at once rather than after RunnerOptions::speculate_after.
  std::optional<SearchState> confirm(const Acceptance& acceptance, SearchState candidate, bool known_slow = false);

  bool stopped() const { return stop_.has_value(); }
  // finished while not stopped.
  StopReason stop_reason() const { return stop_.value_or(StopReason::finished); }
  // Set when stop_reason() is error.
  const std::optional<Error>& error() const { return error_; }
  const SearchCounters& counters() const { return counters_; }
  // A lineage's result became this runner's: its stop reason, error and counters were taken over.
  bool adopted() const { return adopted_best_.has_value(); }
  // The search's outcome from here: `best`, or the adopted lineage's best.
  LineageOutcome outcome(std::optional<SearchState> best);
  SearchProgress progress(std::string_view strategy, std::size_t granularity, std::size_t nodes) const;

 private:
  class StepWindow;
  // What a lineage's runner takes over from its parent, copied on the parent's thread.
  struct Seed {
    RunnerOptions options;
    std::size_t start_nodes;
    std::chrono::steady_clock::time_point started;
    SearchCounters counters;
    std::shared_ptr<Speculation> speculation;
  };
  // A lineage running ahead, with the figures it started from.
  struct Ahead {
    std::shared_ptr<Lineage> lineage;
    SearchCounters at_spawn;
    explicit operator bool() const { return lineage != nullptr; }
  };

  SearchRunner(const Seed& seed, CandidateEvaluator& evaluator, VerdictCache& cache, const Clock& clock,
               const std::atomic<bool>& stop, EventRelay& events);

  // False (and stopped) when `pending` more queries would exceed a budget.
  bool may_query(std::size_t pending);
  bool interrupted() const;
  void halt(StopReason reason, std::optional<Error> error = std::nullopt);
  // The evaluation behind check() and check_then_continue(); `ahead` (when given) receives the
  // lineage started while it was slow, or at once when it is `known_slow`.
  std::optional<bool> evaluate_fresh(const SearchState& state, Ahead* ahead, bool known_slow);
  // Waits for the evaluator to report. With speculation, wakes now and then to run `look_ahead`
  // (which may start a lineage) and to notice an interrupt.
  void await(const std::function<void()>& look_ahead);
  bool due(std::chrono::steady_clock::time_point submitted) const;
  // A lineage continuing from `from` (its acceptance re-verified first, when given); empty when
  // speculation is off, at its limit, or the evaluator cannot be shared.
  Ahead spawn(const SearchState& from, std::optional<Acceptance> accepted);
  // Stops a lineage that guessed wrong; its queries count as speculative.
  void discard(Ahead& ahead);
  // Waits for the lineage, passing its events on, and takes its result over (`current` being the
  // best when the lineage stopped before confirming anything); when the lineage was rejected at its
  // first re-verification, only its counters (the runner goes on without it).
  void adopt(Ahead& ahead, const SearchState& current);
  void record_accepted(const Acceptance& acceptance, const SearchState& state);
  // The accepted candidate passed its re-verification: a warning, on the search's path only.
  void warn_not_reproduced(const Acceptance& acceptance);
  // To the observer (root runner) or up to the parent (lineage).
  void emit(SearchEvent event);
  void pass_on_lineage_events();

  CandidateEvaluator& evaluator_;
  VerdictCache& cache_;
  const Clock& clock_;
  RunnerOptions options_;
  std::size_t start_nodes_;
  SearchObserver* observer_ = nullptr;  // the root runner's
  EventRelay* relay_ = nullptr;         // a lineage runner's
  std::chrono::steady_clock::time_point started_;
  SearchCounters counters_;
  std::optional<StopReason> stop_;
  std::optional<Error> error_;
  std::shared_ptr<Speculation> speculation_;
  EventQueue lineage_events_;  // from the lineage being adopted
  std::optional<SearchState> adopted_best_;
};

}  // namespace minifyd::search
