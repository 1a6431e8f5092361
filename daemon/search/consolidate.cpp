// Rebuilding the graph with its inputs first.
#include "daemon/search/consolidate.h"

#include "daemon/search/node_copy.h"

namespace minifyd::search {

void consolidate_placeholders(SearchState& state) {
  GraphDocument& document = state.document;
  auto bindings = input_bindings(document);
  std::vector<Node*> nodes = document.graph.nodes();
  Graph graph;
  NodeMap env;
  bool seen_computation = false;
  for (const Node* node : nodes) {
    if (node->op() == OpCode::placeholder && !is_load(state, *node)) {
      copy_node(graph, *node, env);
    } else if (!seen_computation && is_load(state, *node)) {
      copy_node(graph, *node, env);
      state.loads.erase(node->name());
    } else {
      seen_computation = true;
    }
  }
  for (const Node* node : nodes)
    if (env.count(node) == 0) copy_node(graph, *node, env);
  document.graph = std::move(graph);
  rebind_inputs(document, bindings);
}

}  // namespace minifyd::search
