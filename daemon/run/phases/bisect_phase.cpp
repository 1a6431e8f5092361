// The bisect phase.
#include "daemon/run/phases/bisect_phase.h"

#include <utility>

#include "common/log.h"
#include "daemon/bisect/bisector.h"

namespace minifyd::run {

bool bisect_asked(const PhaseContext& context) { return context.minimized && context.checkpoint.spec.bisect; }

Expected<void> bisect_result(PhaseContext& context) {
  Checkpoint& checkpoint = context.checkpoint;
  auto found = bisect::bisect(context.pool, context.candidates, checkpoint.state.document,
                              context.place.store.root(), context.judge);
  if (found) {
    log::info("bisect: " + bisect::describe(*found) + " (" + std::to_string(found->probes.size()) + " probes)");
    checkpoint.bisect = std::move(*found);
    return {};
  }
  log::warn("bisect: " + found.error().message);
  bisect::BisectResult failed;
  failed.error = found.error().message;
  checkpoint.bisect = std::move(failed);
  return {};
}

void forget_bisect(Checkpoint& checkpoint) { checkpoint.bisect.reset(); }

}  // namespace minifyd::run
