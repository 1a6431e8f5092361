// The generated code phase.
#include "daemon/run/phases/generated_code_phase.h"

#include "daemon/run/generated_code.h"

namespace minifyd::run {

bool generated_code_asked(const RunSpec&, const verdict::EvaluationSpec& candidates) {
  return generates_code(candidates);
}

void generated_code_of_result(PhaseContext& context) {
  context.checkpoint.generated_code = generated_code(context.pool, context.candidates,
                                                     context.checkpoint.state.document, context.place.store.root());
}

void forget_generated_code(Checkpoint& checkpoint) { checkpoint.generated_code.reset(); }

}  // namespace minifyd::run
