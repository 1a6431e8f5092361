// Evaluators that judge candidates with a predicate over the graph, in order or out of order, and
// a clock that only moves when told: the search tested without workers and without sleeping.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "common/graph_document.h"
#include "daemon/search/candidate_evaluator.h"
#include "daemon/search/clock.h"

namespace minifyd::search::test {

// True when the candidate still "fails".
using Predicate = std::function<bool(const GraphDocument&)>;

inline Predicate holds_target(std::string target) {
  return [target](const GraphDocument& document) {
    for (const Node* node : document.graph.nodes())
      if (node->op() == OpCode::call_function && node->target() == target) return true;
    return false;
  };
}

// fx_minifier's test `inputs_returned`: some returned value is a placeholder.
inline bool returns_placeholder(const GraphDocument& document) {
  bool found = false;
  for_each_node_ref(document.graph.output()->args()[0],
                    [&](Node* node) { found = found || node->op() == OpCode::placeholder; });
  return found;
}

class FakeClock final : public Clock {
 public:
  std::chrono::steady_clock::time_point now() const override { return now_; }
  void advance(std::chrono::steady_clock::duration by) { now_ += by; }

 private:
  std::chrono::steady_clock::time_point now_{};
};

// Answers every candidate inside evaluate(), in order.
class PredicateEvaluator : public CandidateEvaluator {
 public:
  explicit PredicateEvaluator(Predicate predicate) : predicate_(std::move(predicate)) {}

  std::size_t parallelism() const override { return 1; }
  void evaluate(std::vector<Candidate> batch, ResultCallback on_result) override {
    for (std::size_t i = 0; i < batch.size(); ++i) on_result(i, judge(batch[i]));
  }
  void wait() override { FAIL("wait() with nothing pending"); }
  void cancel_pending() override {}

  // Every candidate judged, in the order judged.
  const std::vector<std::string>& evaluated() const { return evaluated_; }
  // Called before each judgement (to move a fake clock).
  std::function<void()> on_query;

 protected:
  bool judge(const Candidate& candidate) {
    if (on_query) on_query();
    evaluated_.push_back(candidate.hash);
    return predicate_(*candidate.document);
  }

 private:
  Predicate predicate_;
  std::vector<std::string> evaluated_;
};

// Keeps up to `parallelism` candidates pending and, on each wait(), answers one of them chosen
// by a seeded generator (seed 0: the newest first), so results come back out of order.
class OutOfOrderEvaluator final : public PredicateEvaluator {
 public:
  OutOfOrderEvaluator(Predicate predicate, std::size_t parallelism, unsigned seed)
      : PredicateEvaluator(std::move(predicate)), parallelism_(parallelism), seed_(seed), random_(seed) {}

  std::size_t parallelism() const override { return parallelism_; }
  void evaluate(std::vector<Candidate> batch, ResultCallback on_result) override {
    auto shared = std::make_shared<ResultCallback>(std::move(on_result));
    for (std::size_t i = 0; i < batch.size(); ++i) pending_.push_back(Pending{std::move(batch[i]), i, shared});
    max_pending_ = std::max(max_pending_, pending_.size());
  }
  void wait() override {
    REQUIRE_FALSE(pending_.empty());
    std::size_t chosen = seed_ == 0 ? pending_.size() - 1
                                    : std::uniform_int_distribution<std::size_t>(0, pending_.size() - 1)(random_);
    Pending answered = std::move(pending_[chosen]);
    pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(chosen));
    (*answered.on_result)(answered.index, judge(answered.candidate));
  }
  void cancel_pending() override {
    cancelled_ += pending_.size();
    pending_.clear();
  }

  std::size_t cancelled() const { return cancelled_; }
  std::size_t max_pending() const { return max_pending_; }

 private:
  struct Pending {
    Candidate candidate;
    std::size_t index;
    std::shared_ptr<ResultCallback> on_result;
  };

  std::size_t parallelism_;
  unsigned seed_;
  std::mt19937 random_;
  std::vector<Pending> pending_;
  std::size_t cancelled_ = 0;
  std::size_t max_pending_ = 0;
};

}  // namespace minifyd::search::test
