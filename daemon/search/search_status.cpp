// Stop reasons as the report and the log name them, and counter arithmetic for lineages' figures.
#include "daemon/search/search_status.h"

namespace minifyd::search {

const char* to_string(StopReason reason) {
  switch (reason) {
    case StopReason::finished: return "finished";
    case StopReason::original_passes: return "the original does not fail";
    case StopReason::unconfirmed: return "the original's failure is not confirmed";
    case StopReason::query_budget: return "query budget spent";
    case StopReason::time_budget: return "time budget spent";
    case StopReason::interrupted: return "interrupted";
    case StopReason::error: return "error";
  }
  return "unknown";
}

bool nothing_to_minimize(StopReason reason) {
  return reason == StopReason::original_passes || reason == StopReason::unconfirmed;
}

SearchCounters& SearchCounters::operator+=(const SearchCounters& other) {
  queries += other.queries;
  cache_hits += other.cache_hits;
  invalid_candidates += other.invalid_candidates;
  unproductive_candidates += other.unproductive_candidates;
  accepted += other.accepted;
  lineages += other.lineages;
  speculative_queries += other.speculative_queries;
  return *this;
}

SearchCounters SearchCounters::operator-(const SearchCounters& other) const {
  SearchCounters difference;
  difference.queries = queries - other.queries;
  difference.cache_hits = cache_hits - other.cache_hits;
  difference.invalid_candidates = invalid_candidates - other.invalid_candidates;
  difference.unproductive_candidates = unproductive_candidates - other.unproductive_candidates;
  difference.accepted = accepted - other.accepted;
  difference.lineages = lineages - other.lineages;
  difference.speculative_queries = speculative_queries - other.speculative_queries;
  return difference;
}

}  // namespace minifyd::search
