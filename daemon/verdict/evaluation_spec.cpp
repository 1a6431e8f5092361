// Evaluation specs: requests and JSON.
#include "daemon/verdict/evaluation_spec.h"

#include "common/graph_codec.h"

namespace minifyd {
Expected<FailureCheck> failure_check_of(const EvaluationSpec& spec) {
  if (!spec.check_str) return FailureCheck();
  return FailureCheck::with_check_str(*spec.check_str);
}

void apply_limits(const EvaluationSpec& spec, WorkerConfig& worker) {
  if (spec.cpu_limit_seconds) worker.cpu_seconds = spec.cpu_limit_seconds;
  if (spec.memory_limit_mb) worker.address_space_bytes = *spec.memory_limit_mb * 1024 * 1024;
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
  return request;
}

nlohmann::json encode(const EvaluationSpec& spec) {
  nlohmann::json json{{"backend", spec.backend},
                      {"backend_options", spec.backend_options},
                      {"accuracy", protocol::to_string(spec.accuracy)},
                      {"nan_check", spec.nan_check},
                      {"timeout_ms", spec.timeout.count()}};
  if (spec.check_str) json["check_str"] = *spec.check_str;
  if (spec.cpu_limit_seconds) json["cpu_limit_seconds"] = *spec.cpu_limit_seconds;
  if (spec.memory_limit_mb) json["memory_limit_mb"] = *spec.memory_limit_mb;
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
  if (timeout_ms <= 0) return view.error("timeout_ms: must be positive");
  spec.timeout = std::chrono::milliseconds(timeout_ms);
  std::string check_str;
  if (auto read = view.read_optional("check_str", check_str); !read) return read.error();
  if (!check_str.empty()) spec.check_str = check_str;
  if (auto read = view.read_optional("cpu_limit_seconds", spec.cpu_limit_seconds); !read) return read.error();
  if (auto read = view.read_optional("memory_limit_mb", spec.memory_limit_mb); !read) return read.error();
  return spec;
}

}  // namespace minifyd
