// The step runner: a window of candidates in sequential order over an asynchronous evaluator.
#include "daemon/search/search_runner.h"

#include <algorithm>
#include <unordered_map>
#include <vector>

#include "common/canonical_hash.h"
#include "common/log.h"

namespace minifyd::search {
namespace {

// One candidate of a step, at its place in proposal order.
struct Slot {
  SearchState state;
  std::string hash;
  std::optional<bool> fails;            // known verdict
  std::optional<std::size_t> same_as;   // an earlier slot of this step with the same hash
};

Candidate candidate_of(const std::shared_ptr<Slot>& slot) {
  // Aliasing pointer: the evaluator may hold the document as long as it likes without a copy.
  return Candidate{std::shared_ptr<const GraphDocument>(slot, &slot->state.document), slot->hash};
}

}  // namespace

const char* to_string(StopReason reason) {
  switch (reason) {
    case StopReason::finished: return "finished";
    case StopReason::original_passes: return "the original does not fail";
    case StopReason::query_budget: return "query budget spent";
    case StopReason::time_budget: return "time budget spent";
    case StopReason::interrupted: return "interrupted";
    case StopReason::error: return "error";
  }
  return "unknown";
}

// The candidates of one step. Slots before front_ are known to pass; the first known failure at
// front_ is the accepted one, exactly as if they had been evaluated one after another.
class SearchRunner::StepWindow {
 public:
  StepWindow(SearchRunner& runner, const SearchState& current)
      : runner_(runner), current_(current),
        parallelism_(std::max<std::size_t>(1, runner.evaluator_.parallelism())) {}
  StepWindow(const StepWindow&) = delete;
  StepWindow& operator=(const StepWindow&) = delete;
  // Callbacks capture `this`: nothing may stay in flight once the window is gone.
  ~StepWindow() { cancel(); }

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
    while (!accepted_ && !runner_.stopped() && undecided() >= parallelism_) {
      runner_.evaluator_.wait();
      settle();
    }
    // Once some candidate is known to fail, later ones can no longer win.
    return !accepted_ && !runner_.stopped() && !failure_known_;
  }

  // After the strategy has proposed everything: waits for what decides the step, cancels the rest.
  std::optional<std::size_t> finish() {
    if (!runner_.stopped()) flush();
    settle();
    while (!accepted_ && !runner_.stopped() && front_ < slots_.size()) {
      runner_.evaluator_.wait();
      settle();
    }
    cancel();
    return accepted_;
  }

  // The accepted slot's evaluation is over, so nothing else reads its state any more.
  SearchState take(std::size_t index) { return std::move(slots_[index]->state); }

 private:
  std::size_t undecided() const { return slots_.size() - front_; }

  std::optional<bool> known(std::size_t index) const {
    const Slot& slot = *slots_[index];
    return slot.same_as ? known(*slot.same_as) : slot.fails;
  }

  void settle() {
    while (!accepted_ && front_ < slots_.size()) {
      std::optional<bool> fails = known(front_);
      if (!fails) return;
      if (*fails) accepted_ = front_;
      else ++front_;
    }
  }

  void flush() {
    if (to_submit_.empty()) return;
    std::vector<std::size_t> indices;
    indices.swap(to_submit_);
    std::vector<Candidate> batch;
    for (std::size_t index : indices) batch.push_back(candidate_of(slots_[index]));
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
  std::size_t parallelism_;
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
    : evaluator_(evaluator), cache_(cache), clock_(clock), options_(options),
      start_nodes_(start_nodes), observer_(observer), started_(clock.now()) {}

void SearchRunner::halt(StopReason reason, std::optional<Error> error) {
  if (stop_) return;
  stop_ = reason;
  error_ = std::move(error);
}

bool SearchRunner::may_query(std::size_t pending) {
  if (stopped()) return false;
  if (options_.interrupt != nullptr && options_.interrupt->load())
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

std::optional<bool> SearchRunner::check(const SearchState& state) {
  if (!may_query(1)) return std::nullopt;
  auto slot = std::make_shared<Slot>();
  slot->hash = canonical_hash(state.document);
  slot->state.document = clone_document(state.document);
  std::optional<EvaluationResult> result;
  ++counters_.queries;
  evaluator_.evaluate({candidate_of(slot)}, [&](std::size_t, EvaluationResult r) { result = std::move(r); });
  while (!result) evaluator_.wait();
  if (!*result) {
    halt(StopReason::error, result->error());
    return std::nullopt;
  }
  cache_.store(slot->hash, **result);
  return **result;
}

std::optional<SearchState> SearchRunner::run_step(const Strategy& strategy, const SearchState& state,
                                                  std::size_t granularity) {
  if (stopped()) return std::nullopt;
  std::size_t nodes = state.document.graph.size();
  if (observer_ != nullptr) observer_->on_progress(progress(strategy.name, granularity, nodes));
  std::optional<SearchState> accepted;
  {
    StepWindow window(*this, state);
    strategy.propose(state, granularity, [&](SearchState candidate) { return window.offer(std::move(candidate)); });
    if (std::optional<std::size_t> index = window.finish()) accepted = window.take(*index);
  }
  if (!accepted) return std::nullopt;
  if (options_.reverify) {
    std::optional<bool> again = check(*accepted);
    if (!again) return std::nullopt;
    if (!*again) {
      log::warn("strategy " + std::string(strategy.name) +
                ": candidate failed once but passed when re-verified; not applying it");
      return std::nullopt;
    }
  }
  ++counters_.accepted;
  log::info("strategy " + std::string(strategy.name) + " (G: " + std::to_string(granularity) + "): " +
            std::to_string(nodes) + " -> " + std::to_string(accepted->document.graph.size()) + " nodes, " +
            std::to_string(input_count(*accepted)) + " inputs");
  if (observer_ != nullptr)
    observer_->on_accepted(*accepted, progress(strategy.name, granularity, accepted->document.graph.size()));
  return accepted;
}

}  // namespace minifyd::search
