// The worker as a fork server: the process the coordinator started loads LibTorch once, then serves
// every request through a forked child, relaying request and reply lines. A child that dies by a
// signal (or exits) mid-request becomes a `crash` verdict for that request, and a fresh child is
// forked in milliseconds; without it, every crashing candidate costs a new worker process, which
// spends most of a second loading LibTorch. Used only while this process has no CUDA context:
// CUDA cannot be used in a child forked after it was initialised.
#pragma once

#include <cstddef>
#include <functional>

namespace minifyd::worker {

// Serves the requests on in_fd, replying on out_fd (the hello is the caller's), each through a child
// running serve_child(request_fd, reply_fd). The child's stderr is relayed to this process's
// stderr, and its tail goes into crash verdicts. Returns the process exit code: 0 after shutdown
// or end of input, 1 when the pipes fail.
int serve_forking(int in_fd, int out_fd, std::size_t max_line_bytes,
                  const std::function<int(int request_fd, int reply_fd)>& serve_child);

}  // namespace minifyd::worker
