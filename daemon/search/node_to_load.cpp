// Choosing the nodes to replace (with the is_tuple recursion), then rebuilding the graph once.
#include "daemon/search/node_to_load.h"

#include <algorithm>
#include <unordered_set>

#include "daemon/search/node_copy.h"

namespace minifyd::search {
namespace {

// The protocol's propagate reports stored tensors only, so "is_tuple" is read off the graph: a
// value without a stored tensor that getitem reads is a tuple (a multi-output operator).
bool is_tuple_valued(const Node& node) {
  return std::any_of(node.users().begin(), node.users().end(), [](const Node* user) {
    return user->op() == OpCode::call_function && user->target() == getitem_target;
  });
}

// Mirrors _convert_node_to_placeholder's cases and its return value; `chosen` plays the part of
// the in-place edits the seed makes (a node already chosen reads as a placeholder).
bool choose(const SearchState& state, const Node& node, const std::set<std::string, std::less<>>& kept,
            std::unordered_set<const Node*>& chosen) {
  if (node.op() == OpCode::output || node.op() == OpCode::placeholder || chosen.count(&node) != 0 ||
      kept.count(node.name()) != 0)
    return false;
  if (state.eager->find(node.name()) != nullptr) {
    chosen.insert(&node);
    return true;
  }
  if (!is_tuple_valued(node)) return false;
  bool replaced = false;
  for (const Node* user : node.users()) replaced = choose(state, *user, kept, chosen) || replaced;
  return replaced;
}

}  // namespace

bool convert_to_loads(SearchState& state, std::size_t begin, std::size_t end,
                      const std::set<std::string, std::less<>>& kept) {
  std::vector<Node*> nodes = state.document.graph.nodes();
  std::unordered_set<const Node*> chosen;
  bool replaced = false;
  for (std::size_t i = begin; i < end && i < nodes.size(); ++i)
    replaced = choose(state, *nodes[i], kept, chosen) || replaced;
  if (!replaced) return false;

  GraphDocument& document = state.document;
  auto bindings = input_bindings(document);
  Graph graph;
  NodeMap env;
  for (const Node* node : nodes) {
    if (chosen.count(node) == 0) {
      copy_node(graph, *node, env);
      continue;
    }
    env[node] = *graph.create_node(OpCode::placeholder, node->name(), "");
    const EagerValue& value = *state.eager->find(node->name());
    TensorMeta tensor = value.tensor;
    // Fed as data, as the seed's load_tensor does: a leaf that required grad would make in-place
    // operators on it fail (a different failure from the one being chased).
    tensor.requires_grad = false;
    // Its own storage even when another has equal bytes: distinct values must not alias.
    tensor.storage = document.storages.size();
    document.storages.push_back(value.storage);
    bindings[node->name()] = tensor;
    state.loads.insert(node->name());
  }
  document.graph = std::move(graph);
  rebind_inputs(document, bindings);
  return true;
}

}  // namespace minifyd::search
