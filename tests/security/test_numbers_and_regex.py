# Regexes and numbers from outside, against a real minifyd (label security; docs/security.md,
# "Numbers and patterns"):
#   check_str        `query --daemon --check-str '(.*)*Q'` (std::regex took exponential time on it, on
#                    the daemon's io thread) answers, `list` answers within 1 s throughout, a
#                    lookahead pattern is refused naming --check-str (by the client, and by the
#                    daemon on a raw request), and `shutdown` ends the process.
#   numbers          requests with numbers out of range (priority 2^31, timeout_ms huge,
#                    max_time_seconds 1e308) and client options (--timeout nan, --timeout inf,
#                    --max-time 1e308, --priority 2^31) each refused naming the field or option,
#                    minifyd answering `list` within 1 s after each.
#   minifyd_options  minifyd refuses --workers 100000, a --config with workers = 2^64 + 1 or
#                    cpu-limit = -1, and a FIFO as --config, each within a few seconds, naming it.
#   queue_limit      501 submits on one connection to a daemon with --max-queued-jobs 20: the
#                    excess refused with "the queue is full", the daemon answering throughout; each
#                    job's submitter recorded, and restarted with --max-queued-jobs-per-user 20 (and
#                    room in the queue), the user's next submit refused as over its share.
#   retention        a done job's store roots dropped after --keep-results (a couple of seconds
#                    here), the store collected, its row kept and its result said to be expired.
import json
import os
import signal
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "minifyd"))
sys.path.insert(0, os.path.join(HERE, "..", "inductor"))
from daemon_harness import Daemon, Tools, expect, job_args  # noqa: E402
from harness import run_scenarios  # noqa: E402
from cases import CASES, export_case  # noqa: E402
from test_daemon import send_raw  # noqa: E402

EXIT_USAGE = 2
LOOKAHEAD = "boom(?=!)"


def compile_error_graph(work):
    """A small graph the faulty plugin fails to compile (on its aten::mul.Tensor), and its arguments."""
    graph = os.path.join(work, "graphs", "has_mul")
    export_case(CASES["has_mul"], graph)
    return graph, list(CASES["has_mul"].args)


def list_answers_within(daemon, seconds=1.0):
    started = time.monotonic()
    code, jobs, stderr = daemon.client("list", timeout=30)
    took = time.monotonic() - started
    expect(code == 0 and isinstance(jobs, list), f"list: exit {code} {stderr}")
    expect(took <= seconds, f"list took {took:.2f} s (more than {seconds} s)")


def ask(daemon, request):
    """One raw request on the daemon's socket: its parsed reply."""
    _, reply = send_raw(daemon.socket, json.dumps(request).encode() + b"\n", timeout=30)
    return json.loads(reply)


def refused_naming(reply, name):
    expect(reply.get("ok") is False, f"not refused: {reply}")
    expect(name in reply["error"]["message"], f"the error does not name {name!r}: {reply['error']['message']}")


def shutdown_ends(daemon, timeout=30):
    code, _, stderr = daemon.client("shutdown", timeout=30)
    expect(code == 0, f"shutdown: exit {code} {stderr}")
    try:
        daemon.process.wait(timeout)
    except subprocess.TimeoutExpired:
        daemon.kill()
        raise AssertionError(f"minifyd did not end within {timeout} s of shutdown:\n{daemon.log()}")


def evaluation(tools, args, **changes):
    """The query request's evaluation for the faulty plugin's `args`, as `minify query` sends it."""
    options = {}
    for flag, value in zip(args, args[1:]):
        if flag == "--backend-opt":
            key, _, text = value.partition("=")
            options[key] = text
    spec = {"backend": f"plugin:{tools.faulty}", "backend_options": options, "accuracy": "off",
            "nan_check": False, "timeout_ms": 60000}
    spec.update(changes)
    return spec


def scenario_check_str(tools, work):
    graph, args = compile_error_graph(work)
    daemon = Daemon(tools, os.path.join(work, "state"), "--workers", "1").start()
    try:
        query = subprocess.Popen([tools.minify, "query", graph, "--daemon", "--state-dir", daemon.state_dir,
                                  *job_args(args, tools), "--check-str", "(.*)*Q"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline:
                list_answers_within(daemon)
                time.sleep(0.2)
            out, err = query.communicate(timeout=60)
        finally:
            if query.poll() is None:
                query.kill()
        # The compile error does not match: the query passes, saying so.
        expect(query.returncode == 0 and "does not match --check-str" in out,
               f"query --check-str '(.*)*Q': exit {query.returncode}\n{out}{err}")

        done = subprocess.run([tools.minify, "query", graph, "--daemon", "--state-dir", daemon.state_dir,
                               *job_args(args, tools), "--check-str", LOOKAHEAD], capture_output=True, text=True,
                              timeout=60)
        expect(done.returncode == EXIT_USAGE and "--check-str" in done.stderr and LOOKAHEAD in done.stderr,
               f"a lookahead: exit {done.returncode}\n{done.stdout}{done.stderr}")
        # The daemon refuses it as well when a client sends it anyway.
        reply = ask(daemon, {"type": "query", "graph_dir": graph,
                             "evaluation": evaluation(tools, job_args(args, tools), check_str=LOOKAHEAD)})
        refused_naming(reply, "--check-str")
        list_answers_within(daemon)
        shutdown_ends(daemon)
    finally:
        daemon.stop()


def scenario_numbers(tools, work):
    graph, args = compile_error_graph(work)
    args = job_args(args, tools)
    daemon = Daemon(tools, os.path.join(work, "state"), "--workers", "1").start()
    try:
        spec = {"graph_dir": graph, "evaluation": evaluation(tools, args), "match": "same", "strategies": [],
                "skip_sanity": False}
        refused_naming(ask(daemon, {"type": "submit", "graph_dir": graph, "spec": spec, "priority": 2 ** 31}),
                       "priority")
        list_answers_within(daemon)
        refused_naming(ask(daemon, {"type": "submit", "graph_dir": graph, "spec": {**spec, "max_time_seconds": 1e308}}),
                       "max_time_seconds")
        list_answers_within(daemon)
        huge_timeout = {**spec, "evaluation": evaluation(tools, args, timeout_ms=2 ** 62)}
        refused_naming(ask(daemon, {"type": "submit", "graph_dir": graph, "spec": huge_timeout}), "timeout_ms")
        refused_naming(ask(daemon, {"type": "query", "graph_dir": graph,
                                    "evaluation": evaluation(tools, args, timeout_ms=2 ** 62)}), "timeout_ms")
        list_answers_within(daemon)
        for command, option, value in [("query", "--timeout", "nan"), ("query", "--timeout", "inf"),
                                       ("submit", "--max-time", "1e308"), ("submit", "--priority", str(2 ** 31))]:
            extra = ["--daemon"] if command == "query" else []
            done = subprocess.run([tools.minify, command, graph, *extra, "--state-dir", daemon.state_dir, *args,
                                   option, value], capture_output=True, text=True, timeout=60)
            expect(done.returncode == EXIT_USAGE and option in done.stderr,
                   f"{command} {option} {value}: exit {done.returncode}\n{done.stdout}{done.stderr}")
            list_answers_within(daemon)
        expect(daemon.jobs() == [], f"a refused submit left a job: {daemon.jobs()}")
        shutdown_ends(daemon)
    finally:
        daemon.stop()


def refused_at_start(tools, work, name, options, mention, timeout=10):
    """minifyd started with `options` exits 2 within `timeout` s, its error naming `mention`."""
    state = os.path.join(work, name)
    process = subprocess.Popen([tools.minifyd, "--state-dir", state, *options], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise AssertionError(f"minifyd {' '.join(options)} was still running after {timeout} s")
    expect(process.returncode == EXIT_USAGE and mention in err,
           f"minifyd {' '.join(options)}: exit {process.returncode}, not refused naming {mention!r}:\n{out}{err}")


def scenario_minifyd_options(tools, work):
    refused_at_start(tools, work, "workers", ["--workers", "100000"], "--workers")
    for name, line in [("huge_workers", "workers = 18446744073709551617"), ("negative_cpu_limit", "cpu-limit = -1")]:
        config = os.path.join(work, name + ".conf")
        with open(config, "w") as f:
            f.write(line + "\n")
        refused_at_start(tools, work, name, ["--config", config], line.split(" ")[0])
    fifo = os.path.join(work, "config.fifo")
    os.mkfifo(fifo)
    refused_at_start(tools, work, "fifo", ["--config", fifo], "--config")


def scenario_queue_limit(tools, work):
    graph, args = compile_error_graph(work)
    args = job_args(args, tools)
    # One job at a time, and it hangs (for its 10 s limit, which the shutdown below waits out): the others
    # wait in the queue.
    hang = [arg.replace("fault=compile-error", "fault=hang") for arg in args]
    daemon = Daemon(tools, os.path.join(work, "state"), "--workers", "1", "--max-running-jobs", "1",
                    "--max-queued-jobs", "20").start()
    try:
        spec = {"graph_dir": graph, "evaluation": evaluation(tools, hang, timeout_ms=10000), "match": "same",
                "strategies": [], "skip_sanity": False}
        lines = b"".join(json.dumps({"type": "submit", "tag": i, "graph_dir": graph, "spec": spec}).encode() + b"\n"
                         for i in range(501))
        replies = []
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(120)
            s.connect(daemon.socket)
            reader = s.makefile("rb")
            reader.readline()  # the greeting
            s.sendall(lines)
            while len(replies) < 501:
                line = reader.readline()
                expect(line, f"the daemon hung up after {len(replies)} replies:\n{daemon.log()}")
                replies.append(json.loads(line))
        accepted = [r for r in replies if r.get("ok")]
        refused = [r for r in replies if not r.get("ok")]
        print(f"{len(accepted)} accepted, {len(refused)} refused")
        # Submits are served two at a time, each counting the queue before it adds to it.
        expect(20 <= len(accepted) <= 23, f"{len(accepted)} submits accepted with --max-queued-jobs 20")
        expect(all("the queue is full" in r["error"]["message"] and "--max-queued-jobs" in r["error"]["message"]
                   for r in refused), f"a refusal that does not say the queue is full: {refused[:3]}")
        list_answers_within(daemon)
        done = subprocess.run([tools.minify, "submit", graph, "--state-dir", daemon.state_dir, *hang],
                              capture_output=True, text=True, timeout=60)
        expect(done.returncode == EXIT_USAGE and "the queue is full" in done.stderr,
               f"minify submit on a full queue: exit {done.returncode}\n{done.stdout}{done.stderr}")
        code, jobs, stderr = daemon.client("list", timeout=30)
        expect(code == 0 and {job.get("submitter_uid") for job in jobs} == {os.getuid()},
               f"the jobs' submitters are not this uid ({os.getuid()}): exit {code} {jobs[:3]} {stderr}")
        shutdown_ends(daemon, timeout=120)
    finally:
        daemon.stop()
    # The same queue, now with room for 100 jobs but 20 per user: this user's 20 or more (the hung one requeued)
    # are its share.
    daemon = Daemon(tools, os.path.join(work, "state"), "--workers", "1", "--max-running-jobs", "1",
                    "--max-queued-jobs", "100", "--max-queued-jobs-per-user", "20").start()
    try:
        done = subprocess.run([tools.minify, "submit", graph, "--state-dir", daemon.state_dir, *hang],
                              capture_output=True, text=True, timeout=60)
        expect(done.returncode == EXIT_USAGE and f"uid {os.getuid()} has" in done.stderr
               and "--max-queued-jobs-per-user 20" in done.stderr,
               f"minify submit over the user's share: exit {done.returncode}\n{done.stdout}{done.stderr}")
        list_answers_within(daemon)
        shutdown_ends(daemon, timeout=120)
    finally:
        daemon.stop()


def job_roots(state, prefix):
    roots = os.path.join(state, "store", "roots")
    return sorted(name for name in os.listdir(roots) if name.startswith(prefix))


def scenario_retention(tools, work):
    graph, args = compile_error_graph(work)
    state = os.path.join(work, "state")
    # 0.00005 days: 4.3 s.
    daemon = Daemon(tools, state, "--workers", "1", "--keep-results", "0.00005").start()
    try:
        job = daemon.submit(graph, job_args(args, tools))
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            jobs = {j["id"]: j for j in daemon.jobs()}
            if jobs[job]["state"] in ("done", "failed", "cancelled"):
                break
            time.sleep(0.1)
        expect(jobs[job]["state"] == "done", f"the job did not end done: {jobs[job]}\n{daemon.log()}")
        roots = job_roots(state, "job-")
        expect(any(root.endswith(".json") and "-result-" in root for root in roots), f"no result root: {roots}")
        code, _, stderr = daemon.client("result", str(job), "--out", os.path.join(work, "early"))
        expect(code == 0, f"result before the retention: exit {code} {stderr}")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and job_roots(state, "job-"):
            time.sleep(0.2)
        expect(not job_roots(state, "job-"), f"the job's roots are still there: {job_roots(state, 'job-')}")
        blobs = [name for _, _, names in os.walk(os.path.join(state, "store", "blobs")) for name in names]
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and blobs:
            time.sleep(0.2)
            blobs = [name for _, _, names in os.walk(os.path.join(state, "store", "blobs")) for name in names]
        expect(not blobs, f"the store kept {len(blobs)} blobs of the expired job")
        expect([j["id"] for j in daemon.jobs()] == [job], "the job's row went with its roots")
        code, reply, stderr = daemon.client("result", str(job), "--out", os.path.join(work, "late"))
        expect(code == EXIT_USAGE and "expired" in stderr + json.dumps(reply),
               f"result after the retention: exit {code} {reply} {stderr}")
        list_answers_within(daemon)
        shutdown_ends(daemon)
    finally:
        daemon.stop()


SCENARIOS = {name: (lambda env, scenario=scenario: scenario(Tools(env.minify, env.minifyd, env.faulty), env.work))
             for name, scenario in {"check_str": scenario_check_str, "numbers": scenario_numbers,
                                    "minifyd_options": scenario_minifyd_options, "queue_limit": scenario_queue_limit,
                                    "retention": scenario_retention}.items()}

if __name__ == "__main__":
    run_scenarios(SCENARIOS, label="security", options=("--faulty",), fresh_work=True)
