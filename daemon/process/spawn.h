// The one way minifyd starts a child process, a worker or a helper alike: its descriptors 0-2 the
// caller's, its environment the caller's list and nothing else, in its directory, set up between fork
// and exec as every child is (child_setup.h: its own process group, death with the coordinator, its
// limits). A set-up step or an exec that fails is an error of spawn() itself, naming the call.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

#include "common/expected.h"
#include "common/file_util.h"
#include "daemon/process/child_setup.h"

namespace minifyd::process {

struct SpawnRequest {
  std::filesystem::path executable;    // absolute, or relative to the coordinator's directory
  std::vector<std::string> arguments;  // after argv[0], which is the executable
  std::vector<std::string> environment;  // NAME=VALUE: the child's whole environment
  std::filesystem::path directory;     // where it starts; empty: the coordinator's
  int stdin_fd = -1;                   // the child's 0, 1 and 2: descriptors of the coordinator's,
  int stdout_fd = -1;                  // which stay the caller's to close
  int stderr_fd = -1;
  SandboxLimits limits;
};

// A pipe, both ends close-on-exec (a child gets one only as its 0, 1 or 2), each closed with its OpenFile.
struct Pipe {
  OpenFile read{-1};
  OpenFile write{-1};
};
// Errors: pipe2 failed (errno in the message).
Expected<Pipe> open_pipe();

// Starts the child, the leader of a process group of its own (made before this returns, whichever of
// the two runs first): its pid, which the caller reaps. Errors: the executable could not be run, or a
// step of its set-up failed (the call and errno in the message).
Expected<pid_t> spawn(const SpawnRequest& request);

// Sends `signal` to the child's group, which reaches whatever it started in it; to the child alone if
// the group is gone.
void signal_group(pid_t leader, int signal);

}  // namespace minifyd::process
