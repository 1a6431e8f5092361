// The nan check: the worker fails a candidate whose compiled output holds NaN or Inf while none of
// its inputs does (functorch's test_has_add_mul), before any accuracy comparison.
#include <cmath>
#include <filesystem>
#include <limits>
#include <variant>

#include <ATen/ATen.h>

#include "common/graph_codec.h"
#include "worker/nan_check.h"
#include "worker/request_handler.h"

#include "tests/support/catch_torch.h"
#include "tests/support/graph_builder.h"
#include "tests/support/sample_graph_dir.h"
#include "tests/support/temp_dir.h"

using namespace minifyd;
using namespace minifyd::test;
using protocol::AccuracyMode;
using protocol::FailureKind;

namespace {

protocol::Verdict evaluate_with_eager(const std::filesystem::path& graph_dir, bool nan_check,
                                      AccuracyMode accuracy = AccuracyMode::off) {
  auto document = load_graph_dir(graph_dir);
  REQUIRE(document.has_value());
  protocol::EvaluateRequest request{1,       encode_graph_document(*document), (graph_dir / store_dir_name).string(),
                                    "eager", {},                               accuracy,
                                    nan_check};
  worker::RequestHandler handler(std::nullopt, 0);
  protocol::WorkerReply reply = handler.evaluate(request);
  auto* error = std::get_if<protocol::ErrorReply>(&reply);
  INFO((error ? error->message : std::string()));
  REQUIRE(std::holds_alternative<protocol::EvaluateReply>(reply));
  return std::get<protocol::EvaluateReply>(reply).verdict;
}

// zero = x - x; out = (zero / zero + 3,): NaN everywhere, from finite inputs.
void zero_over_zero(Graph& graph, Node* x) {
  Node* zero = call(graph, "zero", "aten::sub.Tensor", {ref(x), ref(x)});
  Node* nan = call(graph, "nan", "aten::div.Tensor", {ref(zero), ref(zero)});
  output(graph, tuple({ref(call(graph, "add", "aten::add.Tensor", {ref(nan), 3}))}));
}

// out = (x * 3 + 5,): finite wherever x is.
void scale_and_shift(Graph& graph, Node* x) {
  Node* scaled = call(graph, "mul", "aten::mul.Tensor", {ref(x), 3});
  output(graph, tuple({ref(call(graph, "add", "aten::add.Tensor", {ref(scaled), 5}))}));
}

}  // namespace

TEST_CASE("an output holding NaN from finite inputs is a nan failure naming the output", "[nan_check]") {
  TempDir dir;
  auto graph = write_graph_dir(dir / "graph", zero_over_zero);
  protocol::Verdict verdict = evaluate_with_eager(graph, true);
  CHECK_FALSE(verdict.pass);
  CHECK(verdict.kind == FailureKind::nan);
  CHECK(verdict.message == "output[0] holds NaN (32 of 32 elements) while no input does");
  // Checked before accuracy, which eager against itself would pass.
  CHECK(evaluate_with_eager(graph, true, AccuracyMode::strict_accuracy).kind == FailureKind::nan);
  CHECK(evaluate_with_eager(graph, false).pass);
}

TEST_CASE("a finite output passes the nan check", "[nan_check]") {
  TempDir dir;
  CHECK(evaluate_with_eager(write_graph_dir(dir / "graph", scale_and_shift), true).pass);
}

TEST_CASE("an output NaN that an input NaN explains passes the nan check", "[nan_check]") {
  TempDir dir;
  std::vector<float> values = sample_values();
  values[5] = std::numeric_limits<float>::quiet_NaN();
  CHECK(evaluate_with_eager(write_graph_dir(dir / "graph", scale_and_shift, values), true).pass);
}

TEST_CASE("the first floating output leaf holding NaN or Inf is named, with what it holds", "[nan_check]") {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  at::Tensor finite = at::ones({2});
  at::Tensor with_inf = at::tensor({1.0f, inf, -inf});
  at::Tensor with_both = at::tensor({nan, inf, 0.0f, 1.0f});
  at::Tensor integers = at::ones({2}, at::kLong);
  auto outputs = [](std::vector<c10::IValue> items) { return c10::IValue(c10::ivalue::Tuple::create(std::move(items))); };

  CHECK(worker::non_finite_output(outputs({integers, finite, with_inf, with_both})) ==
        "output[2] holds Inf (2 of 3 elements)");
  CHECK(worker::non_finite_output(outputs({with_both})) == "output[0] holds NaN and Inf (2 of 4 elements)");
  CHECK_FALSE(worker::non_finite_output(outputs({integers, finite, c10::IValue(3.5)})).has_value());
  CHECK(worker::holds_non_finite({integers, with_inf}));
  CHECK_FALSE(worker::holds_non_finite({integers, finite}));
}
