// The step runner: a window of candidates in sequential order over an asynchronous evaluator, and
// the lineages that search ahead of slow verdicts.
#include "daemon/search/search_runner.h"

#include <algorithm>
#include <utility>
#include <unordered_map>
#include <vector>

#include "common/canonical_hash.h"
#include "common/log.h"

namespace minifyd::search {
namespace {

// How often a waiting runner with speculation looks up from the evaluator (lineage due, interrupt).
constexpr std::chrono::milliseconds wait_slice{5};

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

// Counts a lineage as running from its start until its thread is done with it.
class LiveLineage {
 public:
  explicit LiveLineage(Speculation& speculation) : speculation_(speculation) { ++speculation_.live; }
  ~LiveLineage() { --speculation_.live; }
  LiveLineage(const LiveLineage&) = delete;
  LiveLineage& operator=(const LiveLineage&) = delete;

 private:
  Speculation& speculation_;
};

}  // namespace

// The candidates of one step. Slots before front_ are known to pass; the first known failure at
// front_ is the accepted one, exactly as if they had been evaluated one after another. While the
// front slot is slow, a lineage may search on as if it fails.
class SearchRunner::StepWindow {
 public:
  StepWindow(SearchRunner& runner, const SearchState& current, Acceptance acceptance)
      : runner_(runner), current_(current), acceptance_(acceptance),
        parallelism_(std::max<std::size_t>(1, runner.evaluator_.parallelism())) {}
  StepWindow(const StepWindow&) = delete;
  StepWindow& operator=(const StepWindow&) = delete;
  // Callbacks capture `this`: nothing may stay in flight once the window is gone.
  ~StepWindow() {
    cancel();
    runner_.discard(ahead_);
  }

  // The CandidateSink handed to the strategy.
  bool offer(SearchState candidate) {
    if (accepted_ || runner_.stopped()) return false;
    prune_unreferenced_tensors(candidate.document);
    if (!document_problems(candidate.document).empty()) {
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
  // The lineage that went ahead of the accepted slot, if one did.
  Ahead take_ahead() { return std::exchange(ahead_, Ahead{}); }

 private:
  std::size_t undecided() const { return slots_.size() - front_; }

  const Slot& evaluated(std::size_t index) const {
    const Slot& slot = *slots_[index];
    return slot.same_as ? evaluated(*slot.same_as) : slot;
  }

  void wait() {
    runner_.await([this] { look_ahead(); });
    settle();
  }

  void settle() {
    while (!accepted_ && front_ < slots_.size()) {
      std::optional<bool> fails = evaluated(front_).fails;
      if (!fails) break;
      if (*fails) accepted_ = front_;
      else ++front_;
    }
    // The slot it went ahead of passed: it guessed wrong.
    if (ahead_ && ahead_slot_ < front_) runner_.discard(ahead_);
  }

  // The front slot decides the step; while its verdict is slow, search on as if it fails.
  void look_ahead() {
    if (ahead_ || accepted_ || front_ >= slots_.size()) return;
    const Slot& front = evaluated(front_);
    if (front.fails || !front.submitted || !runner_.due(*front.submitted)) return;
    ahead_ = runner_.spawn(slots_[front_]->state, acceptance_);
    ahead_slot_ = front_;
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
  std::vector<std::shared_ptr<Slot>> slots_;
  std::unordered_map<std::string, std::size_t> first_with_hash_;
  std::vector<std::size_t> to_submit_;  // fresh candidates not yet handed to the evaluator
  std::size_t in_flight_ = 0;
  std::size_t front_ = 0;
  std::optional<std::size_t> accepted_;
  bool failure_known_ = false;
  Ahead ahead_;
  std::size_t ahead_slot_ = 0;
};

SearchRunner::SearchRunner(CandidateEvaluator& evaluator, VerdictCache& cache, const Clock& clock,
                           RunnerOptions options, std::size_t start_nodes, SearchObserver* observer)
    : evaluator_(evaluator), cache_(cache), clock_(clock), options_(options),
      start_nodes_(start_nodes), observer_(observer), started_(clock.now()) {}

SearchRunner::SearchRunner(const Seed& seed, CandidateEvaluator& evaluator, VerdictCache& cache, const Clock& clock,
                           const std::atomic<bool>& stop, EventRelay& events)
    : evaluator_(evaluator), cache_(cache), clock_(clock), options_(seed.options), start_nodes_(seed.start_nodes),
      relay_(&events), started_(seed.started), counters_(seed.counters), speculation_(seed.speculation) {
  options_.interrupt = &stop;
}

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

void SearchRunner::await(const std::function<void()>& look_ahead) {
  if (!speculation_) return evaluator_.wait();
  while (!evaluator_.wait_until(std::chrono::steady_clock::now() + wait_slice)) {
    if (interrupted()) return halt(StopReason::interrupted);
    look_ahead();
  }
}

bool SearchRunner::due(std::chrono::steady_clock::time_point submitted) const {
  if (!speculation_ || !options_.speculate_after || stopped()) return false;
  std::chrono::steady_clock::duration pending = std::chrono::steady_clock::now() - submitted;
  return pending >= *options_.speculate_after && pending >= evaluator_.slow_beyond();
}

SearchRunner::Ahead SearchRunner::spawn(const SearchState& from, std::optional<Acceptance> accepted) {
  if (!speculation_ || speculation_->live >= options_.max_lineages) return {};
  std::shared_ptr<CandidateEvaluator> evaluator = evaluator_.share_with_thread();
  if (!evaluator) {
    speculation_.reset();  // this evaluator never will
    return {};
  }
  ++counters_.lineages;
  Seed seed{options_, start_nodes_, started_, counters_, speculation_};
  auto state = std::make_shared<SearchState>(clone_state(from));
  VerdictCache& cache = cache_;
  const Clock& clock = clock_;
  auto counted = std::make_shared<LiveLineage>(*speculation_);
  log::debug("speculating past a slow verdict: lineage from a state of " +
             std::to_string(from.document.graph.size()) + " nodes");
  auto lineage = std::make_shared<Lineage>(
      [seed, evaluator, state, accepted, &cache, &clock, counted](const std::atomic<bool>& stop, EventRelay& events) {
        SearchRunner runner(seed, *evaluator, cache, clock, stop, events);
        return seed.speculation->continue_search(runner, std::move(*state), accepted);
      });
  return Ahead{std::move(lineage), counters_};
}

void SearchRunner::discard(Ahead& ahead) {
  if (!ahead) return;
  ahead.lineage->stop();
  LineageOutcome outcome = ahead.lineage->join();
  SearchCounters own = outcome.counters - ahead.at_spawn;
  counters_.lineages += own.lineages;
  counters_.speculative_queries += own.queries + own.speculative_queries;
  ahead = Ahead{};
}

void SearchRunner::adopt(Ahead& ahead, const SearchState& current) {
  ahead.lineage->events().forward_to(lineage_events_);
  while (!ahead.lineage->done()) {
    // The root runner's evaluator drives the workers for every lineage: keep it turning.
    evaluator_.wait_until(std::chrono::steady_clock::now() + wait_slice);
    pass_on_lineage_events();
    if (interrupted()) ahead.lineage->stop();
  }
  LineageOutcome outcome = ahead.lineage->join();
  pass_on_lineage_events();
  SearchCounters since = counters_ - ahead.at_spawn;  // this runner's own work meanwhile
  counters_ = outcome.counters;
  counters_ += since;
  ahead = Ahead{};
  if (outcome.rejected) return;
  halt(outcome.stop, std::move(outcome.error));
  adopted_best_ = outcome.best ? std::move(outcome.best) : clone_state(current);
}

void SearchRunner::emit(SearchEvent event) {
  if (relay_ != nullptr) return relay_->emit(std::move(event));
  if (event.warning) {
    log::warn(event.log_line);
    if (observer_ != nullptr) observer_->on_not_reproduced(event.progress);
    return;
  }
  if (!event.accepted) {
    if (observer_ != nullptr) observer_->on_progress(event.progress);
    return;
  }
  log::info(event.log_line);
  if (observer_ != nullptr) observer_->on_accepted(*event.accepted, event.progress);
}

void SearchRunner::pass_on_lineage_events() {
  for (SearchEvent& event : lineage_events_.take_all()) emit(std::move(event));
}

void SearchRunner::record_accepted(const Acceptance& acceptance, const SearchState& state) {
  ++counters_.accepted;
  std::size_t nodes = state.document.graph.size();
  emit(SearchEvent{progress(acceptance.strategy, acceptance.granularity, nodes), clone_state(state),
                   "strategy " + std::string(acceptance.strategy) + " (G: " + std::to_string(acceptance.granularity) +
                       "): " + std::to_string(acceptance.nodes_before) + " -> " + std::to_string(nodes) +
                       " nodes, " + std::to_string(input_count(state)) + " inputs"});
}

void SearchRunner::warn_not_reproduced(const Acceptance& acceptance) {
  SearchEvent event{progress(acceptance.strategy, acceptance.granularity, acceptance.nodes_before), std::nullopt,
                    "strategy " + std::string(acceptance.strategy) +
                        ": candidate failed once but passed when re-verified; not applying it",
                    true};
  emit(std::move(event));
}

LineageOutcome SearchRunner::outcome(std::optional<SearchState> best) {
  LineageOutcome outcome;
  outcome.best = adopted() ? std::move(adopted_best_) : std::move(best);
  outcome.stop = stop_reason();
  outcome.error = error_;
  outcome.counters = counters_;
  return outcome;
}

std::optional<bool> SearchRunner::evaluate_fresh(const SearchState& state, Ahead* ahead, bool known_slow) {
  if (!may_query(1)) return std::nullopt;
  auto slot = std::make_shared<Slot>();
  slot->hash = canonical_hash(state.document);
  slot->state.document = clone_document(state.document);
  std::optional<EvaluationResult> result;
  ++counters_.queries;
  std::chrono::steady_clock::time_point submitted = std::chrono::steady_clock::now();
  evaluator_.evaluate({candidate_of(slot)}, [&](std::size_t, EvaluationResult r) { result = std::move(r); });
  if (ahead != nullptr && known_slow) *ahead = spawn(state, std::nullopt);
  while (!result && !stopped()) await([&] {
    if (ahead != nullptr && !*ahead && due(submitted)) *ahead = spawn(state, std::nullopt);
  });
  if (!result) {
    evaluator_.cancel_pending();
    return std::nullopt;
  }
  if (!*result) {
    halt(StopReason::error, result->error());
    return std::nullopt;
  }
  cache_.store(slot->hash, **result);
  return **result;
}

std::optional<bool> SearchRunner::check(const SearchState& state) { return evaluate_fresh(state, nullptr, false); }

std::optional<bool> SearchRunner::check_then_continue(const SearchState& state, const std::function<void()>& on_fails,
                                                      bool known_slow) {
  Ahead ahead;
  std::optional<bool> fails = evaluate_fresh(state, &ahead, known_slow);
  if (fails && *fails) {
    on_fails();
    if (ahead) adopt(ahead, state);
  }
  discard(ahead);
  return fails;
}

std::optional<SearchState> SearchRunner::confirm(const Acceptance& acceptance, SearchState candidate,
                                                 bool known_slow) {
  if (options_.reverify) {
    std::optional<bool> again =
        check_then_continue(candidate, [&] { record_accepted(acceptance, candidate); }, known_slow);
    if (!again) return std::nullopt;
    if (!*again) {
      warn_not_reproduced(acceptance);
      return std::nullopt;
    }
  } else {
    record_accepted(acceptance, candidate);
  }
  if (adopted()) return std::nullopt;
  return candidate;
}

std::optional<SearchState> SearchRunner::run_step(const Strategy& strategy, const SearchState& state,
                                                  std::size_t granularity) {
  if (stopped()) return std::nullopt;
  std::size_t nodes = state.document.graph.size();
  emit(SearchEvent{progress(strategy.name, granularity, nodes), std::nullopt, {}});
  Acceptance acceptance{strategy.name, granularity, nodes};
  std::optional<SearchState> accepted;
  Ahead ahead;
  {
    StepWindow window(*this, state, acceptance);
    strategy.propose(state, granularity, [&](SearchState candidate) { return window.offer(std::move(candidate)); });
    if (std::optional<std::size_t> index = window.finish()) {
      accepted = window.take(*index);
      ahead = window.take_ahead();
    }
  }
  if (!accepted) return std::nullopt;
  // The lineage re-verified the candidate (warning when it passed) and searched on from it: its
  // result is the search's.
  if (ahead) {
    adopt(ahead, state);
    return std::nullopt;
  }
  return confirm(acceptance, std::move(*accepted));
}

}  // namespace minifyd::search
