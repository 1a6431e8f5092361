// The options every command that evaluates candidates shares (query now, run and submit later):
// backend and its options, the check, the per-query timeout, and the worker's sandbox limits.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "common/expected.h"
#include "daemon/pool/worker_config.h"
#include "daemon/query/failure_check.h"
#include "protocol/verdict.h"

namespace minifyd::cli {

struct EvaluationOptions {
  std::string backend;
  std::vector<std::string> backend_opts;  // KEY=VALUE
  bool accuracy = false;
  bool strict_accuracy = false;
  bool nan_check = false;  // --nan
  std::string check_str;
  double timeout_seconds = 60;
  std::string worker;  // minify-worker path; default: found beside minify
  std::uint64_t cpu_limit_seconds = 0;
  std::uint64_t memory_limit_mb = 0;

  // Registers the options on a subcommand.
  void add_to(CLI::App& command);

  // The backend as the worker must see it: a relative plugin:PATH made absolute, since the worker
  // runs in a scratch directory of its own.
  std::string backend_spec() const;
  Expected<std::map<std::string, std::string>> backend_options() const;
  protocol::AccuracyMode accuracy_mode() const;
  Expected<FailureCheck> failure_check() const;
  std::chrono::milliseconds timeout() const;
  Expected<WorkerConfig> worker_config() const;
};

}  // namespace minifyd::cli
