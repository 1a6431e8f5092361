// waitpid() status decoding.
#include "common/exit_status.h"

#include <sys/wait.h>

#include <cstring>

namespace minifyd {

ExitStatus decode_wait_status(int status) {
  if (WIFSIGNALED(status)) return ExitStatus{true, 0, WTERMSIG(status)};
  return ExitStatus{false, WIFEXITED(status) ? WEXITSTATUS(status) : status, 0};
}

std::string signal_name(int signal) {
  const char* abbreviation = ::sigabbrev_np(signal);
  return abbreviation ? std::string("SIG") + abbreviation : "SIG" + std::to_string(signal);
}

std::string describe(const ExitStatus& status) {
  return status.signaled ? "killed by " + signal_name(status.signal)
                         : "exited with code " + std::to_string(status.code);
}

}  // namespace minifyd
