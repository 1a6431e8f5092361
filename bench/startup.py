# Where `minify run`'s first second goes, against PyTorch's in-process minifier loop (issue 30's item
# 4): for graphs that segfault under the faulty plugin (cases of tests/run/cases.py), `minify run` as a
# whole process, split by its timeline (until its first worker's hello, LibTorch's loading; until the
# original's eager values came, which the search awaits where it needs them, beside the sanity check
# and the prefix bisection; until the search's end), interleaved run by run with fx_minifier's loop
# called in one python on the already-built graph (bench/functorch_minifier.py --modes inprocess: its
# python's start and the graph's tracing not counted). Beside them the floors no coordinator can go
# under: a minify-worker's own start (exec to hello), alone and several at once, and the start PyTorch's
# minifier pays in a fresh interpreter before its first query (its isolated mode pays it for every query).
#   bench/startup.py [--build build] [--repeat 10] [--cases chain1000_segfault,resnet18_segfault,...]
#                    [--python /usr/bin/python3]   (the python with torch, for the cases and fx_minifier)
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PYTHON = "/usr/bin/python3"  # --python replaces it


def graph_of(case, work, faulty):
    """The graph directory of a case and the faulty plugin's options that make it segfault."""
    out = os.path.join(work, case)
    subprocess.run([PYTHON, "tests/run/cases.py", "--export", case, "--out", out], cwd=ROOT, check=True,
                   capture_output=True)
    args = subprocess.run([PYTHON, "tests/run/cases.py", "--args", case, "--faulty", faulty], cwd=ROOT,
                          check=True, capture_output=True, text=True).stdout.split("\n")
    return out, [a for a in args if a]


def time_run(minify, graph, args, out):
    """Seconds of one `minify run`: the whole process, and from its timeline the first worker's hello,
    the original's eager values answered and the search's end."""
    timeline = out + ".timeline.jsonl"
    start = time.time()
    done = subprocess.run([minify, "run", graph, "--out", out, "--timeline", timeline] + args, capture_output=True,
                          text=True)
    whole = time.time() - start
    if done.returncode != 0:
        sys.exit(f"minify run {graph} exited {done.returncode}:\n{done.stderr[-2000:]}")
    with open(timeline) as f:
        events = [json.loads(line) for line in f]
    ready = min(e["t"] for e in events if e["event"] == "worker_ready")
    propagations = {e["ticket"] for e in events if e["event"] == "request_sent" and e["request"] == "propagate"}
    eager = max(e["t"] for e in events if e["event"] == "request_answered" and e["ticket"] in propagations)
    search_end = next(e["t"] for e in events if e.get("phase") == "search" and e["edge"] == "end")
    return {"whole": whole, "hello": ready, "eager": eager, "search": search_end}


def time_peer_loop(case):
    """(seconds, queries) of fx_minifier's loop in one python, its start and the tracing not counted."""
    done = subprocess.run([PYTHON, "bench/functorch_minifier.py", "--cases", case, "--modes", "inprocess"], cwd=ROOT,
                          check=True, capture_output=True, text=True)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return result["wall_seconds"], result["queries"]


def time_worker_hellos(worker, at_once):
    """Seconds from starting `at_once` workers together until the last one has said hello."""
    start = time.time()
    workers = [subprocess.Popen([worker], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
               for _ in range(at_once)]
    for process in workers:
        if not process.stdout.readline():
            sys.exit("minify-worker ended before its hello")
    elapsed = time.time() - start
    for process in workers:
        process.stdin.close()
        process.wait()
    return elapsed


def time_fresh_python(statement):
    start = time.time()
    subprocess.run([PYTHON, "-c", statement], check=True, capture_output=True)
    return time.time() - start


def median_ms(samples):
    return f"{statistics.median(samples) * 1000:.0f} ms"


def spread_ms(samples):
    return f"{median_ms(samples)} ({min(samples) * 1000:.0f}-{max(samples) * 1000:.0f})"


def main():
    global PYTHON
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--build", default="build")
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--cases", default="chain1000_segfault,resnet18_segfault,mobilenet_v2_segfault")
    parser.add_argument("--python", default=PYTHON, help="the python with torch (the GPU machine's python3)")
    args = parser.parse_args()
    PYTHON = args.python
    build = os.path.abspath(os.path.join(ROOT, args.build))
    minify = os.path.join(build, "daemon", "minify")
    worker = os.path.join(build, "worker", "minify-worker")
    faulty = os.path.join(build, "tests", "plugins", "libminifyd_faulty_backend.so")

    print(f"cores: {os.cpu_count()}; {args.repeat} runs of each side, interleaved; medians (min-max)\n")
    print("| graph | `minify run`, whole process | its first worker's hello | eager values in | search's end "
          "| fx_minifier's loop in one python | its queries |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as work:
        for case in args.cases.split(","):
            graph, case_args = graph_of(case, work, faulty)
            time_run(minify, graph, case_args, os.path.join(work, f"{case}-warm-up"))  # page cache, not a sample
            ours, peer = [], []
            for i in range(args.repeat):
                ours.append(time_run(minify, graph, case_args, os.path.join(work, f"{case}-{i}")))
                peer.append(time_peer_loop(case))
            column = {key: spread_ms([run[key] for run in ours]) for key in ours[0]}
            print(f"| {case} | {column['whole']} | {column['hello']} | {column['eager']} | {column['search']} "
                  f"| {spread_ms([seconds for seconds, _ in peer])} | {peer[0][1]} |")

    print("\n| floor | median |\n|---|---|")
    for at_once in (1, 2, 4):
        hellos = [time_worker_hellos(worker, at_once) for _ in range(args.repeat)]
        print(f"| {at_once} minify-worker{'s' if at_once > 1 else ''} started at once, until the last hello | "
              f"{median_ms(hellos)} |")
    peer_start = [time_fresh_python("import torch; import functorch.compile") for _ in range(args.repeat)]
    print(f"| PyTorch's minifier: a fresh `python3 -c 'import torch; import functorch.compile'` | "
          f"{median_ms(peer_start)} |")


if __name__ == "__main__":
    main()
