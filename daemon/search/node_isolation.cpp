// The backward slice of some nodes over loads of their inputs.
#include "daemon/search/node_isolation.h"

#include <algorithm>
#include <unordered_set>

#include "daemon/search/consolidate.h"
#include "daemon/search/dead_code.h"
#include "daemon/search/node_to_load.h"

namespace minifyd::search {
namespace {

bool reads_any(const Node& node, const std::unordered_set<const Node*>& values) {
  bool reads = false;
  auto check = [&](Node* input) { reads = reads || values.count(input) != 0; };
  for (const Value& arg : node.args()) for_each_node_ref(arg, check);
  for (const auto& [name, arg] : node.kwargs()) for_each_node_ref(arg, check);
  return reads;
}

// What `returned` needs: the nodes their values depend on, and the side-effecting nodes before the
// last of them that write to one of those (in-place operators), with what they depend on in turn.
std::unordered_set<const Node*> needed_by(const Graph& graph, const std::vector<Node*>& returned) {
  std::vector<Node*> nodes = graph.nodes();
  std::size_t end = 0;
  for (const Node* node : returned) end = std::max(end, graph.index_of(node));
  std::unordered_set<const Node*> needed(returned.begin(), returned.end());
  for (bool grew = true; grew;) {
    grew = false;
    for (std::size_t i = end + 1; i-- > 0;) {
      const Node& node = *nodes[i];
      bool wanted = needed.count(&node) != 0 || (has_side_effects(node) && reads_any(node, needed));
      if (!wanted) continue;
      grew = needed.insert(&node).second || grew;
      auto add = [&](Node* input) { grew = needed.insert(input).second || grew; };
      for (const Value& arg : node.args()) for_each_node_ref(arg, add);
      for (const auto& [name, arg] : node.kwargs()) for_each_node_ref(arg, add);
    }
  }
  return needed;
}

// The values the isolated graph returns: each target no other target reads, a tuple-valued one by
// its getitems (a graph returning a tuple within the tuple is not what a compiler is given: Inductor
// refuses it).
std::vector<Node*> returned_values(const Graph& graph, const std::set<std::string, std::less<>>& targets) {
  std::vector<Node*> returned;
  for (Node* node : graph.nodes()) {
    if (targets.count(node->name()) == 0) continue;
    const auto& users = node->users();
    if (std::any_of(users.begin(), users.end(), [&](const Node* user) { return targets.count(user->name()) != 0; }))
      continue;
    std::vector<Node*> parts;
    for (Node* user : users)
      if (user->op() == OpCode::call_function && user->target() == getitem_target) parts.push_back(user);
    if (parts.empty()) parts.push_back(node);
    returned.insert(returned.end(), parts.begin(), parts.end());
  }
  return returned;
}

}  // namespace

Expected<SearchState> isolate_nodes(const SearchState& original, const std::vector<std::string>& names) {
  std::set<std::string, std::less<>> targets;
  std::size_t last = 0;
  std::vector<Node*> nodes = original.document.graph.nodes();
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i]->op() != OpCode::call_function || std::find(names.begin(), names.end(), nodes[i]->name()) == names.end())
      continue;
    targets.insert(nodes[i]->name());
    last = i;
  }
  if (targets.empty()) {
    std::string listed;
    for (const std::string& name : names) listed += (listed.empty() ? "'" : ", '") + name + "'";
    return make_error(ErrorKind::invalid_input, "the graph has no call_function node " + listed);
  }
  // The targets' getitems stay computed too, so that a tuple-valued target returns its parts.
  std::set<std::string, std::less<>> computed = targets;
  for (const Node* node : nodes)
    if (targets.count(node->name()) != 0)
      for (const Node* user : node->users())
        if (user->op() == OpCode::call_function && user->target() == getitem_target) computed.insert(user->name());
  SearchState state = clone_state(original);
  convert_to_loads(state, 0, last, computed);
  Graph& graph = state.document.graph;
  std::vector<Node*> returned = returned_values(graph, targets);
  std::vector<Value> values;
  for (Node* value : returned) values.emplace_back(NodeRef{value});
  graph.set_args(graph.output(), {Value(ListValue{std::move(values), true})});

  auto bindings = input_bindings(state.document);
  std::unordered_set<const Node*> needed = needed_by(graph, returned);
  std::vector<Node*> kept_or_not = graph.nodes();
  for (auto node = kept_or_not.rbegin(); node != kept_or_not.rend(); ++node) {
    if ((*node)->op() == OpCode::output || needed.count(*node) != 0) continue;
    if ((*node)->op() == OpCode::placeholder && is_symint_input(bindings, (*node)->name())) continue;
    if (auto erased = graph.erase_node(*node); !erased)
      return erased.error().with_context("isolating node '" + *targets.begin() + "'");
  }
  forget_erased_loads(state);
  rebind_inputs(state.document, bindings);
  consolidate_placeholders(state);
  prune_unreferenced_tensors(state.document);
  return state;
}

}  // namespace minifyd::search
