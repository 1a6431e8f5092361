// The fork server's relay loop: one poll over the coordinator's pipe and every child's reply and
// stderr pipes.
#include "worker/fork_server.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <deque>
#include <list>
#include <optional>
#include <string>
#include <vector>

#include "common/exit_status.h"
#include "common/json_view.h"
#include "protocol/line_buffer.h"
#include "protocol/operator_libraries.h"
#include "protocol/worker_messages.h"
#include "worker/server.h"

namespace minifyd::worker {
namespace {

constexpr std::size_t stderr_tail_bytes = 16 * 1024;

// A request line from the coordinator, for a child to serve.
struct Forwarded {
  std::string line;
  std::uint64_t id = 0;
  std::string type;  // "evaluate", "propagate", "analyze", or "" when unreadable
  // The operator libraries it names, as written ("" for none): only a child that has loaded these, or
  // a fresh one, serves it (worker/operator_libraries.h).
  std::string libraries;
};

Forwarded describe_request(std::string line, const Expected<nlohmann::json>& json) {
  Forwarded request{std::move(line), 0, "", ""};
  if (json && json->is_object()) {
    if (json->contains("id") && (*json)["id"].is_number_unsigned()) request.id = (*json)["id"].get<std::uint64_t>();
    if (json->contains("type") && (*json)["type"].is_string()) request.type = (*json)["type"].get<std::string>();
    if (auto found = json->find(protocol::op_libraries_key); found != json->end()) request.libraries = found->dump();
  }
  return request;
}

// A cancel or shutdown, which the fork server acts on itself; nullopt for anything else, malformed
// control messages included: a child answers those with an error reply.
std::optional<protocol::WorkerRequest> control_request(const Expected<nlohmann::json>& json) {
  if (!json || !json->is_object() || !json->contains("type")) return std::nullopt;
  const nlohmann::json& type = (*json)["type"];
  if (type != "cancel" && type != "shutdown") return std::nullopt;
  auto request = protocol::decode_request(*json);
  if (!request) return std::nullopt;
  return std::move(*request);
}

// The reply the coordinator gets for a request whose child died: the crash is the verdict on the
// candidate an evaluate or analyze request compiled and ran.
std::string death_reply(const Forwarded& request, const ExitStatus& status, const std::string& stderr_tail) {
  if (request.type == "analyze") {
    protocol::AnalyzeReply reply;
    reply.id = request.id;
    reply.compiled_failure = protocol::crash_verdict(status, stderr_tail);
    return protocol::encode(protocol::WorkerReply(std::move(reply))).dump();
  }
  if (request.type != "evaluate")
    return protocol::encode(protocol::WorkerReply(protocol::ErrorReply{
                                request.id, "the worker's child " + describe(status) + " while serving a " +
                                                (request.type.empty() ? std::string("request") : request.type)}))
        .dump();
  return protocol::encode(protocol::WorkerReply(
                              protocol::EvaluateReply{request.id, protocol::crash_verdict(status, stderr_tail), 0, 0}))
      .dump();
}

// The line the coordinator gets for `request` from what its child answered. A failing verdict
// carries the child's own stderr tail: the worker's stderr interleaves every child's, so only here
// is it known whose words are whose. An over-long line becomes an error reply for the request, so
// one candidate's huge message does not read as a broken worker. `retire` is set when the reply
// reports a CUDA error, after which the child exits by itself.
std::string reply_line(const Forwarded& request, const protocol::Line& line, const std::string& stderr_tail,
                       std::size_t max_line_bytes, bool& retire) {
  if (line.oversized)
    return protocol::encode(protocol::WorkerReply(protocol::ErrorReply{
                                request.id, "reply of " + std::to_string(line.dropped_bytes) +
                                                " bytes is over the limit of " + std::to_string(max_line_bytes)}))
        .dump();
  auto json = parse_json(line.text);
  if (!json) return line.text;
  auto reply = protocol::decode_reply(*json);
  if (!reply) return line.text;  // the coordinator judges it
  retire = reports_cuda_error(*reply);
  auto* evaluated = std::get_if<protocol::EvaluateReply>(&*reply);
  if (evaluated == nullptr || evaluated->verdict.pass) return line.text;
  evaluated->verdict.stderr_tail = stderr_tail;
  return protocol::encode(*reply).dump();
}

// A child serving one request at a time, and waiting for the next in between.
struct Child {
  explicit Child(std::size_t max_line_bytes) : replies(max_line_bytes) {}

  pid_t pid = -1;       // -1 once reaped
  int request_fd = -1;  // ours to write
  int reply_fd = -1;    // ours to read
  int stderr_fd = -1;   // ours to read, non-blocking
  std::optional<Forwarded> serving;
  // The operator libraries of the requests it serves (Forwarded::libraries), set by its first: it is
  // sent no request naming others, since what it loaded stays loaded.
  std::string libraries;
  // It answered a CUDA error (and exits by itself), or its request pipe broke: it is sent nothing more.
  bool retired = false;
  protocol::LineBuffer replies;
  std::string stderr_tail;  // what it wrote since its current request began
};

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// Forks `child`; false when the pipes or fork fail. The child closes `foreign_fds`, the
// coordinator's pipes and its siblings' alike: it speaks only to the fork server, and a sibling
// holding a request pipe's write end would keep that pipe's child from ever seeing it close.
bool spawn(Child& child, const std::vector<int>& foreign_fds, const std::function<int(int, int)>& serve_child) {
  int fds[6] = {-1, -1, -1, -1, -1, -1};  // request, reply and stderr pipes: read end, write end
  auto close_all = [&] {
    for (int& fd : fds) close_fd(fd);
  };
  if (::pipe2(fds, O_CLOEXEC) != 0 || ::pipe2(fds + 2, O_CLOEXEC) != 0 || ::pipe2(fds + 4, O_CLOEXEC) != 0) {
    close_all();
    return false;
  }
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) {
    close_all();
    return false;
  }
  if (pid == 0) {
    // Die with the fork server, as the fork server dies with the coordinator.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(1);
    for (int fd : foreign_fds) ::close(fd);
    ::dup2(fds[5], STDERR_FILENO);
    ::dup2(fds[5], STDOUT_FILENO);
    // The fork server's ends: holding the request pipe's write end, it would never see it close.
    for (int fd : {fds[1], fds[2], fds[4], fds[5]}) ::close(fd);
    ::_exit(serve_child(fds[0], fds[3]));
  }
  for (int* fd : {&fds[0], &fds[3], &fds[5]}) close_fd(*fd);
  // Never waited on: stderr is drained after a reply, and the child may have nothing more to say.
  ::fcntl(fds[4], F_SETFL, ::fcntl(fds[4], F_GETFL) | O_NONBLOCK);
  child.pid = pid;
  child.request_fd = fds[1];
  child.reply_fd = fds[2];
  child.stderr_fd = fds[4];
  return true;
}

enum class ReadResult { data, would_block, end };

ReadResult read_some(int fd, std::string& out) {
  char buffer[1 << 16];
  ssize_t got;
  do {
    got = ::read(fd, buffer, sizeof buffer);
  } while (got < 0 && errno == EINTR);
  if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return ReadResult::would_block;
  if (got <= 0) return ReadResult::end;
  out.assign(buffer, static_cast<std::size_t>(got));
  return ReadResult::data;
}

// Copies one read of what the child wrote to stderr onto ours and into its tail, closing the pipe
// at its end; false when there was nothing to read.
bool relay_stderr(Child& child) {
  if (child.stderr_fd < 0) return false;
  std::string bytes;
  ReadResult result = read_some(child.stderr_fd, bytes);
  if (result == ReadResult::end) close_fd(child.stderr_fd);
  if (result != ReadResult::data) return false;
  write_all(STDERR_FILENO, bytes);
  child.stderr_tail += bytes;
  if (child.stderr_tail.size() > stderr_tail_bytes)
    child.stderr_tail.erase(0, child.stderr_tail.size() - stderr_tail_bytes);
  return true;
}

// Relays everything the child has written to stderr so far.
void drain_stderr(Child& child) {
  while (relay_stderr(child)) {
  }
}

class ForkServer {
 public:
  ForkServer(int in_fd, int out_fd, std::size_t max_line_bytes, std::size_t max_children,
             const std::function<int(int, int)>& serve_child)
      : in_fd_(in_fd),
        out_fd_(out_fd),
        max_line_bytes_(max_line_bytes),
        max_children_(std::max<std::size_t>(max_children, 1)),
        serve_child_(serve_child),
        requests_(max_line_bytes) {}

  int run() {
    while (!exit_code_) {
      if (!input_open_ && queue_.empty() && !serving_anything()) finish_input();
      else poll_once();
    }
    return *exit_code_;
  }

 private:
  void poll_once() {
    std::vector<pollfd> fds{{input_open_ ? in_fd_ : -1, POLLIN, 0}};
    for (const Child& child : children_) {
      fds.push_back({child.stderr_fd, POLLIN, 0});
      fds.push_back({child.reply_fd, POLLIN, 0});
    }
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno != EINTR) exit_code_ = 1;
      return;
    }
    std::size_t at = 1;
    for (Child& child : children_) {
      // stderr first: what a child wrote before its reply belongs in that reply.
      if (fds[at++].revents != 0) relay_stderr(child);
      if (fds[at++].revents != 0) read_replies(child);
    }
    if (fds[0].revents != 0) read_requests();
    children_.remove_if([](const Child& child) { return child.pid < 0; });
    dispatch();
  }

  void read_requests() {
    std::string bytes;
    if (read_some(in_fd_, bytes) != ReadResult::data) {
      input_open_ = false;  // the coordinator is done: serve what it sent, then exit
      return;
    }
    requests_.feed(bytes);
    while (!exit_code_) {
      auto line = requests_.next();
      if (!line) return;
      if (line->oversized) send(oversized_request_reply(line->dropped_bytes, max_line_bytes_));
      else accept(std::move(line->text));
    }
  }

  void accept(std::string line) {
    auto json = protocol::parse_worker_request_line(line);
    auto control = control_request(json);
    if (!control) return queue_.push_back(describe_request(std::move(line), json));
    if (std::holds_alternative<protocol::CancelRequest>(*control)) return cancel(protocol::id_of(*control));
    shut_down();
  }

  // Drops request `id` from the queue, or kills the child serving it; either way it gets no reply.
  void cancel(std::uint64_t id) {
    auto queued = std::find_if(queue_.begin(), queue_.end(), [&](const Forwarded& r) { return r.id == id; });
    if (queued != queue_.end()) {
      queue_.erase(queued);
      return;
    }
    for (Child& child : children_)
      if (child.pid > 0 && child.serving && child.serving->id == id) return kill(child);
  }

  // The coordinator sends shutdown to a worker with nothing in flight; whatever is, ends unanswered.
  void shut_down() {
    for (Child& child : children_)
      if (child.pid > 0) kill(child);
    exit_code_ = 0;
  }

  void kill(Child& child) {
    ::kill(child.pid, SIGKILL);
    child.serving.reset();
    bury(child);
  }

  // Hands queued requests to idle children of their operator libraries, in order, forking while there
  // is none and there are fewer than max_children; at max_children an idle child of other libraries
  // makes room.
  void dispatch() {
    while (!queue_.empty() && !exit_code_) {
      const std::string& libraries = queue_.front().libraries;
      Child* child = idle_child(libraries);
      if (child == nullptr && children_.size() >= max_children_)
        if (Child* other = idle_child_of_other_libraries(libraries)) {
          kill(*other);
          children_.remove_if([](const Child& reaped) { return reaped.pid < 0; });
        }
      if (child == nullptr && children_.size() < max_children_) child = fork_child(libraries);
      if (child == nullptr) return;
      child->stderr_tail.clear();  // the tail reported with a failure is this request's
      if (!write_line(child->request_fd, queue_.front().line)) {
        // Its request pipe broke: it serves nothing more, and its end shows on its reply pipe.
        ::kill(child->pid, SIGKILL);
        child->retired = true;
        continue;
      }
      child->serving = std::move(queue_.front());
      queue_.pop_front();
    }
  }

  Child* idle_child(const std::string& libraries) {
    for (Child& child : children_)
      if (child.pid > 0 && !child.serving && !child.retired && child.libraries == libraries) return &child;
    return nullptr;
  }

  Child* idle_child_of_other_libraries(const std::string& libraries) {
    for (Child& child : children_)
      if (child.pid > 0 && !child.serving && child.libraries != libraries) return &child;
    return nullptr;
  }

  Child* fork_child(const std::string& libraries) {
    std::vector<int> foreign_fds{in_fd_, out_fd_};
    for (const Child& child : children_)
      for (int fd : {child.request_fd, child.reply_fd, child.stderr_fd})
        if (fd >= 0) foreign_fds.push_back(fd);
    Child child(max_line_bytes_);
    child.libraries = libraries;
    if (!spawn(child, foreign_fds, serve_child_)) {
      // With children, the request waits for one of them; without, nothing can ever serve it.
      if (children_.empty()) exit_code_ = 1;
      return nullptr;
    }
    children_.push_back(std::move(child));
    return &children_.back();
  }

  void read_replies(Child& child) {
    std::string bytes;
    if (read_some(child.reply_fd, bytes) != ReadResult::data) return bury(child);
    child.replies.feed(bytes);
    while (auto line = child.replies.next()) answer(child, *line);
  }

  void answer(Child& child, const protocol::Line& line) {
    drain_stderr(child);
    if (!child.serving) return send(line.text);  // unsolicited: the coordinator judges it
    bool retire = false;
    std::string reply = reply_line(*child.serving, line, child.stderr_tail, max_line_bytes_, retire);
    child.serving.reset();
    child.retired = child.retired || retire;
    send(reply);
  }

  // Reaps a child whose reply pipe closed, or that was killed; the request it was still serving
  // gets its crash verdict, with the child's last words.
  void bury(Child& child) {
    int status = 0;
    while (::waitpid(child.pid, &status, 0) < 0 && errno == EINTR) {
    }
    child.pid = -1;
    drain_stderr(child);  // reaped, so the pipe ends promptly
    close_fd(child.request_fd);
    close_fd(child.reply_fd);
    close_fd(child.stderr_fd);
    if (child.serving) send(death_reply(*child.serving, decode_wait_status(status), child.stderr_tail));
    child.serving.reset();
  }

  // End of input with everything answered: the children see their request pipes close and exit.
  void finish_input() {
    for (Child& child : children_) close_fd(child.request_fd);
    for (Child& child : children_)
      if (child.pid > 0) bury(child);
    if (!exit_code_) exit_code_ = 0;
  }

  bool serving_anything() const {
    return std::any_of(children_.begin(), children_.end(), [](const Child& child) { return child.serving.has_value(); });
  }

  void send(const std::string& line) {
    if (!write_line(out_fd_, line)) exit_code_ = 1;
  }

  int in_fd_;
  int out_fd_;
  std::size_t max_line_bytes_;
  std::size_t max_children_;
  const std::function<int(int, int)>& serve_child_;
  protocol::LineBuffer requests_;
  std::deque<Forwarded> queue_;  // waiting for a child, in order of arrival
  std::list<Child> children_;    // a list: dispatch holds pointers across forks
  bool input_open_ = true;
  std::optional<int> exit_code_;
};

}  // namespace

int serve_forking(int in_fd, int out_fd, std::size_t max_line_bytes, std::size_t max_children,
                  const std::function<int(int, int)>& serve_child) {
  // A write to a dead child's pipe must be an error here, not the end of the fork server.
  ::signal(SIGPIPE, SIG_IGN);
  return ForkServer(in_fd, out_fd, max_line_bytes, max_children, serve_child).run();
}

}  // namespace minifyd::worker
