// How a client command reaches the daemon: --state-dir / --socket (found without flags when the
// daemon runs with defaults), and --json for machine-readable output.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "common/expected.h"
#include "daemon/run/run_spec.h"
#include "daemon/transport/daemon_client.h"

namespace minifyd::cli {

struct DaemonOptions {
  std::string state_dir;
  std::string socket;
  bool json = false;

  // `with_json`: whether to register --json too (`minify query` has its own).
  void add_to(CLI::App& command, bool with_json = true);
  // Connects and checks the greeting; the error is one line saying what to do.
  Expected<transport::DaemonClient> connect() const;
  // Prints `error` as the command's failure (JSON with --json) and returns the exit code for it.
  int fail(const std::string& command, const Error& error) const;
};

// Queues `spec` on the daemon (which copies the graph into its store before it answers): the job's id.
Expected<std::int64_t> submit_job(transport::DaemonClient& client, const run::RunSpec& spec, int priority);

}  // namespace minifyd::cli
