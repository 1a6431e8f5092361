# minifyd on a shared queue (label minifyd): three daemons ("hosts": state directories and worker
# pools of their own) on one PostgreSQL queue, a real server this test starts (postgres_server.py),
# and one content store, which the first daemon names and the others take from the queue (a daemon
# naming another is refused). One ctest per scenario:
#   three_hosts  20 jobs submitted through one host; one host SIGKILLed while it runs a job, another
#                stopped by SIGSTOP past its lease and continued: every job ends once, done, with
#                `minify run`'s graph (exported through a surviving host from the shared store), no job
#                ever held under two live leases (from the queue's event log), the store's roots all
#                whole (`minify store verify`), the dead host's jobs taken over after its lease, and
#                `minify watch` through one host following jobs another host runs to their end, and
#                `minify stats` through one host listing the three with their last heartbeats.
import json
import os
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from daemon_harness import (Daemon, check_results, expect, export_graphs, parse_command_line,  # noqa: E402
                            reference_graphs, submit_twenty, wait_all_final)
from postgres_server import PostgresServer, find_bindir  # noqa: E402

SKIP = 77  # ctest's SKIP_RETURN_CODE
LEASE = 3.0  # seconds: renewed every second, so a stopped host loses its jobs quickly
DATABASE = "queue"
FINAL_EVENTS = {"done", "failed", "cancelled"}


def running_on(server, host):
    """The ids of the jobs the queue says `host` runs now."""
    rows = server.query(DATABASE, f"SELECT id FROM minifyd_jobs WHERE state = 'running' AND owner = '{host}'")
    return [int(row[0]) for row in rows]


def wait_running_on(server, host, timeout=300):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        jobs = running_on(server, host)
        if jobs:
            return jobs
        time.sleep(0.1)
    raise AssertionError(f"{host} took no job within {timeout} s")


def stop_holding_jobs(server, daemon, name):
    """SIGSTOPs `daemon` (its process group), named `name` in the queue, while it holds running jobs;
    the ids it holds, read once it is stopped (a job it was ending as the signal came is done, not held)."""
    while True:
        wait_running_on(server, name)
        os.killpg(daemon.process.pid, signal.SIGSTOP)
        time.sleep(0.2)  # a statement already sent commits meanwhile
        held = running_on(server, name)
        if held:
            return held
        os.killpg(daemon.process.pid, signal.SIGCONT)


def wait_claimed_elsewhere(server, jobs, host, timeout=300):
    """Waits until another host than `host` claimed one of `jobs` (its lease ran out); returns it."""
    deadline = time.monotonic() + timeout
    listed = ", ".join(str(job) for job in jobs)
    while time.monotonic() < deadline:
        rows = server.query(DATABASE, f"SELECT id FROM minifyd_jobs WHERE id IN ({listed}) AND owner <> '{host}'")
        if rows:
            return int(rows[0][0])
        time.sleep(0.1)
    raise AssertionError(f"none of {host}'s jobs {jobs} was claimed by another host within {timeout} s")


def check_event_log(server, submitted):
    """Every job claimed under one live lease at a time and ended once, done; returns {job: [(its
    claim's owner/session, when), ...]}."""
    rows = server.query(DATABASE, "SELECT job, event, owner, session, at, lease_expires_at FROM minifyd_job_events "
                                  "ORDER BY id")
    claims, held_until, ends = {}, {}, {}
    for job, event, owner, session, at, lease in rows:
        job, at = int(job), float(at)
        if event == "claimed":
            # The previous session's last lease had run out, or it had ended, when this one was claimed.
            expect(at >= held_until.get(job, 0), f"job {job} claimed by {owner} (session {session}) at {at} while "
                                                  f"a lease ran until {held_until.get(job)}")
            claims.setdefault(job, []).append((f"{owner}/{session}", at))
        if event in ("claimed", "renewed"):
            held_until[job] = float(lease)
        if event in FINAL_EVENTS or event == "requeued":
            held_until[job] = at
        if event in FINAL_EVENTS:
            ends.setdefault(job, []).append(event)
    for job in submitted:
        expect(ends.get(job) == ["done"], f"job {job} ended {ends.get(job)}, not once done")
    return claims


def scenario_three_hosts(tools, work):
    bindir = find_bindir()
    if bindir is None:
        print("skipped: no PostgreSQL server (scripts/install_deps.sh installs Debian's postgresql)")
        return SKIP
    graphs = export_graphs(work)
    references = reference_graphs(tools, graphs, work)
    server = PostgresServer(bindir, os.path.join(work, "postgres"))
    url = server.create_database(DATABASE)
    store = os.path.join(work, "store")
    # host-a names the store; the others take it from the queue.
    hosts = {name: Daemon(tools, os.path.join(work, name), "--queue", url, *(["--store", store] if name == "host-a" else []),
                          "--name", name, "--lease", str(LEASE), "--workers", "1", "--max-running-jobs", "2")
             for name in ("host-a", "host-b", "host-c")}
    try:
        for host in hosts.values():
            host.start()
        elsewhere = Daemon(tools, os.path.join(work, "host-d"), "--queue", url, "--store", os.path.join(work, "other"))
        refused = subprocess.run([tools.minifyd, "--state-dir", elsewhere.state_dir, *elsewhere.options],
                                 capture_output=True, text=True, timeout=60)
        expect(refused.returncode != 0 and f"keeps its blobs in {store}" in refused.stderr,
               f"a daemon of the queue naming another store: exit {refused.returncode} {refused.stderr}")
        started = time.monotonic()
        submitted = submit_twenty(hosts["host-a"], tools, graphs)
        killed = stop_holding_jobs(server, hosts["host-b"], "host-b")  # then killed holding them
        hosts["host-b"].kill()
        killed_at = time.time()  # the queue's clock is this machine's too
        print(f"host-b SIGKILLed running jobs {killed}")
        stopped = stop_holding_jobs(server, hosts["host-c"], "host-c")
        stopped_at = time.monotonic()
        # Followed through host-a while host-c holds them: the queue's progress and end reach the watch.
        watches = {job: subprocess.Popen([tools.minify, "watch", str(job), "--state-dir", hosts["host-a"].state_dir,
                                          "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                   for job in stopped}
        taken = wait_claimed_elsewhere(server, stopped, "host-c")
        os.killpg(hosts["host-c"].process.pid, signal.SIGCONT)
        print(f"host-c stopped running jobs {stopped}, continued {time.monotonic() - stopped_at:.1f} s later, once "
              f"job {taken} was claimed by another host")
        jobs = wait_all_final(hosts["host-a"], submitted, 900)
        print(f"20 jobs in {time.monotonic() - started:.1f} s; sessions "
              f"{ {job: jobs[job]['sessions'] for job in submitted} }")
        claims = check_event_log(server, submitted)
        owners = {job: [owner for owner, _ in claims[job]] for job in submitted}
        for job in killed:
            expect(len(owners[job]) >= 2 and not owners[job][-1].startswith("host-b/"),
                   f"job {job} of the killed host-b was not taken over: {owners[job]}")
        waits = [claims[job][-1][1] - killed_at for job in killed]
        taken_over = [job for job in stopped if not owners[job][-1].startswith("host-c/")]
        print(f"the killed host's jobs {', '.join(f'{job}: {owners[job]}' for job in killed)}, each claimed again "
              f"{', '.join(f'{wait:.1f}' for wait in waits)} s after the kill (lease {LEASE:.0f} s); the stopped "
              f"host's {', '.join(f'{job}: {owners[job]}' for job in stopped)} ({len(taken_over)} taken over)")
        expect(taken_over, f"no job of the stopped host-c was taken over: { {job: owners[job] for job in stopped} }")
        for job, watch in watches.items():
            out, err = watch.communicate(timeout=60)
            events = [json.loads(line) for line in out.splitlines()]
            expect(watch.returncode == 0 and events and events[-1]["event"] == "end" and events[-1]["state"] == "done",
                   f"minify watch {job} through host-a: exit {watch.returncode} {events[-3:]} {err}")
            print(f"watch {job} through host-a (ended by {owners[job][-1]}): {len(events)} events")
        code, stats, stderr = hosts["host-a"].client("stats")
        beats = {host["name"]: host for host in (stats or {}).get("hosts", [])}
        expect(code == 0 and sorted(beats) == sorted(hosts), f"stats through host-a: exit {code} {stats} {stderr}")
        expect(beats["host-b"]["heartbeat_at"] <= killed_at < beats["host-a"]["heartbeat_at"],
               f"stats: the killed host-b's last heartbeat {beats['host-b']} against host-a's {beats['host-a']}")
        print(f"stats through host-a: {[(name, host['workers'], host['running_jobs']) for name, host in beats.items()]}, "
              f"host-b's last heartbeat {killed_at - beats['host-b']['heartbeat_at']:.1f} s before its kill")
        check_results(hosts["host-a"], submitted, references, work)
        verified = subprocess.run([tools.minify, "store", "verify", store], capture_output=True, text=True)
        expect(verified.returncode == 0, f"the shared store: {verified.stdout}{verified.stderr}")
        print(f"the shared store: {verified.stdout.strip()}")
    finally:
        for name, host in hosts.items():
            if name != "host-b":
                if host.process is not None and host.process.poll() is None:
                    os.killpg(host.process.pid, signal.SIGCONT)  # SIGTERM must reach a stopped host too
                host.stop()
        server.stop()


SCENARIOS = {"three_hosts": scenario_three_hosts}


def main():
    args, tools, work = parse_command_line(__doc__, SCENARIOS)
    sys.exit(SCENARIOS[args.scenario](tools, work) or 0)


if __name__ == "__main__":
    main()
