// The client's connection.
#include "daemon/transport/daemon_client.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/json_view.h"
#include "protocol/daemon_messages.h"

namespace minifyd::transport {
namespace {

Error io_error(const std::filesystem::path& socket, const std::string& what) {
  return make_error(ErrorKind::io, "minifyd at " + socket.string() + ": " + what);
}

}  // namespace

Expected<DaemonClient> DaemonClient::connect(const std::filesystem::path& socket, std::chrono::milliseconds timeout) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (socket.string().size() >= sizeof address.sun_path)
    return make_error(ErrorKind::invalid_input, "the socket path " + socket.string() + " is too long for a Unix socket");
  std::strncpy(address.sun_path, socket.c_str(), sizeof address.sun_path - 1);
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return make_error(ErrorKind::io, std::string("creating a socket: ") + std::strerror(errno));
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    int error = errno;
    ::close(fd);
    if (error == ENOENT || error == ECONNREFUSED)
      return make_error(ErrorKind::io, "no minifyd is running at " + socket.string() +
                                           " (start one with: minifyd --state-dir DIR, or say where one is with "
                                           "--state-dir or --socket)");
    if (error == EACCES)
      return make_error(ErrorKind::io, "no permission to reach " + socket.string() +
                                           ": minifyd serves only the user who started it");
    return io_error(socket, std::string("connect: ") + std::strerror(error));
  }
  DaemonClient client(fd, socket);
  auto greeting = client.read_line(timeout);
  if (!greeting) return greeting.error();
  // A refusal (another uid, too many connections) comes as an error reply instead of a greeting.
  if (auto refused = parse_json(*greeting); refused && refused->is_object() && refused->contains("ok"))
    if (auto value = protocol::reply_value(std::move(*refused)); !value) return value.error();
  auto checked = protocol::decode_daemon_greeting(*greeting);
  if (!checked) return checked.error();
  return client;
}

DaemonClient::DaemonClient(DaemonClient&& other) noexcept
    : fd_(other.fd_), socket_(std::move(other.socket_)), lines_(std::move(other.lines_)) {
  other.fd_ = -1;
}

DaemonClient::~DaemonClient() {
  if (fd_ >= 0) ::close(fd_);
}

Expected<nlohmann::json> DaemonClient::request(const nlohmann::json& request, std::chrono::milliseconds timeout) {
  std::string line = request.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  std::size_t sent = 0;
  while (sent < line.size()) {
    ssize_t wrote = ::send(fd_, line.data() + sent, line.size() - sent, MSG_NOSIGNAL);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) return io_error(socket_, std::string("sending a request: ") + std::strerror(errno));
    sent += static_cast<std::size_t>(wrote);
  }
  auto reply = next_message(timeout);
  if (!reply) return reply.error();
  return protocol::reply_value(std::move(*reply));
}

Expected<nlohmann::json> DaemonClient::next_message(std::chrono::milliseconds timeout) {
  auto line = read_line(timeout);
  if (!line) return line.error();
  auto json = parse_json(*line);
  if (!json) return io_error(socket_, "sent a line that is not JSON: " + json.error().message);
  return std::move(*json);
}

Expected<std::string> DaemonClient::read_line(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (auto line = lines_.next()) {
      if (line->oversized) return io_error(socket_, "sent an over-long line");
      return std::move(line->text);
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return io_error(socket_, "no answer within " + std::to_string(timeout.count() / 1000) + " s");
    pollfd readable{fd_, POLLIN, 0};
    int ready = ::poll(&readable, 1, static_cast<int>(std::min<std::int64_t>(left.count(), 1 << 30)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return io_error(socket_, std::string("poll: ") + std::strerror(errno));
    if (ready == 0) continue;
    char buffer[64 * 1024];
    ssize_t got = ::recv(fd_, buffer, sizeof buffer, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return io_error(socket_, std::string("reading: ") + std::strerror(errno));
    if (got == 0) return io_error(socket_, "the daemon closed the connection");
    lines_.feed(std::string_view(buffer, static_cast<std::size_t>(got)));
  }
}

}  // namespace minifyd::transport
