// minifyd's socket: a Boost.Asio Unix-socket server of JSON lines. It owns the framing and
// everything a hostile or broken peer can do (another uid, malformed, deeply nested or over-long
// lines, never sending, never reading); the RequestHandler sees only well-formed requests of known
// types. Everything runs on the io_context's thread, and nothing there blocks.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/steady_timer.hpp>

#include "common/expected.h"
#include "daemon/transport/client_connection.h"
#include "daemon/transport/request_handler.h"
#include "daemon/transport/server_limits.h"
#include "protocol/daemon_messages.h"
#include "protocol/line_buffer.h"

namespace minifyd::transport {

struct ServerStats {
  std::uint64_t open = 0;
  std::uint64_t accepted = 0;
  std::uint64_t refused = 0;    // another uid, or beyond max_connections
  std::uint64_t requests = 0;   // well-formed, handed to the handler
  std::uint64_t malformed = 0;  // answered with an error by the server itself
  std::uint64_t dropped = 0;    // closed for not reading or for idling
};

// Every method runs on the io_context's thread (listen() may also run before the io_context does).
// Destroy the server only once its io_context has stopped or has no handler of it left to run.
class SocketServer : private ConnectionOwner {
 public:
  SocketServer(boost::asio::io_context& io, std::filesystem::path path, RequestHandler& handler,
               ServerLimits limits = {});
  ~SocketServer();
  SocketServer(const SocketServer&) = delete;
  SocketServer& operator=(const SocketServer&) = delete;

  // Binds the socket, mode 0600 from the moment the file exists, and starts accepting. Refuses a
  // path too long for a Unix socket, a file that is not a socket, and a socket another daemon
  // answers on; replaces a stale socket file whose daemon is gone.
  Expected<void> listen();
  // Stops accepting, closes every connection (the handler hears of each) and removes the socket.
  void stop();
  ServerStats stats() const { return stats_; }

 private:
  void accept();
  void on_accepted(boost::asio::local::stream_protocol::socket socket);
  void refuse(ClientConnection& connection, const std::string& why);
  void reject(ClientConnection& connection, const nlohmann::json& reply);
  void on_line(const std::shared_ptr<ClientConnection>& connection, protocol::Line line) override;
  void on_dropped(ClientConnection& connection) override;
  void on_closed(ClientConnection& connection) override;

  boost::asio::io_context& io_;
  std::filesystem::path path_;
  RequestHandler& handler_;
  ServerLimits limits_;
  boost::asio::local::stream_protocol::acceptor acceptor_;
  boost::asio::steady_timer accept_retry_;
  std::map<std::uint64_t, std::shared_ptr<ClientConnection>> connections_;
  std::uint64_t next_id_ = 1;
  ServerStats stats_;
  bool listening_ = false;
};

}  // namespace minifyd::transport
