// Runs an analysis on a worker pool: each node's graph alone on the original's eager intermediates,
// propagated into the store first (isolated, all at once, as many in parallel as the pool runs), and
// the whole graph with every value exposed (in place).
#pragma once

#include <filesystem>
#include <vector>

#include "common/expected.h"
#include "common/graph_document.h"
#include "daemon/analysis/analysis.h"
#include "daemon/pool/request_pool.h"
#include "daemon/verdict/evaluation_spec.h"

namespace minifyd::analysis {

struct AnalysisPlan {
  verdict::EvaluationSpec spec;  // the backend, its options and the per-request timeout; the check is unused
  std::vector<Mode> modes{Mode::isolated, Mode::in_place};
};

// `original`'s tensors are in the content store at `store`, which the worker also writes the
// intermediates into. A node that crashes, throws or hangs is a result; errors are what leaves no
// analysis (a worker that cannot analyze, a pool that stopped).
Expected<Analysis> run_analysis(const GraphDocument& original, const std::filesystem::path& store,
                                const AnalysisPlan& plan, const pool::PoolAccess& pool);

}  // namespace minifyd::analysis
