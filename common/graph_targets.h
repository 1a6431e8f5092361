// What a graph may call: the one rule (worker/python/minifyd/graph_targets.json, compiled in here and
// read by the Python side's graph_format.py), applied by Graph::lint and so by `minify validate`,
// every command and job that loads a graph, and the C++ worker. docs/security.md explains it.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace minifyd {

// Why a graph may not call this operator name ("ns::op" or "ns::op.overload"), or nothing when the
// rule lets it. Whether the operator exists is the worker's PyTorch's to say, not the rule's.
std::optional<std::string> operator_refusal(std::string_view target);

}  // namespace minifyd
