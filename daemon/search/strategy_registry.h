// The one list of reduction strategies: it drives --strategies, --list-strategies and the search.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/expected.h"
#include "daemon/search/strategy.h"

namespace minifyd::search {

// Every strategy, in the order fx_minifier's try_granularity tries them. Immutable; thread-safe.
const std::vector<Strategy>& all_strategies();

// nullptr when no strategy has that name.
const Strategy* find_strategy(std::string_view name);

// The named strategies in registry order (all of them when `names` is empty); an unknown name is an
// invalid_input error listing the known ones.
Expected<std::vector<const Strategy*>> select_strategies(const std::vector<std::string>& names);

}  // namespace minifyd::search
