// The generated code phase.
#include "daemon/run/phases/generated_code_phase.h"

#include "daemon/run/generated_code.h"

namespace minifyd::run {

bool generated_code_asked(const PhaseContext& context) {
  return context.minimized && generates_code(context.candidates);
}

Expected<void> generated_code_of_result(PhaseContext& context) {
  context.checkpoint.generated_code = generated_code(context.pool, context.candidates,
                                                     context.checkpoint.state.document, context.place.store.root());
  return {};
}

void forget_generated_code(Checkpoint& checkpoint) { checkpoint.generated_code.reset(); }

}  // namespace minifyd::run
