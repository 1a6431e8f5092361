# Real Inductor bugs end to end (label real, cases.py): each case's user script minified the two ways
# a user brings it, with real Inductor in the PyTorch 2.x python:
#   CASE.capture   `minify capture --run -- python SCRIPT` (with --accuracy for an accuracy bug): the
#                  graph that failed in the script's own run, captured and minified;
#   CASE.launcher  the minifier_launcher.py PyTorch writes for the script's run under
#                  TORCHDYNAMO_REPRO_AFTER=aot, given to `minify run`.
# Either way the minimized graph fails as the case says (its signature), keeps no more nodes than
# PyTorch's own minifier does on the case, and its repro.py fails under plain PyTorch after the inputs were
# shrunk (--shrink-inputs: what stays stored is what the failure needs); with --bisect (a
# case whose cases.py names a bisect) the minimized graph's bisect names CompilerBisector's stage and
# subsystem. And
#   CASE.export    the graph `scripts/export_fx.py --aot` writes for the script's model and the graph
#                  `minify capture` takes from the script's run get the same verdict from `minify query`:
#                  the case's failure (a training step's bug: the exported forward graph passes, and the
#                  capture takes no forward graph).
# A cuda case skips where torch sees no GPU; its runs put 4 workers on GPU 0 (cases.GPU_WORKERS).
import glob
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "inductor"))
from harness import ROOT, call_nodes, expect, require_cuda, run_scenarios  # noqa: E402

from cases import CASES, launcher_env, minify_options, model_path  # noqa: E402

def run_options(env, case):
    """minify's options for the case (skipping a cuda case without a GPU)."""
    if case.device == "cuda":
        require_cuda(env)
    return minify_options(case)


def fresh_dir(env, name):
    path = os.path.join(env.work, name)
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def check_minimized(env, case, out, summary):
    """out holds the minimized graph of case, whose run's summary (or checkpoint) says it failed with the
    case's signature, the same way under plain PyTorch before the search; its repro.py fails there too."""
    signature = summary["signature"]
    expect(signature["kind"] == case.kind, f"{out}: signature {signature}, not a {case.kind}")
    expect(summary["plain_check"]["outcome"] == "fails", f"{out}: the plain check {summary['plain_check']}")
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
    if case.kind == "cuda_error":
        expect("CUDA error" in done.stderr, f"{out}/repro.py fails otherwise:\n{done.stderr[-2000:]}")
    print(f"{out}: {summary['start_nodes']} -> {nodes} nodes, {len(ops)} operators ({', '.join(ops)}), "
          f"{summary['queries']} queries, {summary['wall_seconds']:.1f} s, {signature}")


def check_bisect(case, out):
    """The bisect of the minimized graph (--bisect) names the stage and subsystem CompilerBisector names."""
    with open(os.path.join(out, "bisect.json")) as f:
        found = json.load(f)
    expect(not found.get("error") and (found["stage"], found["subsystem"]) == case.bisect,
           f"{out}: the bisect found {found.get('error') or (found['stage'], found['subsystem'])}, not {case.bisect}")
    print(f"{out}: bisect {found['stage']} / {found['subsystem']} ({found.get('debug_info')}), "
          f"{len(found['probes'])} probes, {found['wall_seconds']:.1f} s")


def run_extras(case):
    """Every route shrinks the minimized graph's inputs; a case whose cases.py names a bisect bisects it."""
    return ["--shrink-inputs", *(["--bisect"] if case.bisect else [])]


def check_shrunk(case, out):
    """The shrinking finished and stored no more than before; the repro check_minimized runs fails with
    what stayed stored (an accuracy bug's values its divergence needs) and the rest made by repro.py. A
    crash keeps its sizes (a heap overflow at smaller ones corrupts less than plain PyTorch notices)."""
    with open(os.path.join(out, "checkpoint.json")) as f:
        shrink = json.load(f)["input_shrink"]
    expect(not shrink.get("error") and shrink["after"]["stored_bytes"] <= shrink["before"]["stored_bytes"],
           f"{out}: the shrinking {shrink}")
    expect(case.kind != "crash" or shrink["shapes"].startswith("kept: a crash"),
           f"{out}: a crash's sizes {shrink['shapes']}")
    fates = [f"{s['tensor']}: {s.get('replaced_by') or 'stored'}" for s in shrink["storages"]]
    print(f"{out}: stored data {shrink['before']['stored_bytes']} -> {shrink['after']['stored_bytes']} B "
          f"({'; '.join(fates)}), {shrink['queries']} candidates, {shrink['wall_seconds']:.1f} s")


def read_summary(out):
    """The figures of `minify run --json`'s summary that check_minimized reads, from out's checkpoint."""
    with open(os.path.join(out, "checkpoint.json")) as f:
        checkpoint = json.load(f)
    return {"signature": checkpoint["signature"], "plain_check": checkpoint["plain_check"],
            "start_nodes": checkpoint["original"]["nodes"], **checkpoint["totals"]}


def run_capture(env, case, work, *run):
    """`minify capture [--run] ... -- python SCRIPT` in work: its stderr, after the script failed."""
    done = subprocess.run([env.minify, "capture", *run, "--out", os.path.join(work, "captured"), "--python",
                           env.python, *run_options(env, case), "--", env.python, model_path(case)],
                          capture_output=True, text=True, timeout=1700, cwd=work)
    expect(done.returncode != 0, f"the script passes under the capture (exit 0):\n{done.stderr[-3000:]}")
    return done.stderr


def capture(env, name):
    case = CASES[name]
    work = fresh_dir(env, f"{name}-capture")
    stderr = run_capture(env, case, work, "--run", *run_extras(case))
    minimized = re.findall(r"minify capture: (\S+): minimized to (\d+) nodes in (\d+) queries, repro (\S+)", stderr)
    expect(len(minimized) == 1, f"not one graph captured and minimized:\n{stderr[-3000:]}")
    graph = minimized[0][0]
    with open(os.path.join(graph, "origin.json")) as f:
        origin = json.load(f)
    expect(origin["backward"] == (case.graph == "backward"), f"{graph}: origin.json {origin}, not a {case.graph} graph")
    out = os.path.join(graph, "minified")
    check_shrunk(case, out)
    check_minimized(env, case, out, read_summary(out))
    if case.bisect:
        check_bisect(case, out)


def launcher(env, name):
    case = CASES[name]
    options = run_options(env, case)
    work = fresh_dir(env, f"{name}-launcher")
    script = subprocess.run([env.python, model_path(case)], capture_output=True, text=True, timeout=900, cwd=work,
                            env=launcher_env(case))
    launchers = glob.glob(os.path.join(work, "torch_compile_debug", "run_*", "minifier", "minifier_launcher.py"))
    expect(len(launchers) == 1, f"the script's run wrote {len(launchers)} minifier_launcher.py:\n{script.stderr[-3000:]}")
    out = os.path.join(work, "minified")
    done = subprocess.run([env.minify, "run", launchers[0], "--out", out, "--backend", "inductor", "--python",
                           env.python, *options, *run_extras(case), "--json"], capture_output=True, text=True,
                          timeout=1700)
    expect(done.returncode == 0, f"minify run exits {done.returncode}: {done.stdout}\n{done.stderr[-3000:]}")
    check_shrunk(case, out)
    check_minimized(env, case, out, json.loads(done.stdout))
    if case.bisect:
        check_bisect(case, out)


def query(env, case, graph):
    """`minify query GRAPH` under the case's check: the verdict's signature fields, or None when it passes."""
    done = subprocess.run([env.minify, "query", graph, "--backend", "inductor", "--python", env.python,
                           *([case.check] if case.check else []), "--json"], capture_output=True, text=True,
                          timeout=1700)
    expect(done.returncode in (0, 1), f"minify query {graph} exits {done.returncode}:\n{done.stderr[-3000:]}")
    verdict = json.loads(done.stdout)["verdict"]
    print(f"{graph}: {json.loads(done.stdout)['summary']}")
    return None if done.returncode == 0 else {key: verdict.get(key) for key in ("kind", "exception_type", "raised_at",
                                                                              "signal")}


def export(env, name):
    case = CASES[name]
    run_options(env, case)  # skips a cuda case without a GPU
    work = fresh_dir(env, f"{name}-export")
    exported = os.path.join(work, "exported")
    done = subprocess.run([env.python, os.path.join(ROOT, "scripts", "export_fx.py"), model_path(case), "--aot",
                           "--out", exported], capture_output=True, text=True, timeout=900, cwd=work)
    expect(done.returncode == 0, f"export_fx.py --aot failed:\n{done.stderr[-3000:]}")
    stderr = run_capture(env, case, work)
    captured = {}
    for graph in re.findall(r"minify capture: (\S+): ", stderr):
        with open(os.path.join(graph, "origin.json")) as f:
            captured[graph] = json.load(f)["backward"]
    forward = [graph for graph, backward in captured.items() if not backward]
    expect(len(captured) == 1, f"not one graph captured: {captured}\n{stderr[-3000:]}")
    verdict = query(env, case, exported)
    if case.graph == "backward":
        expect(verdict is None and not forward, f"the exported forward graph fails ({verdict}) or one was captured")
        return
    expect(verdict is not None and verdict["kind"] == case.kind, f"the exported graph: {verdict}, not a {case.kind}")
    expect(len(forward) == 1 and query(env, case, forward[0]) == verdict,
           f"the captured graph's verdict differs from the exported graph's ({verdict})")


SCENARIOS = {f"{name}.{route.__name__}": (lambda env, name=name, route=route: route(env, name))
             for name in CASES for route in (capture, launcher, export)}

if __name__ == "__main__":
    run_scenarios(SCENARIOS, label="real")
