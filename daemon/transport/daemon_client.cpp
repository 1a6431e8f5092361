// The client's connection. The socket is non-blocking and every wait is a poll() with the time left.
#include "daemon/transport/daemon_client.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include "daemon/transport/unix_address.h"
#include "protocol/daemon_messages.h"

namespace minifyd::transport {
namespace {

std::string describe(std::chrono::milliseconds duration) {
  if (duration < std::chrono::seconds(1)) return std::to_string(duration.count()) + " ms";
  return std::to_string(std::chrono::duration_cast<std::chrono::seconds>(duration).count()) + " s";
}

// Why connect() failed, in one line: nothing listening is the common case and says what to do.
Error connect_error(const std::filesystem::path& socket, int error) {
  if (error == ENOENT || error == ECONNREFUSED)
    return make_error(ErrorKind::io, "no minifyd is running at " + socket.string() +
                                         " (start one with: minifyd --state-dir DIR, or point at a running one "
                                         "with --state-dir or --socket)");
  if (error == EACCES || error == EPERM)
    return make_error(ErrorKind::io, "no permission to connect to " + socket.string() +
                                         ": a minifyd serves only the user who started it");
  return make_error(ErrorKind::io, "connecting to minifyd at " + socket.string() + ": " + std::strerror(error));
}

}  // namespace

Expected<DaemonClient> DaemonClient::connect(const std::filesystem::path& socket, std::chrono::milliseconds timeout) {
  Deadline deadline{Clock::now() + timeout, timeout};
  auto address = unix_address(socket);
  if (!address) return address.error();
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return make_error(ErrorKind::io, std::string("creating a socket: ") + std::strerror(errno));
  DaemonClient client(fd, socket);
  // A Unix connect() completes at once, or fails with EAGAIN while the daemon's backlog is full.
  while (::connect(fd, reinterpret_cast<const sockaddr*>(&*address), sizeof *address) != 0) {
    if (errno == EINTR) continue;
    if (errno != EAGAIN) return connect_error(socket, errno);
    if (Clock::now() >= deadline.at)
      return client.failure("too busy to accept a connection within " + describe(timeout));
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  auto greeting = client.read_line(deadline);
  if (!greeting) return greeting.error();
  auto json = protocol::parse_daemon_line(*greeting);
  // A refused connection gets an error reply in place of the greeting.
  if (json && protocol::is_reply(*json))
    if (auto refused = protocol::reply_value(std::move(*json)); !refused) return refused.error();
  if (auto checked = protocol::decode_daemon_greeting(*greeting); !checked)
    return checked.error().with_context(socket.string());
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
  Deadline deadline{Clock::now() + timeout, timeout};
  auto sent = send_line(protocol::to_line(request) + "\n", deadline);
  // A daemon that hangs up in the middle (on an over-long line) answered first: its reply says why.
  auto line = read_line(deadline);
  if (!line) return sent ? line.error() : sent.error();
  auto reply = protocol::parse_daemon_line(*line);
  if (!reply) return failure("sent a reply that is not one: " + reply.error().message);
  return protocol::reply_value(std::move(*reply));
}

Expected<nlohmann::json> DaemonClient::next_message(std::chrono::milliseconds timeout) {
  auto line = read_line(Deadline{Clock::now() + timeout, timeout});
  if (!line) return line.error();
  auto message = protocol::parse_daemon_line(*line);
  if (!message) return failure("sent a message that is not one: " + message.error().message);
  return message;
}

Expected<protocol::JobEvent> DaemonClient::next_event(std::chrono::milliseconds timeout) {
  auto message = next_message(timeout);
  if (!message) return message.error();
  auto event = protocol::decode_message<protocol::JobEvent>(*message);
  if (!event) return failure("sent a malformed event: " + event.error().message);
  return event;
}

Expected<void> DaemonClient::send_line(const std::string& line, const Deadline& deadline) {
  std::size_t sent = 0;
  while (sent < line.size()) {
    ssize_t wrote = ::send(fd_, line.data() + sent, line.size() - sent, MSG_NOSIGNAL);
    if (wrote >= 0) {
      sent += static_cast<std::size_t>(wrote);
      continue;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN) return failure(std::string("sending a request: ") + std::strerror(errno));
    if (auto ready = wait_until_ready(POLLOUT, deadline); !ready) return ready.error();
  }
  return {};
}

Expected<std::string> DaemonClient::read_line(const Deadline& deadline) {
  while (true) {
    if (auto line = lines_.next()) {
      if (line->oversized) return failure("sent a line of " + std::to_string(line->dropped_bytes) + " bytes, too long");
      return std::move(line->text);
    }
    char buffer[64 * 1024];
    ssize_t got = ::recv(fd_, buffer, sizeof buffer, 0);
    if (got > 0) {
      lines_.feed(std::string_view(buffer, static_cast<std::size_t>(got)));
      continue;
    }
    if (got == 0) return failure("the daemon closed the connection");
    if (errno == EINTR) continue;
    if (errno != EAGAIN) return failure(std::string("reading: ") + std::strerror(errno));
    if (auto ready = wait_until_ready(POLLIN, deadline); !ready) return ready.error();
  }
}

Expected<void> DaemonClient::wait_until_ready(short events, const Deadline& deadline) {
  while (true) {
    auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline.at - Clock::now());
    if (left.count() <= 0) return failure("no answer within " + describe(deadline.timeout));
    pollfd ready{fd_, events, 0};
    int count = ::poll(&ready, 1, static_cast<int>(std::min<std::int64_t>(left.count(), 1 << 30)));
    if (count > 0) return {};
    if (count < 0 && errno != EINTR) return failure(std::string("poll: ") + std::strerror(errno));
  }
}

Error DaemonClient::failure(const std::string& what) const {
  return make_error(ErrorKind::io, "minifyd at " + socket_.string() + ": " + what);
}

}  // namespace minifyd::transport
