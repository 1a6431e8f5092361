// Which GPUs a graph's workers see.
#include "daemon/pool/gpu_visibility.h"

#include "common/graph_devices.h"

namespace minifyd::pool {

void hide_gpus_unless_used(WorkerConfig& worker, const GraphDocument& graph) {
  if (!worker.cuda_visible_devices && !uses_cuda(graph)) worker.cuda_visible_devices = "";
}

}  // namespace minifyd::pool
