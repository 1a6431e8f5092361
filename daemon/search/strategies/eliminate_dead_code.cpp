// Eliminate dead code (fx_minifier's eliminate_dead_code strategy).
#include "daemon/search/strategies/eliminate_dead_code.h"

#include "daemon/search/dead_code.h"

namespace minifyd::search {

void propose_eliminate_dead_code(const SearchState& state, std::size_t, const CandidateSink& offer) {
  SearchState candidate = clone_state(state);
  if (eliminate_dead_code(candidate)) offer(std::move(candidate));
}

}  // namespace minifyd::search
