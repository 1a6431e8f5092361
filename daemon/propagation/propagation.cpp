// One propagate request, waited for at once; or those a search asks for while it runs.
#include "daemon/propagation/propagation.h"

#include <atomic>
#include <optional>
#include <utility>
#include <vector>

#include <boost/asio/post.hpp>

#include "common/graph_codec.h"
#include "common/log.h"
#include "daemon/pool/request_batch.h"
#include "daemon/search/strategies/truncate_suffix.h"

namespace minifyd::propagation {
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

// Whether a propagation failed because the graph itself does not run eagerly (a kernel's crash, an
// exception, the worker exiting under it), not for want of an answer (a timeout, a cancel, a worker
// that could not start or spoke out of turn).
bool failed_in_eager_run(const pool::WorkerOutcome& outcome) {
  if (auto* fault = std::get_if<pool::WorkerFault>(&outcome))
    return fault->kind == pool::WorkerFault::Kind::crashed || fault->kind == pool::WorkerFault::Kind::exited;
  return std::holds_alternative<protocol::ErrorReply>(std::get<protocol::WorkerReply>(outcome));
}

Expected<protocol::PropagateReply> reply_of(const pool::WorkerOutcome& outcome) {
  if (auto* fault = std::get_if<pool::WorkerFault>(&outcome))
    return make_error(ErrorKind::io, fault->describe() +
                                         (fault->stderr_tail.empty() ? "" : "\nworker stderr:\n" + fault->stderr_tail));
  const auto& reply = std::get<protocol::WorkerReply>(outcome);
  if (auto* error = std::get_if<protocol::ErrorReply>(&reply)) return make_error(ErrorKind::invalid_input, error->message);
  auto* propagated = std::get_if<protocol::PropagateReply>(&reply);
  if (propagated == nullptr) return make_error(ErrorKind::io, "the worker answered a propagate with another reply");
  return *propagated;
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

}  // namespace

Expected<protocol::PropagateReply> propagate(const pool::PoolAccess& pool, const GraphDocument& document,
                                            const std::filesystem::path& store, std::chrono::milliseconds timeout,
                                            const std::vector<OperatorLibrary>& libraries, bool for_analysis) {
  return reply_of(pool::RequestBatch(pool).ask(propagate_request(document, store, libraries, for_analysis), timeout));
}

// What the asks, posted from any thread, and the answers, on the pool's, share.
struct RunPropagations::Shared {
  Shared(const pool::PoolAccess& access, const ContentStore& values_store, const protocol::VouchedBlobs& vouched_blobs,
         std::string root_name, std::chrono::milliseconds request_timeout, std::vector<OperatorLibrary> job_libraries,
         std::function<void()> answered)
      : batch(access), store(values_store), vouched(vouched_blobs), root(std::move(root_name)),
        timeout(request_timeout), libraries(std::move(job_libraries)), on_answer(std::move(answered)) {}

  // On the pool's thread: `document` propagated as the values' ask `ask`; where the graph does not run
  // eagerly, its longest prefix that does (PrefixSearch).
  void submit(std::size_t ask, GraphDocument document) {
    auto asked = std::make_shared<GraphDocument>(std::move(document));
    request(*asked, [this, ask, asked](bool eager_run_failed, Expected<search::EagerValueMap> arrived) {
      if (arrived) return answer(ask, *arrived);
      if (!eager_run_failed) return answer_failed(arrived.error());
      start_prefix_search(ask, std::move(*asked), arrived.error());
    });
  }

  // On the pool's thread: `document` propagated, its values rooted, then `done` called with them and
  // whether the graph's eager run failed (on the pool's thread, unless the RunPropagations is gone first).
  using Done = std::function<void(bool eager_run_failed, Expected<search::EagerValueMap>)>;
  void request(const GraphDocument& document, Done done) {
    auto lock = store.lock_shared();
    if (!lock) return done(false, lock.error().with_context("locking the store for the values"));
    protocol::PropagateRequest request = propagate_request(document, store.root(), libraries, false);
    request.vouched = protocol::vouched_for(vouched, document);
    auto held = std::make_shared<std::optional<StoreLock>>(std::move(*lock));
    batch.submit(std::move(request), timeout, [this, held, done = std::move(done)](pool::WorkerOutcome outcome) {
      auto arrived = rooted(reply_of(outcome));
      held->reset();
      done(failed_in_eager_run(outcome), std::move(arrived));
    });
  }

  // A graph whose eager run fails at one of its nodes (fx_minifier's ConcreteProp would die there: a
  // vendor's operator whose own kernel crashes on a shape) still has the values of the nodes before
  // it, and a search may load those: the longest prefix that propagates is found by bisection over
  // the graph's computations, one prefix a round (truncated_at), and answers the ask; the failing node
  // and those after it keep no stored value, so the search never turns them into loads.
  struct PrefixSearch {
    std::size_t ask;
    search::SearchState whole;      // the asked document, without loads: each probe a truncated_at() of it
    std::vector<std::size_t> cuts;  // its computations (is_cut_point), by index among its nodes
    std::size_t passing = 0;        // the longest prefix known to propagate: cuts[0, passing)
    std::size_t failing = 0;        // the shortest known not to: cuts[0, failing)
    search::EagerValueMap values;   // the longest passing prefix's
    Error why;                      // how the whole document failed
  };

  void start_prefix_search(std::size_t ask, GraphDocument document, Error why) {
    auto prefixes = std::make_shared<PrefixSearch>(
        PrefixSearch{ask, search::SearchState{std::move(document), {}, nullptr}, {}, 0, 0, {}, std::move(why)});
    std::vector<Node*> nodes = prefixes->whole.document.graph.nodes();
    for (std::size_t index = 0; index < nodes.size(); ++index)
      if (search::is_cut_point(prefixes->whole, *nodes[index])) prefixes->cuts.push_back(index);
    prefixes->failing = prefixes->cuts.size();
    probe_prefix(prefixes);
  }

  void probe_prefix(const std::shared_ptr<PrefixSearch>& prefixes) {
    if (prefixes->failing <= prefixes->passing + 1) return end_prefix_search(*prefixes);
    std::size_t length = prefixes->passing + (prefixes->failing - prefixes->passing) / 2;
    search::SearchState prefix = search::truncated_at(prefixes->whole, prefixes->cuts[length - 1]);
    request(prefix.document, [this, prefixes, length](bool eager_run_failed, Expected<search::EagerValueMap> arrived) {
      if (arrived) {
        prefixes->passing = length;
        prefixes->values = std::move(*arrived);
      } else if (eager_run_failed) {
        prefixes->failing = length;
      } else {
        return answer_failed(arrived.error());
      }
      probe_prefix(prefixes);
    });
  }

  void end_prefix_search(const PrefixSearch& prefixes) {
    std::string where;
    if (prefixes.passing < prefixes.cuts.size())
      where = " at node " + prefixes.whole.document.graph.nodes()[prefixes.cuts[prefixes.passing]]->name();
    log::warn("the graph does not run eagerly" + where + " (" + first_line(prefixes.why.message) + "): the " +
              std::to_string(prefixes.passing) + " computations before it keep their values, the " +
              std::to_string(prefixes.cuts.size() - prefixes.passing) + " from there on are never loaded");
    answer(prefixes.ask, prefixes.values);
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

  pool::RequestBatch batch;
  ContentStore store;
  protocol::VouchedBlobs vouched;
  std::string root;
  std::chrono::milliseconds timeout;
  std::vector<OperatorLibrary> libraries;
  std::function<void()> on_answer;  // dropped with the RunPropagations: a cancel is answered later
  std::shared_ptr<search::EagerValues> values;
  std::atomic<std::size_t> unanswered{0};  // asks made (on any thread) and not answered
  std::vector<std::string> rooted_hashes;
  std::optional<Error> error;
};

RunPropagations::RunPropagations(const pool::PoolAccess& pool, const ContentStore& store,
                                 const protocol::VouchedBlobs& vouched, std::string root,
                                 std::chrono::milliseconds timeout, std::vector<OperatorLibrary> libraries,
                                 std::function<void()> on_answer)
    : shared_(std::make_shared<Shared>(pool, store, vouched, std::move(root), timeout, std::move(libraries),
                                       std::move(on_answer))) {
  shared_->values = search::EagerValues::asked_through(
      [&io = pool.io, alive = std::weak_ptr<Shared>(shared_)](std::size_t ask, GraphDocument document) {
        auto shared = alive.lock();
        if (!shared) return;
        ++shared->unanswered;
        boost::asio::post(io, [alive, ask, document = std::move(document)]() mutable {
          if (auto living = alive.lock()) living->submit(ask, std::move(document));
        });
      });
}

RunPropagations::~RunPropagations() {
  shared_->on_answer = nullptr;
  // Here, on the pool's thread: an asking lineage may hold the shared state a moment longer.
  shared_->batch.cancel_all();
}

std::shared_ptr<const search::EagerValues> RunPropagations::values() const { return shared_->values; }

Expected<void> RunPropagations::finish() {
  if (!shared_->batch.run_while([this] { return shared_->unanswered.load() != 0; }))
    return make_error(ErrorKind::io, "the worker pool stopped before the propagation was answered");
  if (shared_->error) return *shared_->error;
  return {};
}

}  // namespace minifyd::propagation
