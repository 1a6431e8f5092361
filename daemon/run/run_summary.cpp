// A run's summary.
#include "daemon/run/run_summary.h"

namespace minifyd::run {

std::string why_nothing_minimized(const RunResult& result) {
  const std::string& backend = result.checkpoint.spec.evaluation.backend;
  if (result.stop == search::StopReason::unconfirmed && result.checkpoint.plain_check) {
    const protocol::PlainCheck& check = *result.checkpoint.plain_check;
    std::string shown = check.outcome == protocol::plain_check_passes ? "passes" : "fails otherwise (" + check.detail + ")";
    return "the input graph fails under " + backend + " in minifyd's worker, but its repro.py " + shown +
           " under plain PyTorch in a fresh python: nothing to minimize (the failure is not the user's)";
  }
  return "the input graph does not fail under " + backend + " with this check: nothing to minimize";
}

protocol::RunSummary summary_of(const RunResult& result) {
  const Checkpoint& checkpoint = result.checkpoint;
  protocol::RunSummary summary;
  bool minimized = !search::nothing_to_minimize(result.stop);
  summary.status = minimized ? protocol::run_status_minimized : protocol::run_status_does_not_fail;
  summary.stop = search::to_string(result.stop);
  summary.shape = shape_of(checkpoint.state);
  summary.start_nodes = checkpoint.original.nodes;
  summary.start_inputs = checkpoint.original.inputs;
  summary.totals = checkpoint.totals;
  summary.session_queries = result.session_queries;
  summary.lineages = result.session_lineages;
  summary.speculative_queries = result.session_speculative_queries;
  if (checkpoint.signature) {
    summary.failure = describe(*checkpoint.signature);
    summary.signature = encode(*checkpoint.signature);
  }
  if (result.error) summary.error = result.error->message;
  summary.plain_check = checkpoint.plain_check;
  return summary;
}

}  // namespace minifyd::run
