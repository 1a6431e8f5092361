// The eager backend: compile = prepare the interpreter.
#include "worker/backends/eager_backend.h"

namespace minifyd::worker {
namespace {

class EagerCompiledGraph : public CompiledGraph {
 public:
  EagerCompiledGraph(const Graph& graph, const ConstantMap& constants, const EagerOptions& options)
      : interpreter_(graph, options), constants_(constants) {}
  const NodeFailure* preparation_failure() const { return interpreter_.preparation_failure(); }
  EagerResult run(const std::vector<c10::IValue>& inputs) override { return interpreter_.run(inputs, constants_); }

 private:
  EagerInterpreter interpreter_;
  const ConstantMap& constants_;
};

class EagerBackend : public Backend {
 public:
  std::string name() const override { return "eager"; }
  CompileResult compile(const Graph& graph, const ConstantMap& constants, const BackendContext& context) override {
    auto compiled = std::make_unique<EagerCompiledGraph>(graph, constants, context.eager_options);
    if (const NodeFailure* failure = compiled->preparation_failure()) return {nullptr, *failure};
    return {std::move(compiled), std::nullopt};
  }
};

}  // namespace

std::unique_ptr<Backend> make_eager_backend() { return std::make_unique<EagerBackend>(); }

}  // namespace minifyd::worker
