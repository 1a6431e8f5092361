// Speculation past slow candidates. A hanging candidate costs the whole timeout, and on a chain of
// hangs the sequential search pays it once per accepted reduction and once more per re-verification.
// When the verdict that decides the search's next move (the runner's front, search/lookahead.h) is
// slow to come, a lineage (search/lineage.h) carries the search on, on its own thread, as if that
// candidate had failed; its own slow candidates start lineages in turn, so the hangs of a whole
// chain run at once. When the candidate does fail, the parent adopts the lineage (its result is the
// search's); when it passes, the lineage is stopped and its queries were wasted. Either way the
// result is the sequential search's. Off unless SpeculationOptions::after is set.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>

#include "daemon/search/candidate_evaluator.h"
#include "daemon/search/clock.h"
#include "daemon/search/lineage.h"
#include "daemon/search/lookahead.h"
#include "daemon/search/search_options.h"
#include "daemon/search/search_status.h"
#include "daemon/search/verdict_cache.h"

namespace minifyd::search {

// One runner's lookahead: at most one lineage ahead of its front. Each lineage's runner has one of
// its own. Called on its runner's thread only.
class Speculation final : public Lookahead {
 public:
  // For the search's own runner, which evaluates with `evaluator`. `options`, `cache` and `clock`
  // serve every lineage of the search and outlive this object, which joins its lineage (and so,
  // in turn, theirs).
  Speculation(const SearchOptions& options, CandidateEvaluator& evaluator, VerdictCache& cache, const Clock& clock);
  Speculation(const Speculation&) = delete;
  Speculation& operator=(const Speculation&) = delete;

  void front_pending(const SearchRunner& runner, const Front& front) override;
  SearchCounters front_passed() override;
  std::optional<SearchOutcome> front_failed(const SearchRunner& runner, EventSink& events) override;

 private:
  // What every lineage of one search shares.
  struct Search {
    Search(const SearchOptions& search_options, VerdictCache& verdicts, const Clock& search_clock)
        : options(search_options), cache(verdicts), clock(search_clock) {}
    const SearchOptions& options;
    VerdictCache& cache;
    const Clock& clock;
    std::atomic<std::size_t> live{0};  // lineages running
  };

  // A lineage runner's, evaluating with `evaluator`.
  Speculation(std::shared_ptr<Search> search, CandidateEvaluator& evaluator);
  // Whether a front submitted then has been pending long enough to go ahead of.
  bool due(std::chrono::steady_clock::time_point submitted) const;

  std::shared_ptr<Search> search_;
  CandidateEvaluator& evaluator_;  // the runner's
  bool shareable_ = true;          // false once the evaluator refused to be shared: it never will
  std::unique_ptr<Lineage> ahead_;
  SearchCounters at_spawn_;  // the runner's counters when the lineage ahead started
};

}  // namespace minifyd::search
