// Callbacks through which the search reports progress and accepted reductions.
#pragma once

#include <cstddef>
#include <string_view>

#include "daemon/search/search_state.h"

namespace minifyd::search {

struct SearchProgress {
  std::string_view strategy;  // empty outside a strategy (sanity and final checks)
  std::size_t granularity = 0;
  std::size_t nodes = 0;        // of the current state
  std::size_t start_nodes = 0;  // of the original
  std::size_t queries = 0;
  std::size_t cache_hits = 0;
};

// Called on the search's thread, synchronously: keep handlers short. Default: ignore.
class SearchObserver {
 public:
  virtual ~SearchObserver() = default;
  // Before each strategy runs.
  virtual void on_progress(const SearchProgress&) {}
  // After a reduction was accepted: `state` is the new current state (e.g. to checkpoint it).
  virtual void on_accepted(const SearchState& /*state*/, const SearchProgress&) {}
  // A candidate that failed once passed when re-verified (a flaky failure): the search goes on
  // without it. `progress` names the strategy and granularity that proposed it.
  virtual void on_not_reproduced(const SearchProgress&) {}
};

}  // namespace minifyd::search
