// Runs the whole search on a test case with the named strategies (all when none are named).
#pragma once

#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "daemon/search/minifier.h"
#include "daemon/search/strategy_registry.h"
#include "tests/support/fake_evaluators.h"

namespace minifyd::search::test {

inline SearchResult run_search(SearchState state, CandidateEvaluator& evaluator,
                               const std::vector<std::string>& strategies = {}, SearchOptions options = {},
                               const Clock* clock = nullptr) {
  auto selected = select_strategies(strategies);
  REQUIRE(selected.has_value());
  options.strategies = *selected;
  VerdictCache cache("test");
  FakeClock still;
  auto result = minify(std::move(state), evaluator, cache, clock != nullptr ? *clock : still, options);
  if (!result) FAIL(result.error().message);
  SearchResult found = std::move(*result);
  CHECK(document_problems(found.best.document).empty());
  return found;
}

}  // namespace minifyd::search::test
