// The phases of a run's session (run/run_phase.h), in order: one line each.
#pragma once

#include <vector>

#include "daemon/run/run_phase.h"

namespace minifyd::run {

// The original analyzed; its propagation and plain check started; the search; the propagation
// collected and the search's result taken; the minimized graph's questions (its inputs shrunk first,
// as the later ones ask of the graph the run keeps, then the bisect, then the generated code); the
// plain check's verdict; the store left with the result.
const std::vector<RunPhase>& session_phases();

}  // namespace minifyd::run
