// The bisect of the minimized graph (run --bisect, bisect/bisector.h): the compiler stage and subsystem
// its failure comes from.
#pragma once

#include "daemon/run/run_phase.h"

namespace minifyd::run {

bool bisect_asked(const PhaseContext& context);
// Under the candidates' evaluation; one that cannot finish records why, and the run's result stands.
Expected<void> bisect_result(PhaseContext& context);
void forget_bisect(Checkpoint& checkpoint);

}  // namespace minifyd::run
