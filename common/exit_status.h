// How a child process ended, from waitpid()'s status, and signal names for verdicts.
#pragma once

#include <string>

namespace minifyd {

struct ExitStatus {
  bool signaled = false;
  int code = 0;    // exit code when !signaled
  int signal = 0;  // terminating signal when signaled
};

ExitStatus decode_wait_status(int status);
// "SIGSEGV", "SIGABRT", ...; "SIG<n>" for unnamed numbers.
std::string signal_name(int signal);
// "exited with code 3" / "killed by SIGSEGV".
std::string describe(const ExitStatus& status);

}  // namespace minifyd
