// A command's pool configuration.
#include "daemon/pool/command_pool.h"

#include <utility>

#include "daemon/pool/gpu_visibility.h"

namespace minifyd::pool {

Expected<PoolConfig> command_pool_config(const std::string& backend, const WorkerPrograms& programs,
                                         const process::SandboxLimits& limits, const GraphDocument& document,
                                         std::vector<PoolSlot> slots) {
  auto worker = worker_config_for(backend, programs);
  if (!worker) return worker.error();
  PoolConfig config;
  config.worker = std::move(*worker);
  config.worker.limits = limits;
  hide_gpus_unless_used(config.worker, document);
  if (!slots.empty()) config.slots = std::move(slots);
  return config;
}

}  // namespace minifyd::pool
