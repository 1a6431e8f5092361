// A client of minifyd: one connection, synchronous requests and streamed events, with timeouts so
// that a wedged daemon never hangs a command forever.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "common/expected.h"
#include "protocol/line_buffer.h"

namespace minifyd::transport {

class DaemonClient {
 public:
  // Connects and checks the greeting. When nothing listens, the error is one line saying so and
  // how to start a daemon.
  static Expected<DaemonClient> connect(const std::filesystem::path& socket,
                                        std::chrono::milliseconds timeout = std::chrono::seconds(10));
  DaemonClient(DaemonClient&& other) noexcept;
  DaemonClient& operator=(DaemonClient&&) = delete;
  ~DaemonClient();

  // Sends one request and reads its reply; an "ok": false reply is an Error with the daemon's kind
  // and message. `timeout`: how long the daemon may take (a query runs a graph).
  Expected<nlohmann::json> request(const nlohmann::json& request,
                                   std::chrono::milliseconds timeout = std::chrono::hours(1));
  // The next line the daemon sends (a watch event), waiting up to `timeout`.
  Expected<nlohmann::json> next_message(std::chrono::milliseconds timeout = std::chrono::hours(24));

 private:
  DaemonClient(int fd, std::filesystem::path socket) : fd_(fd), socket_(std::move(socket)) {}
  Expected<std::string> read_line(std::chrono::milliseconds timeout);

  int fd_;
  std::filesystem::path socket_;
  protocol::LineBuffer lines_{protocol::default_max_line_bytes};
};

}  // namespace minifyd::transport
