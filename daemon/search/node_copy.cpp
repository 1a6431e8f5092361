// Copying one node into another graph.
#include "daemon/search/node_copy.h"

namespace minifyd::search {

Node* copy_node(Graph& into, const Node& node, NodeMap& env) {
  auto remap = [&](Node* referenced) { return env.at(referenced); };
  std::vector<Value> args;
  for (const Value& arg : node.args()) args.push_back(map_node_refs(arg, remap));
  Kwargs kwargs;
  for (const auto& [key, value] : node.kwargs()) kwargs.emplace_back(key, map_node_refs(value, remap));
  // Names are unique in the source graph and copied at most once, so this cannot fail.
  Node* copy = *into.create_node(node.op(), node.name(), node.target(), std::move(args), std::move(kwargs));
  env[&node] = copy;
  return copy;
}

}  // namespace minifyd::search
