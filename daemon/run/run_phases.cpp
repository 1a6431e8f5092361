// The list: one entry per phase of the files under phases/.
#include "daemon/run/run_phases.h"

#include "daemon/run/phases/analysis_phase.h"
#include "daemon/run/phases/bisect_phase.h"
#include "daemon/run/phases/generated_code_phase.h"
#include "daemon/run/phases/input_shrink_phase.h"
#include "daemon/run/phases/plain_check_phase.h"
#include "daemon/run/phases/propagation_phase.h"
#include "daemon/run/phases/result_store_phase.h"
#include "daemon/run/phases/search_phase.h"

namespace minifyd::run {

const std::vector<RunPhase>& session_phases() {
  static const std::vector<RunPhase> phases{
      {"analysis", analysis_asked, analyze_original},
      {"propagation", propagation_asked, start_propagation},
      {"plain-check", plain_check_asked, arrange_plain_check},
      {"search", search_asked, search_graph, nullptr, "search"},
      {"propagation-end", propagation_started, finish_propagation},
      {"search-result", search_asked, take_search_result},
      {"shrink-inputs", input_shrink_asked, shrink_result_inputs, forget_input_shrink, "after_search"},
      {"bisect", bisect_asked, bisect_result, forget_bisect, "after_search"},
      {"generated-code", generated_code_asked, generated_code_of_result, forget_generated_code, "after_search"},
      {"plain-verdict", plain_verdict_asked, take_plain_verdict},
      {"result-store", result_store_asked, keep_only_result},
  };
  return phases;
}

}  // namespace minifyd::run
