// A client of minifyd: one connection, synchronous requests and streamed events, with a deadline on
// every wait so that a wedged daemon never hangs a command forever.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "common/expected.h"
#include "protocol/daemon_requests.h"
#include "protocol/job_events.h"
#include "protocol/line_buffer.h"

namespace minifyd::transport {

// Not thread-safe; one per thread. Movable, closes its socket when destroyed.
class DaemonClient {
 public:
  // Connects and checks the greeting, within `timeout`. When nothing listens the error is one line
  // saying so and how to start a daemon; a refusal (another uid, too many connections), a peer that
  // is not minifyd and another protocol version are errors naming what they are.
  static Expected<DaemonClient> connect(const std::filesystem::path& socket,
                                        std::chrono::milliseconds timeout = std::chrono::seconds(10));
  DaemonClient(DaemonClient&& other) noexcept;
  DaemonClient& operator=(DaemonClient&&) = delete;
  ~DaemonClient();

  // Sends one request and reads its reply, within `timeout` (generous: a query runs a graph). An
  // "ok": false reply is an Error with the daemon's kind and message.
  Expected<nlohmann::json> request(const nlohmann::json& request,
                                   std::chrono::milliseconds timeout = std::chrono::hours(1));
  // The next message the daemon sends (a watch event), waiting up to `timeout`.
  Expected<nlohmann::json> next_message(std::chrono::milliseconds timeout = std::chrono::hours(24));

  // request() of a typed request (protocol/daemon_requests.h), its reply decoded; a malformed reply
  // is an io error naming the bad field's path.
  template <class Request>
  Expected<typename Request::Reply> ask(const Request& typed,
                                        std::chrono::milliseconds timeout = std::chrono::hours(1)) {
    auto reply = request(protocol::encode(typed), timeout);
    if (!reply) return reply.error();
    return protocol::decode_daemon_reply<typename Request::Reply>(*reply, Request::type);
  }
  // next_message() as a watched job's event; a malformed one is an io error naming the bad field.
  Expected<protocol::JobEvent> next_event(std::chrono::milliseconds timeout = std::chrono::hours(24));

 private:
  using Clock = std::chrono::steady_clock;
  struct Deadline {
    Clock::time_point at;
    std::chrono::milliseconds timeout;  // as the caller gave it, for error messages
  };

  DaemonClient(int fd, std::filesystem::path socket) : fd_(fd), socket_(std::move(socket)) {}
  Expected<void> send_line(const std::string& line, const Deadline& deadline);
  Expected<std::string> read_line(const Deadline& deadline);
  Expected<void> wait_until_ready(short events, const Deadline& deadline);
  Error failure(const std::string& what) const;

  int fd_;
  std::filesystem::path socket_;
  protocol::LineBuffer lines_{protocol::default_max_line_bytes};
};

}  // namespace minifyd::transport
