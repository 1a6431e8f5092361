// How the search runs candidates, kept behind one narrow interface: a worker pool in the product,
// fakes in the tests.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/expected.h"
#include "common/graph_document.h"

namespace minifyd::search {

struct Candidate {
  std::shared_ptr<const GraphDocument> document;  // valid (document_problems() is empty)
  std::string hash;                               // canonical_hash(*document)
};

// Whether a candidate still fails the way the original does, or why it could not be run at all
// (an infrastructure error, not a verdict: it stops the search).
using EvaluationResult = Expected<bool>;

// Runs candidates, possibly many at once, and reports whether each still fails.
// Threading: every method is called from one thread, the search's, and every callback runs on
// that thread, from inside evaluate(), wait() or wait_until(), never concurrently. A pool whose results arrive on
// another thread queues them and delivers them in wait().
class CandidateEvaluator {
 public:
  using ResultCallback = std::function<void(std::size_t index, EvaluationResult still_fails)>;

  virtual ~CandidateEvaluator() = default;
  // How many candidates the search should keep in flight; 1 means strictly sequential.
  virtual std::size_t parallelism() const = 0;
  // Starts evaluating `batch`. on_result is called once per index of `batch`, in any order, unless
  // cancel_pending() comes first.
  virtual void evaluate(std::vector<Candidate> batch, ResultCallback on_result) = 0;
  // Blocks until at least one started evaluation has reported. Called only while one is pending.
  virtual void wait() = 0;
  // wait(), giving up at `deadline`: true when something reported. May be called with nothing
  // pending (to let evaluations of other threads' evaluators progress). An evaluator that cannot
  // wait with a deadline blocks as wait() does.
  virtual bool wait_until(std::chrono::steady_clock::time_point /*deadline*/) {
    wait();
    return true;
  }
  // From any thread: a wait_until() under way returns true at once, or else the next one does. For
  // what the search waits on besides verdicts (a lineage's end, the original's eager values), which
  // would otherwise be noticed only at the wait's deadline.
  virtual void wake() {}
  // How long a verdict may take before it counts as slow (for speculation); zero when unknown.
  virtual std::chrono::steady_clock::duration slow_beyond() const { return {}; }
  // An evaluator for another thread (a speculative lineage of the search) on the same workers,
  // judged the same way; its callbacks run on that thread. nullptr when this one cannot be shared.
  virtual std::shared_ptr<CandidateEvaluator> share_with_thread() { return nullptr; }
  // Abandons every evaluation that has not reported; their callbacks are never called.
  virtual void cancel_pending() = 0;
};

}  // namespace minifyd::search
