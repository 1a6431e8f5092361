// One minification run end to end (`minify run`): the original's blobs imported into OUT_DIR's
// store, its intermediates propagated by a worker, the search on a worker pool with a checkpoint
// after every accepted reduction, then the outputs (graph.json, store/, repro.py, report.md,
// graph.dot). Runs on the calling thread, which drives the pool's io_context.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "common/expected.h"
#include "daemon/pool/worker_config.h"
#include "daemon/run/checkpoint.h"
#include "daemon/run/pool_evaluator.h"
#include "daemon/run/run_spec.h"
#include "daemon/search/search_observer.h"
#include "daemon/search/search_runner.h"

namespace minifyd::run {

struct RunSettings {
  std::filesystem::path out_dir;
  std::size_t workers = 1;
  WorkerConfig worker;  // the executable and sandbox; the spec's limits are applied on top
  std::string minify_executable;  // written into repro.py for backends plain PyTorch cannot run
  search::SearchObserver* observer = nullptr;  // progress, on the calling thread
};

struct RunResult {
  Checkpoint checkpoint;  // as written last: the best graph, the steps and the totals
  search::StopReason stop = search::StopReason::finished;
  std::optional<Error> error;  // why the search stopped early, when stop is error
  VerdictTally tally;          // this session's verdicts
  std::uint64_t session_queries = 0;  // made by this session (checkpoint.totals counts every session)
};

// Starts a run of `spec` (spec.graph_dir must be absolute) into settings.out_dir, which must not
// hold a run already. Errors: unreadable or invalid input, bad options, a pool that cannot
// propagate or check the original. An original that does not fail is a result (stop
// original_passes), not an error.
Expected<RunResult> start_run(const RunSpec& spec, const RunSettings& settings);

// Continues the run in settings.out_dir from its checkpoint, with the spec saved there.
Expected<RunResult> resume_run(const RunSettings& settings);

}  // namespace minifyd::run
