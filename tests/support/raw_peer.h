// A bare peer of a Unix socket for hostile-client tests: sends any bytes, reads lines with a
// timeout, and tells a connection the server closed from one that is merely quiet.
#pragma once

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "daemon/transport/unix_address.h"

namespace minifyd::test {

class RawPeer {
 public:
  // Connects; throws when it cannot.
  explicit RawPeer(const std::filesystem::path& path) {
    auto address = transport::unix_address(path);
    if (!address) throw std::runtime_error(address.error().message);
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0 || ::connect(fd_, reinterpret_cast<const sockaddr*>(&*address), sizeof *address) != 0)
      throw std::runtime_error("connecting to " + path.string() + " failed");
  }
  ~RawPeer() { close(); }
  RawPeer(const RawPeer&) = delete;
  RawPeer& operator=(const RawPeer&) = delete;

  // Writes all of `bytes`; throws when the server has closed the connection.
  void send(std::string_view bytes) {
    while (!bytes.empty()) {
      ssize_t wrote = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (wrote <= 0) throw std::runtime_error("sending to the server failed");
      bytes.remove_prefix(static_cast<std::size_t>(wrote));
    }
  }
  // The next line without its newline; nullopt at the end of the stream or after `timeout`.
  std::optional<std::string> read_line(std::chrono::milliseconds timeout = std::chrono::seconds(2)) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
      if (auto newline = buffer_.find('\n'); newline != std::string::npos) {
        std::string line = buffer_.substr(0, newline);
        buffer_.erase(0, newline + 1);
        return line;
      }
      if (!receive(deadline)) return std::nullopt;
    }
  }
  // Whether the server closes the connection within `timeout`, reading and discarding until then.
  bool closed_by_server(std::chrono::milliseconds timeout = std::chrono::seconds(2)) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (receive(deadline)) buffer_.clear();
    return at_end_;
  }
  // Whether the connection is open right now: no end of stream waits to be read.
  bool still_open() {
    char byte;
    ssize_t got = ::recv(fd_, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    return got > 0 || (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK));
  }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  // Appends what arrives before `deadline`; false at the end of the stream or the deadline.
  bool receive(std::chrono::steady_clock::time_point deadline) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd readable{fd_, POLLIN, 0};
    if (left.count() <= 0 || ::poll(&readable, 1, static_cast<int>(left.count())) <= 0) return false;
    char chunk[64 * 1024];
    ssize_t got = ::recv(fd_, chunk, sizeof chunk, 0);
    if (got <= 0) {
      at_end_ = true;
      return false;
    }
    buffer_.append(chunk, static_cast<std::size_t>(got));
    return true;
  }

  int fd_ = -1;
  std::string buffer_;
  bool at_end_ = false;
};

}  // namespace minifyd::test
