// Computations alone, last first.
#include "daemon/search/computations_alone.h"

#include "daemon/search/node_isolation.h"

namespace minifyd::search {

std::optional<SearchState> first_failing_computation(SearchRunner& runner, const SearchState& state,
                                                      const std::vector<std::string>& names,
                                                      const SearchState* reading) {
  return runner.run_proposals(
      failing_node_step, state, names.size(),
      [&](const CandidateSink& offer) {
        for (auto name = names.rbegin(); name != names.rend(); ++name) {
          auto alone = isolate_nodes(state, {*name});
          if (alone && !offer(std::move(*alone))) return;
        }
      },
      reading);
}

}  // namespace minifyd::search
