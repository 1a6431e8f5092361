// Delta debugging (fx_minifier's delta_debugging).
#include "daemon/search/strategies/delta_debugging.h"

#include "daemon/search/consolidate.h"
#include "daemon/search/dead_code.h"
#include "daemon/search/node_to_load.h"
#include "daemon/search/unused_inputs.h"

namespace minifyd::search {

void propose_delta_debugging(const SearchState& state, std::size_t granularity, const CandidateSink& offer) {
  std::size_t node_count = state.document.graph.size();
  for (std::size_t start = 0; start < node_count; start += granularity) {
    SearchState candidate = clone_state(state);
    if (!convert_to_loads(candidate, start, start + granularity)) continue;
    eliminate_dead_code(candidate);
    consolidate_placeholders(candidate);
    remove_unused_inputs(candidate);
    if (!offer(std::move(candidate))) return;
  }
}

}  // namespace minifyd::search
