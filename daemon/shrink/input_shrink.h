// The smallest inputs (`minify run --shrink-inputs`, docs/cli.md): after the node search, the data the
// minimized graph carries is reduced, each change kept only where the graph still fails the same way
// (the search's own evaluator, verdicts and signature rule). llvm-reduce puts zero, one or undef in
// place of an operand; here a stored storage becomes a fill (docs/graph-format.md "Filled
// storages"): zeros, then ones, then values drawn from a seeded generator within the stored values'
// range, all storages at once first and then one at a time, largest first. requires_grad is then
// dropped where the failure does not need it. An accuracy bug keeps the values its divergence needs:
// a fill under which the outputs agree is refused like any other change that loses the failure.
#pragma once

#include "common/content_store.h"
#include "common/expected.h"
#include "common/graph_document.h"
#include "daemon/search/candidate_evaluator.h"
#include "daemon/shrink/shrink_result.h"

namespace minifyd::shrink {

struct ShrinkOutcome {
  GraphDocument document;  // the graph with its data shrunk (the minimized one where nothing could be)
  InputShrink record;
};

// Shrinks the data of `document`, whose blobs `store` holds and which fails under `evaluator`.
// Errors: a blob cannot be read, the evaluator cannot run a candidate.
Expected<ShrinkOutcome> shrink_inputs(const GraphDocument& document, const ContentStore& store,
                                      search::CandidateEvaluator& evaluator);

}  // namespace minifyd::shrink
