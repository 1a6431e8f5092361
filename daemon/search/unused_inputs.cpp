// Dropping unread inputs.
#include "daemon/search/unused_inputs.h"

namespace minifyd::search {

bool remove_unused_inputs(SearchState& state) {
  Graph& graph = state.document.graph;
  auto bindings = input_bindings(state.document);
  bool changed = false;
  for (Node* node : graph.placeholders()) {
    if (!node->users().empty() || is_load(state, *node) || is_symint_input(bindings, node->name())) continue;
    (void)graph.erase_node(node);  // without users, erase cannot be refused
    changed = true;
  }
  if (changed) rebind_inputs(state.document, bindings);
  return changed;
}

}  // namespace minifyd::search
