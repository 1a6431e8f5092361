# How fast minifyd answers `status` and `list` while its pool is saturated (issue 5's target: p99
# within 50 ms). Starts a daemon on a scratch state directory and keeps every worker busy, then
# times N requests of each kind on one connection, on a fresh connection each, and as `minify
# status` processes. --load hang: jobs whose candidates hang on relu (each holds its worker for the
# whole --timeout, idle); --load cpu: 1000-node chains that segfault on relu (workers, forks, the
# search and checkpoints keep both cores busy).
#   python3 bench/daemon_status_latency.py --build build [-n 1000] [--load hang|cpu]
import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "minifyd"))
from daemon_harness import CASES, Daemon, Tools, export_case, faulty, job_args  # noqa: E402


def request(stream, reader, payload):
    stream.sendall(payload)
    return reader.readline()


def timed(n, one):
    samples = []
    for _ in range(n):
        started = time.perf_counter()
        one()
        samples.append((time.perf_counter() - started) * 1000)
    samples.sort()
    return {"median_ms": round(statistics.median(samples), 3), "p99_ms": round(samples[int(0.99 * len(samples)) - 1], 3),
            "max_ms": round(samples[-1], 3)}


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--build", default="build")
    parser.add_argument("-n", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--jobs", type=int, default=8)
    parser.add_argument("--load", choices=("hang", "cpu"), default="hang")
    args = parser.parse_args()
    build = os.path.abspath(args.build)
    tools = Tools(f"{build}/daemon/minify", f"{build}/daemon/minifyd", f"{build}/tests/plugins/libminifyd_faulty_backend.so")
    with tempfile.TemporaryDirectory(prefix="minifyd-bench-") as work:
        graph = os.path.join(work, "graph")
        case = "if_graph_minified" if args.load == "hang" else "chain1000_segfault"
        export_case(CASES[case], graph)
        load = faulty("hang") + ("--timeout", "5") if args.load == "hang" else CASES[case].args
        daemon = Daemon(tools, os.path.join(work, "state"), "--workers", str(args.workers),
                        "--max-running-jobs", str(args.jobs)).start()
        try:
            jobs = [daemon.submit(graph, job_args(load, tools)) for _ in range(args.jobs)]
            time.sleep(3)
            code, stats, _ = daemon.client("stats")
            saturated = stats["queue"]["running"] == args.workers and stats["queue"]["waiting"] > 0
            with socket.socket(socket.AF_UNIX) as stream:
                stream.connect(daemon.socket)
                reader = stream.makefile("rb")
                reader.readline()
                results = {
                    "status": timed(args.n, lambda: request(stream, reader, b'{"type": "status", "job": 1}\n')),
                    "list": timed(args.n, lambda: request(stream, reader, b'{"type": "list"}\n')),
                }

            def fresh_connection():
                with socket.socket(socket.AF_UNIX) as s:
                    s.connect(daemon.socket)
                    r = s.makefile("rb")
                    r.readline()
                    request(s, r, b'{"type": "status", "job": 1}\n')
            results["status, new connection each"] = timed(args.n, fresh_connection)
            results["`minify status ID` process"] = timed(min(args.n, 100), lambda: subprocess.run(
                [tools.minify, "status", "1", "--state-dir", daemon.state_dir], capture_output=True, check=True))
            code, after, _ = daemon.client("stats")
            finished = sum(job["state"] == "done" for job in daemon.jobs() if job["id"] in jobs)
        finally:
            daemon.stop()
    print(json.dumps({"load": args.load, "workers": args.workers, "jobs": args.jobs, "jobs_finished_meanwhile": finished,
                      "pool_saturated": saturated,
                      "queue_before": stats["queue"], "queue_after": after["queue"], "latency": results}, indent=2))


if __name__ == "__main__":
    main()
