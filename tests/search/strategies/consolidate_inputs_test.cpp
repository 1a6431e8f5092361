// consolidate-inputs alone: it fires, and makes only the loads before the first computation inputs.
#include <catch2/catch.hpp>

#include "tests/support/run_search.h"
#include "tests/support/search_case.h"

using namespace minifyd;
using namespace minifyd::search;
using namespace minifyd::search::test;

TEST_CASE("consolidate-inputs makes leading loads inputs", "[search]") {
  SearchCase c;
  Node* x = c.input("x");
  Node* early = c.load("early");
  Node* sin = c.call("sin", "aten::sin", {NodeRef{early}});
  Node* late = c.load("late");
  Node* mul = c.call("mul", "aten::mul.Tensor", {NodeRef{sin}, NodeRef{x}});
  Node* add = c.call("add", "aten::add.Tensor", {NodeRef{mul}, NodeRef{late}});
  c.output_tuple({add});
  PredicateEvaluator evaluator(holds_target("aten::sin"));

  SearchResult result = run_search(c.build(), evaluator, {"consolidate-inputs"});
  CHECK(result.start_inputs == 1);
  CHECK(result.best.document.graph.size() == 7);
  CHECK(input_count(result.best) == 2);
  CHECK(result.best.loads == std::set<std::string, std::less<>>{"late"});
  CHECK(result.counters.accepted == 1);
  // A worker runs the same program either way: the candidate is answered by the cache, and only
  // the sanity check and the re-verification query (the result re-verified last is not checked again).
  CHECK(result.counters.cache_hits == 1);
  CHECK(result.counters.queries == 2);
}
