// A worker's propagate: a graph run eagerly, every intermediate written into a content store.
#pragma once

#include <chrono>
#include <filesystem>

#include "common/expected.h"
#include "common/graph_document.h"
#include "daemon/pool/request_pool.h"
#include "protocol/worker_messages.h"

namespace minifyd::run {

// Propagates `document`, whose tensors are in the store at `store`, which receives the values
// (fx_minifier's ConcreteProp; `for_analysis`: minify analyze's, protocol/worker_messages.h).
// Errors: the worker could not answer (io) or refused the request (invalid_input).
Expected<protocol::PropagateReply> propagate(const PoolAccess& pool, const GraphDocument& document,
                                            const std::filesystem::path& store, std::chrono::milliseconds timeout,
                                            bool for_analysis = false);

}  // namespace minifyd::run
