# The Python worker's fork server, as worker/fork_server.h: this process (torch imported, Inductor
# warmed up) forks children that serve one request at a time each, up to max_concurrent at once; the
# rest wait in order. An idle child serves the next request with its caches warm. A child that dies
# mid-request is that request's crash verdict, with the stderr it wrote since the request began; a
# cancel kills the one child serving it. Children die with this process (PR_SET_PDEATHSIG).
import collections
import ctypes
import json
import os
import selectors
import signal

from minifyd import worker_protocol as wp
from minifyd.line_reader import LineBuffer

PR_SET_PDEATHSIG = 1
STDERR_TAIL_BYTES = 16 * 1024


class _Child:
    def __init__(self, pid, request_fd, reply_fd, stderr_fd, max_line_bytes):
        self.pid, self.request_fd, self.reply_fd, self.stderr_fd = pid, request_fd, reply_fd, stderr_fd
        self.replies = LineBuffer(max_line_bytes)
        self.serving = None  # the id of the request it serves
        self.stderr_tail = bytearray()


def _child_main(handler, request_fd, reply_fd):
    """Serves request lines from request_fd until it closes; never returns."""
    from minifyd.line_reader import read_lines
    code = 0
    try:
        for line, _ in read_lines(request_fd, 1 << 40):
            reply = handler.handle(wp.decode_request(line))
            data = (reply + "\n").encode()
            while data:
                data = data[os.write(reply_fd, data):]
            if wp.is_cuda_error_verdict(reply):
                code = 3
                break
    except BaseException:  # noqa: BLE001  (whatever happens, the child must not return into the server)
        import traceback
        traceback.print_exc()
        code = 1
    os._exit(code)


class ForkServer:
    def __init__(self, handler, protocol_fd, max_concurrent, max_line_bytes):
        self.handler, self.out, self.max_children = handler, protocol_fd, max(1, max_concurrent)
        self.max_line_bytes = max_line_bytes
        self.queue = collections.deque()  # (id, line) not yet given to a child
        self.children = {}  # pid -> _Child
        self.selector = selectors.DefaultSelector()
        self.input = LineBuffer(max_line_bytes)
        self.input_open = True

    def serve(self):
        self.selector.register(0, selectors.EVENT_READ, None)
        while self.input_open or self.queue or any(c.serving is not None for c in self.children.values()):
            for key, _ in self.selector.select():
                if key.data is None:
                    if self._read_input():
                        return self._stop()
                else:
                    self._read_child(*key.data)
            self._dispatch()
        return self._stop()

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
                self._reply(wp.error_line(0, f"request of {dropped} bytes is over the limit of {self.max_line_bytes}"))
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
                self.queue.append((request.id, line))
        return False

    def _cancel(self, request_id):
        for i, (queued_id, _) in enumerate(self.queue):
            if queued_id == request_id:
                del self.queue[i]
                return
        for child in list(self.children.values()):
            if child.serving == request_id:
                os.kill(child.pid, signal.SIGKILL)
                os.waitpid(child.pid, 0)
                self._forget(child)

    def _dispatch(self):
        while self.queue:
            idle = next((c for c in self.children.values() if c.serving is None), None)
            if idle is None:
                if len(self.children) >= self.max_children:
                    return
                idle = self._fork()
            request_id, line = self.queue.popleft()
            idle.serving, idle.stderr_tail = request_id, bytearray()
            try:
                os.write(idle.request_fd, line + b"\n")  # one line fits the pipe or blocks until read
            except OSError:
                pass  # the child died: its reply pipe's end turns into this request's crash verdict

    # Children.
    def _fork(self):
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
            keep = {0, 1, 2, request_r, reply_w}
            for fd in [self.out, request_w, reply_r, stderr_r, stderr_w, null] + [
                    fd for c in self.children.values() for fd in (c.request_fd, c.reply_fd, c.stderr_fd)]:
                if fd not in keep:
                    os.close(fd)
            self.selector.close()
            _child_main(self.handler, request_r, reply_w)
        for fd in (request_r, reply_w, stderr_w):
            os.close(fd)
        child = _Child(pid, request_w, reply_r, stderr_r, self.max_line_bytes)
        self.children[pid] = child
        self.selector.register(reply_r, selectors.EVENT_READ, (child, "reply"))
        self.selector.register(stderr_r, selectors.EVENT_READ, (child, "stderr"))
        return child

    def _read_child(self, child, stream):
        if child.pid not in self.children:
            return
        fd = child.reply_fd if stream == "reply" else child.stderr_fd
        data = os.read(fd, 1 << 16)
        if stream == "stderr":
            if data:
                os.write(2, data)
                child.stderr_tail = (child.stderr_tail + data)[-STDERR_TAIL_BYTES:]
            return
        if not data:
            return self._child_ended(child)
        for line, dropped in child.replies.feed(data):
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
            if os.WIFSIGNALED(status):
                name = signal.Signals(os.WTERMSIG(status)).name
                verdict = wp.failed("crash", f"worker child killed by {name}", signal=name, stderr_tail=tail)
            else:
                verdict = wp.failed("crash", f"worker child exited with code {os.WEXITSTATUS(status)}",
                                    stderr_tail=tail)
            self._reply(wp.verdict_line(child.serving, verdict))
        self._forget(child)

    def _drain_stderr(self, child):
        os.set_blocking(child.stderr_fd, False)
        try:
            while True:
                data = os.read(child.stderr_fd, 1 << 16)
                if not data:
                    break
                os.write(2, data)
                child.stderr_tail = (child.stderr_tail + data)[-STDERR_TAIL_BYTES:]
        except BlockingIOError:
            pass

    def _forget(self, child):
        for fd in (child.reply_fd, child.stderr_fd):
            self.selector.unregister(fd)
            os.close(fd)
        os.close(child.request_fd)
        del self.children[child.pid]

    def _reply(self, line):
        data = (line + "\n").encode()
        while data:
            data = data[os.write(self.out, data):]

    def _stop(self):
        for child in list(self.children.values()):
            os.kill(child.pid, signal.SIGKILL)
            os.waitpid(child.pid, 0)
            self._forget(child)
        return 0
