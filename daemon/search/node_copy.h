// torch.fx's Graph.node_copy: rebuilding a graph node by node, references mapped to the new nodes.
#pragma once

#include <unordered_map>

#include "common/graph.h"

namespace minifyd::search {

// Old node -> its copy in the graph being built.
using NodeMap = std::unordered_map<const Node*, Node*>;

// Appends a copy of `node` (same op, name and target) to `into` with every reference mapped through
// `env`, and records the copy in `env`. Every node `node` references must already be in `env`, and
// its name must be free in `into` (true when copying nodes of one graph into a fresh one).
Node* copy_node(Graph& into, const Node& node, NodeMap& env);

}  // namespace minifyd::search
