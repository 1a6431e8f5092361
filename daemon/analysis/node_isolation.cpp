// The backward slice of a node over loads of its inputs.
#include "daemon/analysis/node_isolation.h"

#include <unordered_set>

#include "daemon/search/consolidate.h"
#include "daemon/search/dead_code.h"
#include "daemon/search/node_to_load.h"

namespace minifyd::analysis {
namespace {

bool reads_any(const Node& node, const std::unordered_set<const Node*>& values) {
  bool reads = false;
  auto check = [&](Node* input) { reads = reads || values.count(input) != 0; };
  for (const Value& arg : node.args()) for_each_node_ref(arg, check);
  for (const auto& [name, arg] : node.kwargs()) for_each_node_ref(arg, check);
  return reads;
}

// What `target` needs: the nodes its value depends on, and the side-effecting nodes before it
// that write to one of those (in-place operators), with what they depend on in turn.
std::unordered_set<const Node*> needed_by(const Graph& graph, const Node& target) {
  std::vector<Node*> nodes = graph.nodes();
  std::size_t end = graph.index_of(&target);
  std::unordered_set<const Node*> needed{&target};
  for (bool grew = true; grew;) {
    grew = false;
    for (std::size_t i = end + 1; i-- > 0;) {
      const Node& node = *nodes[i];
      bool wanted = needed.count(&node) != 0 || (search::has_side_effects(node) && reads_any(node, needed));
      if (!wanted) continue;
      grew = needed.insert(&node).second || grew;
      auto add = [&](Node* input) { grew = needed.insert(input).second || grew; };
      for (const Value& arg : node.args()) for_each_node_ref(arg, add);
      for (const auto& [name, arg] : node.kwargs()) for_each_node_ref(arg, add);
    }
  }
  return needed;
}

}  // namespace

Expected<GraphDocument> isolate_node(const search::SearchState& original, const std::string& name) {
  const Node* found = original.document.graph.find(name);
  if (found == nullptr || found->op() != OpCode::call_function)
    return make_error(ErrorKind::invalid_input, "the graph has no call_function node '" + name + "'");
  search::SearchState state = search::clone_state(original);
  Graph& graph = state.document.graph;
  search::convert_to_loads(state, 0, graph.index_of(graph.find(name)));
  Node* target = graph.find(name);
  // A tuple-valued node returns its parts, as its getitems read them: a graph returning a tuple
  // within the tuple is not what a compiler is given (Inductor refuses it).
  std::vector<Node*> parts;
  for (Node* user : target->users())
    if (user->op() == OpCode::call_function && user->target() == getitem_target) parts.push_back(user);
  std::vector<Value> returned;
  for (Node* value : parts.empty() ? std::vector<Node*>{target} : parts) returned.emplace_back(NodeRef{value});
  graph.set_args(graph.output(), {Value(ListValue{std::move(returned), true})});

  auto bindings = search::input_bindings(state.document);
  std::unordered_set<const Node*> needed = needed_by(graph, *target);
  needed.insert(parts.begin(), parts.end());
  std::vector<Node*> nodes = graph.nodes();
  for (auto node = nodes.rbegin(); node != nodes.rend(); ++node) {
    if ((*node)->op() == OpCode::output || needed.count(*node) != 0) continue;
    if ((*node)->op() == OpCode::placeholder && search::is_symint_input(bindings, (*node)->name())) continue;
    if (auto erased = graph.erase_node(*node); !erased) return erased.error().with_context("isolating node '" + name + "'");
  }
  search::forget_erased_loads(state);
  search::rebind_inputs(state.document, bindings);
  search::consolidate_placeholders(state);
  search::prune_unreferenced_tensors(state.document);
  return std::move(state.document);
}

}  // namespace minifyd::analysis
