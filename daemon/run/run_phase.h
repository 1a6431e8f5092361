// What a run asks of its minimized graph once the search has finished, one question a phase: each phase
// a file of run/phases/, named in after_search_phases() (run/run_phases.h), as a strategy is a file of
// search/strategies/ named in the search's registry. The run answers them in the list's order, and
// drops every answer when the plain check refutes the original.
#pragma once

#include <string_view>

#include "daemon/pool/request_pool.h"
#include "daemon/run/checkpoint.h"
#include "daemon/run/pool_evaluator.h"
#include "daemon/run/run_place.h"
#include "daemon/run/run_spec.h"
#include "daemon/run/session_hooks.h"
#include "daemon/verdict/evaluation_spec.h"
#include "daemon/verdict/failure_judge.h"

namespace minifyd::run {

// What a phase reads and writes: the run's checkpoint (the minimized graph, the answers so far), its
// store, and the search's pool, judge and evaluator, whose candidates' time limit every request keeps.
struct PhaseContext {
  Checkpoint& checkpoint;
  const RunPlace& place;
  const pool::PoolAccess& pool;
  verdict::FailureJudge& judge;
  PoolEvaluator& evaluator;
  const SessionHooks& hooks;
  verdict::EvaluationSpec candidates;  // the run's evaluation under the candidates' time limit
};

struct RunPhase {
  std::string_view name;  // as the log names it
  // Whether the run asks it: its option is set and the backend can answer it.
  bool (*asked)(const RunSpec& spec, const verdict::EvaluationSpec& candidates);
  // Answers it into the checkpoint; a phase that cannot finish records why there, and the run's result
  // stands.
  void (*answer)(PhaseContext& context);
  // Drops its answer from the checkpoint: the plain check refuted the original, so nothing found of
  // the minimized graph stands.
  void (*forget)(Checkpoint& checkpoint);
};

}  // namespace minifyd::run
