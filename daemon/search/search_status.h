// Why a search stopped, what it counted on the way, and where it ended.
#pragma once

#include <cstddef>
#include <optional>

#include "common/expected.h"
#include "daemon/search/search_state.h"

namespace minifyd::search {

enum class StopReason {
  finished,
  original_passes,  // the sanity check found nothing to minimize
  unconfirmed,      // the original fails, but RunnerOptions::refuted was set (plain PyTorch does not show it)
  query_budget,
  time_budget,
  interrupted,  // RunnerOptions::interrupt was set
  error,
};
const char* to_string(StopReason reason);
// Whether a search that stopped so minimized nothing: the original passes, or its failure was not confirmed.
bool nothing_to_minimize(StopReason reason);

struct SearchCounters {
  std::size_t queries = 0;             // candidates sent to the evaluator, re-checks included
  std::size_t cache_hits = 0;          // candidates answered by the cache (or by an identical one in flight)
  std::size_t invalid_candidates = 0;  // refused by lint()/document_problems(), never evaluated
  std::size_t unproductive_candidates = 0;  // no progress, never evaluated
  std::size_t accepted = 0;
  std::size_t lineages = 0;             // speculative lineages started (search/speculation.h)
  std::size_t speculative_queries = 0;  // made by lineages that were stopped: work the search did not use

  SearchCounters& operator+=(const SearchCounters& other);
  SearchCounters operator-(const SearchCounters& other) const;
};

// How the search from some state on ended: a runner's, or a lineage's for its parent.
struct SearchOutcome {
  std::optional<SearchState> best;  // the smallest state it confirmed; unset when it confirmed none
  StopReason stop{};
  std::optional<Error> error;
  SearchCounters counters;
  // A lineage that began by re-verifying the candidate it went ahead of saw it pass: the candidate
  // does not fail again, so the parent goes on as if it had been rejected.
  bool rejected = false;
};

}  // namespace minifyd::search
