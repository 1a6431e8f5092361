// A worker's propagate: a graph run eagerly, every intermediate written into a content store.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "common/content_store.h"
#include "common/expected.h"
#include "common/graph_document.h"
#include "daemon/pool/request_pool.h"
#include "daemon/search/search_state.h"
#include "protocol/worker_messages.h"

namespace minifyd::run {

// Propagates `document`, whose tensors are in the store at `store`, which receives the values
// (fx_minifier's ConcreteProp; `for_analysis`: minify analyze's, protocol/worker_messages.h).
// Errors: the worker could not answer (io) or refused the request (invalid_input).
Expected<protocol::PropagateReply> propagate(const PoolAccess& pool, const GraphDocument& document,
                                            const std::filesystem::path& store, std::chrono::milliseconds timeout,
                                            bool for_analysis = false);

// A run's propagate, answered while its search turns the pool: the original's eager values come
// beside the sanity check and the prefix bisection, which need none (the search awaits them before
// any step that may need them, search/search_state.h). The answer's values are rooted in `store`
// as `root` (the worker's own root dropped) before they arrive; until then a shared lock keeps a gc
// of the store away from them. Dropped unanswered, the request is cancelled.
class PropagationInFlight {
 public:
  // `on_answer` runs on the pool's thread once values() is no longer pending (to wake a search
  // awaiting them).
  PropagationInFlight(const PoolAccess& pool, const GraphDocument& document, const ContentStore& store,
                      const protocol::VouchedBlobs& vouched, std::string root, std::chrono::milliseconds timeout,
                      std::function<void()> on_answer);
  ~PropagationInFlight();
  PropagationInFlight(const PropagationInFlight&) = delete;
  PropagationInFlight& operator=(const PropagationInFlight&) = delete;

  // Pending until the answer; failed when it brought no values.
  std::shared_ptr<const search::EagerValues> values() const;
  // Turns the pool until the answer came: why no values came, if none did.
  Expected<void> finish();

 private:
  struct Answer;
  const PoolAccess& pool_;
  RequestPool::Ticket ticket_ = 0;
  std::shared_ptr<Answer> answer_;
};

}  // namespace minifyd::run
