// The child's set-up.
#include "daemon/process/child_setup.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "common/file_util.h"
#include "daemon/process/memory_bound.h"

namespace minifyd::process {

const char* set_up_child(pid_t parent, const SandboxLimits& limits) {
  if (::setpgid(0, 0) != 0) return "setpgid";
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) return "prctl(PR_SET_PDEATHSIG)";
  if (::getppid() != parent) ::_exit(127);
  // The coordinator's own handlers (a termination handler that kills helpers) and mask are not the child's.
  for (int signal_number : {SIGTERM, SIGINT, SIGHUP, SIGPIPE}) ::signal(signal_number, SIG_DFL);
  sigset_t none;
  ::sigemptyset(&none);
  if (::sigprocmask(SIG_SETMASK, &none, nullptr) != 0) return "sigprocmask";
  // No core dumps, also where core_pattern pipes them to a collector (apport, systemd-coredump): the
  // kernel ignores RLIMIT_CORE 0 for a pipe and skips a piped dump only at 1, which is also below a
  // file dump's minimum (a page).
  struct rlimit no_core {1, 1};
  if (::setrlimit(RLIMIT_CORE, &no_core) != 0) return "setrlimit(RLIMIT_CORE)";
  if (limits.cpu_seconds > 0) {
    struct rlimit cpu {limits.cpu_seconds, limits.cpu_seconds + 1};
    if (::setrlimit(RLIMIT_CPU, &cpu) != 0) return "setrlimit(RLIMIT_CPU)";
  }
  if (!limit_memory(limits.memory_mb)) return "setrlimit(RLIMIT_DATA)";
  close_descriptors_on_exec();
  return nullptr;
}

}  // namespace minifyd::process
