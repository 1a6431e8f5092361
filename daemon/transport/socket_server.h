// minifyd's socket: a Boost.Asio Unix-socket server of JSON lines. It owns the framing and
// everything a hostile or broken peer can do (another uid, malformed or over-long lines, never
// sending, never reading); the RequestHandler sees only well-formed requests of known types. All
// of it runs on the io_context's thread, and nothing there blocks.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <array>
#include <deque>
#include <map>
#include <filesystem>
#include <memory>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/steady_timer.hpp>
#include <nlohmann/json.hpp>

#include "common/expected.h"
#include "protocol/daemon_messages.h"
#include "protocol/line_buffer.h"

namespace minifyd::transport {

using DecodedRequest = protocol::DaemonRequest;

struct ServerLimits {
  std::size_t max_line_bytes = protocol::daemon_max_request_bytes;
  // A connection with nothing streaming that sends nothing and is sent nothing for this long is closed.
  std::chrono::seconds idle_timeout{600};
  // A peer that does not read its replies is dropped once this much is waiting for it.
  std::size_t max_pending_output_bytes = 16 * 1024 * 1024;
  std::size_t max_connections = 512;
};

struct ServerStats {
  std::uint64_t accepted = 0;
  std::uint64_t refused = 0;  // another uid, or over max_connections
  std::uint64_t open = 0;
  std::uint64_t requests = 0;   // well-formed, handed to the handler
  std::uint64_t malformed = 0;  // answered with an error by the server itself
  std::uint64_t dropped = 0;    // closed for not reading or for idling
};

class SocketServer;

class ClientConnection : public std::enable_shared_from_this<ClientConnection> {
 public:
  ClientConnection(SocketServer& server, boost::asio::local::stream_protocol::socket socket, std::uint64_t id);

  // Queues one line; safe from any thread (it is posted to the io thread).
  void send(nlohmann::json message);
  // Exempts the connection from the idle timeout while it streams events (watch). io thread.
  void set_streaming(bool streaming) { streaming_ = streaming; }
  // Closes the connection once everything queued is written. io thread.
  void close_after_sending();
  std::uint64_t id() const { return id_; }

 private:
  friend class SocketServer;
  void start(const std::string& first_line);
  void read();
  void on_bytes(std::size_t count);
  void queue(std::string line);
  void write();
  void arm_idle_timer();
  void close();

  SocketServer& server_;
  boost::asio::local::stream_protocol::socket socket_;
  std::uint64_t id_;
  protocol::LineBuffer lines_;
  std::array<char, 64 * 1024> buffer_{};
  std::deque<std::string> outgoing_;
  std::size_t pending_bytes_ = 0;
  bool writing_ = false;
  bool streaming_ = false;
  bool closed_ = false;
  bool close_when_sent_ = false;
  boost::asio::steady_timer idle_timer_;
};

class RequestHandler {
 public:
  virtual ~RequestHandler() = default;
  virtual void on_request(const std::shared_ptr<ClientConnection>& connection, DecodedRequest request) = 0;
  // The connection is gone; drop what refers to it.
  virtual void on_closed(ClientConnection& connection) = 0;
};

class SocketServer {
 public:
  SocketServer(boost::asio::io_context& io, std::filesystem::path path, RequestHandler& handler, ServerLimits limits);
  ~SocketServer();

  // Binds the socket (mode 0600) and starts accepting. Refuses a path where another daemon
  // answers; replaces a stale socket file whose daemon is gone.
  Expected<void> listen();
  // Stops accepting, closes every connection and removes the socket file.
  void stop();
  const ServerStats& stats() const { return stats_; }

 private:
  friend class ClientConnection;
  void accept();
  void on_accepted(boost::asio::local::stream_protocol::socket socket);
  void on_line(const std::shared_ptr<ClientConnection>& connection, protocol::Line line);
  void on_closed(ClientConnection& connection);

  boost::asio::io_context& io_;
  std::filesystem::path path_;
  RequestHandler& handler_;
  ServerLimits limits_;
  boost::asio::local::stream_protocol::acceptor acceptor_;
  std::map<std::uint64_t, std::shared_ptr<ClientConnection>> connections_;
  std::uint64_t next_id_ = 1;
  ServerStats stats_;
  bool listening_ = false;
};

}  // namespace minifyd::transport
