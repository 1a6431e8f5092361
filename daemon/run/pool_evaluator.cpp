// Candidates through the pool.
#include "daemon/run/pool_evaluator.h"

#include "common/log.h"
#include "daemon/query/verdict_of_outcome.h"

namespace minifyd::run {
namespace {

// An abandoned candidate usually finishes in milliseconds; killing its worker costs a restart. Only
// one that is still running after this long (a hang, a slow graph) is killed to free its slot.
constexpr std::chrono::milliseconds abandon_grace{250};

}  // namespace

PoolEvaluator::PoolEvaluator(const PoolAccess& access, EvaluationSpec spec, std::filesystem::path store,
                             FailureJudge& judge, std::string original_hash)
    : io_(access.io),
      pool_(access.pool),
      parallelism_(std::max<std::size_t>(access.parallelism, 1)),
      spec_(std::move(spec)),
      store_(std::move(store)),
      judge_(judge),
      original_hash_(std::move(original_hash)),
      grace_timer_(access.io) {}

PoolEvaluator::~PoolEvaluator() {
  alive_.reset();
  grace_timer_.cancel();
  for (const auto& [ticket, pending] : pending_) pool_.cancel(ticket);
  for (RequestPool::Ticket ticket : abandoned_) pool_.cancel(ticket);
}

void PoolEvaluator::evaluate(std::vector<search::Candidate> batch, ResultCallback on_result) {
  auto shared_callback = std::make_shared<ResultCallback>(std::move(on_result));
  for (std::size_t i = 0; i < batch.size(); ++i) {
    auto ticket = std::make_shared<RequestPool::Ticket>();
    // submit() never calls the handler before returning, so *ticket is set by the time it runs.
    *ticket = pool_.submit(evaluate_request(spec_, *batch[i].document, store_), spec_.timeout,
                           [this, alive = std::weak_ptr<bool>(alive_), ticket](WorkerOutcome outcome) {
                             if (!alive.expired()) on_outcome(*ticket, outcome);
                           });
    pending_.emplace(*ticket, Pending{shared_callback, i, batch[i].hash});
  }
}

void PoolEvaluator::on_outcome(RequestPool::Ticket ticket, const WorkerOutcome& outcome) {
  if (abandoned_.erase(ticket) != 0) return;
  auto it = pending_.find(ticket);
  if (it == pending_.end()) return;
  Pending pending = std::move(it->second);
  pending_.erase(it);
  reported_ = true;
  (*pending.on_result)(pending.index, judge(pending.hash, outcome));
}

search::EvaluationResult PoolEvaluator::judge(const std::string& hash, const WorkerOutcome& outcome) {
  auto verdict = verdict_of(outcome);
  if (!verdict) return verdict.error().with_context("candidate " + hash.substr(0, 12));
  std::string described = protocol::describe(*verdict);
  if (verdict->pass) {
    ++tally_.passed;
    log::debug("candidate " + hash.substr(0, 12) + ": " + described);
    return false;
  }
  ++tally_.failures_by_kind[protocol::to_string(verdict->kind)];
  if (!judge_.expected() && hash == original_hash_ && judge_.counts(*verdict)) {
    judge_.expect(signature_of(*verdict));
    log::info("the original fails: " + describe(*judge_.expected()));
  }
  std::string why_not = judge_.why_not(*verdict);
  if (!why_not.empty()) {
    ++tally_.other_failures;
    log::debug("candidate " + hash.substr(0, 12) + ": " + described + ", which does not count: " + why_not);
    return false;
  }
  ++tally_.failed;
  log::debug("candidate " + hash.substr(0, 12) + ": " + described);
  return true;
}

void PoolEvaluator::wait() {
  reported_ = false;
  while (!reported_) {
    if (io_.run_one() != 0) continue;
    // Nothing left to run: the pool can no longer answer. Fail what is pending rather than hang.
    std::map<RequestPool::Ticket, Pending> orphaned = std::move(pending_);
    pending_.clear();
    for (auto& [ticket, pending] : orphaned)
      (*pending.on_result)(pending.index, make_error(ErrorKind::io, "the worker pool stopped answering"));
    return;
  }
}

void PoolEvaluator::cancel_pending() {
  bool running = false;
  for (const auto& [ticket, pending] : pending_) {
    abandoned_.insert(ticket);
    if (!pool_.cancel_queued(ticket)) running = true;
  }
  pending_.clear();
  if (!running) return;
  grace_timer_.expires_after(abandon_grace);
  grace_timer_.async_wait([this, alive = std::weak_ptr<bool>(alive_)](const boost::system::error_code& error) {
    if (!error && !alive.expired()) kill_abandoned();
  });
}

void PoolEvaluator::kill_abandoned() {
  // cancel() of a ticket that already finished is ignored by the pool.
  std::set<RequestPool::Ticket> still_running = abandoned_;
  for (RequestPool::Ticket ticket : still_running) pool_.cancel(ticket);
}

}  // namespace minifyd::run
