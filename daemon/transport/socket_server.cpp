// The socket server.
#include "daemon/transport/socket_server.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>

#include "common/log.h"

namespace minifyd::transport {
namespace {

using boost::asio::local::stream_protocol;

// Hostile bytes end up in error messages; they must not make a reply unencodable.
std::string to_line(const nlohmann::json& message) {
  return message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string refusal(const std::string& message) {
  return to_line(protocol::error_reply(make_error(ErrorKind::invalid_input, message)));
}

}  // namespace

ClientConnection::ClientConnection(SocketServer& server, stream_protocol::socket socket, std::uint64_t id)
    : server_(server),
      socket_(std::move(socket)),
      id_(id),
      lines_(server.limits_.max_line_bytes),
      idle_timer_(server.io_) {}

void ClientConnection::start(const std::string& first_line) {
  queue(first_line);
  arm_idle_timer();
  read();
}

void ClientConnection::send(nlohmann::json message) {
  boost::asio::post(server_.io_, [self = shared_from_this(), line = to_line(message)]() mutable {
    self->queue(std::move(line));
  });
}

void ClientConnection::close_after_sending() {
  close_when_sent_ = true;
  if (!writing_ && outgoing_.empty()) close();
}

void ClientConnection::read() {
  if (closed_) return;
  socket_.async_read_some(boost::asio::buffer(buffer_),
                          [self = shared_from_this()](const boost::system::error_code& error, std::size_t count) {
                            if (error) return self->close();
                            self->on_bytes(count);
                          });
}

void ClientConnection::on_bytes(std::size_t count) {
  arm_idle_timer();
  lines_.feed(std::string_view(buffer_.data(), count));
  auto self = shared_from_this();
  while (!closed_) {
    auto line = lines_.next();
    if (!line) break;
    server_.on_line(self, std::move(*line));
  }
  read();
}

void ClientConnection::queue(std::string line) {
  if (closed_) return;
  line += '\n';
  pending_bytes_ += line.size();
  if (pending_bytes_ > server_.limits_.max_pending_output_bytes) {
    log::warn("connection " + std::to_string(id_) + ": dropped, it does not read its replies (" +
              std::to_string(pending_bytes_) + " bytes waiting)");
    ++server_.stats_.dropped;
    return close();
  }
  outgoing_.push_back(std::move(line));
  if (!writing_) write();
}

void ClientConnection::write() {
  writing_ = true;
  boost::asio::async_write(socket_, boost::asio::buffer(outgoing_.front()),
                           [self = shared_from_this()](const boost::system::error_code& error, std::size_t) {
                             self->writing_ = false;
                             if (error || self->closed_) return self->close();
                             self->pending_bytes_ -= self->outgoing_.front().size();
                             self->outgoing_.pop_front();
                             if (!self->outgoing_.empty()) return self->write();
                             if (self->close_when_sent_) self->close();
                           });
}

void ClientConnection::arm_idle_timer() {
  if (closed_) return;
  idle_timer_.expires_after(server_.limits_.idle_timeout);
  idle_timer_.async_wait([weak = std::weak_ptr<ClientConnection>(shared_from_this())](const boost::system::error_code& error) {
    auto self = weak.lock();
    if (error || !self || self->closed_) return;
    if (self->streaming_ || self->writing_) return self->arm_idle_timer();
    ++self->server_.stats_.dropped;
    self->close();
  });
}

void ClientConnection::close() {
  if (closed_) return;
  closed_ = true;
  boost::system::error_code ignored;
  socket_.shutdown(stream_protocol::socket::shutdown_both, ignored);
  socket_.close(ignored);
  idle_timer_.cancel();
  server_.on_closed(*this);
}

SocketServer::SocketServer(boost::asio::io_context& io, std::filesystem::path path, RequestHandler& handler,
                           ServerLimits limits)
    : io_(io), path_(std::move(path)), handler_(handler), limits_(limits), acceptor_(io) {}

SocketServer::~SocketServer() { stop(); }

Expected<void> SocketServer::listen() {
  if (path_.string().size() >= sizeof(sockaddr_un::sun_path))
    return make_error(ErrorKind::invalid_input, "the socket path " + path_.string() + " is longer than the " +
                                                    std::to_string(sizeof(sockaddr_un::sun_path) - 1) +
                                                    " bytes a Unix socket allows: choose a shorter --socket");
  boost::system::error_code error;
  if (std::filesystem::exists(std::filesystem::symlink_status(path_))) {
    stream_protocol::socket probe(io_);
    probe.connect(stream_protocol::endpoint(path_.string()), error);
    if (!error) return make_error(ErrorKind::invalid_input, "another minifyd is already serving " + path_.string());
    std::error_code removed;
    std::filesystem::remove(path_, removed);
    if (removed) return make_error(ErrorKind::io, "removing the stale socket " + path_.string() + ": " + removed.message());
    log::info("removed the stale socket " + path_.string() + " of a daemon that is gone");
  }
  acceptor_.open(stream_protocol(), error);
  if (error) return make_error(ErrorKind::io, "creating the socket: " + error.message());
  // The socket file is born 0600: no other user can connect between bind() and a chmod().
  mode_t previous = ::umask(0177);
  acceptor_.bind(stream_protocol::endpoint(path_.string()), error);
  ::umask(previous);
  if (error) return make_error(ErrorKind::io, "binding " + path_.string() + ": " + error.message());
  acceptor_.listen(boost::asio::socket_base::max_listen_connections, error);
  if (error) return make_error(ErrorKind::io, "listening on " + path_.string() + ": " + error.message());
  listening_ = true;
  accept();
  return {};
}

void SocketServer::stop() {
  if (!listening_) return;
  listening_ = false;
  boost::system::error_code ignored;
  acceptor_.close(ignored);
  auto open = connections_;
  for (auto& [id, connection] : open) connection->close();
  std::error_code removed;
  std::filesystem::remove(path_, removed);
}

void SocketServer::accept() {
  acceptor_.async_accept([this](const boost::system::error_code& error, stream_protocol::socket socket) {
    if (!listening_) return;
    if (!error) on_accepted(std::move(socket));
    accept();
  });
}

void SocketServer::on_accepted(stream_protocol::socket socket) {
  ++stats_.accepted;
  auto connection = std::make_shared<ClientConnection>(*this, std::move(socket), next_id_++);
  connections_.emplace(connection->id(), connection);
  stats_.open = connections_.size();
  ucred peer{};
  socklen_t size = sizeof peer;
  if (::getsockopt(connection->socket_.native_handle(), SOL_SOCKET, SO_PEERCRED, &peer, &size) != 0 ||
      peer.uid != ::geteuid()) {
    ++stats_.refused;
    log::warn("refused a connection from uid " + std::to_string(peer.uid) + " (pid " + std::to_string(peer.pid) + ")");
    connection->start(refusal("minifyd serves only its own user (uid " + std::to_string(::geteuid()) +
                              "); this connection comes from uid " + std::to_string(peer.uid)));
    return connection->close_after_sending();
  }
  if (connections_.size() > limits_.max_connections) {
    ++stats_.refused;
    connection->start(refusal("minifyd has " + std::to_string(limits_.max_connections) +
                              " connections open already; try again later"));
    return connection->close_after_sending();
  }
  connection->start(to_line(protocol::encode(protocol::DaemonGreeting{protocol::daemon_protocol_version, ::getpid()})));
}

void SocketServer::on_line(const std::shared_ptr<ClientConnection>& connection, protocol::Line line) {
  if (line.oversized) {
    ++stats_.malformed;
    return connection->queue(refusal("the request line of " + std::to_string(line.dropped_bytes) +
                                     " bytes is too long: requests are limited to " +
                                     std::to_string(limits_.max_line_bytes) + " bytes"));
  }
  auto request = protocol::decode_daemon_request(line.text);
  if (!request) {
    ++stats_.malformed;
    return connection->queue(to_line(protocol::error_reply(request.error())));
  }
  ++stats_.requests;
  handler_.on_request(connection, std::move(*request));
}

void SocketServer::on_closed(ClientConnection& connection) {
  handler_.on_closed(connection);
  connections_.erase(connection.id());
  stats_.open = connections_.size();
}

}  // namespace minifyd::transport
