// The search (search/minifier.h) from the checkpoint's state, on the session's evaluator and cache, the
// checkpoint saved after every accepted reduction; then its result taken: the minimized graph kept,
// unless the plain check refuted the original meanwhile.
#pragma once

#include "daemon/run/run_phase.h"

namespace minifyd::run {

bool search_asked(const PhaseContext& context);
// Runs the search until it finishes, a budget runs out, the pool fails or it is interrupted; its result
// is left in the context (a failed search too: the propagation beside it is collected first).
Expected<void> search_graph(PhaseContext& context);
// The search's result into the checkpoint: a failed search ends the session with its error; a
// minimized state replaces the checkpoint's unless the plain check refuted the original.
Expected<void> take_search_result(PhaseContext& context);

}  // namespace minifyd::run
