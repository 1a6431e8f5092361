// What the socket server hands its requests to: the daemon's service, or a test's fake.
#pragma once

#include <memory>

#include "protocol/daemon_messages.h"

namespace minifyd::transport {

class ClientConnection;

using DecodedRequest = protocol::DaemonRequest;

// Called on the io thread, and must not block it: slow work goes elsewhere and answers through
// ClientConnection::send(), which any thread may call.
class RequestHandler {
 public:
  virtual ~RequestHandler() = default;
  // A well-formed request of a known type. It is in flight (the connection does not idle out)
  // until a reply, a message with "ok", is sent on the connection.
  virtual void on_request(const std::shared_ptr<ClientConnection>& connection, DecodedRequest request) = 0;
  // The connection is gone; drop what refers to it. Sends to it from now on are discarded.
  virtual void on_closed(ClientConnection& connection) = 0;
};

}  // namespace minifyd::transport
