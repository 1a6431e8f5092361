// A worker's propagate: a graph run eagerly, every intermediate written into a content store.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/content_store.h"
#include "common/expected.h"
#include "common/graph_document.h"
#include "daemon/pool/request_pool.h"
#include "daemon/search/search_state.h"
#include "protocol/worker_messages.h"

namespace minifyd::propagation {

// Propagates `document`, whose tensors are in the store at `store`, which receives the values
// (fx_minifier's ConcreteProp; `for_analysis`: minify analyze's, protocol/worker_messages.h).
// Errors: the worker could not answer (io) or refused the request (invalid_input).
// `libraries`: the job's operator libraries, which the graph may call.
Expected<protocol::PropagateReply> propagate(const pool::PoolAccess& pool, const GraphDocument& document,
                                            const std::filesystem::path& store, std::chrono::milliseconds timeout,
                                            const std::vector<OperatorLibrary>& libraries, bool for_analysis = false);

// A run's propagations, answered while its search turns the pool: each document the search asks
// eager values of (search::EagerValues: the original beside the sanity check, or only the failing
// prefix the bisection found) is propagated by a worker. The answers' values are rooted in `store` as
// `root` (each worker's own root dropped) before they arrive; until then a shared lock keeps a gc of
// the store away from them. Asks may come from any thread: they are posted to the pool's. Dropped,
// the unanswered requests are cancelled. A document that does not run eagerly (a kernel's crash or
// exception) is answered by its longest prefix that does: the values before the failing node.
class RunPropagations {
 public:
  // `on_answer` runs on the pool's thread after each answer (to wake a search awaiting them).
  // `libraries`: the run's operator libraries, which its graphs may call.
  RunPropagations(const pool::PoolAccess& pool, const ContentStore& store, const protocol::VouchedBlobs& vouched,
                  std::string root, std::chrono::milliseconds timeout, std::vector<OperatorLibrary> libraries,
                  std::function<void()> on_answer);
  ~RunPropagations();
  RunPropagations(const RunPropagations&) = delete;
  RunPropagations& operator=(const RunPropagations&) = delete;

  std::shared_ptr<const search::EagerValues> values() const;
  // Turns the pool until every ask so far is answered: why values did not come, if an ask failed.
  Expected<void> finish();

 private:
  struct Shared;
  std::shared_ptr<Shared> shared_;
};

}  // namespace minifyd::propagation
