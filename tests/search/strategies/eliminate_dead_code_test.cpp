// eliminate-dead-code alone: unused computations and constants go, side effects and inputs stay.
#include <catch2/catch.hpp>

#include "daemon/search/dead_code.h"
#include "tests/support/run_search.h"
#include "tests/support/search_case.h"

using namespace minifyd;
using namespace minifyd::search;
using namespace minifyd::search::test;

TEST_CASE("eliminate-dead-code erases dead chains and unused constants", "[search]") {
  SearchCase c;
  Node* x = c.input("x");
  Node* y = c.input("y");
  c.constant("_tensor_constant0");
  Node* sin = c.call("sin", "aten::sin", {NodeRef{x}});
  Node* cos = c.call("cos", "aten::cos", {NodeRef{x}});
  c.call("relu", "aten::relu", {NodeRef{cos}});
  c.call("add_", "aten::add_.Tensor", {NodeRef{x}, 1});
  Node* mul = c.call("mul", "aten::mul.Tensor", {NodeRef{sin}, NodeRef{y}});
  c.output_tuple({mul});
  PredicateEvaluator evaluator(holds_target("aten::mul.Tensor"));

  SearchResult result = run_search(c.build(), evaluator, {"eliminate-dead-code"});
  CHECK(result.start_nodes == 9);
  CHECK(result.best.document.graph.size() == 6);
  CHECK(input_count(result.best) == 2);
  CHECK(node_names(result.best) == std::vector<std::string>{"x", "y", "sin", "add_", "mul", "output"});
  CHECK(result.best.document.constants.empty());
  CHECK(result.best.document.storages.size() == 2);  // the constant's storage went with it
}

TEST_CASE("side effects follow ATen's naming of in-place and out= operators", "[search]") {
  SearchCase c;
  Node* x = c.input("x");
  auto effects = [&](const std::string& target) {
    return has_side_effects(*c.call("n" + std::to_string(x->users().size()), target, {NodeRef{x}}));
  };
  CHECK(effects("aten::add_.Tensor"));
  CHECK(effects("aten::__iand__.Tensor"));
  CHECK(effects("aten::mul.out"));
  CHECK(effects("aten::_assert_async.msg"));
  CHECK_FALSE(effects("aten::__and__.Tensor"));
  CHECK_FALSE(effects("aten::_to_copy"));
  CHECK_FALSE(effects("aten::relu"));
}
