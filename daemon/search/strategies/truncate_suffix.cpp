// Truncate suffix (fx_minifier's remove_suffix).
#include "daemon/search/strategies/truncate_suffix.h"

#include "daemon/search/node_copy.h"

namespace minifyd::search {

namespace {

// truncated_at() with the state's nodes and input bindings found once for all of its cuts.
SearchState cut_after(const SearchState& state, const std::vector<Node*>& nodes, const InputBindings& bindings,
                      std::size_t index) {
  SearchState candidate{GraphDocument{}, {}, state.eager};
  NodeMap env;
  for (std::size_t i = 0; i <= index; ++i) {
    copy_node(candidate.document.graph, *nodes[i], env);
    if (is_load(state, *nodes[i])) candidate.loads.insert(nodes[i]->name());
  }
  // SymInt inputs after the cut stay: shapes of the kept inputs may name them.
  for (std::size_t i = index + 1; i < nodes.size(); ++i)
    if (is_symint_input(bindings, nodes[i]->name())) copy_node(candidate.document.graph, *nodes[i], env);
  Node* kept = env.at(nodes[index]);
  (void)candidate.document.graph.create_node(OpCode::output, candidate.document.graph.unique_name("output"), "",
                                             {ListValue{{NodeRef{kept}}, true}});
  candidate.document.storages = state.document.storages;
  candidate.document.constants = state.document.constants;
  rebind_inputs(candidate.document, bindings);
  return candidate;
}

}  // namespace

bool is_cut_point(const SearchState& state, const Node& node) {
  return node.op() == OpCode::placeholder ? is_load(state, node) : node.op() != OpCode::output;
}

SearchState truncated_at(const SearchState& state, std::size_t index) {
  return cut_after(state, state.document.graph.nodes(), input_bindings(state.document), index);
}

void propose_truncate_suffix(const SearchState& state, std::size_t granularity, const CandidateSink& offer) {
  std::vector<Node*> nodes = state.document.graph.nodes();
  auto bindings = input_bindings(state.document);
  for (std::size_t index = 0; index < nodes.size(); ++index) {
    if (!is_cut_point(state, *nodes[index]) || index % granularity != 0 || index % (2 * granularity) == 0) continue;
    if (!offer(cut_after(state, nodes, bindings, index))) return;
  }
}

}  // namespace minifyd::search
