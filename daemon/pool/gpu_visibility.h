// Which GPUs a graph's workers see.
#pragma once

#include "common/graph_document.h"
#include "daemon/pool/worker_config.h"

namespace minifyd::pool {

// Hides every GPU from the workers of a graph that touches no CUDA device (uses_cuda), unless the
// config already says which they see: each worker would otherwise create a CUDA context (hundreds
// of MiB of GPU memory and seconds of start-up, in every worker, on a machine whose GPUs other jobs
// use) for nothing, and the Python worker serves one request at a time once it has one. A pool
// slot that pins GPUs (--gpus) still overrides this.
void hide_gpus_unless_used(WorkerConfig& worker, const GraphDocument& graph);

}  // namespace minifyd::pool
