// The failure value's names and text.
#include "worker/node_failure.h"

namespace minifyd::worker {

const char* to_string(FailureKind kind) {
  switch (kind) {
    case FailureKind::invalid_graph:
      return "invalid_graph";
    case FailureKind::unknown_operator:
      return "unknown_operator";
    case FailureKind::bad_argument:
      return "bad_argument";
    case FailureKind::bad_input:
      return "bad_input";
    case FailureKind::exception:
      return "exception";
  }
  return "unknown";
}

std::string NodeFailure::to_string() const {
  std::string text = node.empty() ? "graph" : "node '" + node + "'";
  if (!op.empty()) text += " (" + op + ")";
  if (!argument.empty()) text += ": argument '" + argument + "'";
  text += ": ";
  if (!exception_type.empty()) text += exception_type + ": ";
  return text + message;
}

}  // namespace minifyd::worker
