// One minification run, wherever it lives: the original's blobs imported into the run's store, its
// intermediates propagated by a worker, then the search on a pool with a checkpoint after every
// accepted reduction. `minify run` keeps a run in OUT_DIR (run/out_dir_run.h); the daemon keeps each
// job's in its state directory. Runs on the calling thread, which drives the pool's io_context.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "common/content_store.h"
#include "common/expected.h"
#include "daemon/analysis/analysis_files.h"
#include "daemon/pool/request_pool.h"
#include "daemon/run/checkpoint.h"
#include "daemon/run/plain_confirmation.h"
#include "daemon/run/pool_evaluator.h"
#include "daemon/run/run_spec.h"
#include "daemon/run/timeline.h"
#include "daemon/search/search_observer.h"
#include "daemon/search/search_status.h"

namespace minifyd::run {

// Where a run keeps its blobs and checkpoints.
struct RunPlace {
  ContentStore store;
  // Names the run's store roots (PREFIX-original, PREFIX-intermediates, PREFIX-result), so that
  // several runs can share one store.
  std::string root_prefix;
  std::function<Expected<void>(const Checkpoint&)> save_checkpoint;
  // Keeps the files of the original's analysis (RunSpec::analyze) where the outputs go.
  std::function<Expected<void>(const analysis::AnalysisFiles&)> save_analysis;
  // Ends the roots the run writes as it goes (all but the original's): "-s3" for a daemon job's
  // session 3, so that a session that lost its claim (a shared queue's daemon stopped past its
  // lease) never overwrites the roots of the session that took the job over.
  std::string session_suffix;
  // Whether the run, once finished, drops every root but its result's and collects the store; a
  // daemon's job leaves that to the session whose end the job store recorded.
  bool drops_roots = true;
  // The original's blobs import_original() wrote into the store, hashing them, by their files'
  // identity: the run's requests vouch for them, so that its workers do not hash them again.
  std::shared_ptr<protocol::VouchedBlobs> vouched = std::make_shared<protocol::VouchedBlobs>();

  std::string original_root() const { return root_prefix + "-original"; }
  std::string intermediates_root() const { return root_prefix + "-intermediates" + session_suffix; }
  std::string result_root() const { return root_prefix + "-result" + session_suffix; }
  // The blobs of the input shrinking's smaller inputs (shrink/input_shrink.h), until the result roots them.
  std::string shrink_root() const { return root_prefix + "-shrink" + session_suffix; }
};

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

// What a session reports to, what stops it early, and whether it speculates.
struct SessionHooks {
  search::SearchObserver* observer = nullptr;  // progress, on the calling thread
  // Set from any thread: the search stops before its next query (stop interrupted), leaving a
  // checkpoint to continue from.
  const std::atomic<bool>* interrupt = nullptr;
  // SpeculationOptions::after; worth setting only when the pool parks slow requests.
  std::optional<std::chrono::milliseconds> speculate_after;
  // The torch.compile backends' python, for the plain check of the original (run/plain_check.h).
  std::function<Expected<std::string>()> python;
  Timeline* timeline = nullptr;  // the run's phases are marked there, if anywhere
  // The plain check of the original, started before the session by start_plain_check(); unset: the
  // session starts it itself.
  PlainConfirmation* plain_check = nullptr;
  // Called with the finished run's checkpoint (the search minimized, its after-search answers in) while
  // the plain check still runs: whatever does not depend on its verdict can be done meanwhile. If the
  // check then refutes the original, the run ends with nothing minimized (RunResult::stop unconfirmed).
  std::function<void(const Checkpoint&)> before_plain_verdict{};
  // Called once the session needs the pool no more (its search and after-search answers are in):
  // `minify run`'s workers exit meanwhile, while the run's store is cleaned and its outputs written.
  std::function<void()> pool_done{};
};

// Starts the plain check of `original` (its blobs in place's store already), for a spec that has one,
// before the workers are up: the session that checks the original judges it (SessionHooks::plain_check).
void start_plain_check(PlainConfirmation& confirmation, const RunSpec& spec, const GraphDocument& original,
                       const RunPlace& place, const SessionHooks& hooks);

// Copies the blobs `original` names from `source` into the run's store, verified on the way, and
// roots them as the run's original.
Expected<void> import_original(const GraphDocument& original, const ContentStore& source, const RunPlace& place);

// The run's first checkpoint, saved: the original (its blobs imported already) and what its analysis
// found on `pool` when the spec asks for one (its files saved first). Its eager intermediates come
// later, in continue_run().
Expected<Checkpoint> begin_run(RunSpec spec, GraphDocument original, const RunPlace& place, const pool::PoolAccess& pool);

// The search from the checkpoint's state until it finishes, a budget runs out, the pool fails or
// it is interrupted; the checkpoint is saved after every accepted reduction and at the end. A state
// without eager values is propagated by a worker of `pool` into the run's store while the search
// runs (a state that does not run in eager is an error, as the pool failing is). A
// finished run's store keeps only the result's blobs (rooted as PREFIX-result). An original that
// does not fail is a result (stop original_passes), not an error.
Expected<RunResult> continue_run(Checkpoint checkpoint, const RunPlace& place, const pool::PoolAccess& pool,
                                 const SessionHooks& hooks);

}  // namespace minifyd::run
