// remove-outputs alone: returned values dropped in chunks until one is left.
#include <catch2/catch.hpp>

#include "tests/support/run_search.h"
#include "tests/support/search_case.h"

using namespace minifyd;
using namespace minifyd::search;
using namespace minifyd::search::test;

namespace {

bool returns_cos(const GraphDocument& document) {
  bool found = false;
  for_each_node_ref(document.graph.output()->args()[0],
                    [&](Node* node) { found = found || node->target() == "aten::cos"; });
  return found;
}

}  // namespace

TEST_CASE("remove-outputs keeps only the returned value that fails", "[search]") {
  SearchCase c;
  Node* x = c.input("x");
  Node* sin = c.call("sin", "aten::sin", {NodeRef{x}});
  Node* cos = c.call("cos", "aten::cos", {NodeRef{x}});
  Node* tan = c.call("tan", "aten::tan", {NodeRef{x}});
  Node* exp = c.call("exp", "aten::exp", {NodeRef{x}});
  c.output_tuple({exp, tan, cos, sin});
  PredicateEvaluator evaluator(returns_cos);

  SearchResult result = run_search(c.build(), evaluator, {"remove-outputs"});
  // Nothing else runs, so the nodes that no longer reach the output stay.
  CHECK(result.best.document.graph.size() == 6);
  CHECK(input_count(result.best) == 1);
  CHECK(output_count(result.best.document.graph) == 1);
  CHECK(returns_cos(result.best.document));
  // Chunks of 2 at granularity 4 (without {sin, cos} it passes, without {tan, exp} it fails),
  // then chunks of 1 in the last resort round.
  CHECK(result.counters.accepted == 2);
}
