// The minimized graph's inputs shrunk (run --shrink-inputs, shrink/input_shrink.h): smaller sizes, plainer
// fills, no requires_grad, each kept only where plain PyTorch still shows the failure.
#pragma once

#include "daemon/run/run_phase.h"

namespace minifyd::run {

bool input_shrink_asked(const PhaseContext& context);
// The minimized graph's data shrunk (RunSpec::shrink_inputs) on the candidates' evaluator, and kept only
// where plain PyTorch shows its failure too: else the values alone are shrunk (the sizes kept), and
// failing that too the graph stays as minimized. A shrinking that cannot finish says why.
Expected<void> shrink_result_inputs(PhaseContext& context);
void forget_input_shrink(Checkpoint& checkpoint);

}  // namespace minifyd::run
