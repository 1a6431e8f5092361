// Remove unused inputs (fx_minifier's remove_unused_inputs_checked).
#include "daemon/search/strategies/remove_unused_inputs.h"

#include "daemon/search/unused_inputs.h"

namespace minifyd::search {

void propose_remove_unused_inputs(const SearchState& state, std::size_t, const CandidateSink& offer) {
  SearchState candidate = clone_state(state);
  if (remove_unused_inputs(candidate)) offer(std::move(candidate));
}

}  // namespace minifyd::search
