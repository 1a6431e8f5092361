// Outcome classification.
#include "daemon/verdict/verdict_of_outcome.h"

namespace minifyd {

Expected<protocol::Verdict> verdict_of(const WorkerOutcome& outcome) {
  if (auto* reply = std::get_if<protocol::WorkerReply>(&outcome)) {
    if (auto* evaluated = std::get_if<protocol::EvaluateReply>(reply)) return evaluated->verdict;
    if (auto* error = std::get_if<protocol::ErrorReply>(reply))
      return make_error(ErrorKind::invalid_input, "the worker refused the request: " + error->message);
    return make_error(ErrorKind::invalid_input, "the worker answered an evaluate request with a propagate reply");
  }
  const WorkerFault& fault = std::get<WorkerFault>(outcome);
  switch (fault.kind) {
    case WorkerFault::Kind::crashed:
    case WorkerFault::Kind::exited:
      return protocol::crash_verdict(fault.exit, fault.stderr_tail);
    case WorkerFault::Kind::timed_out: {
      protocol::Verdict verdict;
      verdict.pass = false;
      verdict.kind = protocol::FailureKind::timeout;
      verdict.message = fault.detail;
      verdict.stderr_tail = fault.stderr_tail;
      return verdict;
    }
    case WorkerFault::Kind::protocol_error:
    case WorkerFault::Kind::spawn_failed:
    case WorkerFault::Kind::cancelled:
      break;
  }
  return make_error(ErrorKind::io, fault.describe() + (fault.stderr_tail.empty() ? "" : "\nworker stderr:\n" + fault.stderr_tail));
}

}  // namespace minifyd
