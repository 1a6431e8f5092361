// A real SocketServer on a thread of its own with a handler that echoes, for the transport tests.
// The handler answers {"type": T, ...} with {"ok": true, "echo": request} (and the request's tag),
// except: "watch" streams `events_per_watch` events; "query" stays unanswered (in flight);
// "cancel" fails with {"kind": "not_found", "message": "no job 17"}.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <filesystem>
#include <future>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include "daemon/transport/socket_server.h"

namespace minifyd::test {

class EchoHandler final : public transport::RequestHandler {
 public:
  void on_request(const std::shared_ptr<transport::ClientConnection>& connection,
                  transport::DecodedRequest request) override {
    last_peer_pid = connection->peer_pid();
    nlohmann::json tag = protocol::request_tag(request.json);
    if (request.type == "query") return held.push_back(connection);
    if (request.type == "cancel")
      return connection->send(protocol::error_reply(make_error(ErrorKind::not_found, "no job 17"), tag));
    nlohmann::json reply{{"ok", true}, {"echo", request.json}};
    if (!tag.is_null()) reply["tag"] = tag;
    if (request.type != "watch") return connection->send(reply);
    connection->set_streaming(true);
    connection->send(reply);
    for (std::size_t i = 0; i < events_per_watch; ++i)
      connection->send(nlohmann::json{{"event", "progress"}, {"n", i}, {"padding", std::string(event_padding, 'p')}});
  }
  void on_closed(transport::ClientConnection&) override { ++closed; }

  std::size_t events_per_watch = 3;  // set before connecting
  std::size_t event_padding = 16;
  std::atomic<int> closed{0};
  std::atomic<pid_t> last_peer_pid{0};
  std::vector<std::shared_ptr<transport::ClientConnection>> held;  // io thread
};

// Listens at `path` on construction (throws when it cannot), stops and joins on destruction.
class EchoServer {
 public:
  explicit EchoServer(const std::filesystem::path& path, transport::ServerLimits limits = {})
      : guard_(boost::asio::make_work_guard(io_)), server_(io_, path, handler, limits) {
    if (auto listening = server_.listen(); !listening) throw std::runtime_error(listening.error().message);
    thread_ = std::thread([this] { io_.run(); });
  }
  ~EchoServer() {
    boost::asio::post(io_, [this] {
      server_.stop();
      handler.held.clear();
      guard_.reset();
    });
    thread_.join();
  }
  EchoServer(const EchoServer&) = delete;
  EchoServer& operator=(const EchoServer&) = delete;

  // Runs `work` on the io thread and returns what it returns.
  template <class Work>
  auto on_io(Work work) {
    std::packaged_task<decltype(work())()> task(std::move(work));
    auto result = task.get_future();
    boost::asio::post(io_, [&task] { task(); });
    return result.get();
  }
  transport::ServerStats stats() { return on_io([this] { return server_.stats(); }); }
  void stop() { on_io([this] { server_.stop(); }); }

  EchoHandler handler;

 private:
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> guard_;
  transport::SocketServer server_;
  std::thread thread_;
};

}  // namespace minifyd::test
