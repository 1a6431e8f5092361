// The search's CandidateEvaluator on a RequestPool: each candidate becomes an evaluate request, each
// verdict is judged by the FailureJudge. The pool's io_context is run from wait(), on the search's
// own thread, so pool handlers and search callbacks never race. Speculative lineages of the search
// get evaluators of their own (share_with_thread()) that post their requests to that thread and
// take their verdicts from a mailbox.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "daemon/pool/request_batch.h"
#include "daemon/search/candidate_evaluator.h"
#include "daemon/search/pass_latency.h"
#include "daemon/verdict/evaluation_spec.h"
#include "daemon/verdict/failure_judge.h"

namespace minifyd::run {

// What the verdicts were, for the report.
struct VerdictTally {
  std::uint64_t passed = 0;
  std::uint64_t failed = 0;           // counted as the original's failure
  std::uint64_t other_failures = 0;   // failed differently (another signature, or not --check-str)
  std::map<std::string, std::uint64_t> failures_by_kind;  // every failure, counted or not
  // The failures not counted, by their signature (describe()), for the report's "why refused".
  std::map<std::string, std::uint64_t> refused;
};

class PoolEvaluator final : public search::CandidateEvaluator {
 public:
  // `store` holds every blob a candidate names. The verdict on the candidate whose hash is
  // `original_hash` sets the judge's expected signature if none is set yet (the sanity check), and
  // with `timeout_follows_original` the time limit of the candidates submitted after it
  // (candidate_timeout.h); spec.timeout is the limit until then, and the ceiling. Each request
  // vouches for the blobs of `vouched` its graph names.
  PoolEvaluator(const pool::PoolAccess& access, verdict::EvaluationSpec spec, std::filesystem::path store, verdict::FailureJudge& judge,
                std::string original_hash, bool timeout_follows_original,
                std::shared_ptr<const protocol::VouchedBlobs> vouched = nullptr);
  ~PoolEvaluator() override;

  std::size_t parallelism() const override { return parallelism_; }
  void evaluate(std::vector<search::Candidate> batch, ResultCallback on_result) override;
  void wait() override;
  bool wait_until(std::chrono::steady_clock::time_point deadline) override;
  void wake() override;
  void cancel_pending() override;
  std::shared_ptr<search::CandidateEvaluator> share_with_thread() override;
  // Measured from submission to the worker's passing verdict, whoever submitted it.
  std::chrono::steady_clock::duration slow_beyond() const override { return passes_.slow_beyond(); }

  const VerdictTally& tally() const { return tally_; }
  // The time limit candidates are submitted with now.
  std::chrono::milliseconds timeout() const { return timeout_; }
  // Called once, on this thread, when the original's verdict first sets the judge's signature (the
  // sanity check saw it fail), after the candidates' time limit followed it.
  void on_original_fails(std::function<void()> hook) { on_original_fails_ = std::move(hook); }
  // Asks the sanity check (the original's first evaluation) for Inductor's generated code, so that the
  // nodes its failing kernel was made of are known.
  void locate_failing_kernel() { locate_failing_kernel_ = true; }
  // Those nodes, once the sanity check saw the original fail; empty when unknown.
  const std::vector<std::string>& failing_kernel_nodes() const { return failing_kernel_nodes_; }

 private:
  class Shared;
  struct Pending {
    std::shared_ptr<ResultCallback> on_result;
    std::size_t index;
  };
  using Ticket = pool::RequestBatch::Ticket;
  // Told the request it delivers.
  using Delivery = std::function<void(Ticket, search::EvaluationResult)>;

  // Submits one candidate; `deliver` gets its judged verdict on this thread, unless it is abandoned.
  Ticket submit(const search::Candidate& candidate, Delivery deliver);
  // Judges and delivers, or holds the verdict back until the original's is known.
  void receive(Ticket ticket, const std::string& hash, std::chrono::steady_clock::time_point submitted,
               const pool::WorkerOutcome& outcome, Delivery deliver);
  search::EvaluationResult judge(const std::string& hash, const Expected<protocol::Verdict>& verdict);
  // The original took `elapsed` to fail or pass: candidates get a limit that follows it.
  void follow_original(const pool::WorkerOutcome& outcome, std::chrono::steady_clock::duration elapsed);
  void deliver_to_search(Ticket ticket, search::EvaluationResult result);
  // Drops the tickets' answers; kills those still running after the grace period.
  void abandon(const std::vector<Ticket>& tickets);
  void kill_abandoned();
  // The pool has no work left: what is pending can no longer be answered.
  void fail_orphaned();

  boost::asio::io_context& io_;
  pool::RequestBatch batch_;  // every request submitted and not answered; its end cancels them
  std::size_t parallelism_;
  verdict::EvaluationSpec spec_;
  std::filesystem::path store_;
  std::shared_ptr<const protocol::VouchedBlobs> vouched_;  // the store's blobs the requests vouch for
  verdict::FailureJudge& judge_;
  std::string original_hash_;
  bool timeout_follows_original_;
  std::chrono::milliseconds timeout_;
  std::function<void()> on_original_fails_;
  bool locate_failing_kernel_ = false;
  std::optional<Ticket> locating_;  // the request that asked
  std::vector<std::string> failing_kernel_nodes_;
  std::map<Ticket, Pending> pending_;  // this thread's search's
  // Evaluations of the original in flight. While the sanity check is one of them (a lineage went
  // ahead of it), a failure with no signature to compare yet waits for the original's.
  std::set<Ticket> original_tickets_;
  std::vector<std::function<void()>> held_for_original_;
  search::PassLatency passes_;
  // Cancelled by the search while a worker was already running them: their answers are dropped,
  // and they are killed if they are still running after a grace period.
  std::set<Ticket> abandoned_;
  boost::asio::steady_timer grace_timer_;
  bool reported_ = false;
  VerdictTally tally_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace minifyd::run
