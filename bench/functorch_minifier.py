# PyTorch's own minifier (functorch.compile.minifier, as Debian's torch 1.13 ships it) on the
# acceptance cases of tests/run/cases.py, the peer `minify run` is compared with, two ways:
#   inprocess: the case's predicate runs in this process, as PyTorch's minifier tests run it;
#   isolated:  every query is a fresh python3 (bench/functorch_isolated_query.py), as after_aot's
#              isolate mode runs them, where the crash and hang faults are real.
# Both count a query as failing only when it fails as the input graph does (`--match same`).
# Prints one JSON line per (case, mode): case, mode, status, nodes, inputs, queries, wall_seconds,
# and problems (how the result differs from the case's expectation; empty when it meets it).
#   python3 bench/functorch_minifier.py [--cases a,b] [--modes inprocess,isolated] [--verbose]
import argparse
import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time

import torch
from functorch.compile import minifier

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "run"))
import cases  # noqa: E402
from minifyd import export as export_fx  # noqa: E402
from fault_model import Failure, kind_and_detail  # noqa: E402
from functorch_isolated_query import FAILED_EXIT  # noqa: E402

PYTHON = "/usr/bin/python3"
QUERY_SCRIPT = os.path.join(HERE, "functorch_isolated_query.py")
STARTUP_LIMIT = 300  # seconds for a fresh interpreter to import torch and load a candidate


class IsolatedQuery:
    """Saves each candidate and evaluates it in a fresh python3. The first query, functorch's sanity
    check of the input graph, sets the failure that later candidates must show."""

    def __init__(self, case, work_dir):
        self.case, self.work_dir, self.expected = case, work_dir, None

    def __call__(self, fx_g, inps):
        failure = self.evaluate(fx_g, inps)
        if self.expected is None:
            self.expected = failure
        return failure is not None and failure == self.expected

    def evaluate(self, fx_g, inps):
        candidate = os.path.join(self.work_dir, "candidate.pt")
        torch.save((fx_g, list(inps)), candidate)
        with open(os.path.join(self.work_dir, "stderr"), "w+") as stderr:
            child = subprocess.Popen([PYTHON, QUERY_SCRIPT, self.case.name, candidate],
                                     stdout=subprocess.PIPE, stderr=stderr, text=True)
            try:
                return self._verdict(child, stderr)
            finally:
                if child.poll() is None:
                    child.kill()
                    child.wait()
                child.stdout.close()

    def _verdict(self, child, stderr):
        # The query's time limit starts once the child has imported torch and loaded the candidate.
        if select.select([child.stdout], [], [], STARTUP_LIMIT)[0] and child.stdout.readline() == "ready\n":
            try:
                child.wait(self.case.check.timeout)
            except subprocess.TimeoutExpired:
                return Failure("timeout")
        else:
            child.wait()
        if child.returncode < 0:
            return Failure("crash", signal.Signals(-child.returncode).name)
        if child.returncode in (0, FAILED_EXIT):
            reported = json.loads(child.stdout.read())
            return Failure(**reported) if reported else None
        stderr.seek(0)
        raise RuntimeError(f"{self.case.name}: the isolated query exited {child.returncode}:\n{stderr.read()}")


# mode -> (case, work directory) -> functorch's predicate
MODES = {"inprocess": lambda case, work_dir: case.fails, "isolated": IsolatedQuery}


def counting(predicate):
    def counted(fx_g, inps):
        counted.calls += 1
        return predicate(fx_g, inps)
    counted.calls = 0
    return counted


def no_dump(fx_g, inps):
    """functorch's dump_state prints every intermediate repro; the benchmark keeps them out of its output."""


def problems(case, status, min_f, min_inps, work_dir):
    """How the result differs from the case's expectation; the final graph is judged as graph.json."""
    if kind_and_detail(case.original_failure) != kind_and_detail(case.expect.failure):
        return [f"the fault model has the input graph fail with {case.original_failure}, "
                f"the case expects {case.expect.failure}"]
    if status != case.expect.status:
        return [f"{status}, expected {case.expect.status}"]
    if status != "minimized":
        return []
    doc = export_fx.export(min_f, min_inps, os.path.join(work_dir, "final"))
    return case.expect.problems(doc)


def run(case, mode, verbose):
    gm, inps = case.traced()
    with tempfile.TemporaryDirectory(prefix=f"functorch-{case.name}-") as work_dir:
        predicate = counting(MODES[mode](case, work_dir))
        start = time.monotonic()
        try:
            with open(os.devnull, "w") as devnull, contextlib.redirect_stdout(sys.stderr if verbose else devnull):
                min_f, min_inps = minifier(gm, inps, predicate, dump_state=no_dump)
            status = "minimized"
        except RuntimeError as error:
            if "did not fail" not in str(error):
                raise
            status, min_f, min_inps = "does_not_fail", None, None
        wall = time.monotonic() - start
        found = problems(case, status, min_f, min_inps, work_dir)
    return {"case": case.name, "mode": mode, "status": status,
            "nodes": len(min_f.graph.nodes) if min_f else None, "inputs": len(min_inps) if min_f else None,
            "queries": predicate.calls, "wall_seconds": round(wall, 3), "problems": found}


def names(text, known, what):
    chosen = list(known) if text == "all" else text.split(",")
    unknown = [name for name in chosen if name not in known]
    if unknown:
        raise SystemExit(f"unknown {what}: {', '.join(unknown)} (known: {', '.join(known)})")
    return chosen


def main():
    parser = argparse.ArgumentParser(description="PyTorch's functorch minifier on the cases of tests/run/cases.py.")
    parser.add_argument("--cases", default="all", help="comma-separated case names (default: all)")
    parser.add_argument("--modes", default="inprocess,isolated", help="comma-separated: inprocess, isolated")
    parser.add_argument("--verbose", action="store_true", help="functorch's progress on stderr")
    args = parser.parse_args()
    for name in names(args.cases, cases.CASES, "case"):
        for mode in names(args.modes, MODES, "mode"):
            print(json.dumps(run(cases.CASES[name], mode, args.verbose)), flush=True)


if __name__ == "__main__":
    main()
