// What every child minifyd starts (a worker, a helper) is set up with between fork and exec, in one
// place: its own process group (so that a kill of the group reaches everything it starts), death with
// the coordinator, the default signal dispositions and no signal blocked, no core dump, its CPU and
// memory limits, and no descriptor beyond 0-2 inherited across exec. docs/security.md, "Sandbox".
#pragma once

#include <sys/types.h>

#include "daemon/pool/worker_config.h"

namespace minifyd::pool {

// Runs in the child between fork and exec, so only async-signal-safe calls. `parent`: the coordinator's
// pid, read before the fork; a child whose parent died before PR_SET_PDEATHSIG took effect exits at
// once (127). nullptr when every step took, else the call that failed (errno says why).
const char* set_up_child(pid_t parent, const SandboxLimits& limits);

}  // namespace minifyd::pool
