# End-to-end tests of minifyd (label minifyd): a real daemon process, its real socket, real workers
# and SQLite, graphs exported from PyTorch. One ctest per scenario:
#   jobs      20 jobs at once finish with `minify run`'s graphs, at most J running at a time
#   sigkill   the daemon SIGKILLed three times while those jobs run: none lost or run twice, same results
#   hostile   1,000 malformed or hostile requests over many connections; the daemon stays up and small
#   other_uid a peer of another uid is refused (as root; skipped with the reason otherwise)
#   client    the client commands: no daemon, --wait, status, watch, cancel, query --daemon, shutdown
#   full_disk the state directory on a small tmpfs, filled mid-job and given room again: the daemon
#             starts on the full disk, refuses new jobs saying why, and the job ends with `minify
#             run`'s graph (as root, for the mount; skipped with the reason otherwise)
import fcntl
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from daemon_harness import (Daemon, check_results, expect, export_graphs, fill, parse_command_line,  # noqa: E402
                            job_args, reference_graphs, submit_twenty, wait_all_final, JOB_KINDS)
from cases import CASES, export_case  # noqa: E402

MAX_RUNNING = 3
SKIP = 77  # ctest's SKIP_RETURN_CODE


def scenario_jobs(tools, work):
    graphs = export_graphs(work)
    references = reference_graphs(tools, graphs, work)
    daemon = Daemon(tools, os.path.join(work, "state"), "--workers", "2", "--max-running-jobs", str(MAX_RUNNING)).start()
    try:
        submitted = submit_twenty(daemon, tools, graphs)
        most = [0]

        def count_running(jobs):
            most[0] = max(most[0], sum(job["state"] == "running" for job in jobs.values()))
        started = time.monotonic()
        wait_all_final(daemon, submitted, 900, count_running)
        print(f"20 jobs in {time.monotonic() - started:.1f} s; at most {most[0]} running at once")
        expect(0 < most[0] <= MAX_RUNNING, f"{most[0]} jobs ran at once; --max-running-jobs is {MAX_RUNNING}")
        check_results(daemon, submitted, references, work)
    finally:
        daemon.stop()


def scenario_sigkill(tools, work):
    graphs = export_graphs(work)
    references = reference_graphs(tools, graphs, work)
    daemon = Daemon(tools, os.path.join(work, "state"), "--workers", "2", "--max-running-jobs", str(MAX_RUNNING)).start()
    rng = random.Random(int(os.environ.get("MINIFYD_TEST_SEED", time.time())))
    try:
        submitted = submit_twenty(daemon, tools, graphs)
        for kill in range(3):
            time.sleep(rng.uniform(0.5, 4.0))
            states = {job["id"]: job["state"] for job in daemon.jobs()}
            daemon.kill()
            print(f"kill {kill + 1}: SIGKILLed with {sorted(states.values())}")
            daemon.start()
            expect(set(submitted) <= {job["id"] for job in daemon.jobs()}, "a job was lost across the kill")
        jobs = wait_all_final(daemon, submitted, 900)
        sessions = {job_id: jobs[job_id]["sessions"] for job_id in submitted}
        print(f"sessions per job: {sessions}")
        # A job resumes once per daemon start at most: more would mean it ran again from the start.
        expect(all(1 <= count <= 4 for count in sessions.values()), f"sessions out of range: {sessions}")
        check_results(daemon, submitted, references, work)
    finally:
        daemon.stop()


def send_raw(path, payload, read_reply=True, timeout=5):
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout)
        s.connect(path)
        greeting = s.makefile("rb").readline()
        try:
            s.sendall(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the daemon hangs up on an over-long line once it has answered it; the answer waits
        if not read_reply:
            return greeting, b""
        reply = b""
        while not reply.endswith(b"\n"):
            chunk = s.recv(65536)
            if not chunk:
                break
            reply += chunk
        return greeting, reply


def hostile_requests(work):
    """(payload, what the error reply must mention) for each kind of bad request."""
    not_a_graph = os.path.join(work, "not_a_graph")
    os.makedirs(not_a_graph, exist_ok=True)
    with open(os.path.join(not_a_graph, "graph.json"), "w") as f:
        f.write('{"format": "minifyd.graph", "nodes": 3}')
    return [
        (b"this is not json\n", "JSON"),
        (b"[1, 2, 3]\n", "object"),
        (b'{"no_type": 1}\n', "type"),
        (b'{"type": 42}\n', "type"),
        (b'{"type": "frobnicate"}\n', "frobnicate"),
        (b'{"type": "status", "job": 987654}\n', "987654"),
        (b'{"type": "status", "job": "seven"}\n', "job"),
        (b'{"type": "cancel", "job": -1}\n', "-1"),
        (b'{"type": "result", "job": 987654, "out": "/tmp/x"}\n', "987654"),
        (b'{"type": "result", "job": 1, "out": "relative/dir"}\n', "absolute"),
        (b'{"type": "submit", "graph_dir": "/nonexistent/graph", "spec": {}}\n', "/nonexistent/graph"),
        (json.dumps({"type": "submit", "graph_dir": not_a_graph, "spec": {"evaluation": {"backend": "eager"}}}).encode()
         + b"\n", "not_a_graph"),
        (b'{"type": "query", "graph_dir": "/etc/passwd", "evaluation": {}}\n', "/etc/passwd"),
        (b'{"type": "watch"}\n', "job"),
        (b"\xff\xfe\x00garbage\n", ""),
    ]


def scenario_hostile(tools, work):
    graphs = export_graphs(work)
    daemon = Daemon(tools, os.path.join(work, "state"), "--workers", "1").start()
    try:
        requests = hostile_requests(work)
        for payload, mention in requests:  # each error names the problem
            _, reply = send_raw(daemon.socket, payload)
            parsed = json.loads(reply)
            expect(parsed.get("ok") is False, f"{payload[:60]!r}: not an error reply: {reply[:300]!r}")
            expect(mention.lower() in parsed["error"]["message"].lower(),
                   f"{payload[:60]!r}: the error does not mention {mention!r}: {parsed['error']['message']}")
        _, reply = send_raw(daemon.socket, b"{" + b" " * (2 << 20) + b"}\n")
        expect(b"long" in reply.lower(), f"an over-long line: {reply[:300]!r}")
        rss_before = daemon.rss_kib()

        silent = []  # connections that send nothing, and ones that never read their replies
        for i in range(20):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(daemon.socket)
            if i % 2:
                s.sendall(b'{"type": "list"}\n' * 2000)
            silent.append(s)
        sent = 0
        connections = 0
        while sent < 1000:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.settimeout(10)
                s.connect(daemon.socket)
                connections += 1
                reader = s.makefile("rb")
                reader.readline()
                for payload, _ in random.Random(sent).sample(requests, 10):
                    s.sendall(payload)
                    expect(reader.readline().startswith(b"{"), "no reply to a hostile request")
                    sent += 1
        started = time.monotonic()
        code, jobs, stderr = daemon.client("list")
        list_ms = (time.monotonic() - started) * 1000
        expect(code == 0, f"list after the flood: exit {code} {stderr}")
        for s in silent:
            s.close()
        rss_after = daemon.rss_kib()
        print(f"{sent} hostile requests over {connections} connections and {len(silent)} silent ones; "
              f"RSS {rss_before} -> {rss_after} KiB; list answered in {list_ms:.0f} ms")
        expect(rss_after - rss_before < 64 * 1024, f"RSS grew by {rss_after - rss_before} KiB")

        kind, case, args = JOB_KINDS[0]
        job = daemon.submit(graphs[case], job_args(args, tools))
        wait_all_final(daemon, [job], 300)
        code, status, _ = daemon.client("status", str(job))
        expect(status["state"] == "done", f"a normal job after the flood: {status}")
    finally:
        daemon.stop()


def scenario_other_uid(tools, work):
    if os.geteuid() != 0:
        print("skipped: creating a user and connecting as it needs root; run the suite as root to test SO_PEERCRED")
        return SKIP
    user = "minifyd-test-peer"
    if subprocess.run(["id", user], capture_output=True).returncode != 0:
        created = subprocess.run(["useradd", "--system", "--no-create-home", user], capture_output=True, text=True)
        expect(created.returncode == 0, f"useradd {user}: {created.stderr}")
    uid = int(subprocess.run(["id", "-u", user], capture_output=True, text=True, check=True).stdout)
    daemon = Daemon(tools, os.path.join(work, "state"), "--workers", "1").start()
    try:
        # The state directory is 0700 and the socket 0600: open them up, so that only SO_PEERCRED
        # stands between the other user and the daemon.
        os.chmod(daemon.state_dir, 0o755)
        os.chmod(daemon.socket, 0o666)
        script = (f"import os, socket; os.setgid({uid}); os.setuid({uid}); s = socket.socket(socket.AF_UNIX); "
                  f"s.settimeout(10); s.connect({daemon.socket!r}); print(s.makefile('rb').readline().decode(), end='')")
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
        print(f"uid {uid} got: {done.stdout.strip()} {done.stderr.strip()[-300:]}")
        reply = json.loads(done.stdout)
        expect(reply.get("ok") is False and "uid" in reply["error"]["message"], f"not refused: {reply}")
        code, jobs, _ = daemon.client("list")
        expect(code == 0, "the daemon's own user is still served")
    finally:
        daemon.stop()


def scenario_client(tools, work):
    graphs = export_graphs(work)
    state = os.path.join(work, "state")
    nobody = Daemon(tools, state)
    code, reply, stderr = nobody.client("status")
    expect(code == 3 and "no minifyd is running" in json.dumps(reply) + stderr, f"no daemon: exit {code} {reply} {stderr}")

    daemon = Daemon(tools, state, "--workers", "2", "--max-running-jobs", "1").start()
    try:
        kind, case, args = JOB_KINDS[0]
        done = subprocess.run([tools.minify, "submit", graphs[case], *job_args(args, tools), "--wait",
                               "--state-dir", state], capture_output=True, text=True, timeout=300)
        expect(done.returncode == 0 and "done" in done.stdout, f"submit --wait: {done.returncode} {done.stdout} {done.stderr}")
        first = int(done.stdout.split()[0])
        code, status, _ = daemon.client("status", str(first))
        expect(code == 0 and status["state"] == "done" and status["id"] == first, f"status --json: {status}")

        # A slow job holds the one running slot while others queue: one is cancelled there, the
        # higher priority runs first, and one whose graph directory is deleted after submit still
        # runs, from the copy the daemon took.
        hang_kind, hang_case, hang_args = JOB_KINDS[3]
        slow = daemon.submit(graphs[hang_case], job_args(hang_args, tools))
        queued = daemon.submit(graphs[case], job_args(args, tools))
        transient = os.path.join(work, "transient_graph")
        shutil.copytree(graphs[case], transient)
        low = daemon.submit(transient, job_args(args, tools))
        shutil.rmtree(transient)
        high = daemon.submit(graphs[case], job_args(args, tools), "--priority", "5")
        code, reply, _ = daemon.client("cancel", str(queued))
        expect(code == 0 and reply["state"] == "cancelled", f"cancel a queued job: {reply}")
        code, reply, _ = daemon.client("cancel", str(slow))
        expect(code == 0, f"cancel the running job: {reply}")
        jobs = wait_all_final(daemon, [slow, queued, low, high], 300)
        expect(jobs[slow]["state"] == "cancelled", f"the running job after cancel: {jobs[slow]}")
        expect(jobs[low]["state"] == "done", f"the job whose graph was deleted after submit: {jobs[low]}")
        expect(jobs[high]["started_at"] < jobs[low]["started_at"],
               f"priority 5 started after priority 0: {jobs[high]} {jobs[low]}")
        code, reply, stderr = daemon.client("result", str(queued), "--out", os.path.join(work, "nothing"))
        expect(code != 0 and "cancelled" in json.dumps(reply), f"result of a cancelled job: {code} {reply}")
        cancel_while_propagating(daemon, tools, work)
        # One writer per directory: a result into a directory another process owns is refused, naming it.
        owned = os.path.join(work, "owned")
        os.makedirs(owned)
        with open(os.path.join(owned, ".owner"), "w") as owner:
            fcntl.flock(owner, fcntl.LOCK_EX | fcntl.LOCK_NB)
            owner.write(f"{os.getpid()}\n")
            owner.flush()
            code, reply, stderr = daemon.client("result", str(first), "--out", owned)
            expect(code == 2 and f"(pid {os.getpid()})" in json.dumps(reply),
                   f"result into a directory another process writes: {code} {reply}")
        code, reply, stderr = daemon.client("result", str(first), "--out", owned)
        expect(code == 0, f"result once its owner let go: {code} {reply} {stderr}")

        # watch follows a job to its end.
        watched = daemon.submit(graphs[case], job_args(args, tools))
        done = subprocess.run([tools.minify, "watch", str(watched), "--state-dir", state, "--json"],
                              capture_output=True, text=True, timeout=300)
        events = [json.loads(line) for line in done.stdout.splitlines()]
        expect(done.returncode == 0 and events and events[-1]["event"] == "end" and events[-1]["state"] == "done",
               f"watch: {done.returncode} {events[-3:]} {done.stderr}")

        # query --daemon answers as minify query does.
        local = subprocess.run([tools.minify, "query", graphs[case], *job_args(args, tools), "--json"],
                               capture_output=True, text=True, timeout=120)
        remote = subprocess.run([tools.minify, "query", "--daemon", graphs[case], *job_args(args, tools), "--json",
                                 "--state-dir", state], capture_output=True, text=True, timeout=120)
        expect(remote.returncode == local.returncode == 1, f"query --daemon: {remote.returncode} {remote.stdout} {remote.stderr}")
        expect(json.loads(remote.stdout)["verdict"] == json.loads(local.stdout)["verdict"],
               f"verdicts differ: {remote.stdout} vs {local.stdout}")

        # Worker limits are minifyd's: a job or a query asking its own is refused, never run without them.
        for command in (["submit"], ["query", "--daemon"]):
            done = subprocess.run([tools.minify, *command, graphs[case], *job_args(args, tools), "--memory-limit", "4096",
                                   "--state-dir", state], capture_output=True, text=True, timeout=120)
            expect(done.returncode == 2 and "--cpu-limit and --memory-limit are minifyd's" in done.stderr,
                   f"{command} with --memory-limit: {done.returncode} {done.stdout} {done.stderr}")
        with socket.socket(socket.AF_UNIX) as raw:
            raw.connect(daemon.socket)
            reader = raw.makefile("rb")
            reader.readline()  # the greeting
            evaluation = {"backend": "eager", "backend_options": {}, "accuracy": "off", "nan_check": False,
                          "timeout_ms": 60000, "cpu_limit_seconds": 10}
            raw.sendall((json.dumps({"type": "query", "graph_dir": os.path.abspath(graphs[case]),
                                     "evaluation": evaluation}) + "\n").encode())
            reply = json.loads(reader.readline())
            expect(not reply["ok"] and "cpu_limit_seconds: worker limits are not part of an evaluation"
                   in reply["error"]["message"], f"a query sent with a cpu limit: {reply}")

        code, stats, _ = daemon.client("stats")
        expect(code == 0 and stats["pool"]["slots"] == 2 and stats["jobs"]["done"] >= 2, f"stats: {stats}")

        # A graceful stop with a job running: it resumes from its checkpoint at the next start.
        resumed = daemon.submit(graphs[hang_case], job_args(hang_args, tools))
        deadline = time.monotonic() + 60
        while daemon.client("status", str(resumed))[1]["state"] != "running" and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(1.5)
        code, reply, _ = daemon.client("shutdown")
        expect(code == 0, f"shutdown: {reply}")
        daemon.process.wait(120)
        daemon.start()
        jobs = wait_all_final(daemon, [resumed], 300)
        expect(jobs[resumed]["state"] == "done" and jobs[resumed]["sessions"] == 2,
               f"the job stopped by shutdown: {jobs[resumed]}")
    finally:
        daemon.stop()


def cancel_while_propagating(daemon, tools, work):
    """A job cancelled while its original still propagates (four 2048x2048 matmuls, 3 s each in Debian's
    eager here; the export runs them too) ends at once: its search, which awaits the values, stops, and the propagation
    is cancelled rather than waited for."""
    import torch
    from minifyd import export as export_fx

    def matmuls(x, w):
        y = torch.relu(x)
        for _ in range(4):
            y = y @ w
        return (y,)
    torch.manual_seed(0)
    graph = os.path.join(work, "slow_eager")
    export_fx.export(matmuls, [torch.randn(2048, 2048), torch.randn(2048, 2048) / 64], graph)
    job = daemon.submit(graph, ["--backend", f"plugin:{tools.faulty}", "--backend-opt", "op=aten::relu",
                                "--backend-opt", "fault=segfault"])
    deadline = time.monotonic() + 60
    while daemon.client("status", str(job))[1]["state"] != "running":
        expect(time.monotonic() < deadline, f"job {job} did not start: {daemon.jobs()}")
        time.sleep(0.1)
    time.sleep(2)  # the sanity check has crashed; the search awaits the values
    cancelled_at = time.monotonic()
    code, reply, _ = daemon.client("cancel", str(job))
    expect(code == 0, f"cancel the propagating job: {reply}")
    jobs = wait_all_final(daemon, [job], 120)
    took = time.monotonic() - cancelled_at
    expect(jobs[job]["state"] == "cancelled" and took < 5,
           f"a job cancelled while its original propagates: {jobs[job]['state']} after {took:.1f} s")
    print(f"cancelled while propagating: ended {took:.1f} s after the cancel")


def scenario_full_disk(tools, work):
    if os.geteuid() != 0:
        print("skipped: mounting a small tmpfs needs root; run the suite as root to test a full disk")
        return SKIP
    graphs = {"chain1000_segfault": os.path.join(work, "graphs", "chain1000_segfault")}
    export_case(CASES["chain1000_segfault"], graphs["chain1000_segfault"])
    args = job_args(CASES["chain1000_segfault"].args, tools)
    reference = os.path.join(work, "reference")
    done = subprocess.run([tools.minify, "run", graphs["chain1000_segfault"], "--out", reference, *args,
                           "--workers", "2", "--json"], capture_output=True, text=True, timeout=600)
    expect(done.returncode == 0, f"minify run: exit {done.returncode}\n{done.stderr[-2000:]}")
    disk = os.path.join(work, "disk")
    os.makedirs(disk)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=48m", "tmpfs", disk], capture_output=True, text=True)
    if mounted.returncode != 0:
        print(f"skipped: cannot mount a tmpfs here: {mounted.stderr.strip()}")
        return SKIP
    daemon = Daemon(tools, os.path.join(disk, "state"), "--workers", "2")
    try:
        daemon.start()
        job = daemon.submit(graphs["chain1000_segfault"], args)
        deadline = time.monotonic() + 300
        while daemon.jobs()[0].get("progress", {}).get("queries", 0) < 4:
            expect(time.monotonic() < deadline, f"the job did not get going: {daemon.jobs()}\n{daemon.log()}")
            time.sleep(0.05)
        filler = fill(disk)
        daemon.stop()
        daemon.start()  # on the full disk
        # Stopping may have given some back (SQLite truncates its WAL): full again before the submit.
        topped_up = fill(disk, "filler-2")
        code, reply, stderr = daemon.client("submit", graphs["chain1000_segfault"], *args)
        expect(code == 5 and "the disk is full" in (stderr + json.dumps(reply)).lower(),
               f"a job submitted on the full disk: exit {code}, {reply}, {stderr}")
        run_out = os.path.join(disk, "run-out")
        ran = subprocess.run([tools.minify, "run", graphs["chain1000_segfault"], "--out", run_out, *args, "--json"],
                             capture_output=True, text=True, timeout=300)
        expect(ran.returncode == 5 and "the disk is full" in ran.stdout + ran.stderr,
               f"minify run on the full disk: exit {ran.returncode}: {ran.stdout}{ran.stderr[-2000:]}")
        time.sleep(3)
        os.remove(filler)
        os.remove(topped_up)
        finished = wait_all_final(daemon, [job], 600)
        expect(finished[job]["state"] == "done", f"the job after the disk was full: {finished[job]}\n{daemon.log()}")
        with open(os.path.join(reference, "graph.json"), "rb") as f:
            expect(daemon.result_graph(job, os.path.join(work, "result")) == f.read(),
                   "the job's graph differs from minify run's")
        print(f"job {job}: filled mid-job, daemon restarted on the full disk, a submit refused "
              f"({(stderr.strip() or json.dumps(reply))[:300]}), then done with minify run's graph")
    finally:
        daemon.stop()
        subprocess.run(["umount", "-l", disk])


SCENARIOS = {"jobs": scenario_jobs, "sigkill": scenario_sigkill, "hostile": scenario_hostile,
             "other_uid": scenario_other_uid, "client": scenario_client, "full_disk": scenario_full_disk}


def main():
    args, tools, work = parse_command_line(__doc__, SCENARIOS)
    code = SCENARIOS[args.scenario](tools, work)
    sys.exit(code or 0)


if __name__ == "__main__":
    main()
