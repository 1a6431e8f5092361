// What `minify query` reports of one evaluation, whether its worker was its own or the daemon's:
// protocol::QueryResult (the verdict, whether it counts as the failure, a line for humans, and the
// worker's timings when it answered).
#pragma once

#include "common/expected.h"
#include "daemon/pool/worker_process.h"
#include "daemon/verdict/failure_check.h"
#include "protocol/daemon_replies.h"

namespace minifyd::verdict {

// Errors: the worker could not give a verdict (it could not start, or broke the protocol).
Expected<protocol::QueryResult> query_result(const pool::WorkerOutcome& outcome, const FailureCheck& check);

}  // namespace minifyd::verdict
