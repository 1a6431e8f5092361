// The original's eager intermediates (propagation/propagation.h), for a state whose values no earlier
// session saved: asked as the search reads them, answered while it turns the pool, collected after it.
#pragma once

#include "daemon/run/run_phase.h"

namespace minifyd::run {

bool propagation_asked(const PhaseContext& context);
// Before the search: the state's values come from a RunPropagations on the session's pool.
Expected<void> start_propagation(PhaseContext& context);

bool propagation_started(const PhaseContext& context);
// After the search: every value it asked for. A state that does not run in eager ends the run with
// that, whatever the search found; an interrupted search drops the asks (its checkpoint then has no
// values, and a resume propagates again).
Expected<void> finish_propagation(PhaseContext& context);

}  // namespace minifyd::run
