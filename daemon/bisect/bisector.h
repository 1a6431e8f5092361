// `minify bisect`: which part of the compiler a failing graph's failure comes from, found with
// probes on the run's warm, sandboxed workers (docs/bisect.md). PyTorch's CompilerBisector, in the
// user's torch, gives the stages, the subsystems and the hooks that switch them off; each probe is
// the graph evaluated like a search candidate (same verdicts, same signature rule, same
// containment) with one stage, toggle or subsystem limit, many at once.
//
// The search: the graph under every stage (torch.compile backend) up to the run's, at once; the
// first that shows the failure is the stage. Then each of that stage's subsystems switched off,
// at once; the first (in CompilerBisector's order) under which the failure is gone is the
// subsystem, and every config toggle under which it is gone is listed. A subsystem applied many
// times (lowerings, passes, decompositions) is then bisected to the application that brings the
// failure back, with as many probes at once as the pool has workers.
#pragma once

#include <filesystem>

#include "common/expected.h"
#include "common/graph_document.h"
#include "daemon/bisect/bisect_result.h"
#include "daemon/pool/request_pool.h"
#include "daemon/verdict/evaluation_spec.h"
#include "daemon/verdict/failure_judge.h"

namespace minifyd::bisect {

// Bisects `document` (its tensors in `store`), which fails under spec.backend (a torch.compile
// backend). The judge's signature is the failure's; one it does not know yet is set from the
// graph's own verdict. Errors: the graph does not fail (or fails otherwise), a worker could not
// answer, the pool stopped.
Expected<BisectResult> bisect(const pool::PoolAccess& access, const verdict::EvaluationSpec& spec, const GraphDocument& document,
                              const std::filesystem::path& store, verdict::FailureJudge& judge);

}  // namespace minifyd::bisect
