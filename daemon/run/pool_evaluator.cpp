// Candidates through the pool.
#include "daemon/run/pool_evaluator.h"

#include <cstdio>
#include <thread>
#include <utility>

#include <boost/asio/post.hpp>

#include "common/log.h"
#include "daemon/run/candidate_timeout.h"
#include "daemon/run/generated_code.h"
#include "daemon/search/result_mailbox.h"
#include "daemon/verdict/verdict_of_outcome.h"

namespace minifyd::run {
namespace {

// An abandoned candidate usually finishes in milliseconds; killing it costs its worker's child (or
// the worker). Only one that is still running after this long (a hang, a slow graph) is killed.
constexpr std::chrono::milliseconds abandon_grace{250};

}  // namespace

// A lineage's evaluator. Requests and cancellations are posted to the io_context's thread (the
// root search's); verdicts come back through a mailbox this thread waits on.
class PoolEvaluator::Shared final : public search::CandidateEvaluator {
 public:
  explicit Shared(PoolEvaluator& owner) : owner_(owner), alive_(owner.alive_) {}
  ~Shared() override { cancel_pending(); }

  std::size_t parallelism() const override { return owner_.parallelism_; }

  void evaluate(std::vector<search::Candidate> batch, ResultCallback on_result) override {
    auto shared_callback = std::make_shared<ResultCallback>(std::move(on_result));
    for (std::size_t i = 0; i < batch.size(); ++i) {
      std::uint64_t id = mailbox_->expect(shared_callback, i);
      boost::asio::post(owner_.io_, [owner = &owner_, alive = alive_, mailbox = mailbox_, tickets = tickets_, id,
                                     candidate = std::move(batch[i])] {
        if (alive.expired()) return;
        (*tickets)[id] = owner->submit(candidate, [mailbox, id](Ticket, search::EvaluationResult result) {
          mailbox->put(id, std::move(result));
        });
      });
    }
  }

  void wait() override {
    while (!wait_until(std::chrono::steady_clock::now() + std::chrono::seconds(1))) {
    }
  }

  bool wait_until(std::chrono::steady_clock::time_point deadline) override {
    return mailbox_->deliver_until(deadline);
  }

  void wake() override { mailbox_->wake(); }

  void cancel_pending() override {
    std::vector<std::uint64_t> ids = mailbox_->forget_all();
    if (ids.empty()) return;
    boost::asio::post(owner_.io_, [owner = &owner_, alive = alive_, tickets = tickets_, ids] {
      if (alive.expired()) return;
      std::vector<Ticket> abandoned;
      for (std::uint64_t id : ids)
        if (auto it = tickets->find(id); it != tickets->end()) abandoned.push_back(it->second);
      owner->abandon(abandoned);
    });
  }

  std::shared_ptr<search::CandidateEvaluator> share_with_thread() override {
    return std::make_shared<Shared>(owner_);
  }

  std::chrono::steady_clock::duration slow_beyond() const override { return owner_.passes_.slow_beyond(); }

 private:
  PoolEvaluator& owner_;
  std::weak_ptr<bool> alive_;
  std::shared_ptr<search::ResultMailbox> mailbox_ = std::make_shared<search::ResultMailbox>();
  // By mailbox id, once submitted; read and written on the io thread only.
  std::shared_ptr<std::map<std::uint64_t, Ticket>> tickets_ =
      std::make_shared<std::map<std::uint64_t, Ticket>>();
};

PoolEvaluator::PoolEvaluator(const pool::PoolAccess& access, verdict::EvaluationSpec spec, std::filesystem::path store,
                             verdict::FailureJudge& judge, std::string original_hash, bool timeout_follows_original,
                             std::shared_ptr<const protocol::VouchedBlobs> vouched)
    : io_(access.io),
      batch_(access),
      parallelism_(std::max<std::size_t>(access.parallelism, 1)),
      spec_(std::move(spec)),
      store_(std::move(store)),
      vouched_(std::move(vouched)),
      judge_(judge),
      original_hash_(std::move(original_hash)),
      timeout_follows_original_(timeout_follows_original),
      timeout_(spec_.timeout),
      grace_timer_(access.io) {}

PoolEvaluator::~PoolEvaluator() {
  alive_.reset();
  grace_timer_.cancel();
}

PoolEvaluator::Ticket PoolEvaluator::submit(const search::Candidate& candidate, Delivery deliver) {
  protocol::EvaluateRequest request = verdict::evaluate_request(spec_, *candidate.document, store_);
  if (vouched_) request.vouched = protocol::vouched_for(*vouched_, *candidate.document);
  bool locating = locate_failing_kernel_ && candidate.hash == original_hash_ && !locating_;
  if (locating) request.output_code = protocol::output_code_run;
  // The original's evaluation is the sanity check, which the search waits for with the other slots idle:
  // its kernels may compile that many at a time (the verdict is still the serial compile's).
  if (candidate.hash == original_hash_) request.compile_threads = parallelism_;
  Ticket ticket = batch_.submit_ticketed(
      std::move(request), timeout_,
      [this, hash = candidate.hash, submitted = std::chrono::steady_clock::now(),
       deliver = std::move(deliver)](Ticket answered, pool::WorkerOutcome outcome) {
        receive(answered, hash, submitted, outcome, deliver);
      });
  if (candidate.hash == original_hash_) original_tickets_.insert(ticket);
  if (locating) locating_ = ticket;
  return ticket;
}

void PoolEvaluator::receive(Ticket ticket, const std::string& hash,
                            std::chrono::steady_clock::time_point submitted, const pool::WorkerOutcome& outcome,
                            Delivery deliver) {
  bool original = original_tickets_.erase(ticket) != 0;
  if (ticket == locating_) failing_kernel_nodes_ = run::failing_kernel_nodes(outcome);
  if (abandoned_.erase(ticket) != 0) return;
  Expected<protocol::Verdict> verdict = verdict::verdict_of(outcome);
  if (verdict && verdict->pass) passes_.record(std::chrono::steady_clock::now() - submitted);
  if (!original && !original_tickets_.empty() && judge_.awaits_signature() && verdict && !verdict->pass) {
    held_for_original_.push_back([this, ticket, hash, verdict, deliver] { deliver(ticket, judge(hash, verdict)); });
    return;
  }
  bool expected_before = judge_.expected().has_value();
  deliver(ticket, judge(hash, verdict));
  if (!original) return;
  follow_original(outcome, std::chrono::steady_clock::now() - submitted);
  if (!expected_before && judge_.expected() && on_original_fails_) std::exchange(on_original_fails_, nullptr)();
  std::vector<std::function<void()>> held;
  held.swap(held_for_original_);
  for (auto& judge_and_deliver : held) judge_and_deliver();
}

void PoolEvaluator::evaluate(std::vector<search::Candidate> batch, ResultCallback on_result) {
  auto shared_callback = std::make_shared<ResultCallback>(std::move(on_result));
  for (std::size_t i = 0; i < batch.size(); ++i) {
    Ticket ticket = submit(batch[i], [this](Ticket answered, search::EvaluationResult result) {
      deliver_to_search(answered, std::move(result));
    });
    pending_.emplace(ticket, Pending{shared_callback, i});
  }
}

void PoolEvaluator::deliver_to_search(Ticket ticket, search::EvaluationResult result) {
  auto it = pending_.find(ticket);
  if (it == pending_.end()) return;  // cancelled while held for the original's verdict
  Pending pending = std::move(it->second);
  pending_.erase(it);
  reported_ = true;
  (*pending.on_result)(pending.index, std::move(result));
}

search::EvaluationResult PoolEvaluator::judge(const std::string& hash, const Expected<protocol::Verdict>& verdict) {
  if (!verdict) return verdict.error().with_context("candidate " + hash.substr(0, 12));
  std::string described = protocol::describe(*verdict);
  if (verdict->pass) {
    ++tally_.passed;
    log::debug("candidate " + hash.substr(0, 12) + ": " + described);
    return false;
  }
  ++tally_.failures_by_kind[protocol::to_string(verdict->kind)];
  if (!judge_.expected() && hash == original_hash_ && judge_.counts(*verdict)) {
    judge_.expect(verdict::signature_of(*verdict));
    log::info("the original fails: " + describe(*judge_.expected()));
  }
  std::string why_not = judge_.why_not(*verdict);
  if (!why_not.empty()) {
    ++tally_.other_failures;
    ++tally_.refused[describe(verdict::signature_of(*verdict))];
    log::debug("candidate " + hash.substr(0, 12) + ": " + described + ", which does not count: " + why_not);
    return false;
  }
  ++tally_.failed;
  log::debug("candidate " + hash.substr(0, 12) + ": " + described);
  return true;
}

void PoolEvaluator::follow_original(const pool::WorkerOutcome& outcome, std::chrono::steady_clock::duration elapsed) {
  if (!timeout_follows_original_) return;
  auto took = std::chrono::duration_cast<std::chrono::milliseconds>(elapsed);
  // The worker's own figures leave out the wait for a free worker; a worker that died has none.
  if (auto* reply = std::get_if<protocol::WorkerReply>(&outcome))
    if (auto* evaluated = std::get_if<protocol::EvaluateReply>(reply))
      took = std::chrono::milliseconds(static_cast<std::int64_t>(evaluated->compile_ms + evaluated->run_ms));
  if (auto* fault = std::get_if<pool::WorkerFault>(&outcome); fault && fault->kind == pool::WorkerFault::Kind::timed_out) return;
  timeout_ = timeout_following_original(took, spec_.timeout);
  char text[96];
  std::snprintf(text, sizeof text, "candidates time out after %.1f s (the original took %.1f s)",
                timeout_.count() / 1000.0, took.count() / 1000.0);
  log::info(text);
}

void PoolEvaluator::fail_orphaned() {
  std::map<Ticket, Pending> orphaned = std::move(pending_);
  pending_.clear();
  for (auto& [ticket, pending] : orphaned) {
    reported_ = true;
    (*pending.on_result)(pending.index, make_error(ErrorKind::io, "the worker pool stopped answering"));
  }
}

void PoolEvaluator::wait() {
  reported_ = false;
  while (!reported_) {
    if (io_.run_one() != 0) continue;
    // Nothing left to run: the pool can no longer answer. Fail what is pending rather than hang.
    return fail_orphaned();
  }
}

bool PoolEvaluator::wait_until(std::chrono::steady_clock::time_point deadline) {
  reported_ = false;
  // Work posted by lineages after the context ran dry must still run.
  if (io_.stopped()) io_.restart();
  while (!reported_) {
    if (io_.run_one_until(deadline) != 0) continue;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    fail_orphaned();
    if (!reported_) std::this_thread::sleep_until(deadline);
    return reported_;
  }
  return true;
}

void PoolEvaluator::wake() {
  boost::asio::post(io_, [this, alive = std::weak_ptr<bool>(alive_)] {
    if (!alive.expired()) reported_ = true;
  });
}

void PoolEvaluator::cancel_pending() {
  std::vector<Ticket> tickets;
  for (const auto& [ticket, pending] : pending_) tickets.push_back(ticket);
  pending_.clear();
  abandon(tickets);
}

std::shared_ptr<search::CandidateEvaluator> PoolEvaluator::share_with_thread() {
  return std::make_shared<Shared>(*this);
}

void PoolEvaluator::abandon(const std::vector<Ticket>& tickets) {
  bool running = false;
  for (Ticket ticket : tickets) {
    abandoned_.insert(ticket);
    if (!batch_.cancel_queued(ticket)) running = true;
  }
  if (!running) return;
  grace_timer_.expires_after(abandon_grace);
  grace_timer_.async_wait([this, alive = std::weak_ptr<bool>(alive_)](const boost::system::error_code& error) {
    if (!error && !alive.expired()) kill_abandoned();
  });
}

void PoolEvaluator::kill_abandoned() {
  // cancel() of a ticket that already finished is ignored.
  std::set<Ticket> still_running = abandoned_;
  for (Ticket ticket : still_running) batch_.cancel(ticket);
}

}  // namespace minifyd::run
