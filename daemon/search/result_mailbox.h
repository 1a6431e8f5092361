// Verdicts for an evaluator whose evaluations finish on other threads (a lineage's evaluator): they
// are put from any thread and delivered on the evaluator's own, to the callbacks still expected.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "daemon/search/candidate_evaluator.h"

namespace minifyd::search {

class ResultMailbox {
 public:
  // The evaluator's thread: the callback and index of one candidate; returns the id to put() under.
  std::uint64_t expect(std::shared_ptr<CandidateEvaluator::ResultCallback> callback, std::size_t index);
  // Any thread.
  void put(std::uint64_t id, EvaluationResult result);
  // The evaluator's thread: waits for results until `deadline`, then runs the callbacks of those
  // still expected. True when one ran, or when woken.
  bool deliver_until(std::chrono::steady_clock::time_point deadline);
  // Any thread: the deliver_until() under way returns at once, else the next one.
  void wake();
  // The evaluator's thread: expects nothing more (their results are dropped); returns the ids.
  std::vector<std::uint64_t> forget_all();

 private:
  struct Waiting {
    std::shared_ptr<CandidateEvaluator::ResultCallback> callback;
    std::size_t index;
  };

  std::mutex mutex_;
  std::condition_variable ready_;
  std::vector<std::pair<std::uint64_t, EvaluationResult>> arrived_;  // guarded by mutex_
  bool woken_ = false;                                               // guarded by mutex_
  std::map<std::uint64_t, Waiting> expected_;                        // the evaluator's thread only
  std::uint64_t next_id_ = 1;
};

}  // namespace minifyd::search
