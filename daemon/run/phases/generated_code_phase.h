// The minimized graph's generated code (run/generated_code.h), for a backend that generates code.
#pragma once

#include "daemon/run/run_phase.h"

namespace minifyd::run {

bool generated_code_asked(const PhaseContext& context);
Expected<void> generated_code_of_result(PhaseContext& context);
void forget_generated_code(Checkpoint& checkpoint);

}  // namespace minifyd::run
