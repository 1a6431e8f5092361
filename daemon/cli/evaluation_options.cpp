// Shared evaluation options and their translation into worker configuration.
#include "daemon/cli/evaluation_options.h"

#include <filesystem>

#include "daemon/pool/worker_executable.h"

namespace minifyd::cli {

void EvaluationOptions::add_to(CLI::App& command) {
  command.add_option("--backend", backend, "eager, torchscript or plugin:PATH.so")->required();
  command.add_option("--backend-opt", backend_opts, "KEY=VALUE passed to the backend (repeatable)");
  auto* loose = command.add_flag("--accuracy", accuracy,
                                 "fail on numbers worse than eager's against an fp64 reference (floating outputs)");
  command.add_flag("--strict-accuracy", strict_accuracy, "fail on any divergence from eager, non-floating outputs included")
      ->excludes(loose);
  command.add_flag("--nan", nan_check, "fail when the compiled output holds NaN/Inf while no input does");
  command.add_option("--check-str", check_str,
                     "count a failure only if this regex matches its exception, message, signal or stderr");
  command.add_option("--timeout", timeout_seconds, "seconds before a query counts as hung")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  command.add_option("--worker", worker, "the minify-worker executable (default: beside minify)");
  command.add_option("--cpu-limit", cpu_limit_seconds, "RLIMIT_CPU of each worker, in seconds (0: none)");
  command.add_option("--memory-limit", memory_limit_mb, "RLIMIT_AS of each worker, in MiB (0: none)");
}

std::string EvaluationOptions::backend_spec() const {
  static constexpr std::string_view plugin_prefix = "plugin:";
  if (backend.rfind(plugin_prefix, 0) != 0) return backend;
  return std::string(plugin_prefix) + std::filesystem::absolute(backend.substr(plugin_prefix.size())).string();
}

Expected<std::map<std::string, std::string>> EvaluationOptions::backend_options() const {
  std::map<std::string, std::string> options;
  for (const std::string& pair : backend_opts) {
    std::size_t equals = pair.find('=');
    if (equals == std::string::npos || equals == 0)
      return make_error(ErrorKind::invalid_input, "--backend-opt '" + pair + "' is not KEY=VALUE");
    options[pair.substr(0, equals)] = pair.substr(equals + 1);
  }
  return options;
}

protocol::AccuracyMode EvaluationOptions::accuracy_mode() const {
  if (strict_accuracy) return protocol::AccuracyMode::strict_accuracy;
  return accuracy ? protocol::AccuracyMode::accuracy : protocol::AccuracyMode::off;
}

Expected<FailureCheck> EvaluationOptions::failure_check() const {
  if (check_str.empty()) return FailureCheck();
  return FailureCheck::with_check_str(check_str);
}

std::chrono::milliseconds EvaluationOptions::timeout() const {
  return std::chrono::milliseconds(static_cast<std::int64_t>(timeout_seconds * 1000));
}

Expected<WorkerConfig> EvaluationOptions::worker_config() const {
  WorkerConfig config;
  if (worker.empty()) {
    auto found = default_worker_executable();
    if (!found) return found.error();
    config.executable = *found;
  } else {
    config.executable = worker;
  }
  if (cpu_limit_seconds > 0) config.cpu_seconds = cpu_limit_seconds;
  if (memory_limit_mb > 0) config.address_space_bytes = memory_limit_mb * 1024 * 1024;
  return config;
}

}  // namespace minifyd::cli
