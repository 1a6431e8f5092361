# Jobs per minute and queue latency of minifyd with 1, 2 and 3 daemons ("hosts") on one PostgreSQL
# queue and one store on this machine, beside one daemon on its own SQLite; and how long a dead
# host's job waits before another daemon takes it. The jobs are the faulty plugin's (a crash and an
# exception on graphs exported from PyTorch), so the figures measure minifyd, not a compiler.
#   python3 bench/queue_throughput.py --build build [--jobs 30] [--hosts 1,2,3] [--lease 3]
# Each host runs --workers 1 --max-running-jobs 1, so that capacity grows with the hosts. A fresh
# database and store per configuration. Throughput: --jobs submitted at once through the first host,
# from the first submit to the last end. Queue latency: one job at a time, submit (the job's
# submitted_at) to start (its started_at), submitted through the first host; with several hosts the
# first is kept busy, so that the others take the jobs (queue_latency). Dead host: a job runs on one host, a second idle one joins, the first is
# SIGKILLed; the wait is from the kill to the job's next claim (the lease's rest, then the next poll).
import argparse
import os
import shutil
import signal
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "minifyd"))
from daemon_harness import CASES, Daemon, Tools, export_case, faulty, job_args, wait_all_final  # noqa: E402
from postgres_server import PostgresServer, find_bindir  # noqa: E402

JOBS = [("slippage", CASES["slippage"].args), ("if_graph_minified", CASES["if_graph_minified"].args)]


class Queue:
    """N daemons on one queue (PostgreSQL, or SQLite for one) and one store, started."""

    def __init__(self, tools, work, server, name, hosts, lease):
        shutil.rmtree(os.path.join(work, name), ignore_errors=True)
        os.makedirs(os.path.join(work, name))
        shared = []
        if server is not None:
            shared = ["--queue", server.create_database(name), "--store", os.path.join(work, name, "store"),
                      "--lease", str(lease)]
        self.hosts = [Daemon(tools, os.path.join(work, name, f"host-{i}"), *shared, *(["--name", f"host-{i}"] if shared else []),
                             "--workers", "1", "--max-running-jobs", "1").start() for i in range(hosts)]
        self.server, self.database = server, name

    def stop(self):
        for host in self.hosts:
            if host.process.poll() is None:
                host.stop()


def throughput(queue, tools, graphs, count):
    first = queue.hosts[0]
    started = time.monotonic()
    ids = [first.submit(graphs[case], job_args(args, tools)) for case, args in (JOBS * count)[:count]]
    jobs = wait_all_final(first, ids, 1800)
    seconds = time.monotonic() - started
    states = {jobs[i]["state"] for i in ids}
    assert states == {"done"}, f"jobs ended {states}"
    return count / seconds * 60, seconds


def queue_latency(queue, tools, graphs, samples):
    """Submit to start of `samples` jobs one at a time. With several hosts, the first (which the jobs
    are submitted through, and which claims at once what it has room for) runs a hanging job meanwhile:
    the others take the jobs, at their next claim poll."""
    first = queue.hosts[0]
    if len(queue.hosts) > 1:
        first.submit(graphs["if_graph_minified"], job_args(faulty("hang") + ("--timeout", "20"), tools))
    waits = []
    for sample in range(samples):
        case, args = JOBS[sample % len(JOBS)]
        job = first.submit(graphs[case], job_args(args, tools))
        ended = wait_all_final(first, [job], 600)[job]
        waits.append((ended["started_at"] - ended["submitted_at"]) * 1000)
    return statistics.median(waits), max(waits)


def dead_host_wait(queue, tools, graphs):
    """One host runs a job whose original hangs; a second, idle, joins the queue; the first is
    SIGKILLed: the seconds until the second claimed the job."""
    first = queue.hosts[0]
    job = first.submit(graphs["if_graph_minified"], job_args(faulty("hang") + ("--timeout", "60"), tools))
    while not queue.server.query(queue.database, f"SELECT 1 FROM minifyd_jobs WHERE id = {job} AND state = 'running'"):
        time.sleep(0.02)
    shared = first.options[:first.options.index("--name")]
    second = Daemon(tools, os.path.join(os.path.dirname(first.state_dir), "host-1"), *shared, "--name", "host-1",
                    "--workers", "1", "--max-running-jobs", "1").start()
    queue.hosts.append(second)
    os.killpg(first.process.pid, signal.SIGKILL)
    first.process.wait()
    killed = time.time()
    while True:
        rows = queue.server.query(queue.database, f"SELECT at FROM minifyd_job_events WHERE job = {job} AND "
                                                  "event = 'claimed' AND session = 2")
        if rows:
            return float(rows[0][0]) - killed
        time.sleep(0.02)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--build", required=True)
    parser.add_argument("--jobs", type=int, default=30)
    parser.add_argument("--hosts", default="1,2,3")
    parser.add_argument("--lease", type=float, default=3.0)
    parser.add_argument("--latency-samples", type=int, default=10)
    parser.add_argument("--work", default=None)
    args = parser.parse_args()
    build = os.path.abspath(args.build)
    tools = Tools(os.path.join(build, "daemon", "minify"), os.path.join(build, "daemon", "minifyd"),
                  os.path.join(build, "tests", "plugins", "libminifyd_faulty_backend.so"))
    work = args.work or tempfile.mkdtemp(prefix="minifyd-queue-bench-")
    graphs = {}
    for case, _ in JOBS:
        graphs[case] = os.path.join(work, "graphs", case)
        if not os.path.isdir(graphs[case]):
            export_case(CASES[case], graphs[case])
    bindir = find_bindir()
    assert bindir, "no PostgreSQL server: scripts/install_deps.sh installs it"
    server = PostgresServer(bindir, os.path.join(work, "postgres"))
    rows = []
    try:
        configurations = [("sqlite", None, 1)] + [(f"postgresql-{n}", server, n) for n in map(int, args.hosts.split(","))]
        for name, db, hosts in configurations:
            queue = Queue(tools, work, db, name.replace("-", "_"), hosts, args.lease)
            try:
                per_minute, seconds = throughput(queue, tools, graphs, args.jobs)
                median_ms, max_ms = queue_latency(queue, tools, graphs, args.latency_samples)
            finally:
                queue.stop()
            rows.append(f"| {name.split('-')[0]} | {hosts} | {args.jobs} in {seconds:.1f} s | {per_minute:.0f} | "
                        f"{median_ms:.0f} ms | {max_ms:.0f} ms |")
            print(rows[-1], flush=True)
        queue = Queue(tools, work, server, "dead_host", 1, args.lease)
        try:
            wait = dead_host_wait(queue, tools, graphs)
        finally:
            queue.stop()
    finally:
        server.stop()
    print("\n| queue | hosts | jobs | jobs per minute | queue latency, median | max |\n|---|---|---|---|---|---|")
    print("\n".join(rows))
    print(f"\na dead host's job claimed again {wait:.1f} s after the kill (lease {args.lease:g} s)")


if __name__ == "__main__":
    main()
