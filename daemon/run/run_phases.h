// The phases a run answers after its search (run/run_phase.h), in order: one line each.
#pragma once

#include <vector>

#include "daemon/run/run_phase.h"

namespace minifyd::run {

// The inputs shrunk first (the later phases ask of the graph the run keeps), then the bisect, then the
// generated code.
const std::vector<RunPhase>& after_search_phases();

}  // namespace minifyd::run
