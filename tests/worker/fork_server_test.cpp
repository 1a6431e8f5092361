// The fork server relays requests to children, several at once, and turns a child's death
// mid-request into a crash verdict for that request alone; a cancel kills only the child serving
// its request. The child here is a stand-in that crashes, exits, hangs or answers on command, so
// the relay is tested without LibTorch in the loop.
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "common/json_view.h"
#include "protocol/line_buffer.h"
#include "protocol/worker_messages.h"
#include "worker/fork_server.h"
#include "worker/server.h"
// After every LibTorch header (worker/server.h brings them).
#include "tests/support/catch_torch.h"
#include "tests/support/eventually.h"

using namespace minifyd;

namespace {

// Answers each evaluate request by its backend (reading the JSON itself: the requests carry no
// graph): "segv" crashes, "exit" exits 3, "hang" never answers, "whoami" answers with an error reply
// whose message is its pid, "cuda" reports a CUDA error and retires as serve() does; else it passes.
int stand_in_child(int request_fd, int reply_fd) {
  ::signal(SIGSEGV, SIG_DFL);  // Catch's handler, inherited through fork, would report the crash as a test failure
  protocol::LineBuffer lines;
  char buffer[4096];
  while (true) {
    ssize_t got = ::read(request_fd, buffer, sizeof buffer);
    if (got <= 0) return 0;
    lines.feed(std::string_view(buffer, static_cast<std::size_t>(got)));
    while (auto line = lines.next()) {
      nlohmann::json request = nlohmann::json::parse(line->text);
      if (request["type"] == "shutdown") return 0;
      if (request["backend"] == "segv") {
        std::fputs("about to crash\n", stderr);
        std::fflush(stderr);
        ::raise(SIGSEGV);
      }
      if (request["backend"] == "exit") ::_exit(3);
      if (request["backend"] == "hang") {
        std::fputs("hanging\n", stderr);
        std::fflush(stderr);
        for (;;) ::pause();
      }
      std::uint64_t id = request["id"];
      if (request["backend"] == "whoami") {
        worker::write_line(reply_fd, protocol::encode(protocol::WorkerReply(protocol::ErrorReply{id, std::to_string(::getpid())})).dump());
        continue;
      }
      if (request["backend"] == "cuda") {
        std::fputs("cuda says no\n", stderr);
        std::fflush(stderr);
        protocol::Verdict verdict;
        verdict.pass = false;
        verdict.kind = protocol::FailureKind::cuda_error;
        verdict.message = "CUDA error: an illegal memory access was encountered";
        worker::write_line(reply_fd, protocol::encode(protocol::WorkerReply(protocol::EvaluateReply{id, verdict, 0, 0})).dump());
        return worker::exit_retired;
      }
      worker::write_line(reply_fd, protocol::encode(protocol::WorkerReply(protocol::EvaluateReply{id, {}, 0, 0})).dump());
    }
  }
}

std::string request(std::uint64_t id, const std::string& backend) {
  protocol::EvaluateRequest evaluate;
  evaluate.id = id;
  evaluate.backend = backend;
  return protocol::encode(protocol::WorkerRequest(evaluate)).dump();
}

std::string cancel(std::uint64_t id) { return protocol::encode(protocol::WorkerRequest(protocol::CancelRequest{id})).dump(); }

// The processes whose parent is `parent`, from /proc.
std::set<pid_t> children_of(pid_t parent) {
  std::set<pid_t> children;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string text;
    std::getline(stat, text);
    std::size_t name_end = text.rfind(')');  // the command name may hold spaces and parentheses
    if (name_end == std::string::npos) continue;
    std::istringstream fields(text.substr(name_end + 1));
    char state = 0;
    pid_t ppid = 0;
    if (fields >> state >> ppid && ppid == parent) children.insert(static_cast<pid_t>(std::stol(name)));
  }
  return children;
}

struct ForkServer {
  explicit ForkServer(std::size_t max_children) {
    REQUIRE(::pipe(to_server) == 0);
    REQUIRE(::pipe(from_server) == 0);
    pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      ::close(to_server[1]);
      ::close(from_server[0]);
      ::_exit(worker::serve_forking(to_server[0], from_server[1], 1024, max_children, stand_in_child));
    }
    ::close(to_server[0]);
    ::close(from_server[1]);
  }
  ~ForkServer() {
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
  }
  void send(const std::string& line) { REQUIRE(worker::write_line(to_server[1], line)); }
  protocol::WorkerReply receive() {
    while (true) {
      if (auto line = replies.next()) {
        auto reply = protocol::decode_reply(nlohmann::json::parse(line->text));
        REQUIRE(reply.has_value());
        return *reply;
      }
      pollfd readable{from_server[0], POLLIN, 0};
      REQUIRE(::poll(&readable, 1, 10'000) == 1);  // a reply that never comes fails, not hangs
      char buffer[4096];
      ssize_t got = ::read(from_server[0], buffer, sizeof buffer);
      REQUIRE(got > 0);
      replies.feed(std::string_view(buffer, static_cast<std::size_t>(got)));
    }
  }
  int exit_code() {
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    pid = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  int to_server[2];
  int from_server[2];
  pid_t pid = -1;
  protocol::LineBuffer replies;
};

protocol::Verdict verdict_of(const protocol::WorkerReply& reply, std::uint64_t id) {
  const auto* evaluated = std::get_if<protocol::EvaluateReply>(&reply);
  REQUIRE(evaluated != nullptr);
  CHECK(evaluated->id == id);
  return evaluated->verdict;
}

// The pid a "whoami" request was answered with.
pid_t pid_of(const protocol::WorkerReply& reply, std::uint64_t id) {
  const auto* answer = std::get_if<protocol::ErrorReply>(&reply);
  REQUIRE(answer != nullptr);
  CHECK(answer->id == id);
  return static_cast<pid_t>(std::stol(answer->message));
}

}  // namespace

TEST_CASE("a child's crash is the crashing request's verdict and a fresh child serves on", "[fork_server]") {
  ForkServer server(4);
  server.send(request(1, "eager"));
  CHECK(verdict_of(server.receive(), 1).pass);
  server.send(request(2, "segv"));
  protocol::Verdict crash = verdict_of(server.receive(), 2);
  CHECK_FALSE(crash.pass);
  CHECK(crash.kind == protocol::FailureKind::crash);
  CHECK(crash.signal == "SIGSEGV");
  CHECK(crash.stderr_tail.find("about to crash") != std::string::npos);
  server.send(request(3, "exit"));
  protocol::Verdict exited = verdict_of(server.receive(), 3);
  CHECK(exited.kind == protocol::FailureKind::crash);
  CHECK(exited.signal.empty());
  CHECK(exited.message == "worker exited with code 3");
  for (std::uint64_t id = 4; id < 24; ++id) {
    server.send(request(id, id % 2 ? "segv" : "eager"));
    CHECK(verdict_of(server.receive(), id).pass == (id % 2 == 0));
  }
  server.send(protocol::encode(protocol::WorkerRequest(protocol::ShutdownRequest{99})).dump());
  CHECK(server.exit_code() == 0);
}

TEST_CASE("the fork server refuses over-long lines itself and ends with its input", "[fork_server]") {
  ForkServer server(4);
  server.send(std::string(2000, 'x'));
  protocol::WorkerReply reply = server.receive();
  const auto* error = std::get_if<protocol::ErrorReply>(&reply);
  REQUIRE(error != nullptr);
  CHECK(error->message == "request of 2000 bytes is over the limit of 1024");
  server.send(request(5, "eager"));
  CHECK(verdict_of(server.receive(), 5).pass);
  server.send(request(6, "eager"));  // still answered after the end of input
  ::close(server.to_server[1]);
  CHECK(verdict_of(server.receive(), 6).pass);
  CHECK(server.exit_code() == 0);
}

TEST_CASE("requests run side by side, an idle child is reused, a cancel kills only its request's child", "[fork_server]") {
  ForkServer server(3);
  server.send(request(1, "hang"));
  server.send(request(2, "hang"));
  server.send(request(3, "whoami"));
  pid_t third = pid_of(server.receive(), 3);  // answered while 1 and 2 hang
  std::set<pid_t> children = children_of(server.pid);
  CHECK(children.size() == 3);
  CHECK(children.count(third) == 1);

  server.send(cancel(1));
  server.send(request(4, "whoami"));
  CHECK(pid_of(server.receive(), 4) == third);  // no reply for 1 came first; the idle child served 4
  std::set<pid_t> after_cancel = children_of(server.pid);
  CHECK(after_cancel.size() == 2);  // 1's child is killed and reaped, 2's hangs on
  CHECK(after_cancel.count(third) == 1);

  server.send(cancel(2));
  server.send(cancel(77));  // unknown: ignored
  server.send(request(5, "whoami"));
  CHECK(pid_of(server.receive(), 5) == third);
  CHECK(children_of(server.pid) == std::set<pid_t>{third});
  server.send(protocol::encode(protocol::WorkerRequest(protocol::ShutdownRequest{99})).dump());
  CHECK(server.exit_code() == 0);
}

TEST_CASE("a child that crashes beside a hanging one is its own request's crash, with its own stderr", "[fork_server]") {
  ForkServer server(3);
  server.send(request(1, "hang"));
  server.send(request(2, "segv"));
  protocol::Verdict crash = verdict_of(server.receive(), 2);
  CHECK(crash.kind == protocol::FailureKind::crash);
  CHECK(crash.signal == "SIGSEGV");
  CHECK(crash.stderr_tail.find("about to crash") != std::string::npos);
  CHECK(crash.stderr_tail.find("hanging") == std::string::npos);
  server.send(request(3, "eager"));
  CHECK(verdict_of(server.receive(), 3).pass);
  server.send(cancel(1));
  server.send(request(4, "eager"));
  CHECK(verdict_of(server.receive(), 4).pass);
}

TEST_CASE("requests beyond the children allowed wait in order, and a cancel drops a waiting one", "[fork_server]") {
  ForkServer server(1);
  server.send(request(1, "hang"));
  server.send(request(2, "whoami"));
  server.send(request(3, "whoami"));
  server.send(request(4, "whoami"));
  server.send(cancel(3));
  server.send(cancel(1));  // frees the only child's place: a fresh child serves the queue
  pid_t fresh = pid_of(server.receive(), 2);
  CHECK(pid_of(server.receive(), 4) == fresh);
  CHECK(children_of(server.pid) == std::set<pid_t>{fresh});
}

TEST_CASE("a child that reports a CUDA error is retired and a fresh child serves the next request", "[fork_server]") {
  ForkServer server(2);
  server.send(request(1, "whoami"));
  pid_t first = pid_of(server.receive(), 1);
  server.send(request(2, "cuda"));
  protocol::Verdict cuda = verdict_of(server.receive(), 2);
  CHECK(cuda.kind == protocol::FailureKind::cuda_error);
  CHECK(cuda.stderr_tail.find("cuda says no") != std::string::npos);
  server.send(request(3, "whoami"));
  pid_t next = pid_of(server.receive(), 3);
  CHECK(next != first);
  CHECK(test::eventually([&] { return children_of(server.pid) == std::set<pid_t>{next}; }));
}
