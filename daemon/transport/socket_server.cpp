// The socket server.
#include "daemon/transport/socket_server.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/log.h"
#include "daemon/transport/unix_address.h"
#include "protocol/daemon_requests.h"

namespace minifyd::transport {
namespace {

using boost::asio::local::stream_protocol;

Error system_error(const std::string& doing, int error) {
  return make_error(ErrorKind::io, doing + ": " + std::strerror(error));
}

// Whether a daemon answers on the socket at `address`. The connect does not block, so that a
// daemon too busy to accept (its backlog full: EAGAIN) still counts as answering.
Expected<bool> daemon_answers(const sockaddr_un& address) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return system_error("creating a socket", errno);
  int result = ::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address);
  int error = errno;
  ::close(fd);
  if (result == 0 || error == EAGAIN) return true;
  if (error == ECONNREFUSED || error == ENOENT) return false;
  return system_error(std::string("connecting to ") + address.sun_path, error);
}

// Makes way for a new socket at `path`: nothing there, or a socket file whose daemon is gone.
Expected<void> clear_stale_socket(const std::filesystem::path& path, const sockaddr_un& address) {
  std::error_code error;
  auto status = std::filesystem::symlink_status(path, error);
  if (!std::filesystem::exists(status)) return {};
  if (!std::filesystem::is_socket(status))
    return make_error(ErrorKind::invalid_input, path.string() + " exists and is not a socket: choose another --socket");
  auto answers = daemon_answers(address);
  if (!answers) return answers.error();
  if (*answers) return make_error(ErrorKind::invalid_input, "another minifyd is already serving " + path.string());
  if (!std::filesystem::remove(path, error) && error)
    return make_error(ErrorKind::io, "removing the stale socket " + path.string() + ": " + error.message());
  log::info("removed the stale socket " + path.string() + " of a daemon that is gone");
  return {};
}

// A listening socket bound at `address`, its file 0600 from the moment it exists. Linux gives the
// file the mode of the socket's inode less the umask, so fchmod() before bind() closes the window
// a chmod() after it would leave, without changing the process-wide umask under other threads.
Expected<int> bind_private_socket(const sockaddr_un& address) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return system_error("creating the socket", errno);
  std::string failed;
  if (::fchmod(fd, S_IRUSR | S_IWUSR) != 0) failed = "setting the socket's mode";
  else if (::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0)
    failed = std::string("binding ") + address.sun_path;
  else if (::listen(fd, SOMAXCONN) != 0)
    failed = std::string("listening on ") + address.sun_path;
  if (failed.empty()) return fd;
  int error = errno;
  ::close(fd);
  return system_error(failed, error);
}

}  // namespace

SocketServer::SocketServer(boost::asio::io_context& io, std::filesystem::path path, RequestHandler& handler,
                           ServerLimits limits)
    : io_(io), path_(std::move(path)), handler_(handler), limits_(limits), acceptor_(io), accept_retry_(io) {}

SocketServer::~SocketServer() { stop(); }

Expected<void> SocketServer::listen() {
  auto address = unix_address(path_);
  if (!address) return address.error();
  if (auto cleared = clear_stale_socket(path_, *address); !cleared) return cleared.error();
  auto fd = bind_private_socket(*address);
  if (!fd) return fd.error();
  boost::system::error_code error;
  acceptor_.assign(stream_protocol(), *fd, error);
  if (error) {
    ::close(*fd);
    return make_error(ErrorKind::io, "serving " + path_.string() + ": " + error.message());
  }
  listening_ = true;
  accept();
  return {};
}

void SocketServer::stop() {
  if (!listening_) return;
  listening_ = false;
  boost::system::error_code ignored;
  acceptor_.close(ignored);
  accept_retry_.cancel();
  auto open = connections_;
  for (auto& [id, connection] : open) connection->close();
  std::error_code removed;
  std::filesystem::remove(path_, removed);
}

void SocketServer::accept() {
  acceptor_.async_accept([this](const boost::system::error_code& error, stream_protocol::socket socket) {
    if (!listening_) return;
    if (!error) {
      on_accepted(std::move(socket));
      return accept();
    }
    // Out of descriptors (EMFILE) and the like: accepting again at once would spin on the error.
    log::warn("accepting a connection on " + path_.string() + ": " + error.message());
    accept_retry_.expires_after(std::chrono::milliseconds(100));
    accept_retry_.async_wait([this](const boost::system::error_code& waited) {
      if (!waited && listening_) accept();
    });
  });
}

void SocketServer::on_accepted(stream_protocol::socket socket) {
  ++stats_.accepted;
  ucred peer{};
  socklen_t size = sizeof peer;
  bool known = ::getsockopt(socket.native_handle(), SOL_SOCKET, SO_PEERCRED, &peer, &size) == 0;
  auto connection = std::make_shared<ClientConnection>(io_, static_cast<ConnectionOwner&>(*this), limits_,
                                                     std::move(socket), next_id_++, peer.pid, peer.uid);
  connections_.emplace(connection->id(), connection);
  stats_.open = connections_.size();
  if (!known || peer.uid != ::geteuid())
    return refuse(*connection, "minifyd serves only its own user (uid " + std::to_string(::geteuid()) +
                                   "); this connection comes from uid " +
                                   (known ? std::to_string(peer.uid) : std::string("unknown")));
  if (connections_.size() > limits_.max_connections)
    return refuse(*connection, "minifyd has " + std::to_string(limits_.max_connections) +
                                   " connections open already; try again later");
  protocol::DaemonGreeting greeting{protocol::daemon_protocol_version, ::getpid()};
  connection->start(protocol::to_line(protocol::encode(greeting)));
}

void SocketServer::refuse(ClientConnection& connection, const std::string& why) {
  ++stats_.refused;
  log::warn("refused a connection (pid " + std::to_string(connection.peer_pid()) + "): " + why);
  connection.queue(protocol::to_line(protocol::error_reply(make_error(ErrorKind::invalid_input, why))));
  connection.close_when_written();
}

void SocketServer::on_line(const std::shared_ptr<ClientConnection>& connection, protocol::Line line) {
  if (line.oversized) {
    std::string why = "the request line of " + std::to_string(line.dropped_bytes) +
                      " bytes or more is too long: requests are limited to " +
                      std::to_string(limits_.max_line_bytes) + " bytes; closing the connection";
    reject(*connection, protocol::error_reply(make_error(ErrorKind::invalid_input, why)));
    return connection->close_when_written();
  }
  auto object = protocol::parse_request_line(line.text);
  if (!object) return reject(*connection, protocol::error_reply(object.error()));
  nlohmann::json tag = protocol::request_tag(*object);
  auto request = protocol::decode_request_object(std::move(*object));
  if (!request) return reject(*connection, protocol::error_reply(request.error(), tag));
  ++stats_.requests;
  ++connection->in_flight_;
  handler_.on_request(connection, std::move(*request));
}

void SocketServer::reject(ClientConnection& connection, const nlohmann::json& reply) {
  ++stats_.malformed;
  log::debug("connection " + std::to_string(connection.id()) + ": refused a request: " +
             reply["error"]["message"].get<std::string>());
  connection.queue(protocol::to_line(reply));
}

void SocketServer::on_dropped(ClientConnection&) { ++stats_.dropped; }

void SocketServer::on_closed(ClientConnection& connection) {
  handler_.on_closed(connection);
  connections_.erase(connection.id());
  stats_.open = connections_.size();
}

}  // namespace minifyd::transport
