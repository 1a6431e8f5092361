// Backend plugins in process: the loader's refusals, and the faulty plugin's non-fatal faults
// (its crashes and hangs are tested through real workers in tests/e2e and tests/cli).
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "worker/backends/plugin_backend.h"
#include "worker/eager_interpreter.h"

#include "tests/support/catch_torch.h"
#include "tests/support/graph_builder.h"

using namespace minifyd;
using worker::Backend;
using worker::BackendOptions;
using worker::CompileResult;
using worker::EagerInterpreter;
using worker::EagerResult;
using worker::FailureKind;

using namespace minifyd::test;

namespace {


std::unique_ptr<Backend> faulty_with(const BackendOptions& options) {
  auto backend = worker::load_plugin_backend(MINIFYD_FAULTY_PLUGIN, options);
  INFO((backend ? std::string() : backend.error().message));
  REQUIRE(backend.has_value());
  return std::move(*backend);
}

std::unique_ptr<Backend> faulty(const std::string& fault, const std::string& op = "aten::relu") {
  return faulty_with({{"fault", fault}, {"op", op}});
}

// The refusal of a plugin created with `options`.
std::string refusal(const BackendOptions& options) {
  auto backend = worker::load_plugin_backend(MINIFYD_FAULTY_PLUGIN, options);
  REQUIRE_FALSE(backend.has_value());
  return backend.error().message;
}

CompileResult compile(Backend& backend, const Graph& graph) {
  static const worker::ConstantMap no_constants;
  return backend.compile(graph, no_constants, worker::BackendContext{});
}

// Compiles and runs; the compile must succeed, the run may fail.
EagerResult run(Backend& backend, const Graph& graph, const std::vector<at::Tensor>& inputs) {
  CompileResult compiled = compile(backend, graph);
  INFO((compiled.failure ? compiled.failure->to_string() : std::string()));
  REQUIRE(compiled.compiled);
  return compiled.compiled->run(std::vector<c10::IValue>(inputs.begin(), inputs.end()));
}

c10::IValue eager(const Graph& graph, const std::vector<at::Tensor>& inputs, bool fp64 = false) {
  worker::EagerOptions options;
  options.fp64_reference = fp64;
  EagerResult result = EagerInterpreter(graph, options).run(inputs, {});
  REQUIRE(result.ok());
  return result.output;
}

bool equal_outputs(const c10::IValue& a, const c10::IValue& b) {
  if (a.isTensor() && b.isTensor()) return a.toTensor().equal(b.toTensor());
  if (!a.isTuple() || !b.isTuple()) return false;
  const auto& left = a.toTupleRef().elements();
  const auto& right = b.toTupleRef().elements();
  if (left.size() != right.size()) return false;
  for (std::size_t i = 0; i < left.size(); ++i)
    if (!equal_outputs(left[i], right[i])) return false;
  return true;
}

at::Tensor sample() { return at::linspace(-2, 2, 12, at::kFloat).reshape({3, 4}); }

// out = (relu(x), sin(x))
Graph relu_and_sin() {
  Graph graph;
  Node* x = placeholder(graph, "x");
  Node* relu = call(graph, "relu", "aten::relu", {ref(x)});
  Node* sin = call(graph, "sin", "aten::sin", {ref(x)});
  output(graph, tuple({ref(relu), ref(sin)}));
  return graph;
}

// out = sigmoid(x) * 2
Graph sigmoid_only() {
  Graph graph;
  Node* x = placeholder(graph, "x");
  Node* sigmoid = call(graph, "sigmoid", "aten::sigmoid", {ref(x)});
  output(graph, ref(call(graph, "mul", "aten::mul.Tensor", {ref(sigmoid), 2})));
  return graph;
}

// out = sin(x) * cos(x)
Graph relu_free() {
  Graph graph;
  Node* x = placeholder(graph, "x");
  Node* sin = call(graph, "sin", "aten::sin", {ref(x)});
  Node* cos = call(graph, "cos", "aten::cos", {ref(x)});
  output(graph, ref(call(graph, "mul", "aten::mul.Tensor", {ref(sin), ref(cos)})));
  return graph;
}

}  // namespace

TEST_CASE("the faulty plugin computes like eager where its operators are absent", "[plugin]") {
  Graph graph = relu_free();
  for (const char* fault : {"throw", "wrong", "compile-error", "output-is-input"}) {
    INFO(fault);
    auto backend = faulty(fault);
    EagerResult result = run(*backend, graph, {sample()});
    REQUIRE(result.ok());
    CHECK(equal_outputs(result.output, eager(graph, {sample()})));
  }
}

TEST_CASE("throw fails with an exception naming the node and the operator", "[plugin]") {
  auto backend = faulty("throw");
  EagerResult result = run(*backend, relu_and_sin(), {sample()});
  REQUIRE_FALSE(result.ok());
  CHECK(result.failure->kind == FailureKind::exception);
  CHECK(result.failure->node == "relu");
  CHECK(result.failure->exception_type == "std::runtime_error");
  CHECK(result.failure->message.find("aten::relu") != std::string::npos);
}

TEST_CASE("wrong perturbs the chosen operators' results, one or several", "[plugin]") {
  Graph graph = relu_and_sin();
  c10::IValue reference = eager(graph, {sample()});
  const auto& expected = reference.toTupleRef().elements();

  EagerResult relu_only = run(*faulty("wrong"), graph, {sample()});
  REQUIRE(relu_only.ok());
  const auto& got = relu_only.output.toTupleRef().elements();
  CHECK(got[0].toTensor().equal(expected[0].toTensor() + 1));
  CHECK(got[1].toTensor().equal(expected[1].toTensor()));

  EagerResult both = run(*faulty("wrong", "aten::relu, aten::sin"), graph, {sample()});
  REQUIRE(both.ok());
  const auto& got_both = both.output.toTupleRef().elements();
  CHECK(got_both[0].toTensor().equal(expected[0].toTensor() + 1));
  CHECK(got_both[1].toTensor().equal(expected[1].toTensor() + 1));
}

TEST_CASE("fault.OPERATOR adds a fault of its own to an operator, beside the op/fault pair", "[plugin]") {
  // Crashes take the worker down and are tested through real workers (tests/cli, query.several_faults);
  // here: wrong numbers at relu and an exception at sigmoid, from one backend.
  auto backend = faulty_with({{"op", "aten::relu"}, {"fault", "wrong"}, {"fault.aten::sigmoid", "throw"}});

  EagerResult thrown = run(*backend, sigmoid_only(), {sample()});
  REQUIRE_FALSE(thrown.ok());
  CHECK(thrown.failure->node == "sigmoid");
  CHECK(thrown.failure->exception_type == "std::runtime_error");
  CHECK(thrown.failure->message.find("aten::sigmoid") != std::string::npos);

  Graph graph = relu_and_sin();
  EagerResult perturbed = run(*backend, graph, {sample()});
  REQUIRE(perturbed.ok());
  c10::IValue reference = eager(graph, {sample()});
  const auto& expected = reference.toTupleRef().elements();
  const auto& got = perturbed.output.toTupleRef().elements();
  CHECK(got[0].toTensor().equal(expected[0].toTensor() + 1));
  CHECK(got[1].toTensor().equal(expected[1].toTensor()));

  // Without the pair, fault.OPERATOR alone is enough.
  EagerResult alone = run(*faulty_with({{"fault.aten::sigmoid", "throw"}}), sigmoid_only(), {sample()});
  REQUIRE_FALSE(alone.ok());
  CHECK(alone.failure->node == "sigmoid");
}

TEST_CASE("compile-error refuses graphs holding the operator, naming its node", "[plugin]") {
  CompileResult compiled = compile(*faulty("compile-error"), relu_and_sin());
  CHECK_FALSE(compiled.compiled);
  REQUIRE(compiled.failure);
  CHECK(compiled.failure->node == "relu");
  CHECK(compiled.failure->op == "aten::relu");
  CHECK(compiled.failure->exception_type == "faulty::CompileError");
}

TEST_CASE("output-is-input refuses graphs that return a placeholder", "[plugin]") {
  Graph graph;
  Node* x = placeholder(graph, "x");
  output(graph, tuple({ref(call(graph, "sin", "aten::sin", {ref(x)})), ref(x)}));
  CompileResult compiled = compile(*faulty("output-is-input"), graph);
  CHECK_FALSE(compiled.compiled);
  REQUIRE(compiled.failure);
  CHECK(compiled.failure->exception_type == "faulty::CompileError");
  CHECK(compiled.failure->message.find("'x'") != std::string::npos);
}

TEST_CASE("precise is closer to the fp64 reference than eager, in eager's dtype", "[plugin]") {
  // (x + 1e8) - 1e8: float32 keeps none of x's digits below 8, float64 keeps them all.
  Graph graph;
  Node* x = placeholder(graph, "x");
  Node* big = call(graph, "big", "aten::add.Scalar", {ref(x), 1e8});
  output(graph, ref(call(graph, "back", "aten::sub.Scalar", {ref(big), 1e8})));
  at::Tensor input = at::linspace(0.1, 0.9, 9, at::kFloat);

  EagerResult result = run(*faulty("precise"), graph, {input});
  REQUIRE(result.ok());
  at::Tensor precise = result.output.toTensor();
  CHECK(precise.scalar_type() == at::kFloat);
  at::Tensor reference = eager(graph, {input.to(at::kDouble)}, true).toTensor();
  double precise_error = (precise.to(at::kDouble) - reference).abs().max().item<double>();
  double eager_error = (eager(graph, {input}).toTensor().to(at::kDouble) - reference).abs().max().item<double>();
  CHECK(precise_error < 1e-6);
  CHECK(eager_error > 0.05);
}

TEST_CASE("the plugin refuses unknown faults and options when created", "[plugin]") {
  auto unknown_fault = worker::load_plugin_backend(MINIFYD_FAULTY_PLUGIN, {{"fault", "melt"}});
  REQUIRE_FALSE(unknown_fault.has_value());
  CHECK(unknown_fault.error().message.find("unknown fault 'melt'") != std::string::npos);
  CHECK(unknown_fault.error().message.find(MINIFYD_FAULTY_PLUGIN) != std::string::npos);

  auto unknown_option = worker::load_plugin_backend(MINIFYD_FAULTY_PLUGIN, {{"fault", "throw"}, {"speed", "11"}});
  REQUIRE_FALSE(unknown_option.has_value());
  CHECK(unknown_option.error().message.find("unknown option 'speed'") != std::string::npos);

  auto empty_op = worker::load_plugin_backend(MINIFYD_FAULTY_PLUGIN, {{"fault", "throw"}, {"op", "aten::relu,"}});
  REQUIRE_FALSE(empty_op.has_value());
  CHECK(empty_op.error().message.find("empty operator name") != std::string::npos);
}

TEST_CASE("the plugin refuses per-operator faults it cannot apply, naming the option", "[plugin]") {
  CHECK_THAT(refusal({{"fault.aten::sigmoid", "melt"}}),
             Catch::Contains("option 'fault.aten::sigmoid': unknown fault 'melt'"));
  CHECK_THAT(refusal({{"fault.", "throw"}}), Catch::Contains("option 'fault.' has an empty operator name"));
  CHECK_THAT(refusal({{"op", "aten::relu"}}), Catch::Contains("option 'op' needs option 'fault'"));
  CHECK_THAT(refusal({}), Catch::Contains("option 'fault' or 'fault.OPERATOR' is required"));
  CHECK_THAT(refusal({{"fault", "segfault"}, {"fault.aten::relu", "throw"}}),
             Catch::Contains("operator 'aten::relu' is given two faults"));
  CHECK_THAT(refusal({{"fault", "precise"}, {"fault.aten::sigmoid", "throw"}}),
             Catch::Contains("fault 'precise' computes the whole graph"));
}

TEST_CASE("the loader refuses missing files, foreign libraries and other ABI versions, naming the path",
          "[plugin]") {
  auto missing = worker::load_plugin_backend("/nonexistent/libx.so", {});
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().message.find("'/nonexistent/libx.so'") != std::string::npos);
  CHECK(missing.error().message.find("No such file") != std::string::npos);

  auto foreign = worker::load_plugin_backend("libm.so.6", {});
  REQUIRE_FALSE(foreign.has_value());
  CHECK(foreign.error().message.find("'libm.so.6'") != std::string::npos);
  CHECK(foreign.error().message.find("no minifyd_backend_abi") != std::string::npos);

  auto mismatch = worker::load_plugin_backend(MINIFYD_WRONG_ABI_PLUGIN, {{"fault", "throw"}});
  REQUIRE_FALSE(mismatch.has_value());
  CHECK(mismatch.error().kind == ErrorKind::unsupported);
  CHECK(mismatch.error().message.find(MINIFYD_WRONG_ABI_PLUGIN) != std::string::npos);
  CHECK(mismatch.error().message.find("version 999") != std::string::npos);
  CHECK(mismatch.error().message.find("version " + std::to_string(worker::minifyd_backend_abi_version)) !=
        std::string::npos);
}

TEST_CASE("a compiled graph keeps the plugin loaded after its backend is gone", "[plugin]") {
  Graph graph = relu_and_sin();
  CompileResult compiled = compile(*faulty("wrong"), graph);  // the backend dies here
  REQUIRE(compiled.compiled);
  EagerResult result = compiled.compiled->run({c10::IValue(sample())});
  REQUIRE(result.ok());
  CHECK_FALSE(equal_outputs(result.output, eager(graph, {sample()})));
}
