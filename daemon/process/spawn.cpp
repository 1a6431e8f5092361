// Spawning through Boost.Process, with the child's set-up as its exec-setup handler.
#include "daemon/process/spawn.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

#include <boost/process/args.hpp>
#include <boost/process/child.hpp>
#include <boost/process/env.hpp>
#include <boost/process/environment.hpp>
#include <boost/process/exe.hpp>
#include <boost/process/extend.hpp>
#include <boost/process/posix.hpp>
#include <boost/process/start_dir.hpp>

namespace minifyd::process {
namespace {

namespace bp = boost::process;

// The child's set-up (child_setup.h) once its descriptors 0-2 are bound; a failure is reported
// through Boost.Process's exec error channel (whose pipe is close-on-exec already, and must stay open
// until exec).
struct ChildSetup : bp::extend::handler {
  pid_t parent;
  SandboxLimits limits;

  template <class Executor>
  void on_exec_setup(Executor& exec) const {
    if (const char* failed = set_up_child(parent, limits))
      exec.set_error(std::error_code(errno, std::system_category()), failed);
  }
};

bp::environment environment_of(const std::vector<std::string>& variables) {
  bp::environment environment;
  environment.clear();
  for (const std::string& variable : variables) {
    std::size_t equals = variable.find('=');
    if (equals == std::string::npos || equals == 0) continue;
    environment[variable.substr(0, equals)] = variable.substr(equals + 1);
  }
  return environment;
}

}  // namespace

Expected<Pipe> open_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return errno_error("pipe", errno);
  return Pipe{OpenFile(fds[0]), OpenFile(fds[1])};
}

Expected<pid_t> spawn(const SpawnRequest& request) {
  std::error_code error;
  std::string executable = request.executable.string();
  std::filesystem::path directory = request.directory.empty() ? std::filesystem::current_path(error) : request.directory;
  if (error) return make_error(ErrorKind::io, "the coordinator's directory: " + error.message());
  bp::child child(bp::exe = executable, bp::args = request.arguments, environment_of(request.environment),
                  bp::start_dir = directory.string(), bp::posix::fd.bind(0, request.stdin_fd),
                  bp::posix::fd.bind(1, request.stdout_fd), bp::posix::fd.bind(2, request.stderr_fd),
                  ChildSetup{{}, ::getpid(), request.limits}, error);
  if (error) return make_error(ErrorKind::io, executable + ": " + error.message());
  pid_t pid = child.id();
  child.detach();  // the caller reaps it, to see exactly how it ended
  ::setpgid(pid, pid);  // as the child does: whichever runs first, the group exists before any kill
  return pid;
}

void signal_group(pid_t leader, int signal) {
  if (leader <= 0 || signal == 0) return;
  if (::kill(-leader, signal) != 0) ::kill(leader, signal);
}

}  // namespace minifyd::process
