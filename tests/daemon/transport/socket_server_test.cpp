// The daemon's socket server on a real Unix socket with an echoing handler: the greeting and round
// trips; every kind of malformed line answered by name on a connection that goes on; an over-long
// line refused and its connection closed; 1,000 hostile requests; peers that send nothing, read
// nothing or idle; the connection limit; another uid; the socket file's mode, stale and live
// sockets, and stop().
#include <catch2/catch.hpp>

#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <vector>

#include "daemon/transport/daemon_client.h"
#include "daemon/transport/socket_server.h"
#include "daemon/transport/unix_address.h"
#include "tests/support/echo_server.h"
#include "tests/support/eventually.h"
#include "tests/support/raw_peer.h"
#include "tests/support/stale_socket.h"
#include "tests/support/temp_dir.h"

using namespace minifyd;
using namespace minifyd::transport;
using namespace std::chrono_literals;
using test::EchoServer;
using test::RawPeer;
using test::eventually;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A line that is not a request, and what the error reply to it must say.
struct Malformed {
  std::string line;
  std::string named;
};

const std::vector<Malformed>& malformed_lines() {
  static const std::vector<Malformed> lines = {
      {"this is not json", "the line is not JSON"},
      {"", "the line is not JSON"},
      {"{\"type\": \"status\"", "the line is not JSON"},
      {"\xff\xfe garbage", "the line is not JSON"},
      {"[1, 2, 3]", "the request is not a JSON object but array"},
      {"null", "the request is not a JSON object but null"},
      {"{\"job\": 1}", "the request has no \"type\" (one of: submit, status,"},
      {"{\"type\": 42}", "the request's \"type\" is number, not a string"},
      {"{\"type\": \"frobnicate\"}", "unknown request type \"frobnicate\" (known: submit, status, list, watch,"},
      {std::string(100, '[') + std::string(100, ']'), "the line nests 100 levels deep, more than the 64 allowed"},
  };
  return lines;
}

nlohmann::json parsed(const std::optional<std::string>& line) {
  REQUIRE(line.has_value());
  return nlohmann::json::parse(*line);
}

}  // namespace

TEST_CASE("a client is greeted with the protocol version and the daemon's pid, and its requests are answered") {
  test::TempDir dir;
  EchoServer server(dir / "d.sock");
  RawPeer peer(dir / "d.sock");
  CHECK(parsed(peer.read_line()) == nlohmann::json{{"minifyd", "daemon"}, {"protocol", 1}, {"pid", ::getpid()}});

  auto client = DaemonClient::connect(dir / "d.sock");
  REQUIRE(client.has_value());
  auto echoed = client->request(nlohmann::json{{"type", "status"}, {"job", 3}, {"tag", "mine"}});
  REQUIRE(echoed.has_value());
  CHECK((*echoed)["echo"]["job"] == 3);
  CHECK((*echoed)["tag"] == "mine");
  CHECK(server.handler.last_peer_pid == ::getpid());
  CHECK(server.stats().requests == 1);
}

TEST_CASE("each kind of malformed line gets an error naming it, and the connection goes on") {
  test::TempDir dir;
  EchoServer server(dir / "d.sock");
  RawPeer peer(dir / "d.sock");
  REQUIRE(peer.read_line());
  for (const Malformed& bad : malformed_lines()) {
    INFO(bad.line);
    peer.send(bad.line + "\n");
    auto reply = parsed(peer.read_line());
    CHECK(reply["ok"] == false);
    CHECK(reply["error"]["kind"] == "invalid_input");
    CHECK(contains(reply["error"]["message"], bad.named));
    peer.send("{\"type\": \"list\"}\n");
    CHECK(parsed(peer.read_line())["ok"] == true);
  }
  auto stats = server.stats();
  CHECK(stats.malformed == malformed_lines().size());
  CHECK(stats.requests == malformed_lines().size());
}

TEST_CASE("an error about a request echoes its tag") {
  test::TempDir dir;
  EchoServer server(dir / "d.sock");
  RawPeer peer(dir / "d.sock");
  REQUIRE(peer.read_line());
  peer.send("{\"type\": \"frobnicate\", \"tag\": [7, \"x\"]}\n");
  auto reply = parsed(peer.read_line());
  CHECK(reply["ok"] == false);
  CHECK(reply["tag"] == nlohmann::json::array({7, "x"}));
}

TEST_CASE("a line deeper than the nesting limit is refused unparsed, however deep") {
  // Parsed, then copied for the tag's echo, this would overflow the io thread's stack.
  test::TempDir dir;
  EchoServer server(dir / "d.sock");
  RawPeer peer(dir / "d.sock");
  REQUIRE(peer.read_line());
  std::size_t depth = 400000;
  peer.send("{\"type\": \"status\", \"tag\": " + std::string(depth, '[') + std::string(depth, ']') + "}\n");
  auto reply = parsed(peer.read_line());
  CHECK(contains(reply["error"]["message"], "nests 400001 levels deep"));
  peer.send("{\"type\": \"list\"}\n");
  CHECK(parsed(peer.read_line())["ok"] == true);
}

TEST_CASE("an over-long line gets an error reply and its connection is closed, with or without its newline") {
  test::TempDir dir;
  ServerLimits limits;
  limits.max_line_bytes = 4096;
  EchoServer server(dir / "d.sock", limits);

  RawPeer complete(dir / "d.sock");
  REQUIRE(complete.read_line());
  complete.send(std::string(10000, 'x') + "\n{\"type\": \"list\"}\n");
  auto reply = parsed(complete.read_line());
  CHECK(reply["ok"] == false);
  CHECK(contains(reply["error"]["message"], "is too long: requests are limited to 4096 bytes"));
  CHECK(complete.closed_by_server());

  RawPeer endless(dir / "d.sock");
  REQUIRE(endless.read_line());
  endless.send(std::string(5000, 'x'));
  CHECK(contains(parsed(endless.read_line())["error"]["message"], "too long"));
  CHECK(endless.closed_by_server());

  auto client = DaemonClient::connect(dir / "d.sock");
  REQUIRE(client.has_value());
  CHECK(client->request(nlohmann::json{{"type", "list"}}).has_value());
  CHECK(server.stats().malformed == 2);
}

TEST_CASE("1,000 hostile requests over 50 connections leave the server serving, with its connections closed") {
  test::TempDir dir;
  EchoServer server(dir / "d.sock");
  const std::size_t connections = 50;
  const std::size_t per_connection = 1000 / connections;
  std::vector<std::unique_ptr<RawPeer>> peers;
  for (std::size_t i = 0; i < connections; ++i) {
    peers.push_back(std::make_unique<RawPeer>(dir / "d.sock"));
    std::string burst;
    for (std::size_t k = 0; k < per_connection; ++k)
      burst += malformed_lines()[(i + k) % malformed_lines().size()].line + "\n";
    peers.back()->send(burst);
  }
  for (std::size_t i = 0; i < connections; ++i) {
    REQUIRE(peers[i]->read_line());  // the greeting
    for (std::size_t k = 0; k < per_connection; ++k) {
      auto reply = parsed(peers[i]->read_line());
      REQUIRE(reply["ok"] == false);
      CHECK(contains(reply["error"]["message"], malformed_lines()[(i + k) % malformed_lines().size()].named));
    }
    if (i % 2) peers[i]->send("{\"type\": \"sta");  // and leave in the middle of a line
  }
  peers.clear();

  auto client = DaemonClient::connect(dir / "d.sock");
  REQUIRE(client.has_value());
  CHECK(client->request(nlohmann::json{{"type", "list"}}).has_value());
  CHECK(eventually([&] { return server.stats().open == 1; }));
  auto stats = server.stats();
  CHECK(stats.malformed == 1000);
  CHECK(stats.requests == 1);
  CHECK(stats.accepted == connections + 1);
}

TEST_CASE("clients that send nothing or half a line do not delay another client's reply") {
  test::TempDir dir;
  EchoServer server(dir / "d.sock");
  std::vector<std::unique_ptr<RawPeer>> quiet;
  for (int i = 0; i < 20; ++i) {
    quiet.push_back(std::make_unique<RawPeer>(dir / "d.sock"));
    if (i % 2) quiet.back()->send("{\"type\": \"sta");
  }
  // A server that waited on a quiet peer would not answer at all; the median keeps a busy
  // machine's scheduling hiccups out of the verdict.
  std::vector<std::chrono::microseconds> took;
  for (int i = 0; i < 9; ++i) {
    auto started = std::chrono::steady_clock::now();
    auto client = DaemonClient::connect(dir / "d.sock");
    REQUIRE(client.has_value());
    REQUIRE(client->request(nlohmann::json{{"type", "status"}}).has_value());
    took.push_back(std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - started));
  }
  std::sort(took.begin(), took.end());
  INFO("connect and status, median of 9: " << took[4].count() << " us, slowest " << took.back().count() << " us");
  CHECK(took[4] < 50ms);
}

TEST_CASE("a peer that never reads is dropped once its unsent output passes the limit, and others are served") {
  test::TempDir dir;
  ServerLimits limits;
  limits.max_pending_output_bytes = 256 * 1024;
  EchoServer server(dir / "d.sock", limits);
  server.handler.events_per_watch = 20000;
  server.handler.event_padding = 1024;
  RawPeer deaf(dir / "d.sock");
  deaf.send("{\"type\": \"watch\"}\n");
  auto client = DaemonClient::connect(dir / "d.sock");
  REQUIRE(client.has_value());
  CHECK(eventually([&] { return server.stats().dropped == 1; }));
  CHECK(client->request(nlohmann::json{{"type", "list"}}).has_value());
  CHECK(deaf.closed_by_server());
  CHECK(server.handler.closed >= 1);
}

TEST_CASE("an idle connection is closed, but not one streaming or waiting for its reply") {
  test::TempDir dir;
  ServerLimits limits;
  limits.idle_timeout = 200ms;
  EchoServer server(dir / "d.sock", limits);
  server.handler.events_per_watch = 0;
  RawPeer streaming(dir / "d.sock");
  REQUIRE(streaming.read_line());
  streaming.send("{\"type\": \"watch\"}\n");
  REQUIRE(parsed(streaming.read_line())["ok"] == true);
  RawPeer waiting(dir / "d.sock");
  REQUIRE(waiting.read_line());
  waiting.send("{\"type\": \"query\"}\n");  // the handler never answers it
  RawPeer idle(dir / "d.sock");
  REQUIRE(idle.read_line());

  CHECK(idle.closed_by_server());
  // Both others have been quiet for longer than the one that was closed.
  CHECK(streaming.still_open());
  CHECK(waiting.still_open());
  CHECK(server.stats().dropped == 1);
}

TEST_CASE("connections beyond the limit get one error line and are closed") {
  test::TempDir dir;
  ServerLimits limits;
  limits.max_connections = 2;
  EchoServer server(dir / "d.sock", limits);
  auto first = std::make_unique<RawPeer>(dir / "d.sock");
  RawPeer second(dir / "d.sock");
  REQUIRE(first->read_line());
  REQUIRE(second.read_line());

  RawPeer third(dir / "d.sock");
  auto refusal = parsed(third.read_line());
  CHECK(refusal["ok"] == false);
  CHECK(contains(refusal["error"]["message"], "minifyd has 2 connections open already"));
  CHECK(third.closed_by_server());

  first.reset();
  CHECK(eventually([&] { return server.stats().open == 1; }));
  auto client = DaemonClient::connect(dir / "d.sock");
  CHECK(client.has_value());
  CHECK(server.stats().refused == 1);
}

TEST_CASE("a peer of another uid gets one refusal line and is closed") {
  if (::geteuid() != 0) {
    WARN("skipped: connecting as another uid needs root, and this runs as uid " << ::geteuid());
    return;
  }
  const uid_t nobody = 65534;
  test::TempDir dir;
  std::filesystem::path path = dir / "d.sock";
  EchoServer server(path);
  // As if the owner had opened both up: the uid check must refuse on its own.
  REQUIRE(::chmod(dir.path().c_str(), 0755) == 0);
  REQUIRE(::chmod(path.c_str(), 0666) == 0);
  auto address = unix_address(path);
  REQUIRE(address.has_value());
  int report[2];
  REQUIRE(::pipe(report) == 0);
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // Async-signal-safe calls only: the parent has other threads.
    ::alarm(5);
    char line[4096];
    ssize_t total = 0;
    int fd = -1;
    if (::setgroups(0, nullptr) == 0 && ::setgid(nobody) == 0 && ::setuid(nobody) == 0)
      fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd >= 0 && ::connect(fd, reinterpret_cast<const sockaddr*>(&*address), sizeof *address) == 0) {
      for (ssize_t got = 1; got > 0 && total < static_cast<ssize_t>(sizeof line); total += got)
        got = ::read(fd, line + total, sizeof line - static_cast<std::size_t>(total));
      ::write(report[1], line, static_cast<std::size_t>(total));
    } else {
      ::write(report[1], "could not connect as uid 65534", 30);
    }
    ::_exit(0);
  }
  ::close(report[1]);
  std::string seen;
  char chunk[4096];
  for (ssize_t got; (got = ::read(report[0], chunk, sizeof chunk)) > 0;)
    seen.append(chunk, static_cast<std::size_t>(got));
  ::close(report[0]);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  INFO(seen);
  REQUIRE(std::count(seen.begin(), seen.end(), '\n') == 1);
  auto refusal = nlohmann::json::parse(seen);
  CHECK(refusal["ok"] == false);
  CHECK(refusal["error"]["message"] ==
        "minifyd serves only its own user (uid 0); this connection comes from uid 65534");
  CHECK(server.stats().refused == 1);
}

TEST_CASE("the socket file is 0600 from the start, even under a permissive umask") {
  test::TempDir dir;
  mode_t previous = ::umask(0);
  auto server = std::make_unique<EchoServer>(dir / "d.sock");
  ::umask(previous);
  struct stat status {};
  REQUIRE(::stat((dir / "d.sock").c_str(), &status) == 0);
  CHECK(S_ISSOCK(status.st_mode));
  CHECK((status.st_mode & 0777) == 0600);
}

TEST_CASE("a second server on a live socket is refused, and a stale socket file is replaced") {
  test::TempDir dir;
  std::filesystem::path path = dir / "d.sock";
  test::leave_stale_socket(path);
  EchoServer first(path);
  CHECK(DaemonClient::connect(path).has_value());

  boost::asio::io_context io;
  test::EchoHandler handler;
  SocketServer second(io, path, handler);
  auto refused = second.listen();
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().message == "another minifyd is already serving " + path.string());
  CHECK(DaemonClient::connect(path).has_value());
}

TEST_CASE("a path that is not a socket, or too long for one, is refused and left alone") {
  test::TempDir dir;
  boost::asio::io_context io;
  test::EchoHandler handler;
  std::filesystem::path file = dir / "notes.txt";
  std::ofstream(file) << "keep me";
  SocketServer on_file(io, file, handler);
  auto refused = on_file.listen();
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().message == file.string() + " exists and is not a socket: choose another --socket");
  CHECK(std::filesystem::file_size(file) == 7);

  std::filesystem::path long_path = dir / (std::string(120, 's') + ".sock");
  SocketServer on_long(io, long_path, handler);
  auto too_long = on_long.listen();
  REQUIRE_FALSE(too_long.has_value());
  CHECK(contains(too_long.error().message, "longer than the 107 a Unix socket allows"));
}

TEST_CASE("stop closes every connection and removes the socket file") {
  test::TempDir dir;
  EchoServer server(dir / "d.sock");
  RawPeer peer(dir / "d.sock");
  REQUIRE(peer.read_line());
  server.stop();
  CHECK(peer.closed_by_server());
  CHECK_FALSE(std::filesystem::exists(dir / "d.sock"));
  CHECK(server.handler.closed == 1);
}
