// The client: one line when no daemon runs, refusals and foreign or newer peers named, deadlines
// on a wedged daemon, the daemon's errors as Errors, and streamed events.
#include <catch2/catch.hpp>

#include <sys/socket.h>
#include <unistd.h>

#include <thread>

#include "daemon/transport/daemon_client.h"
#include "daemon/transport/unix_address.h"
#include "tests/support/echo_server.h"
#include "tests/support/stale_socket.h"
#include "tests/support/temp_dir.h"

using namespace minifyd;
using namespace minifyd::transport;
using namespace std::chrono_literals;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A listening socket that is not a SocketServer: with a greeting it accepts one connection, writes
// the greeting and holds the connection open until destroyed; without one it never accepts.
class FakeDaemon {
 public:
  FakeDaemon(const std::filesystem::path& path, std::string greeting = {}) {
    auto address = unix_address(path);
    REQUIRE(address.has_value());
    listener_ = ::socket(AF_UNIX, SOCK_STREAM, 0);
    REQUIRE(::bind(listener_, reinterpret_cast<const sockaddr*>(&*address), sizeof *address) == 0);
    REQUIRE(::listen(listener_, 4) == 0);
    if (greeting.empty()) return;
    thread_ = std::thread([this, greeting] {
      int peer = ::accept(listener_, nullptr, nullptr);
      if (peer < 0) return;
      ::write(peer, greeting.data(), greeting.size());
      char byte;
      ::read(peer, &byte, 1);  // until the client goes
      ::close(peer);
    });
  }
  ~FakeDaemon() {
    if (thread_.joinable()) thread_.join();
    ::close(listener_);
  }

 private:
  int listener_ = -1;
  std::thread thread_;
};

// The error of an outcome that must be one.
template <class T>
Error failure_of(const Expected<T>& outcome) {
  REQUIRE_FALSE(outcome.has_value());
  return outcome.error();
}

DaemonClient connected(const std::filesystem::path& socket) {
  auto client = DaemonClient::connect(socket);
  REQUIRE(client.has_value());
  return std::move(*client);
}

// An echo server in a fresh directory and a client connected to it.
struct Session {
  explicit Session(ServerLimits limits = {}) : server(socket, limits), client(connected(socket)) {}
  test::TempDir dir;
  std::filesystem::path socket = dir / "d.sock";
  test::EchoServer server;
  DaemonClient client;
};

}  // namespace

TEST_CASE("connecting where no daemon runs says so in one line") {
  test::TempDir dir;
  std::filesystem::path missing = dir / "nothing.sock";
  Error nobody = failure_of(DaemonClient::connect(missing));
  CHECK(nobody.message == "no minifyd is running at " + missing.string() +
                              " (start one with: minifyd --state-dir DIR, or point at a running one with "
                              "--state-dir or --socket)");

  std::filesystem::path stale = dir / "stale.sock";
  test::leave_stale_socket(stale);
  Error refused = failure_of(DaemonClient::connect(stale));
  CHECK(refused.message.rfind("no minifyd is running at " + stale.string() + " (", 0) == 0);
  CHECK_FALSE(contains(refused.message, "\n"));
}

TEST_CASE("a daemon of another protocol version is refused, naming both versions") {
  test::TempDir dir;
  FakeDaemon newer(dir / "d.sock", "{\"minifyd\": \"daemon\", \"protocol\": 2, \"pid\": 7}\n");
  Error refused = failure_of(DaemonClient::connect(dir / "d.sock"));
  CHECK(refused.message == (dir / "d.sock").string() +
                               ": minifyd speaks protocol version 2, this client version 1: use the minify "
                               "that came with that minifyd");
}

TEST_CASE("a peer that is not minifyd is named as such") {
  test::TempDir dir;
  FakeDaemon stranger(dir / "d.sock", "SSH-2.0-OpenSSH_9.2\n");
  Error refused = failure_of(DaemonClient::connect(dir / "d.sock"));
  CHECK(contains(refused.message, "the socket's peer is not minifyd (it greeted with: SSH-2.0-OpenSSH_9.2)"));
}

TEST_CASE("a daemon that never greets is given up on after the timeout") {
  test::TempDir dir;
  FakeDaemon wedged(dir / "d.sock");
  auto started = std::chrono::steady_clock::now();
  Error gave_up = failure_of(DaemonClient::connect(dir / "d.sock", 100ms));
  CHECK(gave_up.message == "minifyd at " + (dir / "d.sock").string() + ": no answer within 100 ms");
  CHECK(std::chrono::steady_clock::now() - started < 1s);
}

TEST_CASE("a request the daemon does not answer in time is an error, not a hang") {
  Session session;
  Error unanswered = failure_of(session.client.request(nlohmann::json{{"type", "query"}}, 100ms));
  CHECK(contains(unanswered.message, "no answer within 100 ms"));
}

TEST_CASE("a refused connection and an ok:false reply are Errors with the daemon's kind and message") {
  ServerLimits limits;
  limits.max_connections = 1;
  Session session(limits);
  Error failed = failure_of(session.client.request(nlohmann::json{{"type", "cancel"}, {"job", 17}}));
  CHECK(failed.kind == ErrorKind::not_found);
  CHECK(failed.message == "no job 17");

  Error second = failure_of(DaemonClient::connect(session.socket));
  CHECK(second.message == "minifyd has 1 connections open already; try again later");
}

TEST_CASE("a watch's events arrive one by one after its reply") {
  Session session;
  REQUIRE(session.client.request(nlohmann::json{{"type", "watch"}, {"job", 1}}).has_value());
  for (int i = 0; i < 3; ++i) {
    auto event = session.client.next_message(1s);
    REQUIRE(event.has_value());
    CHECK((*event)["event"] == "progress");
    CHECK((*event)["n"] == i);
  }
  Error quiet = failure_of(session.client.next_message(50ms));
  CHECK(contains(quiet.message, "no answer within 50 ms"));
}

TEST_CASE("a request too long for the daemon fails with the daemon's reason, not a broken pipe") {
  ServerLimits limits;
  limits.max_line_bytes = 4096;
  Session session(limits);
  Error refused =
      failure_of(session.client.request(nlohmann::json{{"type", "submit"}, {"padding", std::string(4 << 20, 'x')}}));
  CHECK(contains(refused.message, "is too long: requests are limited to 4096 bytes"));
}
