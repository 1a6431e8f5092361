// A run's session is a list of phases: each phase a file of run/phases/, named in session_phases()
// (run/run_phases.h), as a strategy is a file of search/strategies/ named in the search's registry.
// The session answers them in the list's order on one context, and saves the checkpoint once they are
// through; a phase that fails ends the session with its error. Work that runs beside the search (the
// original's propagation, its plain check) is a phase that starts it before the search and one that
// collects it after.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string_view>

#include "common/expected.h"
#include "daemon/pool/request_pool.h"
#include "daemon/propagation/propagation.h"
#include "daemon/run/checkpoint.h"
#include "daemon/run/plain_confirmation.h"
#include "daemon/run/pool_evaluator.h"
#include "daemon/run/run_place.h"
#include "daemon/run/run_spec.h"
#include "daemon/run/session_hooks.h"
#include "daemon/search/minifier.h"
#include "daemon/search/verdict_cache.h"
#include "daemon/verdict/evaluation_spec.h"
#include "daemon/verdict/failure_judge.h"

namespace minifyd::run {

// What the phases of one session read and write: the run's checkpoint, its store and pool, the judge,
// cache and evaluator every candidate goes through, and what a phase leaves for the later ones.
struct PhaseContext {
  Checkpoint& checkpoint;
  const RunPlace& place;
  const pool::PoolAccess& pool;
  const SessionHooks& hooks;
  verdict::FailureJudge& judge;
  search::VerdictCache& cache;
  PoolEvaluator& evaluator;
  PlainConfirmation& confirmation;
  std::chrono::steady_clock::time_point started;
  // Whether this session checks that the original fails (a resumed one checked it in an earlier one).
  bool checks_original = false;
  // The run's evaluation; once the search has ended, under its candidates' time limit, which every
  // later request keeps.
  verdict::EvaluationSpec candidates;

  // Left by the phases: the propagation while it answers the search; the search's result; the state it
  // started from and the steps the checkpoint had then (what a refuting plain check goes back to).
  std::optional<propagation::RunPropagations> propagation;
  std::optional<Expected<search::SearchResult>> searched;
  std::optional<search::SearchState> before;
  std::size_t prior_steps = 0;
  // Whether the search made the graph smaller and finished: what the minimized graph's questions need.
  bool minimized = false;
};

struct RunPhase {
  std::string_view name;  // as the log names it
  // Whether the session answers it: its option is set, the backend can answer it, the phases before it
  // left it something to do.
  bool (*asked)(const PhaseContext& context);
  // Answers it into the context and the checkpoint. An error ends the session; a phase whose question
  // cannot be answered (a bisect that failed) records why in the checkpoint instead, and the run stands.
  Expected<void> (*answer)(PhaseContext& context);
  // Drops its answer from the checkpoint, for the phases that answer a question of the minimized graph:
  // the plain check refuted the original, so nothing found of the minimized graph stands. Null for the
  // others.
  void (*forget)(Checkpoint& checkpoint) = nullptr;
  // The timeline's phase it belongs to (docs/cli.md, --timeline), marked across consecutive phases that
  // name the same one; null for none.
  const char* timeline_mark = nullptr;
};

}  // namespace minifyd::run
