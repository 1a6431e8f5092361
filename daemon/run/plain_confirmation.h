// The plain check of the original (run/plain_check.h) beside the search. It takes seconds (a fresh
// python importing torch, then compiling and running the original), which the search need not wait
// for: started on a thread of its own once the worker's sanity check saw the original fail, it sets
// refuted() if plain PyTorch does not show the failure, which stops the search before its next query
// (search::RunnerOptions::refuted); the run then ends with nothing minimized (StopReason::unconfirmed).
#pragma once

#include <atomic>
#include <future>
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
  EvaluationSpec evaluation;
  std::chrono::milliseconds timeout{0};
  FailureSignature expected;  // the worker's
};

class PlainConfirmation {
 public:
  PlainConfirmation() = default;
  ~PlainConfirmation();  // waits for a check still running
  PlainConfirmation(const PlainConfirmation&) = delete;
  PlainConfirmation& operator=(const PlainConfirmation&) = delete;

  // Runs the check on its own thread, its phase marked on `timeline` (if any). Once only.
  void start(PlainCheckRequest request, Timeline* timeline);
  // Records a check that could not be made (no python, no signature): it confirms.
  void skip(const std::string& reason);
  // Set once a finished check did not confirm the failure; read from any thread.
  const std::atomic<bool>& refuted() const { return refuted_; }
  // The check's result, waiting for it if it runs; nullopt if it was neither started nor skipped.
  std::optional<protocol::PlainCheck> wait();

 private:
  std::atomic<bool> refuted_{false};
  std::future<protocol::PlainCheck> running_;
  std::optional<protocol::PlainCheck> result_;
};

}  // namespace minifyd::run
