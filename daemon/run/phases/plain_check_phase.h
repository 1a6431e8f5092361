// The plain check of the original (run/plain_check.h, run/plain_confirmation.h): started beside the
// search, judged once the worker's sanity check saw the original fail, and waited for once the session
// needs the pool no more. A check that refutes the original undoes what the session found.
#pragma once

#include "daemon/run/run_phase.h"

namespace minifyd::run {

// Starts the plain check of `original` (its blobs in place's store already), for a spec that has one,
// before the workers are up: the session that checks the original judges it (SessionHooks::plain_check).
void start_plain_check(PlainConfirmation& confirmation, const RunSpec& spec, const GraphDocument& original,
                       const RunPlace& place, const SessionHooks& hooks);

bool plain_check_asked(const PhaseContext& context);
// Before the search: recorded as skipped where it cannot be made; else, for a session that checks the
// original, started (unless it was before the session) and judged when the original's failure is seen.
Expected<void> arrange_plain_check(PhaseContext& context);

bool plain_verdict_asked(const PhaseContext& context);
// After the minimized graph's questions: its verdict into the checkpoint. A refuting one puts back the
// state and steps the search started from and ends the run with nothing minimized (stop unconfirmed);
// the session then drops the minimized graph's answers (RunPhase::forget).
Expected<void> take_plain_verdict(PhaseContext& context);

}  // namespace minifyd::run
