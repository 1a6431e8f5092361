# Where `minify run`'s first second goes: for a graph that segfaults under the faulty plugin, the
# whole process's wall time, the time until the search starts (its log's "started off with N nodes",
# after the workers are up and the original's values are propagated) and the search after it; beside
# them the floors no coordinator can go under: a minify-worker's own start (exec to hello, LibTorch's
# loading), alone and several at once, and the start PyTorch's minifier pays in a fresh interpreter
# before its first query (import torch and functorch's minifier), which its isolated mode pays again
# for every query.
#   bench/startup.py [--build build] [--repeat 10] [--cases chain1000_segfault,resnet18]
import argparse
import datetime
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PYTHON = "/usr/bin/python3"
STARTED_OFF = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}) info started off with", re.M)


def graph_of(case, work, faulty):
    """The graph directory of a case and the faulty plugin's options that make it segfault."""
    out = os.path.join(work, case)
    if case == "resnet18":
        subprocess.run([PYTHON, "scripts/export_fx.py", "scripts/examples/resnet18.py", "--out", out],
                       cwd=ROOT, check=True, capture_output=True)
        return out, ["--backend", "plugin:" + faulty, "--backend-opt", "op=aten::relu_",
                     "--backend-opt", "fault=segfault"]
    subprocess.run([PYTHON, "tests/run/cases.py", "--export", case, "--out", out], cwd=ROOT, check=True,
                   capture_output=True)
    args = subprocess.run([PYTHON, "tests/run/cases.py", "--args", case, "--faulty", faulty], cwd=ROOT,
                          check=True, capture_output=True, text=True).stdout.split("\n")
    return out, [a for a in args if a]


def time_run(minify, graph, args, out):
    """(whole process, until the search started) in seconds for one `minify run`."""
    start = time.time()
    done = subprocess.run([minify, "run", graph, "--out", out] + args, capture_output=True, text=True)
    whole = time.time() - start
    if done.returncode != 0:
        sys.exit(f"minify run {graph} exited {done.returncode}:\n{done.stderr[-2000:]}")
    stamp = STARTED_OFF.search(done.stderr)
    if not stamp:
        sys.exit(f"minify run {graph}: no 'started off' line in its log:\n{done.stderr[-2000:]}")
    started = datetime.datetime.strptime(stamp.group(1), "%Y-%m-%d %H:%M:%S.%f").timestamp()
    return whole, started - start


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


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--build", default="build")
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--cases", default="chain1000_segfault,resnet18")
    args = parser.parse_args()
    build = os.path.abspath(os.path.join(ROOT, args.build))
    minify = os.path.join(build, "daemon", "minify")
    worker = os.path.join(build, "worker", "minify-worker")
    faulty = os.path.join(build, "tests", "plugins", "libminifyd_faulty_backend.so")

    print(f"cores: {os.cpu_count()}; {args.repeat} runs each, medians\n")
    print("| `minify run` (default workers) | whole process | until the search starts | the search and outputs |")
    print("|---|---|---|---|")
    with tempfile.TemporaryDirectory() as work:
        for case in args.cases.split(","):
            graph, case_args = graph_of(case, work, faulty)
            time_run(minify, graph, case_args, os.path.join(work, f"{case}-warm-up"))  # page cache, not a sample
            samples = [time_run(minify, graph, case_args, os.path.join(work, f"{case}-{i}")) for i in range(args.repeat)]
            wholes = [whole for whole, _ in samples]
            starts = [started for _, started in samples]
            searches = [whole - started for whole, started in samples]
            print(f"| {case} | {median_ms(wholes)} | {median_ms(starts)} | {median_ms(searches)} |")

    print("\n| floor | median |\n|---|---|")
    for at_once in (1, 2, 4):
        hellos = [time_worker_hellos(worker, at_once) for _ in range(args.repeat)]
        print(f"| {at_once} minify-worker{'s' if at_once > 1 else ''} started at once, until the last hello | "
              f"{median_ms(hellos)} |")
    peer = [time_fresh_python("import torch; import functorch.compile") for _ in range(args.repeat)]
    print(f"| PyTorch's minifier: a fresh `python3 -c 'import torch; import functorch.compile'` | {median_ms(peer)} |")


if __name__ == "__main__":
    main()
