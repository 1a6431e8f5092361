// The one interface every reduction strategy implements: propose candidates, never run them.
#pragma once

#include <cstddef>
#include <functional>
#include <string_view>

#include "daemon/search/search_state.h"

namespace minifyd::search {

// Receives candidates in the order a sequential search would try them. Returns false when the
// strategy should stop proposing (a candidate was accepted, or the search is out of budget).
using CandidateSink = std::function<bool(SearchState candidate)>;

// Proposes the candidates derived from `state` at `granularity`, each passed to `offer`, stopping
// as soon as `offer` returns false. `state` is valid and stays untouched. A candidate need not be
// valid nor make progress: the runner checks both before anything runs it. Pure: the same state
// and granularity give the same candidates; thread-compatible.
using ProposeCandidates = void (*)(const SearchState& state, std::size_t granularity,
                                   const CandidateSink& offer);

// When the driver runs a strategy (fx_minifier's try_granularity and while-True loop).
enum class StrategyRole {
  outputs,       // first at every granularity while outputs outnumber half the nodes; last resort
  non_granular,  // only at the top granularity of a round
  granular,      // at every granularity
};

struct Strategy {
  std::string_view name;  // as --strategies spells it
  StrategyRole role;
  ProposeCandidates propose;
  std::string_view summary;  // one line for --list-strategies
};

}  // namespace minifyd::search
