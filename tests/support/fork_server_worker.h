// The real minify-worker as a fork server, for e2e tests of concurrent workers and fault
// containment. Only a worker without a GPU is one (a worker that sees a GPU serves in its own
// process, one request at a time, as tests/gpu covers), so on a GPU machine too it sees none.
#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "daemon/pool/worker_config.h"

namespace minifyd::test {

inline pool::WorkerConfig fork_server_worker(std::vector<std::string> arguments = {}) {
  pool::WorkerConfig config;
  config.executable = MINIFYD_WORKER_EXECUTABLE;
  config.arguments = std::move(arguments);
  config.kill_grace = std::chrono::milliseconds(200);
  config.cuda_visible_devices = "";
  return config;
}

}  // namespace minifyd::test
