// The pool a command of its own runs a graph on (minify query, analyze, bisect and run): one place that
// says which worker serves the backend, with which limits, seeing which GPUs, in which slots.
#pragma once

#include <string>
#include <vector>

#include "common/expected.h"
#include "common/graph_document.h"
#include "daemon/pool/worker_config.h"
#include "daemon/pool/worker_pool.h"
#include "daemon/pool/worker_program.h"

namespace minifyd::pool {

// The program serving `backend` (worker_config_for) under `limits`, every GPU hidden from workers of a
// `document` that touches none (hide_gpus_unless_used), in `slots` (the pool's one default slot when
// empty). Errors: no program serves the backend, or its python has no torch for it.
Expected<PoolConfig> command_pool_config(const std::string& backend, const WorkerPrograms& programs,
                                         const process::SandboxLimits& limits, const GraphDocument& document,
                                         std::vector<PoolSlot> slots = {});

}  // namespace minifyd::pool
