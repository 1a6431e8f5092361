// What the socket server bounds for every peer (socket_server.h), and each connection applies to itself
// (client_connection.h).
#pragma once

#include <chrono>
#include <cstddef>

#include "protocol/daemon_messages.h"

namespace minifyd::transport {

struct ServerLimits {
  // A longer request line gets an error reply, and then the connection is closed: a peer that
  // sends one is broken or hostile, and reading on would only discard more.
  std::size_t max_line_bytes = protocol::daemon_max_request_bytes;
  // A connection with no request in flight and not streaming that reads and writes nothing for
  // this long is closed.
  std::chrono::milliseconds idle_timeout = std::chrono::minutes(10);
  // A peer that does not read is dropped once this much waits to be written to it.
  std::size_t max_pending_output_bytes = 16 * 1024 * 1024;
  // Connections beyond this many get one error line and are closed.
  std::size_t max_connections = 512;
};

}  // namespace minifyd::transport
