// Waiting for the worker's GPU at the end of a run, so that a kernel's asynchronous error is
// reported by the query that launched it (as the seeds' repro_run synchronizes), within its time limit.
#pragma once

#include <optional>

#include "worker/eager_interpreter.h"

namespace minifyd::worker {

// Blocks until every kernel launched on the current GPU has finished; the failure CUDA reported,
// if any. Without a CUDA-enabled LibTorch there is nothing to wait for.
std::optional<NodeFailure> synchronize_device();

}  // namespace minifyd::worker
