// One evaluation's report.
#include "daemon/query/query_result.h"

#include "daemon/query/verdict_of_outcome.h"

namespace minifyd {

Expected<nlohmann::json> query_result(const WorkerOutcome& outcome, const FailureCheck& check) {
  auto verdict = verdict_of(outcome);
  if (!verdict) return verdict.error();
  bool fails = check.counts(*verdict);
  std::string line = protocol::describe(*verdict);
  if (!verdict->pass && !fails) line = "pass (" + line + ", which does not match --check-str)";
  nlohmann::json result{{"fails", fails}, {"verdict", protocol::encode(*verdict)}, {"summary", line}};
  if (auto* reply = std::get_if<protocol::WorkerReply>(&outcome))
    if (auto* evaluated = std::get_if<protocol::EvaluateReply>(reply)) {
      result["compile_ms"] = evaluated->compile_ms;
      result["run_ms"] = evaluated->run_ms;
    }
  return result;
}

}  // namespace minifyd
