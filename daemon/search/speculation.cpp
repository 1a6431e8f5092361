// Lineages started ahead of slow fronts, stopped when the front passes, adopted when it fails.
#include "daemon/search/speculation.h"

#include <string>
#include <utility>

#include "common/log.h"
#include "daemon/search/driver.h"
#include "daemon/search/search_runner.h"

namespace minifyd::search {
namespace {

// Counts a lineage as running from its start until its thread is done with it.
class LiveLineage {
 public:
  explicit LiveLineage(std::shared_ptr<std::atomic<std::size_t>> live) : live_(std::move(live)) { ++*live_; }
  ~LiveLineage() { --*live_; }
  LiveLineage(const LiveLineage&) = delete;
  LiveLineage& operator=(const LiveLineage&) = delete;

 private:
  std::shared_ptr<std::atomic<std::size_t>> live_;
};

// A lineage's search, on its own runner: the acceptance it went ahead of confirmed first (when it
// went ahead of a step's candidate), then the search after that step; past the sanity check, the
// search from the original; past a re-verification, the search after the step that accepted it.
SearchOutcome search_ahead(SearchRunner& runner, const SearchOptions& options, SearchState state,
                           std::optional<Acceptance> accepted, bool original, std::string_view accepted_by) {
  if (accepted) {
    std::optional<SearchState> confirmed = runner.confirm(*accepted, std::move(state), true);
    if (runner.stopped()) return runner.outcome(std::nullopt);
    if (!confirmed) {
      SearchOutcome rejected = runner.outcome(std::nullopt);
      rejected.rejected = true;
      return rejected;
    }
    return search_after(runner, options, std::move(*confirmed), accepted->strategy);
  }
  return original ? search_from_original(runner, options, std::move(state))
                  : search_after(runner, options, std::move(state), accepted_by);
}

}  // namespace

Speculation::Speculation(const SearchOptions& options, CandidateEvaluator& evaluator, VerdictCache& cache,
                         const Clock& clock)
    : Speculation(std::make_shared<Search>(options, cache, clock), evaluator) {}

Speculation::Speculation(std::shared_ptr<Search> search, CandidateEvaluator& evaluator)
    : search_(std::move(search)), evaluator_(evaluator) {}

bool Speculation::due(std::chrono::steady_clock::time_point submitted) const {
  const SpeculationOptions& speculation = search_->options.speculation;
  std::chrono::steady_clock::duration pending = std::chrono::steady_clock::now() - submitted;
  return speculation.after && pending >= *speculation.after &&
         (speculation.regardless_of_passes || pending >= evaluator_.slow_beyond());
}

void Speculation::front_pending(const SearchRunner& runner, const Front& front) {
  if (ahead_ || !shareable_ || runner.stopped()) return;
  if (!front.known_slow && !due(front.submitted)) return;
  if (search_->live >= search_->options.speculation.max_lineages) return;
  std::shared_ptr<CandidateEvaluator> evaluator = evaluator_.share_with_thread();
  if (!evaluator) {
    shareable_ = false;
    return;
  }
  SearchRunner::Continuation start = runner.continuation();
  ++start.counters.lineages;  // the lineage counts itself, whether it is adopted or stopped
  at_spawn_ = runner.counters();
  auto state = std::make_shared<SearchState>(clone_state(front.state));
  std::optional<Acceptance> accepted = front.acceptance;
  bool original = front.original;
  std::string_view accepted_by = front.accepted_by;  // a step's name: static, as strategies' are
  auto counted = std::make_shared<LiveLineage>(std::shared_ptr<std::atomic<std::size_t>>(search_, &search_->live));
  log::debug("speculating past a slow verdict: lineage from a state of " +
             std::to_string(front.state.document.graph.size()) + " nodes");
  std::shared_ptr<Search> search = search_;
  ahead_ = std::make_unique<Lineage>(
      [search, evaluator, state, accepted, original, accepted_by, start, counted](const std::atomic<bool>& stop,
                                                                                  EventRelay& events) {
        RunnerOptions options = search->options.runner;
        options.interrupt = &stop;  // a stopped lineage ends as an interrupted search does
        SearchRunner lineage_runner(*evaluator, search->cache, search->clock, options, start, events);
        Speculation lookahead(search, *evaluator);
        lineage_runner.look_ahead_with(lookahead);
        return search_ahead(lineage_runner, search->options, std::move(*state), accepted, original, accepted_by);
      },
      // front_failed() waits for it on this evaluator.
      [&parent = evaluator_] { parent.wake(); });
}

SearchCounters Speculation::front_passed() {
  if (!ahead_) return {};
  ahead_->stop();
  SearchCounters own = ahead_->join().counters - at_spawn_;
  ahead_.reset();
  // Its queries and its descendants' were wasted.
  SearchCounters cost;
  cost.lineages = own.lineages;
  cost.speculative_queries = own.queries + own.speculative_queries;
  return cost;
}

std::optional<SearchOutcome> Speculation::front_failed(const SearchRunner& runner, EventSink& events) {
  if (!ahead_) return std::nullopt;
  EventQueue adopted;
  ahead_->events().forward_to(adopted);
  auto pass_on = [&] {
    for (SearchEvent& event : adopted.take_all()) events.emit(std::move(event));
  };
  while (!ahead_->done()) {
    // The search's own evaluator drives the workers for every lineage: keep it turning.
    evaluator_.wait_until(std::chrono::steady_clock::now() + lookahead_interval);
    pass_on();
    if (runner.interrupted()) ahead_->stop();
  }
  SearchOutcome outcome = ahead_->join();
  pass_on();
  ahead_.reset();
  outcome.counters += runner.counters() - at_spawn_;  // the runner's own work meanwhile
  return outcome;
}

}  // namespace minifyd::search
