// The list: one entry per file under phases/.
#include "daemon/run/run_phases.h"

#include "daemon/run/phases/bisect_phase.h"
#include "daemon/run/phases/generated_code_phase.h"
#include "daemon/run/phases/input_shrink_phase.h"

namespace minifyd::run {

const std::vector<RunPhase>& after_search_phases() {
  static const std::vector<RunPhase> phases{
      {"shrink-inputs", input_shrink_asked, shrink_result_inputs, forget_input_shrink},
      {"bisect", bisect_asked, bisect_result, forget_bisect},
      {"generated-code", generated_code_asked, generated_code_of_result, forget_generated_code},
  };
  return phases;
}

}  // namespace minifyd::run
