// Evaluation specs: requests and JSON.
#include "daemon/verdict/evaluation_spec.h"

#include "common/graph_codec.h"
#include "common/number_range.h"
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

nlohmann::json encode(const EvaluationSpec& spec) {
  nlohmann::json json{{"backend", spec.backend},
                      {"backend_options", spec.backend_options},
                      {"accuracy", protocol::to_string(spec.accuracy)},
                      {"nan_check", spec.nan_check},
                      {"timeout_ms", spec.timeout.count()}};
  if (spec.check_str) json["check_str"] = *spec.check_str;
  protocol::encode_op_libraries(spec.op_libraries, json);
  return json;
}

Expected<EvaluationSpec> decode_evaluation_spec(const JsonView& view) {
  EvaluationSpec spec;
  if (auto read = view.read("backend", spec.backend); !read) return read.error();
  auto options = view.field("backend_options");
  if (!options) return options.error();
  auto object = options->as_object();
  if (!object) return object.error();
  for (const auto& [key, value] : **object) {
    auto text = JsonView(value, options->path() + "." + key).as_string();
    if (!text) return text.error();
    spec.backend_options[key] = *text;
  }
  std::string accuracy;
  if (auto read = view.read("accuracy", accuracy); !read) return read.error();
  auto mode = protocol::parse_accuracy_mode(accuracy);
  if (!mode) return view.error("accuracy: unknown mode '" + accuracy + "'");
  spec.accuracy = *mode;
  if (auto read = view.read("nan_check", spec.nan_check); !read) return read.error();
  std::int64_t timeout_ms = 0;
  if (auto read = view.read("timeout_ms", timeout_ms); !read) return read.error();
  if (auto checked = check_number(static_cast<double>(timeout_ms) / 1000, number_ranges::timeout_seconds); !checked)
    return view.error("timeout_ms: " + std::to_string(timeout_ms) + " ms is out of range: must be " +
                      describe(number_ranges::timeout_seconds));
  spec.timeout = std::chrono::milliseconds(timeout_ms);
  std::string check_str;
  if (auto read = view.read_optional("check_str", check_str); !read) return read.error();
  if (!check_str.empty()) spec.check_str = check_str;
  auto libraries = protocol::decode_op_libraries(view);
  if (!libraries) return libraries.error();
  spec.op_libraries = std::move(*libraries);
  // Worker limits were part of the spec once: a request carrying them asks for what a spec no longer
  // sets (daemon.md: the daemon's workers run under minifyd's limits), so it is refused, not dropped.
  for (const char* key : {"cpu_limit_seconds", "memory_limit_mb"})
    if (view.raw().is_object() && view.raw().contains(key))
      return view.error(std::string(key) + ": worker limits are not part of an evaluation; they are the "
                        "sandbox's (--cpu-limit, --memory-limit of minify run or query, or of minifyd)");
  return spec;
}

}  // namespace minifyd::verdict
