// One propagate request, answered or not; waited for at once, or while a search runs.
#include "daemon/run/propagation.h"

#include <optional>
#include <utility>
#include <vector>

#include "common/graph_codec.h"

namespace minifyd::run {
namespace {

protocol::PropagateRequest propagate_request(const GraphDocument& document, const std::filesystem::path& store,
                                             bool for_analysis) {
  protocol::PropagateRequest request;
  request.graph = encode_graph_document(document);
  request.store = store.string();
  request.for_analysis = for_analysis;
  return request;
}

Expected<protocol::PropagateReply> reply_of(const WorkerOutcome& outcome) {
  if (auto* fault = std::get_if<WorkerFault>(&outcome))
    return make_error(ErrorKind::io, fault->describe() +
                                         (fault->stderr_tail.empty() ? "" : "\nworker stderr:\n" + fault->stderr_tail));
  const auto& reply = std::get<protocol::WorkerReply>(outcome);
  if (auto* error = std::get_if<protocol::ErrorReply>(&reply)) return make_error(ErrorKind::invalid_input, error->message);
  auto* propagated = std::get_if<protocol::PropagateReply>(&reply);
  if (propagated == nullptr) return make_error(ErrorKind::io, "the worker answered a propagate with another reply");
  return *propagated;
}

// The reply's values rooted as `root`, the worker's root dropped.
Expected<search::EagerValueMap> rooted_values(Expected<protocol::PropagateReply> reply, const ContentStore& store,
                                              const std::string& root) {
  if (!reply) return reply.error();
  std::vector<std::string> hashes;
  for (const auto& value : reply->values) hashes.push_back(value.storage.hash);
  if (auto rooted = store.write_root(root, hashes); !rooted) return rooted.error();
  if (auto removed = store.remove_root(reply->root); !removed) return removed.error();
  return search::eager_values_from(reply->values);
}

}  // namespace

Expected<protocol::PropagateReply> propagate(const PoolAccess& pool, const GraphDocument& document,
                                            const std::filesystem::path& store, std::chrono::milliseconds timeout,
                                            bool for_analysis) {
  return reply_of(request_and_wait(pool, propagate_request(document, store, for_analysis), timeout));
}

// The values (pending until the answer) and, when none came, why.
struct PropagationInFlight::Answer {
  std::shared_ptr<search::EagerValues> values = search::EagerValues::awaited();
  std::optional<Error> error;
  std::optional<StoreLock> lock;
  std::function<void()> on_answer;  // dropped with the PropagationInFlight: a cancel is answered later

  void fail(Error why) {
    error = std::move(why);
    values->fail();
  }
};

PropagationInFlight::PropagationInFlight(const PoolAccess& pool, const GraphDocument& document,
                                         const ContentStore& store, const protocol::VouchedBlobs& vouched,
                                         std::string root, std::chrono::milliseconds timeout,
                                         std::function<void()> on_answer)
    : pool_(pool), answer_(std::make_shared<Answer>()) {
  answer_->on_answer = std::move(on_answer);
  auto lock = store.lock_shared();
  if (!lock) {
    answer_->fail(lock.error().with_context("locking the store for the values"));
    return;
  }
  answer_->lock.emplace(std::move(*lock));
  protocol::PropagateRequest request = propagate_request(document, store.root(), false);
  request.vouched = protocol::vouched_for(vouched, document);
  ticket_ = pool.pool.submit(std::move(request), timeout,
                             [answer = answer_, store, root = std::move(root)](WorkerOutcome outcome) {
                               auto values = rooted_values(reply_of(outcome), store, root);
                               answer->lock.reset();
                               if (values)
                                 answer->values->arrive(std::move(*values));
                               else
                                 answer->fail(values.error());
                               if (answer->on_answer) answer->on_answer();
                             });
}

PropagationInFlight::~PropagationInFlight() {
  answer_->on_answer = nullptr;
  if (answer_->values->pending()) pool_.pool.cancel(ticket_);
}

std::shared_ptr<const search::EagerValues> PropagationInFlight::values() const { return answer_->values; }

Expected<void> PropagationInFlight::finish() {
  while (answer_->values->pending() && pool_.io.run_one() != 0) {
  }
  if (answer_->values->pending())
    return make_error(ErrorKind::io, "the worker pool stopped before the propagation was answered");
  if (answer_->error) return *answer_->error;
  return {};
}

}  // namespace minifyd::run
