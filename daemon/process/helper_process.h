// A helper program run to its end, bounded: minifyd's own Python modules (a repro file's import, the
// plain check, the repro writers), which may run a user's code. It runs in a process group of its
// own, with a time limit, and nothing it started outlives it; its output is read from memory files
// once it has ended, so a descendant holding them open cannot stall the reader.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/exit_status.h"
#include "common/expected.h"

namespace minifyd::process {

struct HelperResult {
  ExitStatus status;
  bool timed_out = false;  // killed (with its group) when timeout_seconds passed
  std::string out;         // what it wrote to standard output
  std::string err;         // to standard error
};

// Runs command (command[0] an executable's path) with stdin from /dev/null, in a new process group
// that dies with this process (PR_SET_PDEATHSIG on its leader) and, where this process called
// end_helpers_with_this_process, with a SIGTERM, SIGINT or SIGHUP to it. Once the helper has ended
// (or timeout_seconds passed; <= 0 for no limit), everything left in its group is killed, and so is
// every process that carries this run's token in its environment (one that left the group with
// setsid). An error only where it could not be started or its output read. Ended by a termination
// signal to this process, it calls clean_up (what the helper left half-done) before the process ends.
// Once `cancel` (if given) is set, from any thread, the helper is killed as at its time limit, though
// not counted as timed out: its caller no longer wants its result.
Expected<HelperResult> run_helper(const std::vector<std::string>& command, double timeout_seconds,
                                  const std::function<void()>& clean_up = {},
                                  const std::atomic<bool>* cancel = nullptr);

// For `minify`: a SIGTERM, SIGINT or SIGHUP kills the running helpers' groups, and the process then
// ends by the signal as it would have without this, once the helpers are gone.
void end_helpers_with_this_process();

// Every helper this process starts from now on may allocate `mb` MiB (RLIMIT_DATA, memory_bound.h;
// 0: no limit). Until called: default_memory_limit_mb(). --memory-limit sets it with the workers'.
void bound_helper_memory(std::uint64_t mb);

}  // namespace minifyd::process
