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

namespace minifyd::worker {

struct EagerOptions {
  // The device that "cuda" and "cuda:N" arguments mean (a worker sees only its own GPU, as cuda:0).
  // Unset: devices are used as written.
  std::optional<at::Device> cuda_device;
  // Every floating dtype argument becomes float64, as the seeds' cast_to_fp64 does to compute an
  // fp64 reference. The caller casts floating inputs and constants itself.
  bool fp64_reference = false;
};

enum class FailureKind {
  invalid_graph,     // no output node, or a node the interpreter cannot run as written
  unknown_operator,  // the dispatcher has no such operator overload
  bad_argument,      // an argument does not bind to the schema: type, name, count, missing
  bad_input,         // run() was given inputs or constants that do not match the graph
  exception,         // the kernel (or the node callback) threw
};

const char* to_string(FailureKind kind);

struct NodeFailure {
  FailureKind kind = FailureKind::exception;
  std::string node;            // the node's name; empty for a failure of the graph as a whole
  std::string op;              // the node's target, such as "aten::mm"
  std::string argument;        // the schema argument at fault, where there is one
  std::string exception_type;  // for exceptions: "c10::Error", "c10::IndexError", "std::bad_alloc"
  std::string message;         // for exceptions, the message without the C++ backtrace

  std::string to_string() const;
};

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
