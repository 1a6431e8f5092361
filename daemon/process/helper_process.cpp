// Running a helper program bounded: spawned (spawn.h) into its own group, a poll loop that drains its pipes
// while waiting for it (bounded buffers, a deadline), then the group and the token's carriers killed.
#include "daemon/process/helper_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <random>

#include <boost/process/search_path.hpp>

#include "common/file_util.h"
#include "daemon/process/memory_bound.h"
#include "daemon/process/spawn.h"

extern char** environ;

namespace minifyd::process {
namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* token_variable = "MINIFYD_HELPER_RUN";
constexpr std::size_t out_limit = 64u << 20;  // a summary is kilobytes; more is not one
constexpr std::size_t err_limit = 1u << 20;   // the tail, where the reason is
constexpr int poll_interval_ms = 20;
constexpr int sweep_rounds = 20;

// The process groups of the helpers running now, for the termination handler (lock-free: it runs
// in a signal handler). A helper beyond the slots still dies by its deadline and with this process.
constexpr std::size_t max_helpers = 64;
std::atomic<pid_t> running_groups[max_helpers];
std::atomic<int> termination_signal{0};
std::atomic<bool> forwarding{false};

extern "C" void on_termination(int signal_number) {
  termination_signal.store(signal_number);
  bool any = false;
  for (auto& group : running_groups) {
    pid_t pgid = group.load();
    if (pgid > 0) {
      ::kill(-pgid, SIGKILL);
      any = true;
    }
  }
  // No helper to wait for: end as the signal's default action would.
  if (!any) {
    ::signal(signal_number, SIG_DFL);
    ::raise(signal_number);
  }
}

std::atomic<pid_t>* register_group(pid_t pgid) {
  for (auto& slot : running_groups) {
    pid_t free = 0;
    if (slot.compare_exchange_strong(free, pgid)) return &slot;
  }
  return nullptr;
}

bool helpers_running() {
  for (auto& slot : running_groups)
    if (slot.load() > 0) return true;
  return false;
}

std::string new_token() {
  static std::atomic<unsigned> counter{0};
  std::random_device random;
  return std::to_string(::getpid()) + "-" + std::to_string(counter++) + "-" + std::to_string(random());
}

// Appends what fd has now; false at end of file. keep_tail: a full buffer drops its oldest bytes.
bool drain(int fd, std::string& buffer, std::size_t limit, bool keep_tail) {
  char chunk[65536];
  for (;;) {
    ssize_t got = ::read(fd, chunk, sizeof chunk);
    if (got == 0) return false;
    if (got < 0) return errno == EINTR || errno == EAGAIN;
    if (buffer.size() + static_cast<std::size_t>(got) <= limit) {
      buffer.append(chunk, static_cast<std::size_t>(got));
    } else if (keep_tail) {
      buffer.append(chunk, static_cast<std::size_t>(got));
      buffer.erase(0, buffer.size() - limit);
    } else {
      buffer.append(chunk, limit - buffer.size());
    }
  }
}

// Kills every process whose environment carries the run's token, until a scan finds none (one may
// fork between a scan and its kill). Processes of another user, or gone, are skipped.
void kill_token_carriers(const std::string& marker) {
  for (int round = 0; round < sweep_rounds; ++round) {
    bool found = false;
    std::error_code error;
    for (std::filesystem::directory_iterator it("/proc", error), end; !error && it != end; it.increment(error)) {
      std::string name = it->path().filename().string();
      if (name.find_first_not_of("0123456789") != std::string::npos) continue;
      pid_t pid = static_cast<pid_t>(std::stol(name));
      if (pid == ::getpid()) continue;
      std::ifstream environment(it->path() / "environ", std::ios::binary);
      std::string variables((std::istreambuf_iterator<char>(environment)), std::istreambuf_iterator<char>());
      if (variables.find(marker) == std::string::npos) continue;
      found = ::kill(pid, SIGKILL) == 0 || found;
    }
    if (!found) return;
    ::usleep(10'000);
  }
}

// What bound_helper_memory() set: read by each helper's child before it execs.
std::atomic<std::uint64_t> helper_memory_mb{default_memory_limit_mb()};

}  // namespace

Expected<HelperResult> run_helper(const std::vector<std::string>& command, double timeout_seconds,
                                  const std::function<void()>& clean_up, const std::atomic<bool>* cancel) {
  std::string path = command.front();
  if (path.find('/') == std::string::npos) path = boost::process::search_path(path).string();
  if (path.empty()) return make_error(ErrorKind::not_found, command.front() + ": not found on PATH");
  std::string marker = std::string(token_variable) + "=" + new_token();
  std::vector<std::string> environment;
  for (char** variable = environ; *variable != nullptr; ++variable)
    if (std::strncmp(*variable, token_variable, std::strlen(token_variable)) != 0) environment.emplace_back(*variable);
  environment.push_back(marker);

  OpenFile null(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  if (null.fd < 0) return errno_error("/dev/null", errno);
  auto out = open_pipe();
  if (!out) return out.error();
  auto err = open_pipe();
  if (!err) return err.error();
  for (const Pipe* pipe : {&*out, &*err}) ::fcntl(pipe->read.fd, F_SETFL, O_NONBLOCK);
  SandboxLimits limits;
  limits.memory_mb = helper_memory_mb.load();
  SpawnRequest request{path, {command.begin() + 1, command.end()}, std::move(environment), {},
                       null.fd, out->write.fd, err->write.fd, limits};
  auto spawned = spawn(request);
  if (!spawned) return spawned.error();
  pid_t pid = *spawned;
  // The child's ends: its own now, so that its end of output is the pipes' end.
  out->write = OpenFile(-1);
  err->write = OpenFile(-1);
  std::atomic<pid_t>* slot = register_group(pid);

  HelperResult result;
  auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(
                                     timeout_seconds > 0 ? timeout_seconds : 1e9));
  int status = 0;
  bool out_open = true, err_open = true;
  std::optional<Error> failed;
  for (;;) {
    // A pipe at its end is left out (poll ignores a negative fd), or its hang-up would spin the loop.
    struct pollfd fds[2] = {{out_open ? out->read.fd : -1, POLLIN, 0}, {err_open ? err->read.fd : -1, POLLIN, 0}};
    ::poll(fds, 2, poll_interval_ms);
    if (out_open) out_open = drain(out->read.fd, result.out, out_limit, false);
    if (err_open) err_open = drain(err->read.fd, result.err, err_limit, true);
    pid_t waited = ::waitpid(pid, &status, WNOHANG);
    if (waited == pid) break;
    if (waited < 0 && errno != EINTR) {
      failed = errno_error("waiting for " + command.front(), errno);
      break;
    }
    bool cancelled = cancel != nullptr && cancel->load();
    if (termination_signal.load() != 0 || cancelled || Clock::now() >= deadline) {
      result.timed_out = termination_signal.load() == 0 && !cancelled;
      signal_group(pid, SIGKILL);
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      break;
    }
  }
  signal_group(pid, SIGKILL);
  if (slot) slot->store(0);
  kill_token_carriers(marker);
  drain(out->read.fd, result.out, out_limit, false);
  drain(err->read.fd, result.err, err_limit, true);
  result.status = decode_wait_status(status);

  int signal_number = termination_signal.load();
  if (signal_number != 0 && forwarding.load()) {
    if (clean_up) clean_up();
    // The last helper to end takes the process with it, as the signal would have.
    if (helpers_running()) return result;
    ::signal(signal_number, SIG_DFL);
    ::raise(signal_number);
  }
  if (failed) return *failed;
  return result;
}

void end_helpers_with_this_process() {
  forwarding.store(true);
  struct sigaction action {};
  action.sa_handler = on_termination;
  ::sigemptyset(&action.sa_mask);
  for (int signal_number : {SIGTERM, SIGINT, SIGHUP}) ::sigaction(signal_number, &action, nullptr);
}

void bound_helper_memory(std::uint64_t mb) { helper_memory_mb.store(mb); }

}  // namespace minifyd::process
