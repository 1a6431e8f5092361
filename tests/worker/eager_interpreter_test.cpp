// The eager interpreter against direct ATen calls: argument binding for every kind aten uses,
// multi-output ops, failures as values, and the cost of one run.
#include <chrono>
#include <functional>
#include <iostream>
#include <limits>
#include <numeric>

#include <ATen/ATen.h>

#include "worker/eager_interpreter.h"

#include "tests/support/catch_torch.h"
#include "tests/support/graph_builder.h"

using namespace minifyd;
using worker::EagerInterpreter;
using worker::EagerOptions;
using worker::FailureKind;

using namespace minifyd::test;

namespace {


// Runs the graph and requires success.
c10::IValue run(const Graph& graph, const std::vector<at::Tensor>& inputs, EagerOptions options = {},
                const worker::ConstantMap& constants = {}) {
  EagerInterpreter interpreter(graph, options);
  auto result = interpreter.run(inputs, constants);
  INFO((result.failure ? result.failure->to_string() : std::string()));
  REQUIRE(result.ok());
  return result.output;
}

// Graph: out = target(x, *args, **kwargs).
at::Tensor run_unary(const std::string& target, const at::Tensor& x, std::vector<Value> args = {},
                     Kwargs kwargs = {}, EagerOptions options = {}) {
  Graph graph;
  Node* input = placeholder(graph, "x");
  args.insert(args.begin(), ref(input));
  output(graph, ref(call(graph, "op", target, std::move(args), std::move(kwargs))));
  return run(graph, {x}, options).toTensor();
}

// Prepares and runs the graph and requires a failure.
worker::NodeFailure failure_of(const Graph& graph, const std::vector<at::Tensor>& inputs) {
  EagerInterpreter interpreter(graph);
  auto result = interpreter.run(inputs, {});
  REQUIRE_FALSE(result.ok());
  return *result.failure;
}

// 1, 2, 3, ... in the given shape: distinct values, so a wrong element shows.
at::Tensor sample(std::vector<std::int64_t> shape) {
  std::int64_t count = std::accumulate(shape.begin(), shape.end(), std::int64_t{1}, std::multiplies<>());
  return at::arange(1, 1 + count, at::kFloat).reshape(shape);
}

}  // namespace

TEST_CASE("kwargs and schema defaults bind by name", "[eager]") {
  at::Tensor x = sample({2, 3}), y = sample({2, 3}) * 3;
  Graph graph;
  Node* a = placeholder(graph, "a");
  Node* b = placeholder(graph, "b");
  Node* sum = call(graph, "add", "aten::add.Tensor", {ref(a), ref(b)}, {{"alpha", 2}});
  output(graph, ref(sum));
  CHECK(at::equal(run(graph, {x, y}).toTensor(), at::add(x, y, 2)));

  CHECK(at::equal(run_unary("aten::sum.dim_IntList", x, {list({1})}), at::sum(x, {1})));
  CHECK(at::equal(run_unary("aten::sum.dim_IntList", x, {list({1}), true}), at::sum(x, {1}, true)));
  // A single int fills int[1], as Python's argument parser does.
  CHECK(at::equal(run_unary("aten::sum.dim_IntList", x, {1}), at::sum(x, {1})));
}

TEST_CASE("Scalar parameters take int, float and bool, and float parameters take int", "[eager]") {
  at::Tensor x = sample({4});
  CHECK(at::equal(run_unary("aten::mul.Scalar", x, {2}), at::mul(x, 2)));
  CHECK(at::equal(run_unary("aten::mul.Scalar", x, {2.5}), at::mul(x, 2.5)));
  CHECK(at::equal(run_unary("aten::mul.Scalar", x, {true}), at::mul(x, true)));
}

TEST_CASE("a number passed as a Tensor is a wrapped number and keeps the tensor's dtype", "[eager]") {
  at::Tensor x = sample({3});
  at::Tensor result = run_unary("aten::add.Tensor", x, {1});
  CHECK(result.scalar_type() == at::kFloat);
  CHECK(at::equal(result, x + 1));
  CHECK(at::equal(run_unary("aten::mul.Tensor", x, {0.5}), x * 0.5));
  // p is a float parameter given an int.
  CHECK(at::equal(run_unary("aten::dropout", x, {0, false}), x));
}

TEST_CASE("int[] and SymInt[] parameters", "[eager]") {
  at::Tensor x = sample({2, 3});
  CHECK(at::equal(run_unary("aten::view", x, {list({3, 2})}), x.view({3, 2})));
  CHECK(at::equal(run_unary("aten::view", x, {list({-1})}), x.view({-1})));
  CHECK(at::equal(run_unary("aten::permute", x, {list({1, 0})}), x.permute({1, 0})));
  at::Tensor row = sample({1, 3});
  CHECK(at::equal(run_unary("aten::expand", row, {list({4, -1})}), row.expand({4, 3})));
}

TEST_CASE("SymInt inputs and their arithmetic, as Python computes it", "[eager]") {
  Graph graph;
  build_symint_view_graph(graph);
  at::Tensor x = sample({4, 6});
  auto result = EagerInterpreter(graph).run(std::vector<c10::IValue>{x, std::int64_t{6}}, {});
  INFO((result.failure ? result.failure->to_string() : std::string()));
  REQUIRE(result.ok());
  CHECK(at::equal(result.output.toTensor(), x.view({8, 3})));

  SECTION("a division by zero fails naming the node") {
    Graph zero;
    Node* s0 = placeholder(zero, "s0");
    output(zero, ref(call(zero, "floordiv", "operator.floordiv", {7, ref(s0)})));
    auto failed = EagerInterpreter(zero).run(std::vector<c10::IValue>{std::int64_t{0}}, {});
    REQUIRE_FALSE(failed.ok());
    CHECK(failed.failure->node == "floordiv");
    CHECK_THAT(failed.failure->message, Catch::Contains("operator.floordiv(7, 0): division by zero"));
  }
  SECTION("a tensor where an int belongs is a bad argument") {
    Graph wrong;
    Node* x0 = placeholder(wrong, "x");
    output(wrong, ref(call(wrong, "neg", "operator.neg", {ref(x0)})));
    auto failed = EagerInterpreter(wrong).run(std::vector<at::Tensor>{x}, {});
    REQUIRE_FALSE(failed.ok());
    CHECK(failed.failure->kind == FailureKind::bad_argument);
    CHECK(failed.failure->argument == "a");
  }
}

TEST_CASE("Tensor[] and Tensor?[] parameters", "[eager]") {
  at::Tensor x = sample({2, 3}), y = sample({1, 3});
  Graph graph;
  Node* a = placeholder(graph, "a");
  Node* b = placeholder(graph, "b");
  Node* cat = call(graph, "cat", "aten::cat", {list({ref(a), ref(b), ref(a)})});
  Node* cat1 = call(graph, "cat1", "aten::cat", {tuple({ref(a), ref(a)}), 1});
  output(graph, tuple({ref(cat), ref(cat1)}));
  auto outputs = run(graph, {x, y}).toTupleRef().elements();
  CHECK(at::equal(outputs[0].toTensor(), at::cat({x, y, x})));
  CHECK(at::equal(outputs[1].toTensor(), at::cat({x, x}, 1)));

  at::Tensor columns = at::tensor(std::vector<std::int64_t>{2, 0, 2});
  Graph indexing;
  Node* source = placeholder(indexing, "source");
  Node* idx = placeholder(indexing, "idx");
  output(indexing,
         ref(call(indexing, "index", "aten::index.Tensor", {ref(source), list({Value(), ref(idx)})})));
  CHECK(at::equal(run(indexing, {x, columns}).toTensor(), x.index_select(1, columns)));
}

TEST_CASE("ScalarType, Layout, Device and MemoryFormat parameters", "[eager]") {
  at::Tensor x = sample({2, 3});
  at::Tensor copy = run_unary("aten::_to_copy", x, {}, {{"dtype", DTypeValue{DType::float64}}});
  CHECK(copy.scalar_type() == at::kDouble);
  CHECK(at::equal(copy, x.to(at::kDouble)));

  Kwargs options{{"dtype", DTypeValue{DType::int32}},
                 {"layout", LayoutValue{"strided"}},
                 {"device", DeviceValue{"cpu"}}};
  at::Tensor empty = run_unary("aten::empty_like", x, {}, options);
  CHECK(empty.scalar_type() == at::kInt);
  CHECK(empty.sizes() == x.sizes());
  CHECK(empty.device() == at::Device(at::kCPU));

  Graph graph;
  output(graph, ref(call(graph, "zeros", "aten::zeros", {list({2, 3})}, options)));
  CHECK(at::equal(run(graph, {}).toTensor(), at::zeros({2, 3}, at::kInt)));

  at::Tensor image = sample({2, 3, 4, 5});
  at::Tensor channels_last =
      run_unary("aten::clone", image, {}, {{"memory_format", MemoryFormatValue{"channels_last"}}});
  CHECK(channels_last.is_contiguous(at::MemoryFormat::ChannelsLast));
  CHECK(at::equal(channels_last, image));
}

TEST_CASE("the cuda device option maps cuda arguments to the worker's device", "[eager]") {
  EagerOptions options;
  options.cuda_device = at::Device(at::kCPU);  // so that the mapping is visible without a GPU
  Graph graph;
  output(graph, ref(call(graph, "zeros", "aten::zeros", {list({2})}, {{"device", DeviceValue{"cuda:3"}}})));
  CHECK(run(graph, {}, options).toTensor().device() == at::Device(at::kCPU));
}

TEST_CASE("the fp64 reference option turns floating dtype arguments into float64", "[eager]") {
  EagerOptions options;
  options.fp64_reference = true;
  at::Tensor x = sample({3});
  CHECK(run_unary("aten::_to_copy", x, {}, {{"dtype", DTypeValue{DType::float16}}}, options).scalar_type() ==
        at::kDouble);
  CHECK(run_unary("aten::_to_copy", x, {}, {{"dtype", DTypeValue{DType::int32}}}, options).scalar_type() ==
        at::kInt);
}

TEST_CASE("multi-output ops are read through getitem", "[eager]") {
  at::Tensor x = sample({3, 4}).flip(1);
  Graph graph;
  Node* input = placeholder(graph, "x");
  Node* max = call(graph, "max", "aten::max.dim", {ref(input), 1});
  Node* values = call(graph, "values", "getitem", {ref(max), 0});
  Node* indices = call(graph, "indices", "getitem", {ref(max), -1});
  Node* split = call(graph, "split", "aten::split.Tensor", {ref(input), 2});
  Node* first = call(graph, "first", "getitem", {ref(split), 0});
  Node* second = call(graph, "second", "getitem", {ref(split), 1});
  Node* unbind = call(graph, "unbind", "aten::unbind.int", {ref(input)});
  Node* row = call(graph, "row", "getitem", {ref(unbind), 2});
  output(graph, tuple({ref(values), ref(indices), ref(first), ref(second), ref(row), Value()}));

  auto outputs = run(graph, {x}).toTupleRef().elements();
  auto [expected_values, expected_indices] = at::max(x, 1);
  CHECK(at::equal(outputs[0].toTensor(), expected_values));
  CHECK(at::equal(outputs[1].toTensor(), expected_indices));
  CHECK(at::equal(outputs[2].toTensor(), x.split(2)[0]));
  CHECK(at::equal(outputs[3].toTensor(), x.split(2)[1]));
  CHECK(at::equal(outputs[4].toTensor(), x[2]));
  CHECK(outputs[5].isNone());
}

TEST_CASE("native_batch_norm: optional tensors, float and bool parameters, three outputs", "[eager]") {
  at::Tensor x = sample({2, 3, 4}), weight = sample({3}), bias = sample({3}) * -1;
  at::Tensor mean = at::zeros({3}), var = at::ones({3});
  Graph graph;
  std::vector<Value> args;
  for (const char* name : {"x", "weight", "bias", "mean", "var"})
    args.push_back(ref(placeholder(graph, name)));
  args.insert(args.end(), {false, 0.1, 1e-5});
  Node* norm = call(graph, "norm", "aten::native_batch_norm", args);
  output(graph, ref(call(graph, "out", "getitem", {ref(norm), 0})));
  at::Tensor expected = std::get<0>(at::native_batch_norm(x, weight, bias, mean, var, false, 0.1, 1e-5));
  CHECK(at::equal(run(graph, {x, weight, bias, mean, var}).toTensor(), expected));
}

TEST_CASE("str parameters and non-finite floats", "[eager]") {
  at::Tensor x = sample({4}) - 2.5, y = at::full({4}, 2.0);
  Graph graph;
  Node* a = placeholder(graph, "a");
  Node* b = placeholder(graph, "b");
  output(graph,
         ref(call(graph, "div", "aten::div.Tensor_mode", {ref(a), ref(b)}, {{"rounding_mode", "floor"}})));
  CHECK(at::equal(run(graph, {x, y}).toTensor(), at::div(x, y, "floor")));

  double inf = std::numeric_limits<double>::infinity();
  CHECK(at::equal(run_unary("aten::clamp", x, {-inf, 0.5}), at::clamp(x, -inf, 0.5)));
}

TEST_CASE("constants and the node callback", "[eager]") {
  Graph graph;
  Node* x = placeholder(graph, "x");
  Node* weight = add_node(graph, OpCode::get_attr, "weight", "_tensor_constant0");
  Node* product = call(graph, "mul", "aten::mul.Tensor", {ref(x), ref(weight)});
  output(graph, list({ref(product), 3}));
  at::Tensor input = sample({2}), constant = sample({2}) * 2;

  EagerInterpreter interpreter(graph);
  std::vector<std::string> seen;
  auto result = interpreter.run(std::vector<at::Tensor>{input}, {{"_tensor_constant0", constant}},
                                [&](const Node& node, const c10::IValue& value) {
                                  seen.push_back(node.name());
                                  CHECK(value.isTensor());
                                });
  REQUIRE(result.ok());
  CHECK(seen == std::vector<std::string>{"x", "weight", "mul"});
  c10::ArrayRef<c10::IValue> items = result.output.toListRef();
  CHECK(at::equal(items[0].toTensor(), input * constant));
  CHECK(items[1].toInt() == 3);

  auto missing = interpreter.run(std::vector<at::Tensor>{input}, {});
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.failure->kind == FailureKind::bad_input);
  CHECK(missing.failure->node == "weight");
  auto too_few = interpreter.run(std::vector<at::Tensor>{}, {{"_tensor_constant0", constant}});
  REQUIRE_FALSE(too_few.ok());
  CHECK(too_few.failure->kind == FailureKind::bad_input);
}

TEST_CASE("an unknown operator is a failure naming the node", "[eager][failure]") {
  Graph graph;
  Node* x = placeholder(graph, "x");
  output(graph, ref(call(graph, "bad", "aten::no_such_op", {ref(x)})));
  EagerInterpreter interpreter(graph);
  REQUIRE(interpreter.preparation_failure() != nullptr);
  worker::NodeFailure failure = failure_of(graph, {sample({1})});
  CHECK(failure.kind == FailureKind::unknown_operator);
  CHECK(failure.node == "bad");
  CHECK(failure.op == "aten::no_such_op");
}

TEST_CASE("arguments that do not bind are failures naming the argument", "[eager][failure]") {
  struct Case {
    std::string target;
    std::vector<Value> args;  // after the input
    Kwargs kwargs;
    std::string argument;
    std::string message;
  };
  std::vector<Case> cases = {
      {"aten::add.Tensor", {"two"}, {}, "other", "expects Tensor, got str 'two'"},
      {"aten::add.Tensor",
       {2},
       {{"alpha", DTypeValue{DType::int32}}},
       "alpha",
       "expects Scalar, got dtype int32"},
      {"aten::sum.dim_IntList", {list({1, 2.5})}, {}, "dim", "[1]: expects int, got float"},
      {"aten::add.Tensor", {2}, {{"beta", 1}}, "beta", "unknown keyword argument"},
      {"aten::add.Tensor", {2}, {{"other", 1}}, "other", "given both by position and by keyword"},
      {"aten::mm", {}, {}, "mat2", "missing required argument"},
      {"aten::relu", {1}, {}, "", "takes 1 positional arguments but 2 were given"},
      {"aten::_to_copy", {}, {{"dtype", 5}}, "dtype", "expects ScalarType?, got int 5"},
  };
  for (const Case& bad : cases) {
    Graph graph;
    std::vector<Value> args = bad.args;
    args.insert(args.begin(), ref(placeholder(graph, "x")));
    output(graph, ref(call(graph, "node", bad.target, args, bad.kwargs)));
    worker::NodeFailure failure = failure_of(graph, {sample({2, 2})});
    INFO(failure.to_string());
    CHECK(failure.kind == FailureKind::bad_argument);
    CHECK(failure.node == "node");
    CHECK(failure.op == bad.target);
    CHECK(failure.argument == bad.argument);
    CHECK_THAT(failure.message, Catch::Matchers::StartsWith(bad.message));
  }
}

TEST_CASE("a node's value that does not fit its parameter fails at run time", "[eager][failure]") {
  Graph graph;
  Node* x = placeholder(graph, "x");
  Node* max = call(graph, "max", "aten::max.dim", {ref(x), 0});
  output(graph, ref(call(graph, "relu", "aten::relu", {ref(max)})));
  worker::NodeFailure failure = failure_of(graph, {sample({2})});
  CHECK(failure.kind == FailureKind::bad_argument);
  CHECK(failure.node == "relu");
  CHECK(failure.argument == "self");
}

TEST_CASE("a Tensor[] result passes whole to a Tensor[] parameter", "[eager]") {
  at::Tensor x = sample({4, 2});
  Graph graph;
  Node* input = placeholder(graph, "x");
  Node* split = call(graph, "split", "aten::split.Tensor", {ref(input), 1});
  output(graph, ref(call(graph, "cat", "aten::cat", {ref(split), 1})));
  CHECK(at::equal(run(graph, {x}).toTensor(), at::cat(x.split(1), 1)));
}

TEST_CASE("getitem out of range and a graph without output are failures", "[eager][failure]") {
  Graph graph;
  Node* x = placeholder(graph, "x");
  Node* max = call(graph, "max", "aten::max.dim", {ref(x), 0});
  output(graph, ref(call(graph, "third", "getitem", {ref(max), 2})));
  worker::NodeFailure failure = failure_of(graph, {sample({2})});
  CHECK(failure.kind == FailureKind::bad_argument);
  CHECK(failure.node == "third");
  CHECK_THAT(failure.message, Catch::Matchers::Contains("out of range"));

  Graph headless;
  placeholder(headless, "x");
  CHECK(failure_of(headless, {sample({2})}).kind == FailureKind::invalid_graph);
}

TEST_CASE("a kernel's exception is a failure with its type and message", "[eager][failure]") {
  Graph graph;
  Node* a = placeholder(graph, "a");
  Node* b = placeholder(graph, "b");
  output(graph, ref(call(graph, "mm", "aten::mm", {ref(a), ref(b)})));
  worker::NodeFailure failure = failure_of(graph, {sample({2, 3}), sample({2, 3})});
  INFO(failure.to_string());
  CHECK(failure.kind == FailureKind::exception);
  CHECK(failure.node == "mm");
  CHECK(failure.op == "aten::mm");
  CHECK(failure.exception_type == "c10::Error");
  CHECK_THAT(failure.message, Catch::Matchers::Contains("cannot be multiplied"));
  CHECK_THAT(failure.message, !Catch::Matchers::Contains("Exception raised from"));

  Graph indexing;
  Node* source = placeholder(indexing, "source");
  output(indexing, ref(call(indexing, "select", "aten::select.int", {ref(source), 0, 5})));
  worker::NodeFailure index_failure = failure_of(indexing, {sample({2})});
  CHECK(index_failure.exception_type == "c10::IndexError");
}

TEST_CASE("a 10-node graph runs cheaply many times", "[eager][timing]") {
  Graph graph;
  build_ten_node_graph(graph);

  EagerInterpreter interpreter(graph);
  std::vector<at::Tensor> inputs{sample({4, 4}), sample({4, 4})};
  constexpr int runs = 1000;
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < runs; ++i) REQUIRE(interpreter.run(inputs, {}).ok());
  std::chrono::duration<double, std::micro> elapsed = std::chrono::steady_clock::now() - start;
  std::cout << "eager interpreter: 10-node graph, mean " << elapsed.count() / runs << " us per run\n";
}
