# What the minifyd end-to-end tests share: a real daemon process in a state directory of its own,
# the client commands, and the jobs (graphs exported from PyTorch with the faulty plugin's faults).
import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "run"))
from cases import CASES, FAULTY, export_case, faulty  # noqa: E402

TERMINAL_STATES = {"done", "failed", "cancelled"}


def expect(condition, what):
    if not condition:
        raise AssertionError(what)


class Tools:
    def __init__(self, minify, minifyd, faulty_plugin):
        self.minify, self.minifyd, self.faulty = minify, minifyd, faulty_plugin


def parse_command_line(description, scenarios=None):
    """The command line of a daemon test file: --minify, --minifyd, --faulty, --work (emptied), and
    --scenario among `scenarios` when given. Returns (the arguments, the Tools, the absolute work
    directory)."""
    parser = argparse.ArgumentParser(description=description)
    if scenarios is not None:
        parser.add_argument("--scenario", required=True, choices=sorted(scenarios))
    for name in ("--minify", "--minifyd", "--faulty", "--work"):
        parser.add_argument(name, required=True)
    args = parser.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    tools = Tools(os.path.abspath(args.minify), os.path.abspath(args.minifyd), os.path.abspath(args.faulty))
    return args, tools, os.path.abspath(args.work)


# Jobs covering each kind of bug: (name, case whose graph it minimizes, `minify run` arguments).
# The hang and throw jobs reuse if_graph_minified's 43-node graph with another fault on its relu.
JOB_KINDS = [
    ("compile_error", "has_mul", CASES["has_mul"].args),
    ("crash", "slippage", CASES["slippage"].args),
    ("accuracy", "strict_accuracy", CASES["strict_accuracy"].args),
    # 2 s, as chain1000_hang: a fresh worker's first query on a loaded machine (the GPU machine's
    # LibTorch initialises lazily) can take longer than half a second and would count as a hang.
    ("timeout", "if_graph_minified", faulty("hang") + ("--timeout", "2")),
    ("exception", "if_graph_minified", faulty("throw")),
]


def export_graphs(work):
    """Exports each graph the jobs use once; returns {case name: graph dir}."""
    graphs = {}
    for _, case, _ in JOB_KINDS:
        if case not in graphs:
            graphs[case] = os.path.join(work, "graphs", case)
            export_case(CASES[case], graphs[case])
    return graphs


def job_args(args, tools):
    return [arg.replace(FAULTY, tools.faulty) for arg in args]


def reference_graphs(tools, graphs, work):
    """graph.json of `minify run` alone on each job kind: what the daemon must give too."""
    references = {}
    for kind, case, args in JOB_KINDS:
        out = os.path.join(work, "reference", kind)
        done = subprocess.run([tools.minify, "run", graphs[case], "--out", out, *job_args(args, tools), "--workers", "2",
                               "--json"], capture_output=True, text=True, timeout=600)
        expect(done.returncode == 0, f"minify run {kind}: exit {done.returncode}\n{done.stderr[-2000:]}")
        with open(os.path.join(out, "graph.json"), "rb") as f:
            references[kind] = f.read()
    return references


def fill(directory, name="filler"):
    """Fills the file system holding directory to its last byte (unbuffered, so closing the file
    raises nothing); the filler's path, whose removal gives the room back."""
    filler = os.path.join(directory, name)
    with open(filler, "wb", buffering=0) as f:
        try:
            while True:
                f.write(b"\0" * (1 << 16))
        except OSError:
            pass
    return filler


class Daemon:
    """A minifyd process on a state directory; restartable, killable."""

    def __init__(self, tools, state_dir, *options):
        self.tools, self.state_dir, self.options = tools, state_dir, list(options)
        self.socket = os.path.join(state_dir, "minifyd.sock")
        self.process = None
        self.log_path = os.path.join(os.path.dirname(state_dir), os.path.basename(state_dir) + ".log")

    def start(self, timeout=60):
        log = open(self.log_path, "a")
        self.process = subprocess.Popen([self.tools.minifyd, "--state-dir", self.state_dir, *self.options],
                                        stdout=log, stderr=log, start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            expect(self.process.poll() is None, f"minifyd exited {self.process.returncode}:\n{self.log()}")
            if self.answers():
                return self
            time.sleep(0.05)
        raise AssertionError(f"minifyd did not answer within {timeout} s:\n{self.log()}")

    def answers(self):
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.settimeout(2)
                s.connect(self.socket)
                return b"\n" in s.recv(4096)
        except OSError:
            return False

    def kill(self):
        """SIGKILL, as a crash or the OOM killer would; its workers die with it."""
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def stop(self, timeout=120):
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(f"minifyd did not stop within {timeout} s of SIGTERM:\n{self.log()}")

    def rss_kib(self):
        with open(f"/proc/{self.process.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        raise AssertionError("no VmRSS")

    def log(self):
        with open(self.log_path) as f:
            return f.read()[-6000:]

    def client(self, *args, timeout=120):
        """`minify ARGS --state-dir STATE --json`: (exit code, parsed JSON or None, stderr)."""
        done = subprocess.run([self.tools.minify, *args, "--state-dir", self.state_dir, "--json"],
                              capture_output=True, text=True, timeout=timeout)
        try:
            parsed = json.loads(done.stdout) if done.stdout.strip() else None
        except json.JSONDecodeError:
            parsed = None
        return done.returncode, parsed, done.stderr

    def submit(self, graph, args, *extra):
        code, reply, stderr = self.client("submit", graph, *args, *extra)
        expect(code == 0 and reply and "id" in reply, f"submit: exit {code} {reply} {stderr}")
        return reply["id"]

    def jobs(self):
        code, jobs, stderr = self.client("list")
        expect(code == 0 and isinstance(jobs, list), f"list: exit {code} {jobs} {stderr}")
        return jobs

    def result_graph(self, job_id, out):
        code, reply, stderr = self.client("result", str(job_id), "--out", out)
        expect(code == 0, f"result {job_id}: exit {code} {reply} {stderr}")
        with open(os.path.join(out, "graph.json"), "rb") as f:
            return f.read()


def submit_twenty(daemon, tools, graphs):
    """20 jobs at once, four of each kind; returns {job id: kind}."""
    submitted = {}
    for round_ in range(4):
        for kind, case, args in JOB_KINDS:
            submitted[daemon.submit(graphs[case], job_args(args, tools))] = kind
    return submitted


def wait_all_final(daemon, ids, timeout, on_poll=None):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        jobs = {job["id"]: job for job in daemon.jobs()}
        if on_poll:
            on_poll(jobs)
        if all(jobs.get(i, {}).get("state") in TERMINAL_STATES for i in ids):
            return jobs
        time.sleep(0.1)
    raise AssertionError(f"jobs not finished within {timeout} s: {daemon.jobs()}\n{daemon.log()}")


def check_results(daemon, submitted, references, work):
    jobs = {job["id"]: job for job in daemon.jobs()}
    for job_id, kind in submitted.items():
        job = jobs.get(job_id)
        expect(job is not None, f"job {job_id} ({kind}) is lost")
        expect(job["state"] == "done", f"job {job_id} ({kind}) is {job['state']}: {job.get('error')}")
        graph = daemon.result_graph(job_id, os.path.join(work, "results", str(job_id)))
        expect(graph == references[kind], f"job {job_id} ({kind}): its graph.json differs from `minify run`'s")
        for name in ("repro.py", "report.md", "graph.dot"):
            expect(os.path.getsize(os.path.join(work, "results", str(job_id), name)) > 0, f"job {job_id}: no {name}")
