// Remove outputs (fx_minifier's remove_outputs).
#include "daemon/search/strategies/remove_outputs.h"

#include <algorithm>
#include <limits>
#include <unordered_map>

namespace minifyd::search {

void propose_remove_outputs(const SearchState& state, std::size_t granularity, const CandidateSink& offer) {
  const Graph& graph = state.document.graph;
  const Node* output = graph.output();
  if (output == nullptr || output->args().size() != 1 || !output->args()[0].is<ListValue>()) return;
  const ListValue& returned = output->args()[0].as<ListValue>();
  if (returned.items.size() <= 1) return;
  std::size_t chunk = std::max<std::size_t>(1, granularity / 2);

  std::unordered_map<const Node*, std::size_t> position;
  for (const Node* node : graph.nodes()) position.emplace(node, position.size());
  auto key = [&](const Value& value) {
    return value.is<NodeRef>() ? position.at(value.as<NodeRef>().node) : std::numeric_limits<std::size_t>::max();
  };
  std::vector<Value> sorted = returned.items;
  std::stable_sort(sorted.begin(), sorted.end(), [&](const Value& a, const Value& b) { return key(a) < key(b); });

  for (std::size_t start = 0; start < sorted.size(); start += chunk) {
    SearchState candidate = clone_state(state);
    Graph& copy = candidate.document.graph;
    auto to_copy = [&](Node* node) { return copy.find(node->name()); };
    ListValue kept{{}, returned.is_tuple};
    for (std::size_t i = 0; i < sorted.size(); ++i)
      if (i < start || i >= start + chunk) kept.items.push_back(map_node_refs(sorted[i], to_copy));
    copy.set_args(copy.output(), {std::move(kept)});
    if (!offer(std::move(candidate))) return;
  }
}

}  // namespace minifyd::search
