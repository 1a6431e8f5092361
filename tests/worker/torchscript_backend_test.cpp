// The torchscript backend against the eager interpreter: lowering of every argument kind, multi-
// output ops, fusion, failures as values, and the cost of a warm run.
#include <chrono>
#include <functional>
#include <iostream>
#include <numeric>

#include <ATen/ATen.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/runtime/graph_executor.h>

#include "worker/backends/torchscript_backend.h"
#include "worker/eager_interpreter.h"

#include "tests/support/catch_torch.h"
#include "tests/support/graph_builder.h"

using namespace minifyd;
using worker::FailureKind;
using worker::NodeFailure;

using namespace minifyd::test;

namespace {


// 1, 2, 3, ... in the given shape: distinct values, so a wrong element shows.
at::Tensor sample(std::vector<std::int64_t> shape) {
  std::int64_t count = std::accumulate(shape.begin(), shape.end(), std::int64_t{1}, std::multiplies<>());
  return at::arange(1, 1 + count, at::kFloat).reshape(shape);
}

std::unique_ptr<worker::Backend> torchscript(const worker::BackendOptions& options = {}) {
  auto backend = worker::make_torchscript_backend(options);
  REQUIRE(backend.has_value());
  return std::move(*backend);
}

// Compiles and runs the graph with the torchscript backend.
worker::EagerResult run_torchscript(const Graph& graph, const std::vector<at::Tensor>& inputs,
                                    const worker::ConstantMap& constants = {}) {
  auto compiled = torchscript()->compile(graph, constants, {});
  if (compiled.failure) return {c10::IValue(), compiled.failure};
  return compiled.compiled->run(std::vector<c10::IValue>(inputs.begin(), inputs.end()));
}

NodeFailure failure_of(const Graph& graph, const std::vector<at::Tensor>& inputs) {
  auto result = run_torchscript(graph, inputs);
  REQUIRE_FALSE(result.ok());
  return *result.failure;
}

// Same nesting, and tensors equal (exact) or allclose, with the same dtype.
void check_same(const c10::IValue& expected, const c10::IValue& actual, bool exact) {
  INFO("expected " << expected.tagKind() << ", got " << actual.tagKind());
  if (expected.isTensor()) {
    REQUIRE(actual.isTensor());
    const at::Tensor& want = expected.toTensor();
    const at::Tensor& got = actual.toTensor();
    CHECK(got.scalar_type() == want.scalar_type());
    CHECK(got.sizes() == want.sizes());
    CHECK((exact ? at::equal(got, want) : at::allclose(got, want, 1e-5, 1e-6)));
    return;
  }
  if (expected.isTuple() || expected.isList()) {
    REQUIRE(actual.isTuple() == expected.isTuple());
    REQUIRE(actual.isList() == expected.isList());
    auto items = [](const c10::IValue& value) {
      return value.isTuple() ? value.toTupleRef().elements().asArrayRef() : value.toListRef();
    };
    c10::ArrayRef<c10::IValue> want = items(expected), got = items(actual);
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < want.size(); ++i) check_same(want[i], got[i], exact);
    return;
  }
  CHECK(actual == expected);
}

// Runs the graph with eager and torchscript and requires the same result.
void check_against_eager(const Graph& graph, const std::vector<at::Tensor>& inputs, bool exact = false,
                         const worker::ConstantMap& constants = {}) {
  auto eager = worker::EagerInterpreter(graph).run(inputs, constants);
  INFO("eager: " << (eager.failure ? eager.failure->to_string() : "ok"));
  REQUIRE(eager.ok());
  auto compiled = run_torchscript(graph, inputs, constants);
  INFO("torchscript: " << (compiled.failure ? compiled.failure->to_string() : "ok"));
  REQUIRE(compiled.ok());
  check_same(eager.output, compiled.output, exact);
}

// How many nodes of this kind the last optimised plan holds, fusion groups' insides included.
int count_kind(torch::jit::Block* block, c10::Symbol kind) {
  int count = 0;
  for (torch::jit::Node* node : block->nodes()) {
    count += node->kind() == kind;
    for (torch::jit::Block* inner : node->blocks()) count += count_kind(inner, kind);
  }
  return count;
}

}  // namespace

TEST_CASE("SymInt inputs are ints and their arithmetic lowers to TorchScript's int operators", "[torchscript]") {
  Graph graph;
  build_symint_view_graph(graph);
  at::Tensor x = sample({4, 6});
  worker::BackendContext context;
  context.inputs = {TensorMeta{}, SymIntInput{6}};
  auto compiled = torchscript()->compile(graph, {}, context);
  INFO((compiled.failure ? compiled.failure->to_string() : std::string()));
  REQUIRE_FALSE(compiled.failure);
  auto result = compiled.compiled->run({x, std::int64_t{6}});
  INFO((result.failure ? result.failure->to_string() : std::string()));
  REQUIRE(result.ok());
  CHECK(at::equal(result.output.toTensor(), x.view({8, 3})));
}

// How many fusion groups the plan of the graph's warm run holds, compiled with these options.
int fusion_groups(const Graph& graph, const std::vector<at::Tensor>& inputs, const worker::BackendOptions& options) {
  // The executor keeps the plan it ran only while it lives.
  auto compiled = torchscript(options)->compile(graph, {}, {});
  REQUIRE(compiled.compiled);
  REQUIRE(compiled.compiled->run(std::vector<c10::IValue>(inputs.begin(), inputs.end())).ok());
  std::shared_ptr<torch::jit::Graph> optimised = torch::jit::lastExecutedOptimizedGraph();
  REQUIRE(optimised);
  INFO(*optimised);
  return count_kind(optimised->block(), c10::Symbol::fromQualString("prim::TensorExprGroup"));
}

TEST_CASE("an elementwise chain on CPU is fused with cpu_fusion=1 only, as PyTorch does", "[torchscript]") {
  Graph graph;
  Node* x = placeholder(graph, "x");
  Node* y = placeholder(graph, "y");
  Node* sum = call(graph, "add", "aten::add.Tensor", {ref(x), ref(y)});
  Node* product = call(graph, "mul", "aten::mul.Tensor", {ref(sum), ref(x)});
  Node* relu = call(graph, "relu", "aten::relu", {ref(product)});
  Node* sigmoid = call(graph, "sigmoid", "aten::sigmoid", {ref(relu)});
  output(graph, tuple({ref(sigmoid)}));
  std::vector<at::Tensor> inputs{sample({4, 8}) - 10, sample({4, 8}) * 0.5};
  check_against_eager(graph, inputs);

  CHECK(fusion_groups(graph, inputs, {}) == 0);
  CHECK(fusion_groups(graph, inputs, {{"cpu_fusion", "1"}}) >= 1);
  // The switch is the graph's: a backend without it, in the same process, fuses nothing after one with it.
  CHECK(fusion_groups(graph, inputs, {{"cpu_fusion", "0"}}) == 0);
  auto fused = torchscript({{"cpu_fusion", "1"}})->compile(graph, {}, {});
  REQUIRE(fused.compiled);
  auto result = fused.compiled->run(std::vector<c10::IValue>(inputs.begin(), inputs.end()));
  REQUIRE(result.ok());
  auto eager = worker::EagerInterpreter(graph).run(inputs, {});
  check_same(eager.output, result.output, false);
}

TEST_CASE("kwargs bind by name and numbers passed as tensors stay scalars", "[torchscript]") {
  Graph graph;
  Node* a = placeholder(graph, "a");
  Node* b = placeholder(graph, "b");
  Node* sum = call(graph, "add", "aten::add.Tensor", {ref(a), ref(b)}, {{"alpha", 2}});
  Node* shifted = call(graph, "shift", "aten::add.Tensor", {ref(sum), 1});
  Node* half = call(graph, "half", "aten::mul.Tensor", {ref(shifted), 0.5});
  Node* total = call(graph, "total", "aten::sum.dim_IntList", {ref(half), 1}, {{"keepdim", true}});
  output(graph, tuple({ref(half), ref(total)}));
  check_against_eager(graph, {sample({2, 3}), sample({2, 3}) * 3}, true);
}

TEST_CASE("cat takes a list of tensors", "[torchscript]") {
  Graph graph;
  Node* a = placeholder(graph, "a");
  Node* b = placeholder(graph, "b");
  Node* cat = call(graph, "cat", "aten::cat", {list({ref(a), ref(b), ref(a)})});
  Node* cat1 = call(graph, "cat1", "aten::cat", {tuple({ref(a), ref(a)})}, {{"dim", 1}});
  output(graph, tuple({ref(cat), ref(cat1)}));
  check_against_eager(graph, {sample({2, 3}), sample({1, 3})}, true);
}

TEST_CASE("tuple results are read through getitem", "[torchscript]") {
  Graph graph;
  Node* x = placeholder(graph, "x");
  Node* max = call(graph, "max", "aten::max.dim", {ref(x), 1});
  Node* values = call(graph, "values", "getitem", {ref(max), 0});
  Node* indices = call(graph, "indices", "getitem", {ref(max), -1});
  output(graph, tuple({ref(values), ref(indices), ref(max)}));
  check_against_eager(graph, {sample({3, 4}).flip(1)}, true);
}

TEST_CASE("Tensor[] results are read through getitem and passed whole", "[torchscript]") {
  Graph graph;
  Node* x = placeholder(graph, "x");
  Node* split = call(graph, "split", "aten::split.Tensor", {ref(x), 2});
  Node* first = call(graph, "first", "getitem", {ref(split), 0});
  Node* last = call(graph, "last", "getitem", {ref(split), -1});
  Node* cat = call(graph, "cat", "aten::cat", {ref(split), 1});
  output(graph, tuple({ref(first), ref(last), ref(cat), ref(split)}));
  check_against_eager(graph, {sample({6, 2})}, true);
}

TEST_CASE("native_batch_norm: optional tensors, float and bool parameters", "[torchscript]") {
  Graph graph;
  std::vector<Value> args;
  for (const char* name : {"x", "weight", "bias", "mean", "var"}) args.push_back(ref(placeholder(graph, name)));
  args.insert(args.end(), {false, 0.1, 1e-5});
  Node* norm = call(graph, "norm", "aten::native_batch_norm", args);
  Node* out = call(graph, "out", "getitem", {ref(norm), 0});
  Node* relu = call(graph, "relu", "aten::relu", {ref(out)});
  output(graph, tuple({ref(relu)}));
  check_against_eager(graph, {sample({2, 3, 4}), sample({3}), sample({3}) * -1, at::zeros({3}), at::ones({3})});
}

TEST_CASE("dtype, layout, device, memory format and bool Scalar constants", "[torchscript]") {
  Graph graph;
  Node* x = placeholder(graph, "x");
  Node* copy = call(graph, "copy", "aten::_to_copy", {ref(x)}, {{"dtype", DTypeValue{DType::float64}}});
  Node* zeros = call(graph, "zeros", "aten::zeros", {list({2, 3})},
                     {{"dtype", DTypeValue{DType::int32}}, {"layout", LayoutValue{"strided"}}, {"device", DeviceValue{"cpu"}}});
  Node* mask = call(graph, "mask", "aten::full", {list({2, 3}), true}, {{"dtype", DTypeValue{DType::bool_}}});
  Node* clone = call(graph, "clone", "aten::clone", {ref(x)}, {{"memory_format", MemoryFormatValue{"channels_last"}}});
  output(graph, tuple({ref(copy), ref(zeros), ref(mask), ref(clone)}));
  at::Tensor image = sample({2, 3, 4, 5});
  check_against_eager(graph, {image}, true);

  auto result = run_torchscript(graph, {image});
  REQUIRE(result.ok());
  auto outputs = result.output.toTupleRef().elements();
  CHECK(outputs[0].toTensor().scalar_type() == at::kDouble);
  CHECK(outputs[2].toTensor().scalar_type() == at::kBool);
  CHECK(outputs[3].toTensor().is_contiguous(at::MemoryFormat::ChannelsLast));
}

TEST_CASE("index.Tensor takes a list of optional tensors", "[torchscript]") {
  Graph graph;
  Node* source = placeholder(graph, "source");
  Node* idx = placeholder(graph, "idx");
  output(graph, ref(call(graph, "index", "aten::index.Tensor", {ref(source), list({Value(), ref(idx)})})));
  check_against_eager(graph, {sample({2, 3}), at::tensor(std::vector<std::int64_t>{2, 0, 2})}, true);
}

TEST_CASE("conv2d with constant weight and bias", "[torchscript]") {
  Graph graph;
  Node* x = placeholder(graph, "x");
  Node* weight = add_node(graph, OpCode::get_attr, "weight", "_param_constant0");
  Node* bias = add_node(graph, OpCode::get_attr, "bias", "_param_constant1");
  Node* conv = call(graph, "conv", "aten::conv2d", {ref(x), ref(weight), ref(bias), list({1, 1}), list({1, 1})});
  Node* relu = call(graph, "relu", "aten::relu", {ref(conv)});
  output(graph, tuple({ref(relu)}));
  worker::ConstantMap constants{{"_param_constant0", at::randn({4, 3, 3, 3})}, {"_param_constant1", at::randn({4})}};
  check_against_eager(graph, {at::randn({2, 3, 8, 8})}, false, constants);
}

TEST_CASE("an output tuple with None, a constant and a repeated node", "[torchscript]") {
  Graph graph;
  Node* x = placeholder(graph, "x");
  Node* relu = call(graph, "relu", "aten::relu", {ref(x)});
  output(graph, tuple({ref(relu), Value(), ref(relu), ref(x), 3, list({ref(relu), ref(x)})}));
  check_against_eager(graph, {sample({3}) - 2}, true);
}

TEST_CASE("arguments that do not bind are failures naming the node and argument", "[torchscript][failure]") {
  Graph graph;
  Node* x = placeholder(graph, "x");
  output(graph, ref(call(graph, "node", "aten::add.Tensor", {ref(x), 2}, {{"beta", 1}})));
  NodeFailure failure = failure_of(graph, {sample({2})});
  INFO(failure.to_string());
  CHECK(failure.kind == FailureKind::bad_argument);
  CHECK(failure.node == "node");
  CHECK(failure.op == "aten::add.Tensor");
  CHECK(failure.argument == "beta");

  Graph wrong_type;
  Node* y = placeholder(wrong_type, "y");
  output(wrong_type, ref(call(wrong_type, "sum", "aten::sum.dim_IntList", {ref(y), list({1, 2.5})})));
  NodeFailure list_failure = failure_of(wrong_type, {sample({2, 2})});
  CHECK(list_failure.node == "sum");
  CHECK(list_failure.argument == "dim");
  CHECK_THAT(list_failure.message, Catch::Matchers::StartsWith("[1]: expects int, got float"));
}

TEST_CASE("a node TorchScript matches to no overload is a failure naming it", "[torchscript][failure]") {
  Graph graph;
  Node* x = placeholder(graph, "x");
  Node* split = call(graph, "split", "aten::split.Tensor", {ref(x), 1});
  output(graph, ref(call(graph, "relu", "aten::relu", {ref(split)})));
  NodeFailure failure = failure_of(graph, {sample({2})});
  INFO(failure.to_string());
  CHECK(failure.kind == FailureKind::bad_argument);
  CHECK(failure.node == "relu");
  CHECK_THAT(failure.message, Catch::Matchers::StartsWith("TorchScript matches no overload instead of aten::relu"));
}

TEST_CASE("a kernel's exception at run time is a failure with its type and message", "[torchscript][failure]") {
  Graph graph;
  Node* a = placeholder(graph, "a");
  Node* b = placeholder(graph, "b");
  output(graph, ref(call(graph, "mm", "aten::mm", {ref(a), ref(b)})));
  NodeFailure failure = failure_of(graph, {sample({2, 3}), sample({2, 3})});
  INFO(failure.to_string());
  CHECK(failure.kind == FailureKind::exception);
  CHECK(failure.node == "mm");
  CHECK(failure.op == "aten::mm");
  // The interpreter rethrows the kernel's c10::Error with a TorchScript traceback.
  CHECK_FALSE(failure.exception_type.empty());
  CHECK_THAT(failure.message, Catch::Matchers::Contains("cannot be multiplied"));
  CHECK_THAT(failure.message, !Catch::Matchers::Contains("Exception raised from"));
}

TEST_CASE("missing inputs and constants are failures", "[torchscript][failure]") {
  Graph graph;
  Node* x = placeholder(graph, "x");
  Node* weight = add_node(graph, OpCode::get_attr, "weight", "_tensor_constant0");
  output(graph, ref(call(graph, "mul", "aten::mul.Tensor", {ref(x), ref(weight)})));
  NodeFailure missing = failure_of(graph, {sample({2})});
  CHECK(missing.kind == FailureKind::bad_input);
  CHECK(missing.node == "weight");

  auto compiled = torchscript()->compile(graph, {{"_tensor_constant0", sample({2})}}, {});
  REQUIRE(compiled.compiled);
  auto too_few = compiled.compiled->run({});
  REQUIRE_FALSE(too_few.ok());
  CHECK(too_few.failure->kind == FailureKind::bad_input);
}

TEST_CASE("the warmup and cpu_fusion options", "[torchscript]") {
  CHECK(worker::make_torchscript_backend({{"warmup", "0"}, {"cpu_fusion", "true"}}).has_value());
  CHECK_FALSE(worker::make_torchscript_backend({{"cpu_fusion", "yes"}}).has_value());
  CHECK_FALSE(worker::make_torchscript_backend({{"warmup", "-1"}}).has_value());
  CHECK_FALSE(worker::make_torchscript_backend({{"warmup", "two"}}).has_value());
  CHECK_FALSE(worker::make_torchscript_backend({{"warm", "2"}}).has_value());

  // Warm-up runs work on copies: an in-place op on an input happens once.
  Graph graph;
  Node* x = placeholder(graph, "x");
  output(graph, ref(call(graph, "add_", "aten::add_.Tensor", {ref(x), 1})));
  at::Tensor input = at::zeros({3});
  auto compiled = torchscript({{"warmup", "3"}})->compile(graph, {}, {});
  REQUIRE(compiled.compiled);
  REQUIRE(compiled.compiled->run({input}).ok());
  CHECK(at::equal(input, at::ones({3})));
}

TEST_CASE("a warm 10-node graph runs cheaply many times", "[torchscript][timing]") {
  Graph graph;
  build_ten_node_graph(graph);

  auto compiled = torchscript()->compile(graph, {}, {});
  REQUIRE(compiled.compiled);
  std::vector<c10::IValue> inputs{sample({4, 4}), sample({4, 4})};
  REQUIRE(compiled.compiled->run(inputs).ok());  // warm-up and the first measured run
  constexpr int runs = 1000;
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < runs; ++i) REQUIRE(compiled.compiled->run(inputs).ok());
  std::chrono::duration<double, std::micro> elapsed = std::chrono::steady_clock::now() - start;
  std::cout << "torchscript backend: 10-node graph, mean " << elapsed.count() / runs << " us per warm run\n";
}
