// The plain check of the original (run/plain_check.h) beside the search. It takes seconds (a fresh
// python importing torch, then compiling and running the original), which the run need not wait
// for: started on a thread of its own as the session starts, beside the worker's sanity check, it is
// judged once that check saw the original fail and gave its signature, and sets refuted() if plain
// PyTorch does not show the failure, which stops the search before its next query
// (search::RunnerOptions::refuted); the run then ends with nothing minimized
// (StopReason::unconfirmed).
#pragma once

#include <atomic>
#include <future>
#include <mutex>
#include <optional>
#include <string>

#include "common/graph_document.h"
#include "daemon/run/plain_check.h"
#include "daemon/run/timeline.h"
#include "daemon/verdict/evaluation_spec.h"
#include "daemon/verdict/failure_signature.h"
#include "protocol/run_totals.h"

namespace minifyd::run {

struct PlainCheckRequest {
  std::string python;
  GraphDocument original;  // a copy: the search goes on changing the run's state
  std::filesystem::path store;
  verdict::EvaluationSpec evaluation;
  std::chrono::milliseconds timeout{0};
};

class PlainConfirmation {
 public:
  PlainConfirmation() = default;
  ~PlainConfirmation();  // stops a repro still running and waits for its thread
  PlainConfirmation(const PlainConfirmation&) = delete;
  PlainConfirmation& operator=(const PlainConfirmation&) = delete;

  // Runs the repro on its own thread, its phase marked on `timeline` (if any). Once only.
  void start(PlainCheckRequest request, Timeline* timeline);
  // The worker's signature of the original's failure: the run is judged against it once both are
  // known, on whichever thread comes second.
  void expect(verdict::FailureSignature worker);
  // Records a check that could not be made (no python, no signature): it confirms.
  void skip(const std::string& reason);
  // Set once a judged check did not confirm the failure; read from any thread.
  const std::atomic<bool>& refuted() const { return refuted_; }
  // Whether the check was started and its result is not known yet (wait() would wait for it).
  bool pending();
  // The check's result, waiting for the run if it was started and will be judged; nullopt if it was
  // neither judged nor skipped (the worker never saw the original fail: a repro still running is
  // stopped, its result not wanted).
  std::optional<protocol::PlainCheck> wait();

 private:
  void judge_when_ready();  // with mutex_ held

  std::atomic<bool> refuted_{false};
  std::atomic<bool> unwanted_{false};  // stops the repro
  std::future<void> running_;
  std::mutex mutex_;
  std::chrono::milliseconds timeout_{0};
  std::optional<Expected<PlainRun>> ran_;
  std::optional<verdict::FailureSignature> expected_;
  std::optional<protocol::PlainCheck> result_;
};

}  // namespace minifyd::run
