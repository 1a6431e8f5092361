// The fork server's relay loop.
#include "worker/fork_server.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <deque>
#include <string>

#include "common/exit_status.h"
#include "common/json_view.h"
#include "protocol/line_buffer.h"
#include "protocol/worker_messages.h"
#include "worker/server.h"

namespace minifyd::worker {
namespace {

constexpr std::size_t stderr_tail_bytes = 16 * 1024;

// A request line forwarded to the child and not answered yet.
struct Forwarded {
  std::string line;
  std::uint64_t id = 0;
  std::string type;  // "evaluate", "propagate", "shutdown", or "" when unreadable
};

Forwarded describe_request(std::string line) {
  Forwarded request{std::move(line), 0, ""};
  auto json = parse_json(request.line);
  if (json && json->is_object()) {
    if (json->contains("id") && (*json)["id"].is_number_unsigned()) request.id = (*json)["id"].get<std::uint64_t>();
    if (json->contains("type") && (*json)["type"].is_string()) request.type = (*json)["type"].get<std::string>();
  }
  return request;
}

// The reply the coordinator gets for a request whose child died.
std::string death_reply(const Forwarded& request, const ExitStatus& status, const std::string& stderr_tail) {
  if (request.type != "evaluate")
    return protocol::encode(protocol::WorkerReply(protocol::ErrorReply{
                                request.id, "the worker's child " + describe(status) + " while serving a " +
                                                (request.type.empty() ? std::string("request") : request.type)}))
        .dump();
  return protocol::encode(protocol::WorkerReply(
                              protocol::EvaluateReply{request.id, protocol::crash_verdict(status, stderr_tail), 0, 0}))
      .dump();
}

struct Child {
  pid_t pid = -1;
  int request_fd = -1;  // ours to write
  int reply_fd = -1;    // ours to read
  int stderr_fd = -1;   // ours to read
};

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// Forks a child serving requests; false when the pipes or fork fail. The child keeps none of the
// coordinator's pipes: only the fork server speaks to the coordinator.
bool spawn(Child& child, int in_fd, int out_fd, const std::function<int(int, int)>& serve_child) {
  int request[2], reply[2], errors[2];
  if (::pipe2(request, O_CLOEXEC) != 0) return false;
  if (::pipe2(reply, O_CLOEXEC) != 0) return false;
  if (::pipe2(errors, O_CLOEXEC) != 0) return false;
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) return false;
  if (pid == 0) {
    // Die with the fork server, as the fork server dies with the coordinator.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(1);
    ::close(in_fd);
    ::close(out_fd);
    ::dup2(errors[1], STDERR_FILENO);
    ::dup2(errors[1], STDOUT_FILENO);
    // The fork server's ends: holding the request pipe's write end, a child would never see it close.
    for (int fd : {request[1], reply[0], errors[0], errors[1]}) ::close(fd);
    ::_exit(serve_child(request[0], reply[1]));
  }
  ::close(request[0]);
  ::close(reply[1]);
  ::close(errors[1]);
  child = Child{pid, request[1], reply[0], errors[0]};
  return true;
}

ExitStatus reap(Child& child) {
  close_fd(child.request_fd);
  close_fd(child.reply_fd);
  close_fd(child.stderr_fd);
  int status = 0;
  while (::waitpid(child.pid, &status, 0) < 0 && errno == EINTR) {
  }
  child.pid = -1;
  return decode_wait_status(status);
}

// Reads what is there; false at end of stream or on error.
bool read_some(int fd, std::string& out) {
  char buffer[1 << 16];
  ssize_t got;
  do {
    got = ::read(fd, buffer, sizeof buffer);
  } while (got < 0 && errno == EINTR);
  if (got <= 0) return false;
  out.assign(buffer, static_cast<std::size_t>(got));
  return true;
}

// Copies what the child wrote to stderr onto ours and into its tail; false (and the pipe closed)
// at its end.
bool relay_stderr(Child& child, std::string& tail) {
  std::string bytes;
  if (child.stderr_fd < 0 || !read_some(child.stderr_fd, bytes)) {
    close_fd(child.stderr_fd);
    return false;
  }
  write_all(STDERR_FILENO, bytes);
  tail += bytes;
  if (tail.size() > stderr_tail_bytes) tail.erase(0, tail.size() - stderr_tail_bytes);
  return true;
}

}  // namespace

int serve_forking(int in_fd, int out_fd, std::size_t max_line_bytes,
                  const std::function<int(int, int)>& serve_child) {
  // A write to a dead child's pipe must be an error here, not the end of the fork server.
  ::signal(SIGPIPE, SIG_IGN);
  protocol::LineBuffer requests(max_line_bytes);
  std::deque<Forwarded> unanswered;
  bool input_open = true;
  while (true) {
    Child child;
    if (!spawn(child, in_fd, out_fd, serve_child)) return 1;
    // Requests a dead child left unanswered behind the one it died on go to the new child.
    for (const Forwarded& request : unanswered)
      if (!write_line(child.request_fd, request.line)) break;
    if (!input_open) close_fd(child.request_fd);
    protocol::LineBuffer replies(max_line_bytes);
    std::string stderr_tail;
    bool child_alive = true;
    while (child_alive) {
      pollfd fds[3] = {{input_open ? in_fd : -1, POLLIN, 0}, {child.reply_fd, POLLIN, 0}, {child.stderr_fd, POLLIN, 0}};
      if (::poll(fds, 3, -1) < 0) {
        if (errno == EINTR) continue;
        return 1;
      }
      std::string bytes;
      if (fds[2].revents != 0) relay_stderr(child, stderr_tail);
      if (fds[0].revents != 0) {
        if (!read_some(in_fd, bytes)) {
          input_open = false;  // the coordinator is done: let the child finish and exit
          close_fd(child.request_fd);
        } else {
          requests.feed(bytes);
          while (auto line = requests.next()) {
            if (line->oversized) {
              if (!write_line(out_fd, oversized_request_reply(line->dropped_bytes, max_line_bytes))) return 1;
              continue;
            }
            unanswered.push_back(describe_request(std::move(line->text)));
            write_line(child.request_fd, unanswered.back().line);  // a dead child shows on its reply pipe
          }
        }
      }
      if (fds[1].revents != 0) {
        if (read_some(child.reply_fd, bytes)) {
          replies.feed(bytes);
          while (auto line = replies.next()) {
            if (!unanswered.empty()) unanswered.pop_front();
            if (!write_line(out_fd, line->text)) return 1;
          }
        } else {
          child_alive = false;
        }
      }
    }
    // The last words of a dying child belong in its verdict.
    while (relay_stderr(child, stderr_tail)) {
    }
    ExitStatus status = reap(child);
    if (!unanswered.empty() && unanswered.front().type == "shutdown") return 0;
    if (unanswered.empty()) {
      if (!input_open) return status.signaled || status.code != 0 ? 1 : 0;
      if (!status.signaled && status.code == 0) return 0;  // served a shutdown we relayed
      continue;  // retired after a CUDA error, or died between requests: a fresh child serves the next
    }
    if (!write_line(out_fd, death_reply(unanswered.front(), status, stderr_tail))) return 1;
    unanswered.pop_front();
  }
}

}  // namespace minifyd::worker
