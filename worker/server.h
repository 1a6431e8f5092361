// The worker's side of the protocol: say hello, then read requests line by line and answer each
// with one line, until shutdown or end of input. Malformed requests get an error reply; nothing a
// request contains ends the loop.
#pragma once

#include <cstddef>

#include "protocol/worker_messages.h"
#include "worker/request_handler.h"

namespace minifyd::worker {

// Returns the process exit code: 0 after shutdown or EOF, 1 when the pipes fail.
int serve(int in_fd, int out_fd, const protocol::WorkerHello& hello, RequestHandler& handler,
          std::size_t max_line_bytes);

}  // namespace minifyd::worker
