// What `minify query` reports of one evaluation, whether its worker was its own or the daemon's:
// {"fails", "verdict", "summary" (one line), and "compile_ms"/"run_ms" when the worker answered}.
#pragma once

#include <nlohmann/json.hpp>

#include "common/expected.h"
#include "daemon/pool/worker_process.h"
#include "daemon/query/failure_check.h"

namespace minifyd {

// Errors: the worker could not give a verdict (it could not start, or broke the protocol).
Expected<nlohmann::json> query_result(const WorkerOutcome& outcome, const FailureCheck& check);

}  // namespace minifyd
