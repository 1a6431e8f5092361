// A graph lowered to a torch::jit::Graph for the torchscript backend: one aten node per call_function
// node, created by its exact operator overload; placeholders become the graph's inputs, constants
// its stack's values.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include <torch/csrc/jit/ir/ir.h>

#include "common/graph.h"
#include "worker/backend.h"

namespace minifyd::worker {

// A lowered graph and how to feed it: run() copies `stack` (the constants in place) and puts
// placeholder k's input at position placeholder_positions[k].
struct LoweredGraph {
  std::shared_ptr<torch::jit::Graph> graph = std::make_shared<torch::jit::Graph>();
  std::vector<c10::IValue> stack;
  std::vector<std::size_t> placeholder_positions;
};

// Fills `lowered` from `graph`, or says which node could not be lowered and why.
std::optional<NodeFailure> lower_to_jit(const Graph& graph, const ConstantMap& constants, const BackendContext& context,
                                        LoweredGraph& lowered);

}  // namespace minifyd::worker
