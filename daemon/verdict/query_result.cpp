// One evaluation's report.
#include "daemon/verdict/query_result.h"

#include "daemon/verdict/verdict_of_outcome.h"

namespace minifyd::verdict {

Expected<protocol::QueryResult> query_result(const pool::WorkerOutcome& outcome, const FailureCheck& check) {
  auto verdict = verdict_of(outcome);
  if (!verdict) return verdict.error();
  protocol::QueryResult result;
  result.fails = check.counts(*verdict);
  result.summary = protocol::describe(*verdict);
  if (!verdict->pass && !result.fails) result.summary = "pass (" + result.summary + ", which does not match --check-str)";
  result.verdict = std::move(*verdict);
  if (auto* reply = std::get_if<protocol::WorkerReply>(&outcome))
    if (auto* evaluated = std::get_if<protocol::EvaluateReply>(reply)) {
      result.compile_ms = evaluated->compile_ms;
      result.run_ms = evaluated->run_ms;
    }
  return result;
}

}  // namespace minifyd::verdict
