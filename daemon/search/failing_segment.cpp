// Computations alone, and rounds of segments alone on loads of their inputs down to computations alone.
#include "daemon/search/failing_segment.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "daemon/search/computations_alone.h"
#include "daemon/search/node_isolation.h"

namespace minifyd::search {
namespace {

// The names of `state`'s computations, in graph order.
std::vector<std::string> computations(const SearchState& state) {
  std::vector<std::string> names;
  for (const Node* node : state.document.graph.nodes())
    if (node->op() == OpCode::call_function) names.push_back(node->name());
  return names;
}

}  // namespace

std::optional<SearchState> try_kernel_computations_alone(SearchRunner& runner, const SearchState& state,
                                                         const std::vector<std::string>& kernel_nodes) {
  std::vector<std::string> names;
  for (const std::string& name : computations(state))
    if (std::find(kernel_nodes.begin(), kernel_nodes.end(), name) != kernel_nodes.end()) names.push_back(name);
  if (names.empty() || names.size() >= min_cut_points_to_bisect) return std::nullopt;
  return first_failing_computation(runner, state, names);
}

SearchState narrow_to_failing_segment(SearchRunner& runner, SearchState state) {
  if (runner.parallelism() < min_parallelism_to_split || computations(state).size() < min_cut_points_to_bisect)
    return state;
  return narrow_failing_segment(runner, std::move(state));
}

SearchState narrow_failing_segment(SearchRunner& runner, SearchState segment) {
  for (;;) {
    std::vector<std::string> names = computations(segment);
    std::size_t count = runner.parallelism();
    if (names.size() < 2 || runner.stopped()) return segment;
    if (names.size() <= count) {
      auto alone = first_failing_computation(runner, segment, names);
      return alone ? std::move(*alone) : std::move(segment);
    }
    auto next = runner.run_proposals(failing_segment_step, segment, count, [&](const CandidateSink& offer) {
      for (std::size_t i = 0; i < count; ++i) {
        std::vector<std::string> part(names.begin() + static_cast<std::ptrdiff_t>(i * names.size() / count),
                                      names.begin() + static_cast<std::ptrdiff_t>((i + 1) * names.size() / count));
        auto alone = isolate_nodes(segment, part);
        if (alone && !offer(std::move(*alone))) return;
      }
    });
    if (!next) return segment;
    segment = std::move(*next);
  }
}

}  // namespace minifyd::search
