// How a candidate is evaluated, as data: the backend, its options and the check. Everything that
// decides a verdict besides the candidate itself, so it keys the verdict cache and is saved with a
// run's checkpoint (and a daemon's job).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "common/expected.h"
#include "common/graph_document.h"
#include "common/json_view.h"
#include "common/operator_library.h"
#include "daemon/verdict/failure_check.h"
#include "protocol/verdict.h"
#include "protocol/worker_messages.h"

namespace minifyd::verdict {

struct EvaluationSpec {
  std::string backend;  // as the worker sees it: eager, torchscript or plugin:/absolute/path.so
  std::map<std::string, std::string> backend_options;
  protocol::AccuracyMode accuracy = protocol::AccuracyMode::off;
  bool nan_check = false;
  std::optional<std::string> check_str;
  std::chrono::milliseconds timeout{60'000};
  // --op-library: loaded by the workers for this evaluation alone, their namespaces allowed in its graphs.
  std::vector<OperatorLibrary> op_libraries;

  // The namespaces op_libraries add to the graph rule: what every check of this evaluation's graphs passes.
  OperatorScope operators() const { return operator_scope(op_libraries); }
};

// The --check-str part of the spec; an invalid regex is an error naming it.
Expected<FailureCheck> failure_check_of(const EvaluationSpec& spec);

// The request that evaluates `document`, whose tensors are in the store at `store`.
protocol::EvaluateRequest evaluate_request(const EvaluationSpec& spec, const GraphDocument& document,
                                           const std::filesystem::path& store);

nlohmann::json encode(const EvaluationSpec& spec);
Expected<void> decode(const JsonView& view, EvaluationSpec& spec);

}  // namespace minifyd::verdict
