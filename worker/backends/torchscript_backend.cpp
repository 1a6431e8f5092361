// The torchscript backend: a graph lowered to a torch::jit::Graph (torchscript_lowering.h) and run by the
// profiling graph executor.
#include "worker/backends/torchscript_backend.h"

#include <sstream>
#include <typeinfo>
#include <unordered_map>
#include <utility>

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/util/Type.h>
#include <torch/csrc/jit/frontend/source_range.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/passes/tensorexpr_fuser.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/csrc/jit/tensorexpr/kernel.h>

#include "worker/backends/torchscript_lowering.h"
#include "worker/graph_values.h"
#include "worker/torch_compat.h"

namespace torch::jit {
// The fusers' CPU switch. Its header (torch/csrc/jit/codegen/fuser/interface.h) is missing from
// Debian's libtorch-dev; LibTorch 1.13 and 2.x both export the functions with these declarations.
TORCH_API void overrideCanFuseOnCPU(bool value);
TORCH_API bool canFuseOnCPU();
}  // namespace torch::jit

namespace minifyd::worker {
namespace {

namespace jit = torch::jit;

// CPU fusion, which PyTorch leaves off, is a backend option: the fuser decides while the executor
// optimises, that is in the warm-up runs, so each graph sets it for its own runs (one worker may
// serve backends with and without it). Without LLVM (Debian's build) NNC runs fused CPU kernels in
// its IR interpreter, orders of magnitude slower than eager, rather than refusing them.
class CpuFusionScope {
 public:
  explicit CpuFusionScope(bool enabled)
      : can_fuse_(jit::canFuseOnCPU()), must_use_llvm_(jit::tensorexpr::getTEMustUseLLVMOnCPU()) {
    jit::overrideCanFuseOnCPU(enabled);
    if (enabled) jit::tensorexpr::getTEMustUseLLVMOnCPU() = false;
  }
  ~CpuFusionScope() {
    jit::overrideCanFuseOnCPU(can_fuse_);
    jit::tensorexpr::getTEMustUseLLVMOnCPU() = must_use_llvm_;
  }
  CpuFusionScope(const CpuFusionScope&) = delete;
  CpuFusionScope& operator=(const CpuFusionScope&) = delete;

 private:
  bool can_fuse_;
  bool must_use_llvm_;
};

struct TorchScriptOptions {
  std::size_t warmup = 0;  // the profiled runs, then the run that builds the optimised plan
  bool cpu_fusion = false;
};

// A copy with the same sizes, strides, dtype, device and requires_grad, so the profiling executor
// records the same types, while in-place ops in warm-up runs leave the real inputs alone.
c10::IValue warmup_copy(const c10::IValue& value) {
  if (!value.isTensor()) return value;
  const at::Tensor& tensor = value.toTensor();
  // Overlapping strides (expand) cannot be written to; clone makes them dense.
  at::Tensor copy = tensor.is_non_overlapping_and_dense()
                        ? at::empty_strided(tensor.sizes(), tensor.strides(), tensor.options()).copy_(tensor)
                        : tensor.clone();
  copy.set_requires_grad(tensor.requires_grad());
  return copy;
}

class TorchScriptCompiledGraph : public CompiledGraph {
 public:
  TorchScriptCompiledGraph(const Graph& graph, LoweredGraph lowered, const TorchScriptOptions& options)
      : graph_(graph), lowered_(std::move(lowered)), executor_(lowered_.graph, "minifyd_graph"),
        warmup_left_(options.warmup), cpu_fusion_(options.cpu_fusion) {}

  EagerResult run(const std::vector<c10::IValue>& inputs) override {
    EagerResult result;
    std::size_t placeholders = lowered_.placeholder_positions.size();
    if (inputs.size() != placeholders) {
      NodeFailure failure;
      failure.kind = FailureKind::bad_input;
      failure.message = "the graph has " + std::to_string(placeholders) + " placeholders but " +
                        std::to_string(inputs.size()) + " inputs were given";
      result.failure = std::move(failure);
      return result;
    }
    CpuFusionScope fusion(cpu_fusion_);
    try {
      // The profiling executor profiles the first runs, then optimises and fuses on the next:
      // the warm-up runs make the measured run execute the optimised plan.
      for (; warmup_left_ > 0; --warmup_left_) {
        jit::Stack stack = make_stack(inputs);
        for (c10::IValue& value : stack) value = warmup_copy(value);
        executor_.run(stack);
      }
      jit::Stack stack = make_stack(inputs);
      executor_.run(stack);
      result.output = std::move(stack.front());
    } catch (const std::exception& error) {
      result.failure = exception_failure(failing_node(error.what()), &error);
    } catch (...) {
      result.failure = exception_failure(nullptr, nullptr);
    }
    return result;
  }

 private:
  // The interpreter rethrows a kernel's error with a traceback whose last frame quotes the failing
  // node's source (its name, see torchscript_lowering.cpp) above a "<--- HERE" marker line.
  const Node* failing_node(const std::string& message) const {
    std::size_t marker = message.rfind(" <--- HERE");
    std::size_t marker_line = marker == std::string::npos ? marker : message.rfind('\n', marker);
    if (marker_line == std::string::npos || marker_line == 0) return nullptr;
    std::size_t source_line = message.rfind('\n', marker_line - 1);
    std::size_t start = source_line == std::string::npos ? 0 : source_line + 1;
    std::string name = message.substr(start, marker_line - start);
    name.erase(0, name.find_first_not_of(' '));
    name.erase(name.find_last_not_of(' ') + 1);
    return graph_.find(name);
  }

  jit::Stack make_stack(const std::vector<c10::IValue>& inputs) const {
    jit::Stack stack = lowered_.stack;
    for (std::size_t i = 0; i < inputs.size(); ++i) stack[lowered_.placeholder_positions[i]] = inputs[i];
    return stack;
  }

  const Graph& graph_;
  LoweredGraph lowered_;
  jit::GraphExecutor executor_;
  std::size_t warmup_left_;
  bool cpu_fusion_;
};

// What a scripted function gets in PyTorch: the profiling executor, optimisation on, the NNC fuser
// (which fuses on a GPU). Process-wide switches; the worker runs nothing else through TorchScript.
void enable_optimising_executor() {
  jit::getExecutorMode() = true;
  jit::getProfilingMode() = true;
  jit::setGraphExecutorOptimize(true);
  jit::setTensorExprFuserEnabled(true);
}

class TorchScriptBackend : public Backend {
 public:
  explicit TorchScriptBackend(TorchScriptOptions options) : options_(options) { enable_optimising_executor(); }

  std::string name() const override { return "torchscript"; }

  CompileResult compile(const Graph& graph, const ConstantMap& constants, const BackendContext& context) override {
    try {
      LoweredGraph lowered;
      if (auto failure = lower_to_jit(graph, constants, context, lowered)) return {nullptr, std::move(failure)};
      return {std::make_unique<TorchScriptCompiledGraph>(graph, std::move(lowered), options_), std::nullopt};
    } catch (const std::exception& error) {
      return {nullptr, exception_failure(nullptr, &error)};
    } catch (...) {
      return {nullptr, exception_failure(nullptr, nullptr)};
    }
  }

 private:
  TorchScriptOptions options_;
};

Expected<std::size_t> parse_count(const std::string& name, const std::string& text) {
  std::size_t end = 0;
  unsigned long long count = 0;
  try {
    count = std::stoull(text, &end);
  } catch (const std::exception&) {
    end = 0;
  }
  if (text.empty() || end != text.size() || text.front() == '-')
    return make_error(ErrorKind::invalid_input,
                      "torchscript backend option " + name + ": expects a count, got '" + text + "'");
  return static_cast<std::size_t>(count);
}

Expected<bool> parse_switch(const std::string& name, const std::string& text) {
  if (text == "1" || text == "true") return true;
  if (text == "0" || text == "false") return false;
  return make_error(ErrorKind::invalid_input,
                    "torchscript backend option " + name + ": expects 1 or 0, got '" + text + "'");
}

}  // namespace

Expected<std::unique_ptr<Backend>> make_torchscript_backend(const BackendOptions& options) {
  TorchScriptOptions parsed;
  parsed.warmup = jit::getNumProfiledRuns() + 1;
  for (const auto& [name, value] : options) {
    if (name == "warmup") {
      auto count = parse_count(name, value);
      if (!count) return count.error();
      parsed.warmup = *count;
    } else if (name == "cpu_fusion") {
      auto enabled = parse_switch(name, value);
      if (!enabled) return enabled.error();
      parsed.cpu_fusion = *enabled;
    } else {
      return make_error(ErrorKind::invalid_input,
                        "torchscript backend: unknown option '" + name + "' (warmup, cpu_fusion)");
    }
  }
  return std::unique_ptr<Backend>(std::make_unique<TorchScriptBackend>(parsed));
}

}  // namespace minifyd::worker
