// A graph as a graphviz digraph (graph.dot beside a minimized graph), for looking at it.
#pragma once

#include <string>

#include "common/graph_document.h"

namespace minifyd {

// One DOT node per graph node, in graph order: placeholders and get_attr constants as boxes
// labelled with their tensor's dtype and shape, call_function nodes with their operator, and the
// output. One edge per node reference in args and kwargs (nested lists included), from the
// referenced node to its user; when a user references more than one value, each edge is labelled
// with where the reference sits ("0", "1[2]", "alpha"), so operand order stays readable.
// Deterministic: the same document always gives the same text.
std::string graph_to_dot(const GraphDocument& document);

}  // namespace minifyd
