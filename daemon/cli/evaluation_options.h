// The options every command that evaluates candidates shares (query now, run and submit later):
// backend and its options, the check, the per-query timeout, and the worker's sandbox limits.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "common/expected.h"
#include "daemon/pool/worker_program.h"
#include "daemon/verdict/evaluation_spec.h"

namespace minifyd::cli {

struct EvaluationOptions {
  std::string backend;
  std::vector<std::string> backend_opts;  // KEY=VALUE
  bool accuracy = false;
  bool strict_accuracy = false;
  bool nan_check = false;  // --nan
  std::string check_str;
  // nullopt: the backend's default (default_timeout_seconds()).
  std::optional<double> timeout_seconds;
  std::string worker;  // minify-worker path; default: found beside minify
  std::string python;  // the python whose torch serves the torch.compile backends; default: found
  std::uint64_t cpu_limit_seconds = 0;
  std::uint64_t memory_limit_mb = 0;

  // Registers the options on a subcommand. `minify run --resume` takes its backend from the
  // checkpoint, so there --backend is checked by the command instead of required here.
  void add_to(CLI::App& command, bool backend_required = true);

  // The evaluation the options describe: a relative plugin:PATH made absolute (the worker runs in
  // a scratch directory of its own), KEY=VALUE pairs and the --check-str regex validated.
  Expected<EvaluationSpec> spec() const;
  // The worker programs the options name; worker_config_for() picks the one a backend needs.
  WorkerPrograms worker_programs() const { return WorkerPrograms{worker, python}; }
};

}  // namespace minifyd::cli
