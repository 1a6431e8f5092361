# The Python worker's fork server, as worker/fork_server.h: this process (torch imported, Inductor
# warmed up) forks a child for each request, up to max_concurrent at once; the rest wait in order.
# One child is forked ahead, while the server waits, and takes its request from a pipe of its own:
# forking a process that holds torch costs a request about 4 ms otherwise (of 14 ms of overhead on a
# 10-node graph, docs/benchmarks.md). The server's state never changes between requests, so a child
# forked ahead is the one a request would have got.
# Unlike minify-worker's, a child serves one request and exits: Inductor keeps state in its process
# (loaded modules, in-memory caches, compile futures), and a candidate compiled where another failed
# can pass where it fails alone (seen with Triton's injected compile error on the H100), so every
# candidate gets the warmed-up server's process state and nothing more. Forking costs milliseconds;
# Inductor's on-disk caches stay shared. A child that dies mid-request is that request's crash
# verdict (a propagate's error), with its stderr; a cancel kills the one child serving it. Children
# die with this process (PR_SET_PDEATHSIG).
import collections
import ctypes
import json
import os
import selectors
import signal
import time

from minifyd import worker_protocol as wp
from minifyd.line_reader import LineBuffer, read_lines, write_line

PR_SET_PDEATHSIG = 1
STDERR_TAIL_BYTES = 16 * 1024


class _Child:
    def __init__(self, pid, request_fd, reply_fd, stderr_fd, max_line_bytes):
        self.pid, self.request_fd, self.reply_fd, self.stderr_fd = pid, request_fd, reply_fd, stderr_fd
        self.replies = LineBuffer(max_line_bytes)
        self.serving = None  # the id of the request it serves; None before it has one and once answered
        self.request_type = None  # the dataclass of the request it serves
        self.stderr_tail = bytearray()


def _relay_stderr(child, data):
    """Passes what a child wrote to stderr on to ours and keeps its tail; False at its end."""
    if data:
        os.write(2, data)
        child.stderr_tail = (child.stderr_tail + data)[-STDERR_TAIL_BYTES:]
    return bool(data)


class ForkServer:
    def __init__(self, handler, protocol_fd, max_concurrent, max_line_bytes):
        self.handler, self.out, self.max_children = handler, protocol_fd, max(1, max_concurrent)
        self.max_line_bytes = max_line_bytes
        self.queue = collections.deque()  # (id, request dataclass, line, arrival) not yet given to a child
        self.children = {}  # pid -> _Child, serving
        self.ahead = None  # a _Child forked ahead, waiting for its request
        self.selector = selectors.DefaultSelector()
        self.input = LineBuffer(max_line_bytes)
        self.input_open = True

    def serve(self):
        self.selector.register(0, selectors.EVENT_READ, None)
        while self.input_open or self.queue or self.children:
            for key, _ in self.selector.select():
                if key.data is None:
                    if self._read_input():
                        return self._stop()
                else:
                    self._read_child(*key.data)
            self._dispatch()
        return self._stop()

    def _child_main(self, request_fd, reply_fd):
        """In a forked child: serves the request line the server writes to request_fd, writes its reply
        and exits; never returns."""
        code = 0
        try:
            line, _ = next(read_lines(request_fd, self.max_line_bytes), (None, 0))
            if line is None:  # the server ended without a request for it
                os._exit(0)
            write_line(reply_fd, self.handler.handle(wp.decode_request(line)))
        except BaseException:  # noqa: BLE001  (whatever happens, the child must not return into the server)
            import traceback
            traceback.print_exc()
            code = 1
        os._exit(code)

    # Requests from the coordinator.
    def _read_input(self):
        """Reads what the coordinator sent; True when it asked us to shut down."""
        data = os.read(0, 1 << 16)
        if not data:
            self.input_open = False
            self.selector.unregister(0)
            return False
        for line, dropped in self.input.feed(data):
            if dropped:
                self._reply(wp.oversized_request_line(dropped, self.max_line_bytes))
                continue
            try:
                request = wp.decode_request(line)
            except wp.RequestError as error:
                self._reply(wp.error_line(error.request_id, str(error)))
                continue
            if isinstance(request, wp.ShutdownRequest):
                return True
            if isinstance(request, wp.CancelRequest):
                self._cancel(request.id)
            else:
                self.queue.append((request.id, type(request), line, time.monotonic()))
        return False

    def _cancel(self, request_id):
        for i, (queued_id, *_) in enumerate(self.queue):
            if queued_id == request_id:
                del self.queue[i]
                return
        for child in list(self.children.values()):
            if child.serving == request_id:
                os.kill(child.pid, signal.SIGKILL)
                os.waitpid(child.pid, 0)
                self._forget(child)

    def _dispatch(self):
        while self.queue and len(self.children) < self.max_children:
            self._serve(*self.queue.popleft())
        if self.ahead is None and self.input_open:
            self.ahead = self._fork()

    # Children.
    def _serve(self, request_id, request_type, line, _arrival):
        """Hands the request to the child forked ahead, or, where that one died waiting, to one forked now."""
        child, self.ahead = self.ahead, None
        if child is not None and not self._hand(child, line):
            self._reap_unserving(child)
            child = None
        if child is None:
            child = self._fork()
            self._hand(child, line)  # if it died already, its reply pipe's end is the request's crash
        child.serving, child.request_type = request_id, request_type
        self.children[child.pid] = child
        self.selector.register(child.reply_fd, selectors.EVENT_READ, (child, "reply"))
        self.selector.register(child.stderr_fd, selectors.EVENT_READ, (child, "stderr"))

    def _hand(self, child, line):
        """Writes the request line to the child, then closes its request pipe; False if it is gone."""
        try:
            write_line(child.request_fd, line)
            handed = True
        except OSError:
            handed = False
        os.close(child.request_fd)
        child.request_fd = None
        return handed

    def _reap_unserving(self, child):
        """Kills and reaps a child that serves no request."""
        for fd in (child.request_fd, child.reply_fd, child.stderr_fd):
            if fd is not None:
                os.close(fd)
        os.kill(child.pid, signal.SIGKILL)
        os.waitpid(child.pid, 0)

    def _fork(self):
        """A child waiting for its request on a pipe of its own."""
        request_r, request_w = os.pipe()
        reply_r, reply_w = os.pipe()
        stderr_r, stderr_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, 0)
            os.dup2(stderr_w, 1)
            os.dup2(stderr_w, 2)
            for fd in [self.out, request_w, reply_r, stderr_r, stderr_w, null] + [
                    fd for c in self.children.values() for fd in (c.reply_fd, c.stderr_fd)]:
                os.close(fd)
            self.selector.close()
            self._child_main(request_r, reply_w)
        for fd in (request_r, reply_w, stderr_w):
            os.close(fd)
        return _Child(pid, request_w, reply_r, stderr_r, self.max_line_bytes)

    def _read_child(self, child, stream):
        if child.pid not in self.children:
            return
        fd = child.reply_fd if stream == "reply" else child.stderr_fd
        data = os.read(fd, 1 << 16)
        if stream == "stderr":
            _relay_stderr(child, data)
            return
        if not data:
            return self._child_ended(child)
        for line, dropped in child.replies.feed(data):
            self._child_line(child, line, dropped)

    def _child_line(self, child, line, dropped):
        """A line a child wrote: the reply to the request it serves."""
        if dropped:
            self._reply(wp.error_line(child.serving or 0, f"reply of {dropped} bytes is over the limit of "
                                                          f"{self.max_line_bytes}"))
        else:
            self._reply(self._with_stderr_tail(line.decode(), child))
        child.serving = None

    def _with_stderr_tail(self, line, child):
        """A failing verdict carries what its child wrote to stderr since the request began."""
        message = json.loads(line)
        verdict = message.get("verdict")
        if message.get("type") != "verdict" or verdict.get("status") != "fail" or not child.stderr_tail:
            return line
        verdict.setdefault("stderr_tail", child.stderr_tail.decode(errors="replace"))
        return json.dumps(message, separators=(",", ":"))

    def _child_ended(self, child):
        """The child's reply pipe closed: it exited or was killed; a request it served crashed."""
        self._drain_stderr(child)
        _, status = os.waitpid(child.pid, 0)
        if child.serving is not None:
            tail = child.stderr_tail.decode(errors="replace")
            name = signal.Signals(os.WTERMSIG(status)).name if os.WIFSIGNALED(status) else ""
            death = f"worker child killed by {name}" if name else f"worker child exited with code {os.WEXITSTATUS(status)}"
            crash = wp.failed("crash", death, signal=name, stderr_tail=tail)
            if child.request_type is wp.EvaluateRequest:
                self._reply(wp.verdict_line(child.serving, crash))
            elif child.request_type is wp.AnalyzeRequest:
                self._reply(wp.analyzed_line(child.serving, "", compiled_failure=crash))
            else:
                self._reply(wp.error_line(child.serving, f"propagate: {death}: {tail[-2000:]}"))
        self._forget(child)

    def _drain_stderr(self, child):
        os.set_blocking(child.stderr_fd, False)
        try:
            while _relay_stderr(child, os.read(child.stderr_fd, 1 << 16)):
                pass
        except BlockingIOError:
            pass

    def _forget(self, child):
        for fd in (child.reply_fd, child.stderr_fd):
            self.selector.unregister(fd)
            os.close(fd)
        del self.children[child.pid]

    def _reply(self, line):
        write_line(self.out, line)

    def _stop(self):
        for child in list(self.children.values()):
            os.kill(child.pid, signal.SIGKILL)
            os.waitpid(child.pid, 0)
            self._forget(child)
        if self.ahead is not None:
            self._reap_unserving(self.ahead)
            self.ahead = None
        return 0
