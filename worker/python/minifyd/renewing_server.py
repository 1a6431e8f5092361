# The Python worker with a GPU (worker_main.py): this process imports torch and Inductor but never
# initialises CUDA, so it can fork; one forked child at a time serves requests, one after another, in
# a CUDA context of its own, and a second child waits beside it with its context up and Inductor
# warmed up on the device (1.1 s to get ready alone on an H200, its context 0.24 s of it; up to 2.8 s
# while eight workers compile). A CUDA error poisons the serving child's context (it says so in its
# reply and exits, worker_requests.py); the waiting child serves the next request, and another is
# forked to wait. Before this, the whole worker exited after each CUDA error and the coordinator
# started a fresh python (5.6 to 6.8 s on an H200: `import torch`, the context, the warm-up), 29 to
# 39 % of the slots' time in runs minimizing a device-side assert. Two waiting children made those
# runs slower, not faster (docs/benchmarks.md): their contexts and warm-ups took the cores and the GPU
# from the plain check and the sanity check.
# The serving child keeps its process state across requests as an in-process worker does (and drops
# Inductor's in-memory caches after each failure): its CUDA context and Triton's loaded kernels are what
# forking per request would lose. A child that dies mid-request is that request's crash verdict, as
# the fork server's; a cancelled request's child is killed and the waiting one takes over.
# When the serving child is gone and the waiting one is not ready yet (two CUDA errors within its
# warm-up), a request would wait for it (1 to 3 s on an H200 while eight workers compile): the worker
# says so (`readiness`, before the reply that ends the serving child) and again once a child is ready,
# and the coordinator sends its requests to other workers meanwhile. A cancel has no reply, and the
# coordinator may not send this worker another request before it knows: each cancel is answered by a
# readiness line, whatever it says (a search cancels the candidates it no longer needs three at a time,
# each killing the serving child, and a request sent on at once waited 3 s for a child on an H200).
import json
import os
import selectors
import signal
import sys
import time

from minifyd import worker_protocol as wp
from minifyd.fork_server import ForkServer
from minifyd.line_reader import write_line

# The first line a forked child writes: it is ready, and what it sees ({"ready": {...}}).
READY = "ready"
# The worker's exit status when no child could be made ready (its CUDA context, its warm-up failed).
NO_SERVING_CHILD = 4
# Children kept waiting beside the serving one.
WAITING_CHILDREN = 1


class RenewingServer(ForkServer):
    def __init__(self, start_child, serve_child, protocol_fd, max_line_bytes):
        """start_child(): run in each new child, returns what it serves with (its CUDA context up, warmed
        up) and what its ready line says (a dict: the devices it sees); serve_child(served, request_fd,
        reply_fd): serves the request lines on request_fd until it retires or the pipe ends, returns the
        child's exit status."""
        super().__init__(None, protocol_fd, 1, max_line_bytes)
        self.start_child, self.serve_child = start_child, serve_child
        self.serving = None  # the ready child that serves requests
        self.waiting = []  # children forked to wait, oldest first
        self.fork_failed = False  # the last child forked died before it was ready: no more until one is needed
        # What the last readiness line said (the hello comes once a child is ready); None: a line is owed,
        # whatever it says (a cancel's answer).
        self.said_ready = True
        self.terminating = False  # SIGTERM: the coordinator is killing the group at a request's time limit
        self.pipes_closed = False

    def start(self):
        """Forks the first child and waits for it: what its ready line says. Exits NO_SERVING_CHILD if it
        died first (its stderr, passed on, says why)."""
        # At a request's time limit the coordinator signals the whole group: the serving child writes its
        # stacks (worker_main.py), which this process passes on, replying nothing more until the SIGKILL.
        signal.signal(signal.SIGTERM, self._terminate)
        first = self._fork()
        while first.ready is None:
            for key, _ in self.selector.select():
                self._read_child(*key.data)
        return first.ready

    def serve(self):
        self._dispatch()  # the first child serves; another is forked to wait
        return super().serve()

    def _terminate(self, *_):
        self.terminating = True

    # In a child.
    def _child_main(self, request_fd, reply_fd):
        code = 1
        try:
            served, ready = self.start_child()
            write_line(reply_fd, json.dumps({READY: ready}))
            code = self.serve_child(served, request_fd, reply_fd)
        except BaseException:  # noqa: BLE001  (whatever happens, the child must not return into the server)
            import traceback
            traceback.print_exc()
        os._exit(code)

    # In the server: every live child is in self.children, read from its fork on.
    def _fork(self):
        child = super()._fork()
        child.ready, child.waited_ms = None, 0.0
        self.children[child.pid] = child
        self.waiting.append(child)
        self.selector.register(child.reply_fd, selectors.EVENT_READ, (child, "reply"))
        self.selector.register(child.stderr_fd, selectors.EVENT_READ, (child, "stderr"))
        return child

    def _dispatch(self):
        ready = [waiting for waiting in self.waiting if waiting.ready is not None]
        if self.serving is None and ready:
            self.serving = ready[0]
            self.waiting.remove(self.serving)
        child = self.serving
        if self.queue and child is not None and child.serving is None and not self.terminating:
            request_id, request_type, line, arrival = self.queue.popleft()
            child.serving, child.request_type = request_id, request_type
            child.stderr_tail = bytearray()
            child.waited_ms = (time.monotonic() - arrival) * 1e3
            try:
                write_line(child.request_fd, line)
            except OSError:
                pass  # it died: its reply pipe's end is this request's crash
        if self._wants_another_child():
            self._fork()
        self._say_readiness()
        if not self.input_open and not self.queue and not self.pipes_closed:
            # No more requests: each child exits once it has answered what it serves.
            self.pipes_closed = True
            for waiting in self.children.values():
                os.close(waiting.request_fd)
                waiting.request_fd = None

    def _cancel(self, request_id):
        super()._cancel(request_id)
        self.said_ready = None  # answered once _dispatch has given the next request its child, or forked one

    def _say_readiness(self):
        """Tells the coordinator when whether a request would start at once has changed."""
        ready = self.serving is not None or any(waiting.ready is not None for waiting in self.waiting)
        if ready != self.said_ready and not self.terminating:
            self.said_ready = ready
            write_line(self.out, wp.readiness_line(ready))

    def _reply(self, line):
        self._say_readiness()  # before the reply that frees the coordinator to send the next request
        super()._reply(line)

    def _wants_another_child(self):
        if not self.input_open or self.terminating:
            return False
        if self.serving is None and not self.waiting:
            return True  # one is needed now
        # One child getting ready at a time: their warm-ups would slow each other and the serving child.
        return (not self.fork_failed and len(self.waiting) < WAITING_CHILDREN and
                all(waiting.ready is not None for waiting in self.waiting))

    def _child_line(self, child, line, dropped):
        if child.ready is None:
            child.ready = json.loads(line).get(READY, {}) if line else {}
            self.fork_failed = False
            return
        if self.terminating:
            return
        if dropped:
            return super()._child_line(child, line, dropped)
        message = json.loads(self._with_stderr_tail(line.decode(), child))
        if message.pop("retiring", False):  # its CUDA context is gone, and so is it; the worker serves on
            self.serving = None
        if message.get("type") == "verdict" and child.waited_ms >= 1:
            message["start_wait_ms"] = round(child.waited_ms, 3)
        self._reply(json.dumps(message, separators=(",", ":")))
        child.serving = None

    def _child_ended(self, child):
        unready = child.ready is None
        if self.terminating:
            child.serving = None  # timed out: the coordinator has its verdict
        if child is self.serving:
            self.serving = None  # gone before its crash verdict is written
        super()._child_ended(child)
        if unready and not self.terminating:
            self.fork_failed = True
            if self.serving is None and not self.waiting:
                self._no_serving_child()

    def _no_serving_child(self):
        """No child to serve with: what waits gets an error (nothing is known of those candidates), and the
        worker exits, for the coordinator to start another."""
        print("minify-worker.py: a forked child died before it was ready to serve", file=sys.stderr, flush=True)
        for request_id, *_ in self.queue:
            self._reply(wp.error_line(request_id, "the worker could not make a forked child ready to serve"))
        self._stop()
        sys.exit(NO_SERVING_CHILD)

    def _forget(self, child):
        if child.request_fd is not None:
            os.close(child.request_fd)
            child.request_fd = None
        super()._forget(child)
        if child is self.serving:
            self.serving = None
        if child in self.waiting:
            self.waiting.remove(child)

    def _stop(self):
        self.waiting = []  # children of self.children, stopped with them
        return super()._stop()
