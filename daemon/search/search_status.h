// Why a search stopped, and what it counted on the way.
#pragma once

#include <cstddef>

namespace minifyd::search {

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
  std::size_t lineages = 0;             // speculative lineages started (search/lineage.h)
  std::size_t speculative_queries = 0;  // made by lineages that were stopped: work the search did not use

  SearchCounters& operator+=(const SearchCounters& other);
  SearchCounters operator-(const SearchCounters& other) const;
};

}  // namespace minifyd::search
