// delta-debugging alone: computations before the failing one replaced by their stored values.
#include <catch2/catch.hpp>

#include "tests/support/run_search.h"
#include "tests/support/search_case.h"

using namespace minifyd;
using namespace minifyd::search;
using namespace minifyd::search::test;

TEST_CASE("delta-debugging feeds the failing node its stored input", "[search]") {
  SearchCase c;
  Node* x = c.input("x");
  Node* sin = c.call("sin", "aten::sin", {NodeRef{x}});
  Node* cos = c.call("cos", "aten::cos", {NodeRef{sin}});
  Node* relu = c.call("relu", "aten::relu", {NodeRef{cos}});
  Node* tanh = c.call("tanh", "aten::tanh", {NodeRef{relu}});
  c.output(NodeRef{tanh});
  SearchState original = c.build();
  std::string cos_hash = original.eager->find("cos")->storage.hash;
  PredicateEvaluator evaluator(holds_target("aten::relu"));

  SearchResult result = run_search(std::move(original), evaluator, {"delta-debugging"});
  // Without truncate-suffix the consumer of relu stays.
  CHECK(result.best.document.graph.size() == 4);
  CHECK(input_count(result.best) == 1);
  CHECK(node_names(result.best) == std::vector<std::string>{"cos", "relu", "tanh", "output"});
  CHECK(result.best.loads.empty());
  CHECK(result.best.document.storages.at(std::get<TensorMeta>(result.best.document.inputs.at(0)).storage).hash == cos_hash);
}
