// The backend interface: compile a graph, run it on tensors. eager, torchscript and every
// plugin:PATH.so implement it; docs/backends.md documents it for plugin authors. Version
// minifyd_backend_abi_version below whenever this header changes incompatibly.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/ivalue.h>

#include "common/graph.h"
#include "common/graph_document.h"
#include "worker/eager_interpreter.h"

namespace minifyd::worker {

inline constexpr int minifyd_backend_abi_version = 2;

// --backend-opt KEY=VALUE pairs, passed through to the backend untouched.
using BackendOptions = std::map<std::string, std::string>;

// A compiled graph. run() may be called several times (warm-up, then the measured run).
class CompiledGraph {
 public:
  virtual ~CompiledGraph() = default;
  // inputs: one value per placeholder, in order. The result's output is nested like the graph's
  // output node; a failure names the node where the backend can tell, and the exception.
  virtual EagerResult run(const std::vector<c10::IValue>& inputs) = 0;
};

struct CompileResult {
  std::unique_ptr<CompiledGraph> compiled;  // set on success
  std::optional<NodeFailure> failure;       // set on failure (a compile error is a verdict too)
};

// What a backend may use from the worker: the eager interpreter, to run what it does not compile
// itself, with the worker's device mapping; and what each placeholder receives.
struct BackendContext {
  EagerOptions eager_options;
  // One per placeholder, in order: a tensor's metadata, or a SymInt input (an int at run time, which
  // SymInt arithmetic nodes such as operator.mul compute on). Empty where unknown: all tensors then.
  std::vector<GraphInput> inputs;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  // The graph and constants outlive the compiled graph.
  virtual CompileResult compile(const Graph& graph, const ConstantMap& constants,
                                const BackendContext& context) = 0;
};

}  // namespace minifyd::worker

// A plugin is a shared library exporting these two functions with C linkage. It is built against
// the same LibTorch and compiler as minify-worker, and resolves minifyd's own symbols (the graph
// IR, EagerInterpreter) from the worker executable, which exports them.
extern "C" {
// Returns minifyd_backend_abi_version as the plugin was compiled; the worker refuses a mismatch.
int minifyd_backend_abi(void);
// Creates the backend; on failure returns nullptr and sets *error. Ownership passes to the caller.
minifyd::worker::Backend* minifyd_create_backend(const minifyd::worker::BackendOptions* options,
                                                 std::string* error);
}
