// The registry: fx_minifier's strategies under their command-line names, in the seed's order.
#include <catch2/catch.hpp>

#include "daemon/search/strategy_registry.h"

using namespace minifyd::search;

TEST_CASE("the registry lists fx_minifier's strategies in try order", "[search]") {
  std::vector<std::string> names;
  for (const Strategy& strategy : all_strategies()) names.emplace_back(strategy.name);
  CHECK(names == std::vector<std::string>{"remove-outputs", "eliminate-dead-code", "remove-unused-inputs",
                                          "consolidate-inputs", "truncate-suffix", "delta-debugging"});
  CHECK(find_strategy("delta-debugging")->role == StrategyRole::granular);
  CHECK(find_strategy("Delta Debugging") == nullptr);
}

TEST_CASE("selection keeps registry order and names an unknown strategy", "[search]") {
  auto selected = select_strategies({"delta-debugging", "truncate-suffix"});
  REQUIRE(selected.has_value());
  REQUIRE(selected->size() == 2);
  CHECK((*selected)[0]->name == "truncate-suffix");
  CHECK((*selected)[1]->name == "delta-debugging");
  CHECK(select_strategies({})->size() == all_strategies().size());

  auto unknown = select_strategies({"bisect"});
  REQUIRE_FALSE(unknown.has_value());
  CHECK(unknown.error().message ==
        "unknown strategy 'bisect' (remove-outputs, eliminate-dead-code, remove-unused-inputs, "
        "consolidate-inputs, truncate-suffix, delta-debugging)");
}
