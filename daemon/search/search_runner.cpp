// The step runner: a window of candidates in sequential order over an asynchronous evaluator, the
// checks, and acceptance.
#include "daemon/search/search_runner.h"

#include <algorithm>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/canonical_hash.h"

namespace minifyd::search {
namespace {

// One candidate of a step, at its place in proposal order.
struct Slot {
  SearchState state;
  std::string hash;
  std::optional<bool> fails;                       // known verdict
  std::optional<std::size_t> same_as;              // an earlier slot of this step with the same hash
  std::optional<std::chrono::steady_clock::time_point> submitted;  // when handed to the evaluator
};

Candidate candidate_of(const std::shared_ptr<Slot>& slot) {
  // Aliasing pointer: the evaluator may hold the document as long as it likes without a copy.
  return Candidate{std::shared_ptr<const GraphDocument>(slot, &slot->state.document), slot->hash};
}

}  // namespace

// The candidates of one step. Slots before front_ are known to pass; the first known failure at
// front_ is the accepted one, exactly as if they had been evaluated one after another. The slot at
// front_ is the runner's front while its verdict is pending.
class SearchRunner::StepWindow {
 public:
  // `ahead`: work may go ahead of the front (a step's candidates, not probes).
  StepWindow(SearchRunner& runner, const SearchState& current, Acceptance acceptance, bool ahead)
      : runner_(runner), current_(current), acceptance_(acceptance), parallelism_(runner.parallelism()),
        ahead_(ahead) {}
  StepWindow(const StepWindow&) = delete;
  StepWindow& operator=(const StepWindow&) = delete;
  // Callbacks capture `this`: nothing may stay in flight once the window is gone.
  ~StepWindow() { cancel(); }

  // The CandidateSink handed to the strategy.
  bool offer(SearchState candidate) {
    if (accepted_ || runner_.stopped()) return false;
    prune_unreferenced_tensors(candidate.document);
    if (!document_problems(candidate.document, runner_.options_.operators).empty()) {
      ++runner_.counters_.invalid_candidates;
      return true;
    }
    if (!made_progress(current_, candidate)) {
      ++runner_.counters_.unproductive_candidates;
      return true;
    }
    auto slot = std::make_shared<Slot>();
    slot->hash = canonical_hash(candidate.document);
    slot->state = std::move(candidate);
    if (auto cached = runner_.cache_.find(slot->hash)) {
      slot->fails = *cached;
      failure_known_ = failure_known_ || *cached;
      ++runner_.counters_.cache_hits;
    } else if (auto earlier = first_with_hash_.find(slot->hash); earlier != first_with_hash_.end()) {
      slot->same_as = earlier->second;
      ++runner_.counters_.cache_hits;
    } else {
      if (!runner_.may_query(to_submit_.size() + 1)) return false;
      first_with_hash_.emplace(slot->hash, slots_.size());
      to_submit_.push_back(slots_.size());
    }
    slots_.push_back(std::move(slot));
    settle();
    // At most parallelism_ undecided candidates: the window a sequential search slides over.
    if (undecided() >= parallelism_) {
      flush();
      settle();
    }
    while (!accepted_ && !runner_.stopped() && undecided() >= parallelism_) wait();
    // Once some candidate is known to fail, later ones can no longer win.
    return !accepted_ && !runner_.stopped() && !failure_known_;
  }

  // After the strategy has proposed everything: waits for what decides the step, cancels the rest.
  std::optional<std::size_t> finish() {
    if (!runner_.stopped()) flush();
    settle();
    while (!accepted_ && !runner_.stopped() && front_ < slots_.size()) wait();
    cancel();
    return accepted_;
  }

  // The accepted slot's evaluation is over, so nothing else reads its state any more.
  SearchState take(std::size_t index) { return std::move(slots_[index]->state); }

 private:
  std::size_t undecided() const { return slots_.size() - front_; }

  const Slot& evaluated(std::size_t index) const {
    const Slot& slot = *slots_[index];
    return slot.same_as ? evaluated(*slot.same_as) : slot;
  }

  void wait() {
    std::optional<Front> front = pending_front();
    runner_.await(front ? &*front : nullptr);
    settle();
  }

  void settle() {
    std::size_t was = front_;
    while (!accepted_ && front_ < slots_.size()) {
      std::optional<bool> fails = evaluated(front_).fails;
      if (!fails) break;
      if (*fails) accepted_ = front_;
      else ++front_;
    }
    if (front_ == was) return;
    runner_.drop_ahead();  // the front passed: whatever went ahead of it guessed wrong
    // A candidate known to pass is never read again (its verdict is; lineages cloned what they took):
    // a step of hundreds of candidates of a big graph would otherwise hold them all to its end.
    for (std::size_t index = was; index < front_; ++index) slots_[index]->state = SearchState{};
  }

  // The front slot, while its verdict is pending.
  std::optional<Front> pending_front() const {
    if (!ahead_ || accepted_ || front_ >= slots_.size()) return std::nullopt;
    const Slot& front = evaluated(front_);
    if (front.fails || !front.submitted) return std::nullopt;
    return Front{slots_[front_]->state, acceptance_, *front.submitted};
  }

  void flush() {
    if (to_submit_.empty()) return;
    std::vector<std::size_t> indices;
    indices.swap(to_submit_);
    std::vector<Candidate> batch;
    std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now();
    for (std::size_t index : indices) {
      batch.push_back(candidate_of(slots_[index]));
      slots_[index]->submitted = now;
    }
    in_flight_ += batch.size();
    runner_.counters_.queries += batch.size();
    runner_.evaluator_.evaluate(std::move(batch), [this, indices](std::size_t k, EvaluationResult result) {
      --in_flight_;
      Slot& slot = *slots_.at(indices.at(k));
      if (!result) return runner_.halt(StopReason::error, result.error());
      slot.fails = *result;
      failure_known_ = failure_known_ || *result;
      runner_.cache_.store(slot.hash, *result);
    });
  }

  void cancel() {
    if (in_flight_ == 0) return;
    runner_.evaluator_.cancel_pending();
    in_flight_ = 0;
  }

  SearchRunner& runner_;
  const SearchState& current_;
  Acceptance acceptance_;
  std::size_t parallelism_;
  bool ahead_;
  std::vector<std::shared_ptr<Slot>> slots_;
  std::unordered_map<std::string, std::size_t> first_with_hash_;
  std::vector<std::size_t> to_submit_;  // fresh candidates not yet handed to the evaluator
  std::size_t in_flight_ = 0;
  std::size_t front_ = 0;
  std::optional<std::size_t> accepted_;
  bool failure_known_ = false;
};

SearchRunner::SearchRunner(CandidateEvaluator& evaluator, VerdictCache& cache, const Clock& clock,
                           RunnerOptions options, std::size_t start_nodes, SearchObserver* observer)
    : evaluator_(evaluator), cache_(cache), clock_(clock), options_(options), start_nodes_(start_nodes),
      started_(clock.now()), observed_(observer), events_(observed_) {}

SearchRunner::SearchRunner(CandidateEvaluator& evaluator, VerdictCache& cache, const Clock& clock,
                           RunnerOptions options, const Continuation& from, EventSink& events)
    : evaluator_(evaluator), cache_(cache), clock_(clock), options_(options), start_nodes_(from.start_nodes),
      started_(from.started), counters_(from.counters), observed_(nullptr), events_(events) {}

void SearchRunner::halt(StopReason reason, std::optional<Error> error) {
  if (stop_) return;
  stop_ = reason;
  error_ = std::move(error);
}

bool SearchRunner::interrupted() const { return options_.interrupt != nullptr && options_.interrupt->load(); }

bool SearchRunner::may_query(std::size_t pending) {
  if (stopped()) return false;
  if (interrupted())
    halt(StopReason::interrupted);
  else if (options_.refuted != nullptr && options_.refuted->load())
    halt(StopReason::unconfirmed);
  else if (options_.budget.max_queries && counters_.queries + pending > *options_.budget.max_queries)
    halt(StopReason::query_budget);
  else if (options_.budget.max_time && clock_.now() - started_ >= *options_.budget.max_time)
    halt(StopReason::time_budget);
  return !stopped();
}

SearchProgress SearchRunner::progress(std::string_view strategy, std::size_t granularity,
                                      std::size_t nodes) const {
  return SearchProgress{strategy, granularity, nodes, start_nodes_, counters_.queries, counters_.cache_hits};
}

void SearchRunner::await(const Front* front) {
  if (lookahead_ == nullptr) return evaluator_.wait();
  while (!evaluator_.wait_until(std::chrono::steady_clock::now() + lookahead_interval)) {
    if (interrupted()) return halt(StopReason::interrupted);
    if (front != nullptr) report_pending(*front);
  }
}

void SearchRunner::report_pending(const Front& front) {
  if (lookahead_ != nullptr) lookahead_->front_pending(*this, front);
}

void SearchRunner::drop_ahead() {
  if (lookahead_ != nullptr) counters_ += lookahead_->front_passed();
}

bool SearchRunner::hand_over(const SearchState& current) {
  if (lookahead_ == nullptr) return false;
  std::optional<SearchOutcome> ahead = lookahead_->front_failed(*this, events_);
  if (!ahead) return false;
  counters_ = ahead->counters;
  if (ahead->rejected) return true;
  halt(ahead->stop, std::move(ahead->error));
  handed_over_best_ = ahead->best ? std::move(ahead->best) : clone_state(current);
  return true;
}

void SearchRunner::record_accepted(const Acceptance& acceptance, const SearchState& state) {
  ++counters_.accepted;
  std::size_t nodes = state.document.graph.size();
  events_.emit(SearchEvent{progress(acceptance.strategy, acceptance.granularity, nodes), clone_state(state),
                           "strategy " + std::string(acceptance.strategy) + " (G: " +
                               std::to_string(acceptance.granularity) + "): " +
                               std::to_string(acceptance.nodes_before) + " -> " + std::to_string(nodes) +
                               " nodes, " + std::to_string(input_count(state)) + " inputs"});
}

void SearchRunner::warn_not_reproduced(const Acceptance& acceptance) {
  SearchEvent event{progress(acceptance.strategy, acceptance.granularity, acceptance.nodes_before), std::nullopt,
                    "strategy " + std::string(acceptance.strategy) +
                        ": candidate failed once but passed when re-verified; not applying it",
                    true};
  events_.emit(std::move(event));
}

SearchOutcome SearchRunner::outcome(std::optional<SearchState> best) {
  SearchOutcome outcome;
  outcome.best = handed_over() ? std::move(handed_over_best_) : std::move(best);
  outcome.stop = stop_reason();
  outcome.error = error_;
  outcome.counters = counters_;
  return outcome;
}

std::optional<bool> SearchRunner::evaluate_fresh(const SearchState& state, bool front, bool known_slow,
                                                 bool original, std::string_view accepted_by) {
  if (!may_query(1)) return std::nullopt;
  auto slot = std::make_shared<Slot>();
  slot->hash = canonical_hash(state.document);
  slot->state.document = clone_document(state.document);
  std::optional<EvaluationResult> result;
  ++counters_.queries;
  Front pending{state, std::nullopt, std::chrono::steady_clock::now(), known_slow, original, accepted_by};
  evaluator_.evaluate({candidate_of(slot)}, [&](std::size_t, EvaluationResult r) { result = std::move(r); });
  if (front && known_slow) report_pending(pending);
  while (!result && !stopped()) await(front ? &pending : nullptr);
  if (!result) {
    evaluator_.cancel_pending();
    return std::nullopt;
  }
  if (!*result) {
    halt(StopReason::error, result->error());
    return std::nullopt;
  }
  cache_.store(slot->hash, **result);
  last_fresh_failing_ = **result ? std::optional<std::string>(slot->hash) : std::nullopt;
  return **result;
}

bool SearchRunner::failed_when_last_checked(const SearchState& state) const {
  return last_fresh_failing_ && *last_fresh_failing_ == canonical_hash(state.document);
}

std::optional<bool> SearchRunner::check(const SearchState& state) { return evaluate_fresh(state, false, false); }

std::optional<bool> SearchRunner::check_to_continue(const SearchState& state, bool ahead) {
  std::optional<bool> fails = evaluate_fresh(state, ahead, false, true);
  if (fails && *fails) hand_over(state);
  else drop_ahead();
  return fails;
}

std::optional<SearchState> SearchRunner::confirm(const Acceptance& acceptance, SearchState candidate,
                                                 bool known_slow) {
  if (options_.reverify) {
    std::optional<bool> again = evaluate_fresh(candidate, true, known_slow, false, acceptance.strategy);
    if (!again || !*again) {
      drop_ahead();
      if (again) warn_not_reproduced(acceptance);
      return std::nullopt;
    }
  }
  record_accepted(acceptance, candidate);
  // Work went on from the candidate while it was re-verified: its result is the search's.
  if (hand_over(candidate)) return std::nullopt;
  return candidate;
}

std::optional<SearchState> SearchRunner::run_step(const Strategy& strategy, const SearchState& state,
                                                  std::size_t granularity) {
  return run_proposals(strategy.name, state, granularity,
                       [&](const CandidateSink& offer) { strategy.propose(state, granularity, offer); });
}

std::optional<SearchState> SearchRunner::run_proposals(std::string_view name, const SearchState& state,
                                                       std::size_t granularity,
                                                       const std::function<void(const CandidateSink&)>& propose,
                                                  const SearchState* reading) {
  if (stopped() || !await_eager(reading != nullptr ? *reading : state)) return std::nullopt;
  Acceptance acceptance{name, granularity, state.document.graph.size()};
  std::optional<SearchState> accepted = first_failing_of(acceptance, state, propose, true);
  if (!accepted) {
    drop_ahead();
    return std::nullopt;
  }
  // Work went ahead of the candidate: it re-verified the candidate (warning when it passed) and
  // searched on from it, so its result is the search's.
  if (hand_over(state)) return std::nullopt;
  return confirm(acceptance, std::move(*accepted));
}

bool SearchRunner::await_eager(const SearchState& state) {
  state.eager->ask(state.document);
  while (!state.eager->answered(state.document.graph)) {
    if (!may_query(0)) return false;
    evaluator_.wait_until(std::chrono::steady_clock::now() + lookahead_interval);
  }
  if (state.eager->failed()) {
    halt(StopReason::error, make_error(ErrorKind::io, "the original's eager values could not be had"));
    return false;
  }
  return true;
}

std::optional<SearchState> SearchRunner::first_failing(std::string_view name, const SearchState& state,
                                                       std::size_t granularity,
                                                       const std::function<void(const CandidateSink&)>& propose) {
  if (stopped()) return std::nullopt;
  return first_failing_of(Acceptance{name, granularity, state.document.graph.size()}, state, propose, false);
}

std::optional<SearchState> SearchRunner::first_failing_of(const Acceptance& step, const SearchState& state,
                                                          const std::function<void(const CandidateSink&)>& propose,
                                                          bool ahead) {
  events_.emit(SearchEvent{progress(step.strategy, step.granularity, step.nodes_before), std::nullopt, {}});
  StepWindow window(*this, state, step, ahead);
  propose([&](SearchState candidate) { return window.offer(std::move(candidate)); });
  std::optional<std::size_t> index = window.finish();
  if (!index) return std::nullopt;
  return window.take(*index);
}

}  // namespace minifyd::search
