// The daemon's socket server on a real Unix socket, with an echoing handler: the greeting, errors
// for malformed lines without losing the connection, the socket file's mode, stale and live
// sockets, and a peer that never reads its replies.
#include <catch2/catch.hpp>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <thread>

#include "daemon/transport/daemon_client.h"
#include "daemon/transport/socket_server.h"
#include "tests/support/temp_dir.h"

using namespace minifyd;
using namespace minifyd::transport;
using namespace std::chrono_literals;

namespace {

// Echoes each request back as {"ok": true, "echo": request}; "flood" streams events without end.
class EchoHandler final : public RequestHandler {
 public:
  void on_request(const std::shared_ptr<ClientConnection>& connection, DecodedRequest request) override {
    if (request.type == "watch") {
      connection->set_streaming(true);
      for (int i = 0; i < 20000; ++i) connection->send(nlohmann::json{{"event", "progress"}, {"padding", std::string(1024, 'p')}});
      return;
    }
    connection->send(nlohmann::json{{"ok", true}, {"echo", request.json}});
  }
  void on_closed(ClientConnection&) override { ++closed; }
  std::atomic<int> closed{0};
};

// A server on its own thread, stopped and joined on destruction.
struct RunningServer {
  RunningServer(const std::filesystem::path& path, ServerLimits limits = {})
      : guard(boost::asio::make_work_guard(io)), server(io, path, handler, limits) {
    auto listening = server.listen();
    REQUIRE(listening.has_value());
    thread = std::thread([this] { io.run(); });
  }
  ~RunningServer() {
    boost::asio::post(io, [this] {
      server.stop();
      guard.reset();
    });
    thread.join();
  }
  boost::asio::io_context io;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> guard;
  EchoHandler handler;
  SocketServer server;
  std::thread thread;
};

int raw_connect(const std::filesystem::path& path) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  return fd;
}

}  // namespace

TEST_CASE("a client is greeted, and malformed requests get named errors on a connection that goes on") {
  test::TempDir dir;
  RunningServer running(dir.path() / "d.sock");
  auto client = DaemonClient::connect(dir.path() / "d.sock");
  REQUIRE(client.has_value());
  auto echoed = client->request(nlohmann::json{{"type", "status"}, {"job", 3}});
  REQUIRE(echoed.has_value());
  CHECK((*echoed)["echo"]["job"] == 3);

  auto unknown = client->request(nlohmann::json{{"type", "frobnicate"}});
  REQUIRE_FALSE(unknown.has_value());
  CHECK(unknown.error().message.find("unknown request type \"frobnicate\"") != std::string::npos);
  auto untyped = client->request(nlohmann::json{{"job", 1}});
  REQUIRE_FALSE(untyped.has_value());
  CHECK(untyped.error().message.find("\"type\"") != std::string::npos);
  CHECK(client->request(nlohmann::json{{"type", "list"}}).has_value());
}

TEST_CASE("the socket is its owner's alone, and a second daemon on it is refused") {
  test::TempDir dir;
  std::filesystem::path path = dir.path() / "d.sock";
  RunningServer running(path);
  struct stat status {};
  REQUIRE(::stat(path.c_str(), &status) == 0);
  CHECK((status.st_mode & 0777) == 0600);
  boost::asio::io_context io;
  EchoHandler handler;
  SocketServer second(io, path, handler, {});
  auto refused = second.listen();
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().message == "another minifyd is already serving " + path.string());
}

TEST_CASE("a stale socket file is replaced, and nothing listening is one clear line") {
  test::TempDir dir;
  std::filesystem::path path = dir.path() / "d.sock";
  {
    int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
    ::close(fd);  // the file stays, nobody listens: a daemon that was killed
  }
  auto nobody = DaemonClient::connect(path);
  REQUIRE_FALSE(nobody.has_value());
  CHECK(nobody.error().message.rfind("no minifyd is running at " + path.string(), 0) == 0);
  RunningServer running(path);
  CHECK(DaemonClient::connect(path).has_value());
}

TEST_CASE("an over-long line is answered and skipped, and a peer that never reads is dropped") {
  test::TempDir dir;
  ServerLimits limits;
  limits.max_line_bytes = 4096;
  limits.max_pending_output_bytes = 256 * 1024;
  RunningServer running(dir.path() / "d.sock", limits);
  auto client = DaemonClient::connect(dir.path() / "d.sock");
  REQUIRE(client.has_value());
  auto long_line = client->request(nlohmann::json{{"type", "list"}, {"padding", std::string(10000, 'x')}});
  REQUIRE_FALSE(long_line.has_value());
  CHECK(long_line.error().message.find("too long") != std::string::npos);
  CHECK(client->request(nlohmann::json{{"type", "list"}}).has_value());

  int deaf = raw_connect(dir.path() / "d.sock");
  std::string watch = "{\"type\": \"watch\"}\n";
  REQUIRE(::write(deaf, watch.data(), watch.size()) == static_cast<ssize_t>(watch.size()));
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (running.handler.closed == 0 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(10ms);
  CHECK(running.handler.closed == 1);
  CHECK(client->request(nlohmann::json{{"type", "list"}}).has_value());
  ::close(deaf);
}
