// The worker's side of the protocol: read requests line by line and answer each with one line,
// until shutdown or end of input. Malformed requests get an error reply; nothing a
// request contains ends the loop. Serving one request at a time, it has nothing to cancel: a
// cancel is ignored, without reply.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "protocol/worker_messages.h"
#include "worker/request_handler.h"

namespace minifyd::worker {

// Writes all the bytes (retrying short writes); false when the pipe fails.
bool write_all(int fd, std::string_view bytes);
// Writes text and a newline, whole; false when the pipe fails.
bool write_line(int fd, const std::string& text);

// The error reply to a request line over the length limit.
std::string oversized_request_reply(std::size_t dropped_bytes, std::size_t max_line_bytes);

// serve()'s exit code after it answered a CUDA error: the process must not serve again.
inline constexpr int exit_retired = 3;

// Whether a reply reports a CUDA error, after which the process that wrote it serves nothing more
// (its CUDA context is unusable).
bool reports_cuda_error(const protocol::WorkerReply& reply);

// Who the process serving requests serves.
enum class Serving {
  // A forked child of the fork server, which sends it only requests naming the operator libraries of
  // its first (fork_server.h).
  one_job,
  // The worker process itself, whose next request may be another job's: after a request naming
  // operator libraries it retires (its reply says so), since a loaded library cannot be unloaded.
  every_job,
};

// Serves requests until shutdown or end of input (the hello is the caller's), or until it has
// answered a cuda_error verdict or retired after operator libraries. Returns the process exit code:
// 0 after shutdown or EOF, exit_retired after a CUDA error or such a retirement, 1 when the pipes fail.
int serve(int in_fd, int out_fd, RequestHandler& handler, std::size_t max_line_bytes, Serving serving);

}  // namespace minifyd::worker
