// `analyze`'s work in the worker (docs/protocol.md#analyze): a graph rewritten to return the values
// of chosen nodes, and each such value measured against eager's and the fp64 reference's, with
// the determinism of two runs.
#pragma once

#include <string>
#include <vector>

#include <ATen/core/ivalue.h>

#include "common/expected.h"
#include "common/graph.h"
#include "protocol/value_measurement.h"

namespace minifyd::worker {

// A copy of `graph` returning the tuple of the named call_function nodes' values, in that order. A
// value a later operator writes to in place (relu_ on a convolution's output) is copied as it is
// made (aten::clone), so that the value read is the node's own; a tuple-valued node (read through
// getitem) is exposed as the tuple of its getitems' values. Errors name a node the graph lacks or
// one that is no call_function node.
Expected<Graph> expose_values(const Graph& graph, const std::vector<std::string>& nodes);

// The outputs of runs of a graph from expose_values(): tuples, one element per node.
struct ExposedRuns {
  c10::IValue eager;
  c10::IValue compiled;
  c10::IValue compiled_again;
  const c10::IValue* fp64 = nullptr;        // null when the fp64 reference failed
  const c10::IValue* fp64_again = nullptr;  // null when it failed
};

// One measurement per node, named as `nodes` (the order expose_values() returned them in).
std::vector<protocol::ValueMeasurement> measure_values(const std::vector<std::string>& nodes, const ExposedRuns& runs);

// Whether two values are the same bit for bit: equal dtypes, shapes and bytes (NaNs included).
bool bitwise_equal(const c10::IValue& a, const c10::IValue& b);

}  // namespace minifyd::worker
