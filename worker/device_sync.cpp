// Synchronizing the GPU.
#include "worker/device_sync.h"

#ifdef MINIFYD_TORCH_CUDA
#include <c10/cuda/CUDAFunctions.h>
#endif

#include "worker/graph_values.h"

namespace minifyd::worker {

std::optional<NodeFailure> synchronize_device() {
#ifdef MINIFYD_TORCH_CUDA
  try {
    c10::cuda::device_synchronize();
  } catch (const std::exception& error) {
    return exception_failure(nullptr, &error);
  }
#endif
  return std::nullopt;
}

}  // namespace minifyd::worker
