// A run's summary.
#include "daemon/run/run_summary.h"

namespace minifyd::run {

protocol::RunSummary summary_of(const RunResult& result) {
  const Checkpoint& checkpoint = result.checkpoint;
  protocol::RunSummary summary;
  bool minimized = result.stop != search::StopReason::original_passes;
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
  return summary;
}

}  // namespace minifyd::run
