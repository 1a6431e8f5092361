// What every child minifyd starts (a worker, a helper) is set up with between fork and exec, in one
// place: its own process group (so that a kill of the group reaches everything it starts), death with
// the coordinator, the default signal dispositions and no signal blocked, no core dump, its CPU and
// memory limits, and no descriptor beyond 0-2 inherited across exec. docs/security.md, "Sandbox".
#pragma once

#include <sys/types.h>

#include <cstdint>

#include "daemon/process/memory_bound.h"

namespace minifyd::process {

// Each worker's and helper's rlimits (0: none): --cpu-limit and --memory-limit of minify's commands and of
// minifyd, which reach WorkerConfig by this one way. They bound a worker, not a verdict's meaning,
// so they are no part of the evaluation spec (nor of the verdict cache's key).
struct SandboxLimits {
  std::uint64_t cpu_seconds = 0;                          // RLIMIT_CPU
  std::uint64_t memory_mb = default_memory_limit_mb();    // RLIMIT_DATA, in MiB (memory_bound.h)
  bool given = false;  // set by --cpu-limit or --memory-limit on the command line
};

// Runs in the child between fork and exec, so only async-signal-safe calls. `parent`: the coordinator's
// pid, read before the fork; a child whose parent died before PR_SET_PDEATHSIG took effect exits at
// once (127). nullptr when every step took, else the call that failed (errno says why).
const char* set_up_child(pid_t parent, const SandboxLimits& limits);

}  // namespace minifyd::process
