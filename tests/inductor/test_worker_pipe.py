# The Python worker's pipe under hostile input (label inductor): the worker started as the coordinator
# starts it, in each way it serves (in its own process; as a fork server; in one forked child after
# another, as with a GPU), is sent random bytes, wrong
# types, over-long lines, deep nesting, unknown requests and evaluate requests with bad stores, hashes
# and paths. Each line gets exactly one reply, an error (or a failed verdict) naming what is wrong, with
# the request's id where it has one; afterwards the worker still answers a good request, and shuts down
# when asked. Serving in its own process, a worker killed as at a request's time limit (SIGTERM) writes
# its threads' stacks to stderr first, and so does a serving child. A serving child whose request ends in
# a CUDA error exits and the worker serves on, from the child that waited beside it. On a GPU, a request that
# lets Inductor compile in a pool (compile_threads, the sanity check's) gets the serial compile's
# verdict and failing kernel, to the word.
import json
import os
import random
import select
import signal
import subprocess
import sys
import time

from harness import HERE, ROOT, expect, require_cuda, run_scenarios, write_file

WORKER = os.path.join(ROOT, "worker", "python", "minify_worker.py")
MAX_LINE_BYTES = 1 << 16
REPLY_SECONDS = 120


# How the worker serves: its options.
MODES = {"in process": ["--no-fork-server"], "fork server": [], "renewing children": ["--renewing-children"]}


class Worker:
    def __init__(self, python, mode, stderr=subprocess.DEVNULL, warm_up=False):
        self.process = subprocess.Popen([python, WORKER, *([] if warm_up else ["--no-warm-up"]), "--max-line-bytes",
                                         str(MAX_LINE_BYTES), *MODES[mode]], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=stderr,
                                        start_new_session=True)  # a group of its own, as the pool starts it
        self.pending = b""
        self.readiness = []  # what its readiness lines said, in order (a worker serving in children)
        self.hello = json.loads(self.read_line())
        expect(self.hello["type"] == "hello", f"no hello: {self.hello}")

    def read_line(self):
        deadline = time.monotonic() + REPLY_SECONDS
        while b"\n" not in self.pending:
            left = deadline - time.monotonic()
            expect(left > 0 and select.select([self.process.stdout], [], [], left)[0],
                   f"no reply within {REPLY_SECONDS} s")
            chunk = os.read(self.process.stdout.fileno(), 1 << 16)
            expect(chunk, f"the worker closed its pipe (exit {self.process.poll()})")
            self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        return line

    def read_reply(self):
        """The next line that is not a readiness line (those go to self.readiness)."""
        while True:
            message = json.loads(self.read_line())
            if message.get("type") != "readiness":
                return message
            self.readiness.append(message["ready"])

    def ask(self, payload):
        """Sends one line; its reply."""
        self.process.stdin.write(payload + b"\n")
        self.process.stdin.flush()
        return self.read_reply()

    def shut_down(self):
        self.process.stdin.write(b'{"type": "shutdown", "id": 1}\n')
        self.process.stdin.flush()
        code = self.process.wait(timeout=60)
        expect(code == 0, f"the worker exits {code} after a shutdown")


def exported_graph(env, name="tiny", function="lambda x: (x + 1).relu()"):
    """A small graph directory: function on a 4x4 input, exported by the torch under test."""
    module = write_file(env.work, f"{name}.py", "import torch\n\n\ndef make():\n"
                                               f"    return ({function}), [torch.randn(4, 4)]\n")
    out = os.path.join(env.work, name)
    if not os.path.isfile(os.path.join(out, "graph.json")):
        done = subprocess.run([env.python, os.path.join(ROOT, "scripts", "export_fx.py"), module, "--out", out],
                              capture_output=True, text=True, timeout=600)
        expect(done.returncode == 0, f"export failed:\n{done.stderr[-2000:]}")
    with open(os.path.join(out, "graph.json")) as f:
        return out, json.load(f)


def evaluate(request_id, graph, store, backend="aot_eager", backend_options=None, **fields):
    """An evaluate request line; fields: its optional ones (output_code, compile_threads, ...)."""
    return json.dumps({"type": "evaluate", "id": request_id, "graph": graph, "store": store, "backend": backend,
                       "backend_options": backend_options or {}, **fields}).encode()


def hostile_lines(graph, store):
    """(payload, the request id its reply must carry, a word its message must hold)."""
    rng = random.Random(0)
    lines = [(bytes(rng.randrange(256) for _ in range(rng.randrange(1, 300))).replace(b"\n", b" "), 0, "")
             for _ in range(40)]
    lines += [
        (b"", 0, "JSON"),
        (b"[1, 2, 3]", 0, "object"),
        (b'{"type": 42, "id": 3}', 3, "type"),
        (b'{"type": "evaluate", "id": "seven"}', 0, "id"),
        (b'{"type": "evaluate", "id": 4, "graph": [], "store": "/tmp", "backend": "aot_eager"}', 4, "graph"),
        (b'{"type": "evaluate", "id": 5, "graph": {}, "store": 5, "backend": "aot_eager"}', 5, "store"),
        (json.dumps({"type": "evaluate", "id": 6, "graph": graph, "store": store, "backend": "aot_eager",
                     "backend_options": {"max_autotune": 1}}).encode(), 6, "backend_options"),
        (b'{"type": "frobnicate", "id": 7}', 7, "frobnicate"),
        (b"x" * (MAX_LINE_BYTES + 10), 0, "limit"),
        (b"[" * 30000 + b"]" * 30000, 0, "nests"),
        (b'{"type": "evaluate", "id": 8, "graph": ' + b"[" * 80 + b"]" * 80 + b"}", 8, "nests"),
        (evaluate(9, graph, "/nonexistent/store"), 9, "/nonexistent/store"),
        (evaluate(14, graph, store, compile_threads=0), 14, "compile_threads"),
        (evaluate(15, graph, store, compile_threads=True), 15, "compile_threads"),
        (evaluate(10, graph, "relative/store"), 10, "store"),
    ]
    for request_id, bad_hash in ((11, "0" * 64), (12, "../../../../etc/passwd"), (13, "not-a-hash")):
        broken = json.loads(json.dumps(graph))
        broken["storages"][0]["hash"] = bad_hash
        lines.append((evaluate(request_id, broken, store), request_id, ""))
    return lines


def fuzz(env, mode):
    graph_dir, graph = exported_graph(env)
    store = os.path.join(graph_dir, "store")
    worker = Worker(env.python, mode)
    try:
        for payload, request_id, word in hostile_lines(graph, store):
            reply = worker.ask(payload)
            what = f"{payload[:80]!r}: {reply}"
            expect(reply["id"] == request_id, f"reply for another id: {what}")
            refused = reply["type"] == "error" or (reply["type"] == "verdict" and reply["verdict"]["status"] == "fail")
            text = reply.get("message", "") + json.dumps(reply.get("verdict", {}))
            expect(refused and word.lower() in text.lower(), f"not refused, naming {word!r}: {what}")
        good = worker.ask(evaluate(20, graph, store))
        expect(good["type"] == "verdict" and good["id"] == 20 and good["verdict"]["status"] == "pass",
               f"a good request after the hostile ones: {good}")
        worker.shut_down()
    finally:
        if worker.process.poll() is None:
            worker.process.kill()
    print(f"{mode}: {len(hostile_lines(graph, store))} hostile lines "
          f"answered, then a good request")


def wait_until_blocked(pid, seconds=10.0):
    """Until the process has slept (state S) in two reads of its state 0.1 s apart: past its hello, waiting
    for a request. Reading the hello is not enough: the worker may still be returning from writing it."""
    deadline, asleep = time.monotonic() + seconds, 0
    while asleep < 2 and time.monotonic() < deadline:
        with open(f"/proc/{pid}/stat") as f:
            asleep = asleep + 1 if f.read().rsplit(")", 1)[1].split()[0] == "S" else 0
        time.sleep(0.1)


def stacks_at_time_limit(env, mode):
    """Killed by SIGTERM, as the pool kills a worker serving one request at a time at a request's time
    limit (its process group, SIGKILL after a grace), the process serving writes every thread's Python
    stack to stderr (where it hung)."""
    worker = Worker(env.python, mode, stderr=subprocess.PIPE)
    server = worker.process.pid
    serving = [int(pid) for pid in open(f"/proc/{server}/task/{server}/children").read().split()] or [server]
    for pid in serving:
        wait_until_blocked(pid)
    os.killpg(server, signal.SIGTERM)
    if mode == "renewing children":  # the server passes the stacks on until the group's SIGKILL
        time.sleep(2)
        expect(worker.process.poll() is None, f"the worker exited {worker.process.returncode} before the SIGKILL")
        os.killpg(server, signal.SIGKILL)
    _, stderr = worker.process.communicate(timeout=60)
    expect(worker.process.returncode in (-signal.SIGTERM, -signal.SIGKILL),
           f"the worker exits {worker.process.returncode} on SIGTERM")
    expect(b"most recent call first" in stderr and b"read_lines" in stderr,
           f"no stack naming where it waited: {stderr[-2000:]!r}")
    print(f"{mode}: SIGTERM wrote the stack (waiting in read_lines), then the worker died")


# The serving child and the one waiting beside it (renewing_server.WAITING_CHILDREN).
CHILDREN = 2


def all_children_of(pid, seconds=10.0):
    """The worker's children once there are CHILDREN, the serving one and those forked to wait beside it
    (one at a time, from the first serving on: after the hello, after a CUDA error's reply); what there
    is at the deadline."""
    deadline = time.monotonic() + seconds
    while True:
        children = sorted(int(child) for child in open(f"/proc/{pid}/task/{pid}/children").read().split())
        if len(children) == CHILDREN or time.monotonic() > deadline:
            return children
        time.sleep(0.05)


def renewed_after_cuda_error(env):
    """A request whose run raises a CUDA error (here an assert whose message is one, the text a
    device-side assert raises) ends the child that served it; the worker, its hello saying so, serves the
    next request from a child that waited beside it, and forks another to wait."""
    graph_dir, graph = exported_graph(
        env, "asserting", 'lambda x: (torch._assert_async(x.sum() > -1e9, "CUDA error: device-side assert triggered"), '
                          'x + 1)[1]')
    comparison = next(node for node in graph["nodes"] if node.get("target") == "aten::gt.Scalar")
    comparison["args"][1] = 1e9  # exported where it holds; asked where it fails
    tiny_dir, tiny = exported_graph(env)
    slow_dir, slow = exported_graph(env, "slow", "lambda x: x + torch.ones(30, 30).mm(torch.ones(30, 30))"
                                                 ".mm(torch.ones(30, 30)).mm(torch.ones(30, 30)).sum()")
    for node in slow["nodes"]:  # exported small; asked with products of seconds on 16 cores, minutes on 2
        if node.get("target") == "aten::ones":
            node["args"][0] = [12000, 12000]
    worker = Worker(env.python, "renewing children")
    try:
        expect(worker.hello.get("serves_in_children") is True and worker.hello["concurrency"] == 1,
               f"the hello does not say requests are served in children: {worker.hello}")
        for request_id in range(1, 4):
            before = all_children_of(worker.process.pid)
            failed = worker.ask(evaluate(request_id, graph, os.path.join(graph_dir, "store")))
            expect(failed["type"] == "verdict" and failed["verdict"]["status"] == "fail" and
                   failed["verdict"]["kind"] == "cuda_error" and "retiring" not in failed,
                   f"not a CUDA error's verdict, or the worker retires: {failed}")
            passed = worker.ask(evaluate(10 + request_id, tiny, os.path.join(tiny_dir, "store")))
            expect(passed["type"] == "verdict" and passed["verdict"]["status"] == "pass", f"after it: {passed}")
            after = all_children_of(worker.process.pid)
            expect(len(before) == CHILDREN and len(after) == CHILDREN and len(set(before) & set(after)) == CHILDREN - 1,
                   f"the children were {before} before the CUDA error and {after} after it: one must be new")
        # A cancel kills the child serving the request (minutes of matrix products), which is never
        # answered but by a readiness line; a waiting child serves the next.
        before, said = all_children_of(worker.process.pid), len(worker.readiness)
        worker.process.stdin.write(evaluate(30, slow, os.path.join(slow_dir, "store")) + b"\n")
        worker.process.stdin.flush()
        time.sleep(1)  # handed to the serving child (at once: it was ready), far from done
        worker.process.stdin.write(b'{"type": "cancel", "id": 30}\n')
        worker.process.stdin.flush()
        passed = worker.ask(evaluate(31, tiny, os.path.join(tiny_dir, "store")))
        expect(passed["id"] == 31 and passed["verdict"]["status"] == "pass", f"after a cancel: {passed}")
        expect(worker.readiness[said:][-1:] == [True], f"the cancel was answered by no readiness line: {worker.readiness}")
        after = all_children_of(worker.process.pid)
        expect(len(set(before) & set(after)) == CHILDREN - 1, f"a cancel's children: {before}, then {after}")
        worker.shut_down()
    finally:
        if worker.process.poll() is None:
            worker.process.kill()
    print("renewing children: three CUDA errors and a cancel, each ending its child, the worker serving on")


def readiness_while_a_child_warms_up(env):
    """A CUDA error that ends the serving child while the waiting one still warms up (Inductor's warm-up,
    seconds, against a CUDA error's tenths): the worker says no child is ready before that verdict, then
    that one is once it is, and a request sent then starts at once."""
    graph_dir, graph = exported_graph(
        env, "asserting", 'lambda x: (torch._assert_async(x.sum() > -1e9, "CUDA error: device-side assert triggered"), '
                          'x + 1)[1]')
    next(node for node in graph["nodes"] if node.get("target") == "aten::gt.Scalar")["args"][1] = 1e9
    tiny_dir, tiny = exported_graph(env)
    worker = Worker(env.python, "renewing children", warm_up=True)
    try:
        for request_id in range(1, 6):  # the first, or one at once after it, finds the next child warming up
            failed = worker.ask(evaluate(request_id, graph, os.path.join(graph_dir, "store")))
            expect(failed["verdict"].get("kind") == "cuda_error", f"not a CUDA error's verdict: {failed}")
            if worker.readiness:
                break
        expect(worker.readiness == [False], f"no child ready, and the worker did not say so: {worker.readiness}")
        said = json.loads(worker.read_line())  # unasked, once the warm-up is done
        expect(said == {"type": "readiness", "ready": True}, f"not the child's readiness: {said}")
        passed = worker.ask(evaluate(10, tiny, os.path.join(tiny_dir, "store")))
        # At once: not the warm-up's seconds (a loaded machine may take some milliseconds to hand it over).
        expect(passed["verdict"]["status"] == "pass" and passed.get("start_wait_ms", 0) < 250,
               f"a request sent once a child was ready waited: {passed}")
        worker.shut_down()
    finally:
        if worker.process.poll() is None:
            worker.process.kill()
    print("renewing children: no child ready said before the verdict that ended the serving one, then ready")


def gpu_compile_pool(env):
    """Triton's injected compile error on the GPU asked with compile_threads and without: the same verdict,
    word for word, and the same failing kernel, though the first compiled in Inductor's pool of processes
    (where a failure is raised in other words); a graph that compiles passes with it. The requests are
    served as the pool serves them on a GPU, by a renewing worker's children."""
    require_cuda(env)
    graph_dir, graph = exported_graph(env)
    for storage in graph["storages"]:
        storage["device"] = "cuda"
    store = os.path.join(graph_dir, "store")
    bug = {"triton.inject_relu_bug_TESTING_ONLY": "compile_error"}

    def asked(request_id, options, **fields):
        return evaluate(request_id, graph, store, "inductor", options, output_code="run", **fields)

    worker = Worker(env.python, "renewing children")
    try:
        serial = worker.ask(asked(1, bug))
        pooled = worker.ask(asked(2, bug, compile_threads=4))
        expect(serial["verdict"]["status"] == "fail" and serial["verdict"]["kind"] == "exception",
               f"the injected compile error did not fail the serial compile: {serial}")
        expect(pooled["verdict"] == serial["verdict"],
               f"with a compile pool the verdict differs:\n{pooled['verdict']}\nserially:\n{serial['verdict']}")
        kernels = [reply["output_code"].get("failing_kernel") for reply in (serial, pooled)]
        expect(kernels[0] and kernels[1] == kernels[0], f"failing kernels: {kernels[0]} serially, {kernels[1]} with a pool")
        passed = worker.ask(asked(3, {}, compile_threads=4))
        expect(passed["verdict"]["status"] == "pass", f"a graph that compiles, with a compile pool: {passed}")
        worker.shut_down()
    finally:
        if worker.process.poll() is None:
            worker.process.kill()
    print(f"compile pool on the GPU: the serial compile's verdict, {serial['verdict']['exception_type']}, "
          f"and failing kernel {kernels[0]}")


def in_process(env):
    fuzz(env, "in process")
    stacks_at_time_limit(env, "in process")


def renewing_children(env):
    fuzz(env, "renewing children")
    stacks_at_time_limit(env, "renewing children")
    renewed_after_cuda_error(env)
    readiness_while_a_child_warms_up(env)


SCENARIOS = {"worker_pipe_in_process": in_process,
             "worker_pipe_fork_server": lambda env: fuzz(env, "fork server"),
             "worker_pipe_renewing_children": renewing_children,
             "gpu_worker_pipe_compile_pool": gpu_compile_pool}

if __name__ == "__main__":
    sys.path.insert(0, HERE)
    run_scenarios(SCENARIOS)
