# Real Inductor bugs end to end (label real, cases.py): each case's user script minified the two ways
# a user brings it, with real Inductor in the PyTorch 2.x python:
#   CASE.capture   `minify capture --run -- python SCRIPT` (with --accuracy for an accuracy bug): the
#                  graph that failed in the script's own run, captured and minified;
#   CASE.launcher  the minifier_launcher.py PyTorch writes for the script's run under
#                  TORCHDYNAMO_REPRO_AFTER=aot, given to `minify run`.
# Either way the minimized graph fails as the case says (its signature), keeps no more nodes than
# PyTorch's own minifier does on the case, and its repro.py fails under plain PyTorch.
import glob
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "inductor"))
from harness import call_nodes, expect, run_scenarios  # noqa: E402

from cases import CASES, REPRO_LEVEL, model_path  # noqa: E402


def fresh_dir(env, name):
    path = os.path.join(env.work, name)
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def check_minimized(env, case, out, signature):
    """out holds the minimized graph of case, which failed with `signature`; its repro.py fails under
    plain PyTorch."""
    expect(signature["kind"] == case.kind, f"{out}: signature {signature}, not a {case.kind}")
    if case.kind == "exception":
        expect(signature["exception_type"] == case.exception_type and signature.get("raised_at") == case.raised_at,
               f"{out}: signature {signature}, not {case.exception_type} raised at {case.raised_at}")
    if case.kind == "crash":
        expect(signature["signal"] in ("SIGSEGV", "SIGABRT"), f"{out}: signature {signature}, not a memory fault")
    ops = [node["target"] for node in call_nodes(out)]
    with open(os.path.join(out, "graph.json")) as f:
        nodes = len(json.load(f)["nodes"])
    expect(case.peer_nodes is None or nodes <= case.peer_nodes,
           f"{out}: {nodes} nodes kept, more than PyTorch's minifier keeps ({case.peer_nodes}): {ops}")
    done = subprocess.run([env.python, os.path.join(out, "repro.py")], capture_output=True, text=True, timeout=900,
                          cwd=out)
    expect(done.returncode != 0, f"{out}/repro.py passes under plain PyTorch:\n{done.stderr[-2000:]}")
    if case.kind == "crash":
        expect(done.returncode < 0 or done.returncode > 128, f"{out}/repro.py exits {done.returncode}, not by a signal")
    if case.kind == "accuracy":
        expect("AccuracyError" in done.stderr, f"{out}/repro.py fails otherwise:\n{done.stderr[-2000:]}")
    if case.kind == "exception":
        expect(case.exception_type in done.stderr, f"{out}/repro.py fails otherwise:\n{done.stderr[-2000:]}")
    print(f"{out}: {nodes} nodes, {len(ops)} operators ({', '.join(ops)}), {signature}")


def read_signature(out):
    with open(os.path.join(out, "checkpoint.json")) as f:
        return json.load(f)["signature"]


def capture(env, name):
    case = CASES[name]
    work = fresh_dir(env, f"{name}-capture")
    done = subprocess.run([env.minify, "capture", "--run", "--out", os.path.join(work, "captured"), "--python",
                           env.python, *([case.check] if case.check else []), "--", env.python, model_path(case)],
                          capture_output=True, text=True, timeout=1700, cwd=work)
    expect(done.returncode != 0, f"the script passes under the capture (exit 0):\n{done.stderr[-3000:]}")
    minimized = re.findall(r"minify capture: (\S+): minimized to (\d+) nodes in (\d+) queries, repro (\S+)", done.stderr)
    expect(len(minimized) == 1, f"not one graph captured and minimized:\n{done.stderr[-3000:]}")
    graph = minimized[0][0]
    with open(os.path.join(graph, "origin.json")) as f:
        origin = json.load(f)
    expect(origin["backward"] == (case.graph == "backward"), f"{graph}: origin.json {origin}, not a {case.graph} graph")
    out = os.path.join(graph, "minified")
    check_minimized(env, case, out, read_signature(out))


def launcher(env, name):
    case = CASES[name]
    work = fresh_dir(env, f"{name}-launcher")
    subprocess.run([env.python, model_path(case)], capture_output=True, text=True, timeout=900, cwd=work,
                   env={**os.environ, "TORCHDYNAMO_REPRO_AFTER": "aot", "TORCHDYNAMO_REPRO_LEVEL": REPRO_LEVEL[case.kind]})
    launchers = glob.glob(os.path.join(work, "torch_compile_debug", "run_*", "minifier", "minifier_launcher.py"))
    expect(len(launchers) == 1, f"the script's run wrote {len(launchers)} minifier_launcher.py")
    out = os.path.join(work, "minified")
    done = subprocess.run([env.minify, "run", launchers[0], "--out", out, "--backend", "inductor", "--python",
                           env.python, *([case.check] if case.check else []), "--json"], capture_output=True, text=True, timeout=1700)
    expect(done.returncode == 0, f"minify run exits {done.returncode}: {done.stdout}\n{done.stderr[-3000:]}")
    summary = json.loads(done.stdout)
    check_minimized(env, case, out, summary["signature"])


SCENARIOS = {f"{name}.{route.__name__}": (lambda env, name=name, route=route: route(env, name))
             for name in CASES for route in (capture, launcher)}

if __name__ == "__main__":
    run_scenarios(SCENARIOS, label="real")
