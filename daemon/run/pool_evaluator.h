// The search's CandidateEvaluator on a RequestPool: each candidate becomes an evaluate request, each
// verdict is judged by the FailureJudge. Single-threaded: the pool's io_context is run from wait(),
// on the search's own thread, so pool handlers and search callbacks never race.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "daemon/pool/request_pool.h"
#include "daemon/query/evaluation_spec.h"
#include "daemon/query/failure_judge.h"
#include "daemon/search/candidate_evaluator.h"

namespace minifyd::run {

// What the verdicts were, for the report.
struct VerdictTally {
  std::uint64_t passed = 0;
  std::uint64_t failed = 0;           // counted as the original's failure
  std::uint64_t other_failures = 0;   // failed differently (another signature, or not --check-str)
  std::map<std::string, std::uint64_t> failures_by_kind;  // every failure, counted or not
};

class PoolEvaluator final : public search::CandidateEvaluator {
 public:
  // `store` holds every blob a candidate names. The verdict on the candidate whose hash is
  // `original_hash` sets the judge's expected signature if none is set yet (the sanity check).
  PoolEvaluator(const PoolAccess& access, EvaluationSpec spec, std::filesystem::path store, FailureJudge& judge,
                std::string original_hash);
  ~PoolEvaluator() override;

  std::size_t parallelism() const override { return parallelism_; }
  void evaluate(std::vector<search::Candidate> batch, ResultCallback on_result) override;
  void wait() override;
  void cancel_pending() override;

  const VerdictTally& tally() const { return tally_; }

 private:
  struct Pending {
    std::shared_ptr<ResultCallback> on_result;
    std::size_t index;
    std::string hash;
  };

  void on_outcome(RequestPool::Ticket ticket, const WorkerOutcome& outcome);
  search::EvaluationResult judge(const std::string& hash, const WorkerOutcome& outcome);
  void kill_abandoned();

  boost::asio::io_context& io_;
  RequestPool& pool_;
  std::size_t parallelism_;
  EvaluationSpec spec_;
  std::filesystem::path store_;
  FailureJudge& judge_;
  std::string original_hash_;
  std::map<RequestPool::Ticket, Pending> pending_;
  // Cancelled by the search while a worker was already running them: their answers are dropped,
  // and they are killed if they are still running after a grace period.
  std::set<RequestPool::Ticket> abandoned_;
  boost::asio::steady_timer grace_timer_;
  bool reported_ = false;
  VerdictTally tally_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace minifyd::run
