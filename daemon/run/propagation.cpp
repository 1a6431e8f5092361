// One propagate request, waited for at once; or those a search asks for while it runs.
#include "daemon/run/propagation.h"

#include <atomic>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include <boost/asio/post.hpp>

#include "common/graph_codec.h"

namespace minifyd::run {
namespace {

protocol::PropagateRequest propagate_request(const GraphDocument& document, const std::filesystem::path& store,
                                             const std::vector<OperatorLibrary>& libraries, bool for_analysis) {
  protocol::PropagateRequest request;
  request.graph = encode_graph_document(document);
  request.store = store.string();
  request.for_analysis = for_analysis;
  request.op_libraries = libraries;
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

}  // namespace

Expected<protocol::PropagateReply> propagate(const PoolAccess& pool, const GraphDocument& document,
                                            const std::filesystem::path& store, std::chrono::milliseconds timeout,
                                            const std::vector<OperatorLibrary>& libraries, bool for_analysis) {
  return reply_of(request_and_wait(pool, propagate_request(document, store, libraries, for_analysis), timeout));
}

// What the asks, posted from any thread, and the answers, on the pool's, share.
struct RunPropagations::Shared : std::enable_shared_from_this<Shared> {
  Shared(const PoolAccess& pool, const ContentStore& store, const protocol::VouchedBlobs& vouched, std::string root,
         std::chrono::milliseconds timeout, std::vector<OperatorLibrary> libraries, std::function<void()> on_answer)
      : pool(pool), store(store), vouched(vouched), root(std::move(root)), timeout(timeout),
        libraries(std::move(libraries)), on_answer(std::move(on_answer)) {}

  // On the pool's thread: `document` propagated as the values' ask `ask`.
  void submit(std::size_t ask, const GraphDocument& document) {
    auto lock = store.lock_shared();
    if (!lock) return answer_failed(lock.error().with_context("locking the store for the values"));
    protocol::PropagateRequest request = propagate_request(document, store.root(), libraries, false);
    request.vouched = protocol::vouched_for(vouched, document);
    auto held = std::make_shared<std::optional<StoreLock>>(std::move(*lock));
    auto ticket = std::make_shared<RequestPool::Ticket>();
    *ticket = pool.pool.submit(std::move(request), timeout,
                               [alive = weak_from_this(), ask, held, ticket](WorkerOutcome outcome) {
                                 auto shared = alive.lock();
                                 if (!shared) return;
                                 shared->tickets.erase(*ticket);
                                 auto values = shared->rooted(reply_of(outcome));
                                 held->reset();
                                 if (values)
                                   shared->answer(ask, *values);
                                 else
                                   shared->answer_failed(values.error());
                               });
    tickets.insert(*ticket);
  }

  // The reply's values rooted, with every earlier answer's, as `root`, the worker's root dropped.
  Expected<search::EagerValueMap> rooted(Expected<protocol::PropagateReply> reply) {
    if (!reply) return reply.error();
    for (const auto& value : reply->values) rooted_hashes.push_back(value.storage.hash);
    if (auto written = store.write_root(root, rooted_hashes); !written) return written.error();
    if (auto removed = store.remove_root(reply->root); !removed) return removed.error();
    return search::eager_values_from(reply->values);
  }

  void answer(std::size_t ask, const search::EagerValueMap& arrived) {
    values->arrive(ask, arrived);
    --unanswered;
    if (on_answer) on_answer();
  }

  void answer_failed(Error why) {
    if (!error) error = std::move(why);
    values->fail();
    --unanswered;
    if (on_answer) on_answer();
  }

  const PoolAccess& pool;
  ContentStore store;
  protocol::VouchedBlobs vouched;
  std::string root;
  std::chrono::milliseconds timeout;
  std::vector<OperatorLibrary> libraries;
  std::function<void()> on_answer;  // dropped with the RunPropagations: a cancel is answered later
  std::shared_ptr<search::EagerValues> values;
  std::atomic<std::size_t> unanswered{0};  // asks made (on any thread) and not answered
  std::set<RequestPool::Ticket> tickets;   // submitted and not answered
  std::vector<std::string> rooted_hashes;
  std::optional<Error> error;
};

RunPropagations::RunPropagations(const PoolAccess& pool, const ContentStore& store,
                                 const protocol::VouchedBlobs& vouched, std::string root,
                                 std::chrono::milliseconds timeout, std::vector<OperatorLibrary> libraries,
                                 std::function<void()> on_answer)
    : pool_(pool),
      shared_(std::make_shared<Shared>(pool, store, vouched, std::move(root), timeout, std::move(libraries),
                                       std::move(on_answer))) {
  shared_->values = search::EagerValues::asked_through(
      [&io = pool.io, alive = std::weak_ptr<Shared>(shared_)](std::size_t ask, GraphDocument document) {
        auto shared = alive.lock();
        if (!shared) return;
        ++shared->unanswered;
        boost::asio::post(io, [alive, ask, document = std::move(document)] {
          if (auto shared = alive.lock()) shared->submit(ask, document);
        });
      });
}

RunPropagations::~RunPropagations() {
  shared_->on_answer = nullptr;
  for (RequestPool::Ticket ticket : std::set<RequestPool::Ticket>(shared_->tickets)) pool_.pool.cancel(ticket);
}

std::shared_ptr<const search::EagerValues> RunPropagations::values() const { return shared_->values; }

Expected<void> RunPropagations::finish() {
  while (shared_->unanswered.load() != 0 && pool_.io.run_one() != 0) {
  }
  if (shared_->unanswered.load() != 0)
    return make_error(ErrorKind::io, "the worker pool stopped before the propagation was answered");
  if (shared_->error) return *shared_->error;
  return {};
}

}  // namespace minifyd::run
