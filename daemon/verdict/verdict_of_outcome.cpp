// Outcome classification.
#include "daemon/verdict/verdict_of_outcome.h"

namespace minifyd::verdict {

Expected<protocol::Verdict> verdict_of(const pool::WorkerOutcome& outcome) {
  if (auto* reply = std::get_if<protocol::WorkerReply>(&outcome)) {
    if (auto* evaluated = std::get_if<protocol::EvaluateReply>(reply)) return evaluated->verdict;
    if (auto* error = std::get_if<protocol::ErrorReply>(reply))
      return make_error(ErrorKind::invalid_input, "the worker refused the request: " + error->message);
    return make_error(ErrorKind::invalid_input, "the worker answered an evaluate request with a propagate reply");
  }
  const pool::WorkerFault& fault = std::get<pool::WorkerFault>(outcome);
  switch (fault.kind) {
    case pool::WorkerFault::Kind::crashed:
    case pool::WorkerFault::Kind::exited:
      return protocol::crash_verdict(fault.exit, fault.stderr_tail);
    case pool::WorkerFault::Kind::timed_out: {
      protocol::Verdict verdict = protocol::Verdict::failed(protocol::FailureKind::timeout, fault.detail);
      verdict.stderr_tail = fault.stderr_tail;
      return verdict;
    }
    case pool::WorkerFault::Kind::protocol_error:
    case pool::WorkerFault::Kind::spawn_failed:
    case pool::WorkerFault::Kind::cancelled:
      break;
  }
  return make_error(ErrorKind::io, fault.describe() + (fault.stderr_tail.empty() ? "" : "\nworker stderr:\n" + fault.stderr_tail));
}

}  // namespace minifyd::verdict
