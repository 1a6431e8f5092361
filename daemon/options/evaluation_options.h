// The options every command that evaluates candidates shares (query, run, submit, capture): backend
// and its options, the check, the per-query timeout, and the workers' sandbox limits.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "common/expected.h"
#include "daemon/pool/worker_config.h"
#include "daemon/pool/worker_program.h"
#include "daemon/verdict/evaluation_spec.h"

namespace minifyd::options {

// --cpu-limit and --memory-limit, for every command that starts workers (minify's and minifyd).
void add_sandbox_options(CLI::App& command, process::SandboxLimits& limits);
// --memory-limit alone, for a command that starts helpers but no worker (import).
void add_memory_limit_option(CLI::App& command, process::SandboxLimits& limits);

// --op-library NS=PATH.so (repeatable), for every command that reads graphs for a job (and validate).
void add_op_library_option(CLI::App& command, std::vector<std::string>& libraries);

struct EvaluationOptions {
  std::string backend;
  std::vector<std::string> backend_opts;  // KEY=VALUE
  std::vector<std::string> op_libraries;  // NS=PATH.so
  bool accuracy = false;
  bool strict_accuracy = false;
  bool nan_check = false;  // --nan
  std::string check_str;
  // nullopt: the backend's default (default_timeout_seconds()).
  std::optional<double> timeout_seconds;
  // How long importing a repro file (its definitions run, its graph traced) may take.
  double import_timeout_seconds = 600;
  std::string worker;  // minify-worker path; default: found beside minify
  std::string python;  // the python whose torch serves the torch.compile backends; default: found
  process::SandboxLimits sandbox;  // --cpu-limit, --memory-limit

  // Registers the options on a subcommand. `minify run --resume` takes its backend from the
  // checkpoint, so there --backend is checked by the command instead of required here.
  // `with_checks`: also what counts as a failure (--accuracy, --strict-accuracy, --nan, --check-str),
  // which a command that judges nothing (analyze) does without.
  void add_to(CLI::App& command, bool backend_required = true, bool with_checks = true);
  // --import-timeout alone, for `minify import`; add_to registers it too.
  void add_import_timeout(CLI::App& command);

  // The evaluation the options describe: a relative plugin:PATH made absolute (the worker runs in
  // a scratch directory of its own), KEY=VALUE pairs and the --check-str regex validated, each
  // --op-library checked and its SHA-256 recorded (common/operator_library.h).
  Expected<verdict::EvaluationSpec> spec() const;
  // The worker programs the options name; worker_config_for() picks the one a backend needs.
  pool::WorkerPrograms worker_programs() const { return pool::WorkerPrograms{worker, python}; }
  // An error unless the sandbox options are unset: minifyd's workers run under minifyd's own limits.
  Expected<void> no_sandbox_for_daemon() const;
};

}  // namespace minifyd::options
