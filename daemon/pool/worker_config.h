// How the coordinator starts a worker process: executable, sandbox and limits.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "daemon/process/child_setup.h"
#include "protocol/line_buffer.h"

namespace minifyd::pool {

// Variables a worker inherits from the coordinator; everything else is dropped. CUDA_VISIBLE_DEVICES
// is never inherited: the pool sets it per slot (or this config does, below).
// CUDA_VISIBLE_DEVICES among them: a coordinator started with some GPUs hidden hides them from its
// workers too (a slot's own, or WorkerConfig's, overrides it).
inline const std::vector<std::string> default_environment_allowlist = {
    "PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "LD_LIBRARY_PATH",
    "CUDA_VISIBLE_DEVICES",
};

struct WorkerConfig {
  std::filesystem::path executable;  // minify-worker, or a fake worker in tests
  std::vector<std::string> arguments;
  // The backend its requests will name: a worker whose hello does not list it is refused at start
  // (worker_program.h picks the program that serves it). Empty: not checked.
  std::string backend;
  std::vector<std::string> environment_allowlist = default_environment_allowlist;
  // Set as CUDA_VISIBLE_DEVICES when present (the empty string hides every GPU); a pool slot that
  // pins GPUs overrides it.
  std::optional<std::string> cuda_visible_devices;
  // Each worker runs in a fresh directory under this one, removed when it ends.
  std::filesystem::path scratch_root = std::filesystem::temp_directory_path();
  process::SandboxLimits limits;
  std::chrono::milliseconds hello_timeout{60'000};    // LibTorch start-up can take seconds
  std::chrono::milliseconds kill_grace{500};          // between SIGTERM and SIGKILL
  std::size_t max_line_bytes = protocol::default_max_line_bytes;
  std::size_t stderr_tail_bytes = 16 * 1024;
};

}  // namespace minifyd::pool
