// Shared evaluation options and their translation into worker configuration.
#include "daemon/options/evaluation_options.h"

#include <filesystem>

#include "daemon/options/number_option.h"
#include "daemon/process/helper_process.h"

namespace minifyd::options {

void EvaluationOptions::add_to(CLI::App& command, bool backend_required, bool with_checks) {
  command.add_option("--backend", backend,
                     "eager, torchscript, plugin:PATH.so, or a torch.compile backend: inductor, aot_eager, "
                     "aot_eager_decomp_partition")
      ->required(backend_required);
  command.add_option("--backend-opt", backend_opts, "KEY=VALUE passed to the backend (repeatable)");
  add_op_library_option(command, op_libraries);
  if (with_checks) {
    auto* loose = command.add_flag("--accuracy", accuracy,
                                   "fail on numbers worse than eager's against an fp64 reference (floating outputs)");
    command.add_flag("--strict-accuracy", strict_accuracy, "fail on any divergence from eager, non-floating outputs included")
        ->excludes(loose);
    command.add_flag("--nan", nan_check, "fail when the compiled output holds NaN/Inf while no input does");
    command.add_option("--check-str", check_str,
                       "count a failure only if this regex matches its exception, message, signal or stderr");
  }
  command.add_option("--timeout", timeout_seconds,
                     "seconds before a query counts as hung (default 60; 600 for the torch.compile backends, whose "
                     "cold compile of a large graph takes minutes on a loaded machine)")
      ->check(within(number_ranges::timeout_seconds));
  add_import_timeout(command);
  command.add_option("--worker", worker, "the minify-worker executable (default: beside minify)");
  command.add_option("--python", python,
                     "the python3 whose PyTorch 2.x compiles for the torch.compile backends (default: the first of "
                     "$MINIFYD_PYTHON, python3, /usr/bin/python3 and scripts/torch2_env.sh's whose torch has Inductor)");
  add_sandbox_options(command, sandbox);
}

void EvaluationOptions::add_import_timeout(CLI::App& command) {
  command.add_option("--import-timeout", import_timeout_seconds,
                     "seconds a repro file's import (its definitions run, its graph traced) may take before it is "
                     "killed with every process it started")
      ->capture_default_str()
      ->check(within(number_ranges::timeout_seconds));
}

void add_op_library_option(CLI::App& command, std::vector<std::string>& libraries) {
  command.add_option("--op-library", libraries,
                     "NS=PATH.so: an operator library (your own file, not writable by others, not a link) that the "
                     "workers load for this job alone, letting its graphs call operators of namespace NS (repeatable)");
}

void add_sandbox_options(CLI::App& command, process::SandboxLimits& limits) {
  command.add_option("--cpu-limit", limits.cpu_seconds, "RLIMIT_CPU of each worker, in seconds (0: none)")
      ->check(within(number_ranges::cpu_limit_seconds))
      ->each([&limits](const std::string&) { limits.given = true; });
  add_memory_limit_option(command, limits);
}

void add_memory_limit_option(CLI::App& command, process::SandboxLimits& limits) {
  // The helpers (a repro file's import, the plain check, the repro writers) take the workers' bound:
  // they are started from every corner of a command, so it is set for the process as it is parsed.
  command
      .add_option("--memory-limit", limits.memory_mb,
                  "how much memory each worker and helper may allocate (RLIMIT_DATA), in MiB; 0: no limit "
                  "(default: half of this machine's memory)")
      ->check(within(number_ranges::memory_limit_mb))
      ->capture_default_str()
      ->each([&limits](const std::string& text) {  // runs before CLI11 converts it, after within()'s check
        limits.given = true;
        if (auto mb = parse_number(text, number_ranges::memory_limit_mb)) process::bound_helper_memory(static_cast<std::uint64_t>(*mb));
      });
}

Expected<void> EvaluationOptions::no_sandbox_for_daemon() const {
  if (!sandbox.given) return {};
  return make_error(ErrorKind::invalid_input,
                    "--cpu-limit and --memory-limit are minifyd's (minifyd --cpu-limit ...): its workers, shared by "
                    "every job and query, run under its limits");
}

Expected<verdict::EvaluationSpec> EvaluationOptions::spec() const {
  verdict::EvaluationSpec spec;
  static constexpr std::string_view plugin_prefix = "plugin:";
  spec.backend = backend.rfind(plugin_prefix, 0) != 0
                     ? backend
                     : std::string(plugin_prefix) + std::filesystem::absolute(backend.substr(plugin_prefix.size())).string();
  auto program = pool::worker_program_for(spec.backend);
  if (!program) return program.error();
  for (const std::string& pair : backend_opts) {
    std::size_t equals = pair.find('=');
    if (equals == std::string::npos || equals == 0)
      return make_error(ErrorKind::invalid_input, "--backend-opt '" + pair + "' is not KEY=VALUE");
    spec.backend_options[pair.substr(0, equals)] = pair.substr(equals + 1);
  }
  if (strict_accuracy) spec.accuracy = protocol::AccuracyMode::strict_accuracy;
  else if (accuracy) spec.accuracy = protocol::AccuracyMode::accuracy;
  spec.nan_check = nan_check;
  if (!check_str.empty()) spec.check_str = check_str;
  if (auto check = verdict::failure_check_of(spec); !check) return check.error();
  double seconds = timeout_seconds.value_or(pool::default_timeout_seconds(spec.backend));
  spec.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(seconds * 1000));
  auto libraries = recorded_operator_libraries(op_libraries);
  if (!libraries) return libraries.error();
  spec.op_libraries = std::move(*libraries);
  return spec;
}

}  // namespace minifyd::options
