// Evaluation specs: requests and JSON.
#include "daemon/verdict/evaluation_spec.h"

#include "common/graph_codec.h"
#include "common/number_range.h"
#include "protocol/json_fields.h"
#include "protocol/operator_libraries.h"

namespace minifyd::verdict {
Expected<FailureCheck> failure_check_of(const EvaluationSpec& spec) {
  if (!spec.check_str) return FailureCheck();
  return FailureCheck::with_check_str(*spec.check_str);
}

protocol::EvaluateRequest evaluate_request(const EvaluationSpec& spec, const GraphDocument& document,
                                           const std::filesystem::path& store) {
  protocol::EvaluateRequest request;
  request.graph = encode_graph_document(document);
  request.store = store.string();
  request.backend = spec.backend;
  request.backend_options = spec.backend_options;
  request.accuracy = spec.accuracy;
  request.nan_check = spec.nan_check;
  request.op_libraries = spec.op_libraries;
  return request;
}

namespace {

constexpr auto evaluation_spec_fields = [](auto& spec, auto&& field) {
  field("backend", spec.backend);
  field("backend_options", spec.backend_options);
  field("accuracy", spec.accuracy);
  field("nan_check", spec.nan_check);
  field("timeout_ms", spec.timeout);
  field("check_str", spec.check_str);
};

}  // namespace

nlohmann::json encode(const EvaluationSpec& spec) {
  nlohmann::json json = protocol::encode_fields(spec, evaluation_spec_fields);
  protocol::encode_op_libraries(spec.op_libraries, json);
  return json;
}

Expected<void> decode(const JsonView& view, EvaluationSpec& spec) {
  if (auto decoded = protocol::decode_fields(view, spec, evaluation_spec_fields); !decoded) return decoded;
  if (auto checked = check_number(static_cast<double>(spec.timeout.count()) / 1000, number_ranges::timeout_seconds);
      !checked)
    return view.error("timeout_ms: " + std::to_string(spec.timeout.count()) + " ms is out of range: must be " +
                      describe(number_ranges::timeout_seconds));
  if (spec.check_str && spec.check_str->empty()) spec.check_str.reset();
  auto libraries = protocol::decode_op_libraries(view);
  if (!libraries) return libraries.error();
  spec.op_libraries = std::move(*libraries);
  // Worker limits were part of the spec once: a request carrying them asks for what a spec no longer
  // sets (daemon.md: the daemon's workers run under minifyd's limits), so it is refused, not dropped.
  for (const char* key : {"cpu_limit_seconds", "memory_limit_mb"})
    if (view.raw().contains(key))
      return view.error(std::string(key) + ": worker limits are not part of an evaluation; they are the "
                        "sandbox's (--cpu-limit, --memory-limit of minify run or query, or of minifyd)");
  return {};
}


}  // namespace minifyd::verdict
