// truncate-suffix alone: the graph cut right after the node the predicate needs.
#include <catch2/catch.hpp>

#include "daemon/search/strategies/truncate_suffix.h"
#include "tests/support/run_search.h"
#include "tests/support/search_case.h"

using namespace minifyd;
using namespace minifyd::search;
using namespace minifyd::search::test;

TEST_CASE("truncate-suffix cuts the graph after the node that fails", "[search]") {
  SearchCase c;
  Node* x = c.input("x");
  Node* relu = c.call("relu", "aten::relu", {NodeRef{x}});
  Node* sin = c.call("sin", "aten::sin", {NodeRef{relu}});
  Node* cos = c.call("cos", "aten::cos", {NodeRef{sin}});
  Node* tanh = c.call("tanh", "aten::tanh", {NodeRef{cos}});
  Node* exp = c.call("exp", "aten::exp", {NodeRef{tanh}});
  c.output(NodeRef{exp});
  PredicateEvaluator evaluator(holds_target("aten::sin"));

  SearchResult result = run_search(c.build(), evaluator, {"truncate-suffix"});
  CHECK(result.start_nodes == 7);
  CHECK(result.best.document.graph.size() == 4);
  CHECK(input_count(result.best) == 1);
  CHECK(node_names(result.best) == std::vector<std::string>{"x", "relu", "sin", "output"});
}

TEST_CASE("truncate-suffix proposes only positions not tried at twice the granularity", "[search]") {
  SearchCase c;
  Node* last = c.input("x");
  for (int i = 0; i < 6; ++i) last = c.call("n" + std::to_string(i), "aten::relu", {NodeRef{last}});
  c.output(NodeRef{last});
  SearchState state = c.build();
  std::vector<std::string> cut_after;
  propose_truncate_suffix(state, 1, [&](SearchState candidate) {
    cut_after.push_back(candidate.document.graph.nodes().at(candidate.document.graph.size() - 2)->name());
    return true;
  });
  CHECK(cut_after == std::vector<std::string>{"n0", "n2", "n4"});  // positions 1, 3, 5
  cut_after.clear();
  propose_truncate_suffix(state, 2, [&](SearchState candidate) {
    cut_after.push_back(candidate.document.graph.nodes().at(candidate.document.graph.size() - 2)->name());
    return true;
  });
  CHECK(cut_after == std::vector<std::string>{"n1", "n5"});  // positions 2, 6
}
