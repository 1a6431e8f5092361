// The smallest inputs (`minify run --shrink-inputs`, docs/cli.md): after the node search, the data the
// minimized graph carries is reduced, each change kept only where the graph still fails the same way
// (the search's own evaluator, verdicts and signature rule). llvm-reduce puts zero, one or undef in
// place of an operand. First the sizes: a proposer (the Python helper minifyd/shape_shrink.py, which
// traces the graph again with symbolic sizes) offers the inputs at smaller sizes the graph's guards
// allow, smallest first, and the first that still fails is kept. Then the values: a stored storage becomes a fill (docs/graph-format.md "Filled
// storages"): zeros, then ones, then values drawn from a seeded generator within the stored values'
// range, all storages at once first and then one at a time, largest first. requires_grad is then
// dropped where the failure does not need it. An accuracy bug keeps the values its divergence needs:
// a fill under which the outputs agree is refused like any other change that loses the failure.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "common/content_store.h"
#include "common/expected.h"
#include "common/graph_document.h"
#include "daemon/search/candidate_evaluator.h"
#include "daemon/shrink/shrink_result.h"

namespace minifyd::shrink {

// The document's storages and inputs at smaller sizes (their new blobs already in the store).
struct ShapeProposal {
  std::string name;   // "smallest", "1/4", "1/2"
  std::string sizes;  // the symbols' new values ("s0=2, s1=2")
  std::vector<StorageRef> storages;
  std::vector<GraphInput> inputs;
};

struct ShapeProposals {
  std::string sizes;  // the symbols' values as the graph has them ("s0=512, s1=2")
  std::vector<ShapeProposal> proposals;  // in the order they are preferred
  std::string note;   // why there are none
};

using ShapeProposer = std::function<Expected<ShapeProposals>(const GraphDocument&)>;

struct ShrinkOutcome {
  GraphDocument document;  // the graph with its data shrunk (the minimized one where nothing could be)
  InputShrink record;
};

// Shrinks the sizes (with `propose_shapes`, when given) and then the data of `document`, whose blobs
// `store` holds and which fails under `evaluator`. A proposer that fails leaves the sizes as they are,
// saying why. Errors: a blob cannot be read, the evaluator cannot run a candidate.
Expected<ShrinkOutcome> shrink_inputs(const GraphDocument& document, const ContentStore& store,
                                      search::CandidateEvaluator& evaluator, const ShapeProposer& propose_shapes);

}  // namespace minifyd::shrink
