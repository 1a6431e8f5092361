// Consolidate inputs (fx_minifier's consolidate_inputs).
#include "daemon/search/strategies/consolidate_inputs.h"

#include "daemon/search/consolidate.h"

namespace minifyd::search {

void propose_consolidate_inputs(const SearchState& state, std::size_t, const CandidateSink& offer) {
  SearchState candidate = clone_state(state);
  consolidate_placeholders(candidate);
  if (input_count(candidate) > input_count(state)) offer(std::move(candidate));
}

}  // namespace minifyd::search
