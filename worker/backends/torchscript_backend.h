// The `torchscript` backend: the graph lowered to a TorchScript graph and run by the profiling
// graph executor with its optimisation passes and fusers on.
#pragma once

#include <memory>

#include "common/expected.h"
#include "worker/backend.h"

namespace minifyd::worker {

// Options: warmup=N, the executor runs made before the measured run on the first call of run()
// (default: the profiling runs plus the one that builds the optimised plan). An unknown option
// or a bad value is an error.
Expected<std::unique_ptr<Backend>> make_torchscript_backend(const BackendOptions& options = {});

}  // namespace minifyd::worker
