// One peer of minifyd's socket: reads its request lines into the server, writes replies and events
// back in order, and closes itself when the peer idles or stops reading. The SocketServer makes it and
// hears from it as its ConnectionOwner.
#pragma once

#include <sys/types.h>

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/steady_timer.hpp>
#include <nlohmann/json.hpp>

#include "daemon/transport/server_limits.h"
#include "protocol/line_buffer.h"

namespace minifyd::transport {

class ClientConnection;

// What a connection tells the server that accepted it, on the io thread.
class ConnectionOwner {
 public:
  virtual ~ConnectionOwner() = default;
  // A request line, or an over-long one (Line::oversized) once the peer has sent more than max_line_bytes.
  virtual void on_line(const std::shared_ptr<ClientConnection>& connection, protocol::Line line) = 0;
  // Closed for not reading or for idling (on_closed follows).
  virtual void on_dropped(ClientConnection& connection) = 0;
  virtual void on_closed(ClientConnection& connection) = 0;
};

// The public methods are safe from any thread for as long as the io_context exists: those that act
// are posted to the io thread and run there in call order (job threads push watch events with
// send()), and do nothing once the connection is closed; id(), peer_pid() and peer_uid() are fixed.
class ClientConnection : public std::enable_shared_from_this<ClientConnection> {
 public:
  ClientConnection(boost::asio::io_context& io, ConnectionOwner& owner, const ServerLimits& limits,
                   boost::asio::local::stream_protocol::socket socket, std::uint64_t id, pid_t peer_pid, uid_t peer_uid);

  // Queues one message. A reply (a message with "ok") answers one request in flight.
  void send(const nlohmann::json& message);
  // While streaming (watch) the connection is exempt from the idle timeout.
  void set_streaming(bool streaming);
  // Closes the connection once everything queued before this call is written.
  void close_after_sending();

  // Unique among this server's connections.
  std::uint64_t id() const { return id_; }
  pid_t peer_pid() const { return peer_pid_; }
  // The peer's uid as the kernel gave it when it connected (SO_PEERCRED): who submits a job.
  uid_t peer_uid() const { return peer_uid_; }

 private:
  friend class SocketServer;
  using Clock = std::chrono::steady_clock;

  // The rest runs on the io thread.
  void start(std::string greeting);
  void read();
  void on_bytes(std::size_t count);
  void queue(std::string line);
  void write();
  void watch_idleness();
  void close_when_written();
  void drop(const std::string& why);
  void close();

  ConnectionOwner& owner_;
  const ServerLimits& limits_;
  boost::asio::io_context& io_;
  boost::asio::local::stream_protocol::socket socket_;
  std::uint64_t id_;
  pid_t peer_pid_;
  uid_t peer_uid_;
  protocol::LineBuffer lines_;
  std::array<char, 64 * 1024> buffer_{};
  std::deque<std::string> outgoing_;  // each ends in '\n'; the front one is being written
  std::size_t pending_bytes_ = 0;     // bytes of outgoing_
  std::size_t in_flight_ = 0;         // requests handed to the handler and not answered yet
  bool writing_ = false;
  bool streaming_ = false;
  bool closing_ = false;  // reads nothing more; closes once outgoing_ is written
  bool closed_ = false;
  Clock::time_point last_activity_;  // the last byte read or written, or the last time it was busy
  boost::asio::steady_timer idle_timer_;
};

}  // namespace minifyd::transport
