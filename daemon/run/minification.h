// One minification run, wherever it lives: the original's blobs imported into the run's store, then
// sessions of phases on a pool (its intermediates propagated by a worker, the search with a checkpoint
// after every accepted reduction, the questions of the minimized graph). `minify run` keeps a run in
// OUT_DIR (run/out_dir_run.h); the daemon keeps each job's in its state directory. Runs on the calling thread, which drives the pool's io_context.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

#include "common/content_store.h"
#include "common/expected.h"
#include "daemon/pool/request_pool.h"
#include "daemon/run/checkpoint.h"
#include "daemon/run/plain_confirmation.h"
#include "daemon/run/pool_evaluator.h"
#include "daemon/run/run_place.h"
#include "daemon/run/run_spec.h"
#include "daemon/run/session_hooks.h"
#include "daemon/search/search_status.h"

namespace minifyd::run {

struct RunResult {
  Checkpoint checkpoint;  // as saved last: the best graph, the steps and the totals
  search::StopReason stop = search::StopReason::finished;
  std::optional<Error> error;  // why the search stopped early, when stop is error
  VerdictTally tally;          // this session's verdicts
  std::chrono::milliseconds candidate_timeout{0};  // the time limit of this session's last candidates
  std::uint64_t session_queries = 0;  // made by this session (checkpoint.totals counts every session)
  std::uint64_t session_lineages = 0;             // speculative lineages this session started
  std::uint64_t session_speculative_queries = 0;  // their queries the search did not use
};

// Copies the blobs `original` names from `source` into the run's store, verified on the way, and
// roots them as the run's original.
Expected<void> import_original(const GraphDocument& original, const ContentStore& source, const RunPlace& place);

// The run's first checkpoint, saved: the original (its blobs imported already). Its analysis, when
// the spec asks for one, and its eager intermediates come in its first session, in continue_run().
Expected<Checkpoint> begin_run(RunSpec spec, GraphDocument original, const RunPlace& place);

// A session of the run: its phases (run/run_phases.h) answered on `pool` from the checkpoint, the
// search among them until it finishes, a budget runs out, the pool fails or it is interrupted; the
// checkpoint is saved after every accepted reduction and at the end. A state without eager values is
// propagated by a worker of `pool` into the run's store while the search runs (a state that does not
// run in eager is an error, as the pool failing is). A finished run's store keeps only the result's
// blobs (rooted as PREFIX-result). An original that does not fail is a result (stop original_passes),
// not an error.
Expected<RunResult> continue_run(Checkpoint checkpoint, const RunPlace& place, const pool::PoolAccess& pool,
                                 const SessionHooks& hooks);

}  // namespace minifyd::run
