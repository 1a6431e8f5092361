// remove-unused-inputs alone: unread inputs go with their tensors; the others keep theirs, and
// SymInt inputs stay read or not.
#include <catch2/catch.hpp>

#include "tests/support/run_search.h"
#include "tests/support/search_case.h"

using namespace minifyd;
using namespace minifyd::search;
using namespace minifyd::search::test;

TEST_CASE("remove-unused-inputs drops inputs nothing reads", "[search]") {
  SearchCase c;
  c.input("x");
  Node* y = c.input("y");
  c.input("z");
  Node* sin = c.call("sin", "aten::sin", {NodeRef{y}});
  c.output_tuple({sin});
  SearchState original = c.build();
  std::string y_hash = original.document.storages.at(std::get<TensorMeta>(original.document.inputs.at(1)).storage).hash;
  PredicateEvaluator evaluator(holds_target("aten::sin"));

  SearchResult result = run_search(std::move(original), evaluator, {"remove-unused-inputs"});
  CHECK(result.best.document.graph.size() == 3);
  CHECK(input_count(result.best) == 1);
  REQUIRE(result.best.document.inputs.size() == 1);
  CHECK(result.best.document.storages.size() == 1);
  CHECK(result.best.document.storages.at(std::get<TensorMeta>(result.best.document.inputs[0]).storage).hash == y_hash);
}

TEST_CASE("remove-unused-inputs keeps a SymInt input nothing reads", "[search]") {
  SearchCase c;
  c.symint_input("s0", 8);
  c.input("x");
  Node* y = c.input("y");
  Node* sin = c.call("sin", "aten::sin", {NodeRef{y}});
  c.output_tuple({sin});
  PredicateEvaluator evaluator(holds_target("aten::sin"));

  SearchResult result = run_search(c.build(), evaluator, {"remove-unused-inputs"});
  CHECK(input_count(result.best) == 2);
  REQUIRE(result.best.document.inputs.size() == 2);
  REQUIRE(std::holds_alternative<SymIntInput>(result.best.document.inputs[0]));
  CHECK(std::get<SymIntInput>(result.best.document.inputs[0]).value == 8);
  CHECK(result.best.document.graph.placeholders().front()->name() == "s0");
}
