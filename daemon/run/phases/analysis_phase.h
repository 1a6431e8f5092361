// The original analyzed before its search (--analyze: both modes and the analysis's files saved where
// the run's outputs go; --analyze-first: in place alone, for where the search begins), once per run.
#pragma once

#include "daemon/run/run_phase.h"

namespace minifyd::run {

bool analysis_asked(const PhaseContext& context);
Expected<void> analyze_original(PhaseContext& context);

}  // namespace minifyd::run
