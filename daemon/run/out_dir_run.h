// `minify run`'s runs: one run in OUT_DIR, which holds its store, its checkpoint.json and, at the
// end, its outputs (graph.json, repro.py, report.md, graph.dot), on a pool of its own.
#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/expected.h"
#include "daemon/pool/worker_program.h"
#include "daemon/pool/worker_pool.h"
#include "daemon/run/minification.h"
#include "daemon/run/run_spec.h"
#include "daemon/run/timeline.h"
#include "daemon/search/search_observer.h"

namespace minifyd::run {

struct RunSettings {
  std::filesystem::path out_dir;
  std::vector<pool::PoolSlot> slots{pool::PoolSlot{}};  // one per worker (pool/worker_pool.h)
  pool::WorkerPrograms workers;  // the worker for the spec's backend is chosen among these
  process::SandboxLimits sandbox;   // each worker's rlimits
  std::string minify_executable;  // written into repro.py for backends plain PyTorch cannot run
  search::SearchObserver* observer = nullptr;  // progress, on the calling thread
  // The search speculates past a verdict pending this long (search/speculation.h), and workers park a
  // request running this long (never those of the torch.compile backends: out_dir_run.cpp says why);
  // 0: neither. nullopt: 20 ms.
  std::optional<std::chrono::milliseconds> speculate_after;
  Timeline* timeline = nullptr;  // where the run's workers, requests and phases are told, if anywhere
};

// Starts a run of `spec` (spec.graph_dir must be absolute) into settings.out_dir, which must not
// hold a run already. Errors: unreadable or invalid input, bad options, a pool that cannot
// propagate or check the original.
Expected<RunResult> start_run(const RunSpec& spec, const RunSettings& settings);

// Continues the run in settings.out_dir from its checkpoint, with the spec saved there. A run whose
// search had finished only gets its outputs (re)written.
Expected<RunResult> resume_run(const RunSettings& settings);

}  // namespace minifyd::run
