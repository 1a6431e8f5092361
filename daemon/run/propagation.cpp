// One propagate request, answered or not.
#include "daemon/run/propagation.h"

#include "common/graph_codec.h"

namespace minifyd::run {

Expected<protocol::PropagateReply> propagate(const PoolAccess& pool, const GraphDocument& document,
                                            const std::filesystem::path& store, std::chrono::milliseconds timeout,
                                            bool for_analysis) {
  protocol::PropagateRequest request;
  request.graph = encode_graph_document(document);
  request.store = store.string();
  request.for_analysis = for_analysis;
  WorkerOutcome outcome = request_and_wait(pool, std::move(request), timeout);
  if (auto* fault = std::get_if<WorkerFault>(&outcome))
    return make_error(ErrorKind::io, fault->describe() +
                                         (fault->stderr_tail.empty() ? "" : "\nworker stderr:\n" + fault->stderr_tail));
  const auto& reply = std::get<protocol::WorkerReply>(outcome);
  if (auto* error = std::get_if<protocol::ErrorReply>(&reply)) return make_error(ErrorKind::invalid_input, error->message);
  auto* propagated = std::get_if<protocol::PropagateReply>(&reply);
  if (propagated == nullptr) return make_error(ErrorKind::io, "the worker answered a propagate with another reply");
  return *propagated;
}

}  // namespace minifyd::run
