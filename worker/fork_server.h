// The worker as a fork server: the process the coordinator started loads LibTorch once, then serves
// requests through forked children, several at once, relaying request and reply lines. A child
// serves one request at a time and, done, waits for the next with its caches warm; a child that
// dies by a signal (or exits) mid-request becomes a `crash` verdict for that request alone, and the
// others serve on. A hung request costs one child, which a `cancel` kills, not the worker; without
// children, every crashing candidate would cost a new worker process, which spends most of a second
// loading LibTorch. Used only while this process has no CUDA context: CUDA cannot be used in a
// child forked after it was initialised.
#pragma once

#include <cstddef>
#include <functional>

namespace minifyd::worker {

// Serves the requests on in_fd, replying on out_fd (the hello is the caller's), each through a child
// running serve_child(request_fd, reply_fd): up to max_children requests at once, the rest waiting
// in order. An idle child is reused; a new one is forked only while every child is busy. A request
// naming operator libraries (worker/operator_libraries.h) goes only to a child that serves those, or a
// fresh one: what a child loaded stays loaded, so it never serves a request naming other ones (or
// none); at max_children an idle child of other libraries is killed to make room. Each
// child's stderr is relayed to this process's stderr, and its tail (since its request began) goes
// into that request's failing verdict. `cancel` kills the child serving the request (or drops it
// from the queue), without reply. `shutdown` kills every child at once, answering nothing more;
// at end of input, what was received is served to the end. Returns the process exit code: 0 after
// shutdown or end of input, 1 when the pipes fail.
int serve_forking(int in_fd, int out_fd, std::size_t max_line_bytes, std::size_t max_children,
                  const std::function<int(int request_fd, int reply_fd)>& serve_child);

}  // namespace minifyd::worker
