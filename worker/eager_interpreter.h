// The eager backend: runs a graph node by node through the c10 dispatcher, binding each node's
// args and kwargs to its operator's schema. The reference every compiled result is compared with.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <ATen/core/ivalue.h>

#include "common/graph.h"
#include "worker/eager_options.h"
#include "worker/node_failure.h"

namespace minifyd::worker {

struct EagerResult {
  // The output node's value, nested as written: tensor, tuple, list, None or a number.
  c10::IValue output;
  std::optional<NodeFailure> failure;

  bool ok() const { return !failure; }
};

// get_attr target -> tensor.
using ConstantMap = std::unordered_map<std::string, at::Tensor>;
// Sees each placeholder, get_attr and call_function node's value as soon as it exists.
using NodeCallback = std::function<void(const Node& node, const c10::IValue& value)>;

// Preparation resolves every operator and binds every argument once, so that run() only moves
// values and calls kernels. No exception escapes: failures are NodeFailure values.
class EagerInterpreter {
 public:
  // Borrows the graph, which must outlive the interpreter and not change while it exists.
  explicit EagerInterpreter(const Graph& graph, EagerOptions options = {});
  ~EagerInterpreter();
  EagerInterpreter(EagerInterpreter&&) noexcept;
  EagerInterpreter& operator=(EagerInterpreter&&) noexcept;

  // Why the graph cannot run, or nullptr. run() returns this failure.
  const NodeFailure* preparation_failure() const;

  // inputs: one value per placeholder, in order. run() changes nothing in the interpreter, so
  // concurrent runs are safe.
  EagerResult run(const std::vector<c10::IValue>& inputs, const ConstantMap& constants,
                  const NodeCallback& on_node = {}) const;
  EagerResult run(const std::vector<at::Tensor>& inputs, const ConstantMap& constants,
                  const NodeCallback& on_node = {}) const;

 private:
  struct Program;
  std::unique_ptr<Program> program_;
};

}  // namespace minifyd::worker
