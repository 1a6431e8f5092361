// The registry: one entry per file under strategies/.
#include "daemon/search/strategy_registry.h"

#include "daemon/search/strategies/consolidate_inputs.h"
#include "daemon/search/strategies/delta_debugging.h"
#include "daemon/search/strategies/eliminate_dead_code.h"
#include "daemon/search/strategies/remove_outputs.h"
#include "daemon/search/strategies/remove_unused_inputs.h"
#include "daemon/search/strategies/truncate_suffix.h"

namespace minifyd::search {

const std::vector<Strategy>& all_strategies() {
  static const std::vector<Strategy> strategies{
      {"remove-outputs", StrategyRole::outputs, propose_remove_outputs,
       "drop chunks of the returned values"},
      {"eliminate-dead-code", StrategyRole::non_granular, propose_eliminate_dead_code,
       "erase nodes nothing uses"},
      {"remove-unused-inputs", StrategyRole::non_granular, propose_remove_unused_inputs,
       "drop inputs nothing reads"},
      {"consolidate-inputs", StrategyRole::non_granular, propose_consolidate_inputs,
       "make stored values fed before the first computation graph inputs"},
      {"truncate-suffix", StrategyRole::granular, propose_truncate_suffix,
       "cut the graph after a node and return it"},
      {"delta-debugging", StrategyRole::granular, propose_delta_debugging,
       "replace a range of nodes by their stored eager values"},
  };
  return strategies;
}

const Strategy* find_strategy(std::string_view name) {
  for (const Strategy& strategy : all_strategies())
    if (strategy.name == name) return &strategy;
  return nullptr;
}

Expected<std::vector<const Strategy*>> select_strategies(const std::vector<std::string>& names) {
  std::vector<const Strategy*> selected;
  for (const std::string& name : names) {
    if (find_strategy(name) != nullptr) continue;
    std::string known;
    for (const Strategy& strategy : all_strategies()) known += (known.empty() ? "" : ", ") + std::string(strategy.name);
    return make_error(ErrorKind::invalid_input, "unknown strategy '" + name + "' (" + known + ")");
  }
  for (const Strategy& strategy : all_strategies()) {
    bool named = names.empty();
    for (const std::string& name : names) named = named || strategy.name == name;
    if (named) selected.push_back(&strategy);
  }
  return selected;
}

}  // namespace minifyd::search
