// An evaluator whose verdicts take real time (some candidates are slow, as a hang is), answered by a
// clock thread, and that can be shared with other threads: the search's speculative lineages
// tested without workers.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "daemon/search/candidate_evaluator.h"
#include "daemon/search/result_mailbox.h"
#include "tests/support/fake_evaluators.h"

namespace minifyd::search::test {

// How long a candidate's verdict takes.
using Delay = std::function<std::chrono::milliseconds(const GraphDocument&)>;

class DelayedEvaluator final : public CandidateEvaluator {
 public:
  DelayedEvaluator(Predicate predicate, Delay delay, std::size_t parallelism)
      : engine_(std::make_shared<Engine>(std::move(predicate), std::move(delay))), parallelism_(parallelism) {}
  ~DelayedEvaluator() override { cancel_pending(); }

  std::size_t parallelism() const override { return parallelism_; }

  void evaluate(std::vector<Candidate> batch, ResultCallback on_result) override {
    auto shared = std::make_shared<ResultCallback>(std::move(on_result));
    for (std::size_t i = 0; i < batch.size(); ++i) engine_->schedule(mailbox_, mailbox_->expect(shared, i), *batch[i].document);
  }

  void wait() override {
    while (!wait_until(std::chrono::steady_clock::now() + std::chrono::seconds(1))) {
    }
  }

  bool wait_until(std::chrono::steady_clock::time_point deadline) override { return mailbox_->deliver_until(deadline); }
  void wake() override { mailbox_->wake(); }

  void cancel_pending() override { mailbox_->forget_all(); }

  std::shared_ptr<CandidateEvaluator> share_with_thread() override {
    return std::shared_ptr<DelayedEvaluator>(new DelayedEvaluator(engine_, parallelism_));
  }

  // Candidates evaluated so far, by every evaluator sharing this one's engine.
  std::size_t evaluations() const { return engine_->evaluations(); }

 private:
  // Judges at once, delivers when the candidate's delay is over (on its own thread).
  class Engine {
   public:
    Engine(Predicate predicate, Delay delay)
        : predicate_(std::move(predicate)), delay_(std::move(delay)), clock_([this] { run(); }) {}
    ~Engine() {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        done_ = true;
      }
      wake_.notify_one();
      clock_.join();
    }

    void schedule(const std::shared_ptr<ResultMailbox>& mailbox, std::uint64_t id, const GraphDocument& document) {
      bool fails = predicate_(document);
      auto due = std::chrono::steady_clock::now() + delay_(document);
      {
        std::lock_guard<std::mutex> lock(mutex_);
        ++evaluations_;
        queue_.emplace(due, Scheduled{mailbox, id, fails});
      }
      wake_.notify_one();
    }

    std::size_t evaluations() const {
      std::lock_guard<std::mutex> lock(mutex_);
      return evaluations_;
    }

   private:
    struct Scheduled {
      std::weak_ptr<ResultMailbox> mailbox;
      std::uint64_t id;
      bool fails;
    };

    void run() {
      std::unique_lock<std::mutex> lock(mutex_);
      while (!done_) {
        if (queue_.empty()) {
          wake_.wait(lock);
          continue;
        }
        auto first = queue_.begin();
        if (wake_.wait_until(lock, first->first) != std::cv_status::timeout) continue;
        first = queue_.begin();
        if (first->first > std::chrono::steady_clock::now()) continue;
        Scheduled due = first->second;
        queue_.erase(first);
        if (auto mailbox = due.mailbox.lock()) mailbox->put(due.id, due.fails);
      }
    }

    Predicate predicate_;
    Delay delay_;
    mutable std::mutex mutex_;
    std::condition_variable wake_;
    std::multimap<std::chrono::steady_clock::time_point, Scheduled> queue_;
    std::size_t evaluations_ = 0;
    bool done_ = false;
    std::thread clock_;
  };

  DelayedEvaluator(std::shared_ptr<Engine> engine, std::size_t parallelism)
      : engine_(std::move(engine)), parallelism_(parallelism) {}

  std::shared_ptr<Engine> engine_;
  std::size_t parallelism_;
  std::shared_ptr<ResultMailbox> mailbox_ = std::make_shared<ResultMailbox>();
};

}  // namespace minifyd::search::test
