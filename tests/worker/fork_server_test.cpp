// The fork server relays requests to a child and turns a child's death mid-request into a crash
// verdict for that request, then serves on with a fresh child. The child here is a stand-in that
// crashes, exits or answers on command, so the relay is tested without LibTorch in the loop.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "common/json_view.h"
#include "protocol/line_buffer.h"
#include "protocol/worker_messages.h"
#include "worker/fork_server.h"
#include "worker/server.h"
// After every LibTorch header (worker/server.h brings them).
#include "tests/support/catch_torch.h"

using namespace minifyd;

namespace {

// Answers each evaluate request by its backend (reading the JSON itself: the requests carry no graph): "segv" crashes, "exit" exits 3, else it passes.
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
      std::uint64_t id = request["id"];
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

struct ForkServer {
  ForkServer() {
    REQUIRE(::pipe(to_server) == 0);
    REQUIRE(::pipe(from_server) == 0);
    pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      ::close(to_server[1]);
      ::close(from_server[0]);
      ::_exit(worker::serve_forking(to_server[0], from_server[1], 1024, stand_in_child));
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

}  // namespace

TEST_CASE("a child's crash is the crashing request's verdict and a fresh child serves on", "[fork_server]") {
  ForkServer server;
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
  ForkServer server;
  server.send(std::string(2000, 'x'));
  protocol::WorkerReply reply = server.receive();
  const auto* error = std::get_if<protocol::ErrorReply>(&reply);
  REQUIRE(error != nullptr);
  CHECK(error->message == "request of 2000 bytes is over the limit of 1024");
  server.send(request(5, "eager"));
  CHECK(verdict_of(server.receive(), 5).pass);
  ::close(server.to_server[1]);
  CHECK(server.exit_code() == 0);
}
