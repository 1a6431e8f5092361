// A connection of the socket server.
#include "daemon/transport/client_connection.h"

#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>

#include "common/log.h"

namespace minifyd::transport {

ClientConnection::ClientConnection(boost::asio::io_context& io, ConnectionOwner& owner, const ServerLimits& limits,
                                   boost::asio::local::stream_protocol::socket socket, std::uint64_t id, pid_t peer_pid,
                                   uid_t peer_uid)
    : owner_(owner),
      limits_(limits),
      io_(io),
      socket_(std::move(socket)),
      id_(id),
      peer_pid_(peer_pid),
      peer_uid_(peer_uid),
      lines_(limits.max_line_bytes),
      last_activity_(Clock::now()),
      idle_timer_(io_) {}

void ClientConnection::send(const nlohmann::json& message) {
  // Encoded on the caller's thread: the io thread only copies bytes.
  boost::asio::post(io_, [self = shared_from_this(), line = protocol::to_line(message),
                                  reply = protocol::is_reply(message)]() mutable {
    if (reply && self->in_flight_ > 0) --self->in_flight_;
    self->queue(std::move(line));
  });
}

void ClientConnection::set_streaming(bool streaming) {
  boost::asio::post(io_, [self = shared_from_this(), streaming] { self->streaming_ = streaming; });
}

void ClientConnection::close_after_sending() {
  boost::asio::post(io_, [self = shared_from_this()] { self->close_when_written(); });
}

void ClientConnection::start(std::string greeting) {
  queue(std::move(greeting));
  watch_idleness();
  read();
}

void ClientConnection::read() {
  if (closing_ || closed_) return;
  socket_.async_read_some(boost::asio::buffer(buffer_),
                          [self = shared_from_this()](const boost::system::error_code& error, std::size_t count) {
                            if (error) return self->close();
                            self->on_bytes(count);
                          });
}

void ClientConnection::on_bytes(std::size_t count) {
  last_activity_ = Clock::now();
  lines_.feed(std::string_view(buffer_.data(), count));
  auto self = shared_from_this();
  while (!closing_ && !closed_) {
    auto line = lines_.next();
    if (!line) break;
    owner_.on_line(self, std::move(*line));
  }
  // A line past the cap is refused as soon as it is, not when (or if) its newline arrives.
  if (!closing_ && !closed_ && lines_.pending_bytes() > limits_.max_line_bytes)
    owner_.on_line(self, protocol::Line{{}, true, lines_.pending_bytes()});
  read();
}

void ClientConnection::queue(std::string line) {
  if (closed_) return;
  line += '\n';
  pending_bytes_ += line.size();
  if (pending_bytes_ > limits_.max_pending_output_bytes)
    return drop("it does not read what it is sent (" + std::to_string(pending_bytes_) + " bytes waiting)");
  outgoing_.push_back(std::move(line));
  if (!writing_) write();
}

void ClientConnection::write() {
  writing_ = true;
  boost::asio::async_write(socket_, boost::asio::buffer(outgoing_.front()),
                           [self = shared_from_this()](const boost::system::error_code& error, std::size_t) {
                             self->writing_ = false;
                             if (error || self->closed_) return self->close();
                             self->last_activity_ = Clock::now();
                             self->pending_bytes_ -= self->outgoing_.front().size();
                             self->outgoing_.pop_front();
                             if (!self->outgoing_.empty()) return self->write();
                             if (self->closing_) self->close();
                           });
}

void ClientConnection::watch_idleness() {
  idle_timer_.expires_at(last_activity_ + limits_.idle_timeout);
  idle_timer_.async_wait([self = shared_from_this()](const boost::system::error_code& error) {
    if (error || self->closed_) return;
    auto now = Clock::now();
    if (self->streaming_ || self->in_flight_ > 0) self->last_activity_ = now;
    if (now - self->last_activity_ >= self->limits_.idle_timeout)
      return self->drop("idle for " + std::to_string(self->limits_.idle_timeout.count()) + " ms");
    self->watch_idleness();
  });
}

void ClientConnection::close_when_written() {
  closing_ = true;
  if (outgoing_.empty()) close();
}

void ClientConnection::drop(const std::string& why) {
  log::warn("connection " + std::to_string(id_) + " (pid " + std::to_string(peer_pid_) + "): dropped, " + why);
  owner_.on_dropped(*this);
  close();
}

void ClientConnection::close() {
  if (closed_) return;
  closed_ = true;
  boost::system::error_code ignored;
  socket_.shutdown(boost::asio::local::stream_protocol::socket::shutdown_both, ignored);
  socket_.close(ignored);
  idle_timer_.cancel();
  owner_.on_closed(*this);
}

}  // namespace minifyd::transport
