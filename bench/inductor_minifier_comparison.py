# minify run --backend inductor against PyTorch's own minifier on Inductor's injected relu bugs,
# side by side in one run (docs/benchmarks.md, "Inductor"). For each model and bug:
#   the peer, as its users run it: the model compiled with torch.compile under
#     TORCHDYNAMO_REPRO_AFTER=aot (the repro level PyTorch's test_minifier uses for the bug), which
#     writes minifier_launcher.py; then `python minifier_launcher.py` (its default: minify, isolated,
#     one fresh python per query);
#   ours: the same model's forward graph as AOT autograd hands it to Inductor (export_fx --aot), then
#     `minify run --backend inductor` with the bug's config line as a backend option;
#   ours-analyze-first (with --sides): the same with --analyze-first, its analysis's requests and
#     first divergence from checkpoint.json.
# Each side's final nodes, queries, wall time and peak memory (the largest process of its tree).
#   /usr/bin/python3 bench/inductor_minifier_comparison.py --minify build/daemon/minify \
#       --python "$(scripts/torch2_env.sh)" --work /tmp/inductor-bench [--cases chain:compile_error,...]
# On a GPU host, the chain on cuda with Triton's injected bug (both sides on GPU 0):
#   python3 bench/inductor_minifier_comparison.py --minify build-gpu/daemon/minify --python python3 \
#       --work /tmp/inductor-bench --cases chain_cuda:runtime_error --peer-timeout 500
import argparse
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import query_breakdown

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
MODELS = {"chain": os.path.join(ROOT, "tests", "inductor", "models", "chain200.py"),
          "resnet18": os.path.join(ROOT, "scripts", "examples", "resnet18.py"),
          "chain_cuda": os.path.join(ROOT, "tests", "inductor", "models", "chain200_cuda.py"),
          "resnet18_cuda": os.path.join(HERE, "models", "resnet18_cuda.py"),
          # Models of users the project had not run before (bench/models/), on the CPU and, with the
          # suffix _cuda, on the GPU.
          **{f"{name}{suffix}": os.path.join(HERE, "models", f"{name}.py")
             for name in ("convnet", "blocks") for suffix in ("", "_cuda")}}


def model_env(model):
    """The environment that puts a bench/models model on its device."""
    return {"MINIFYD_BENCH_DEVICE": "cuda" if model.endswith("_cuda") else "cpu"}
BUGS = ("compile_error", "runtime_error", "accuracy")
# TORCHDYNAMO_REPRO_LEVEL as PyTorch's test_minifier sets it: 2 dumps the launcher when compiling or
# running fails, 3 before compiling (a run that aborts leaves nothing behind otherwise), 4 checks accuracy.
REPRO_LEVEL = {"compile_error": "2", "runtime_error": "3", "accuracy": "4"}
USER_RUN = """import importlib.util, sys, torch, torch._inductor.config
torch._inductor.config.{bug_option} = {bug!r}
spec = importlib.util.spec_from_file_location("model", {model!r})
module = importlib.util.module_from_spec(spec)
sys.path.insert(0, {model_dir!r})
spec.loader.exec_module(module)
fn, inputs = module.make()
with torch.no_grad():
    torch.compile(fn)(*inputs)
"""


def bug_option(model):
    """The Inductor config key that injects the relu bug: into C++ kernels on the CPU, Triton's on cuda."""
    return f"{'triton' if model.endswith('_cuda') else 'cpp'}.inject_relu_bug_TESTING_ONLY"


def timed(command, cwd, env=None, timeout=None):
    """(exit status, stdout, stderr, seconds, peak RSS in MiB of the command's process tree); a
    command still running after `timeout` seconds is killed with its process group (exit None).
    stderr goes to cwd/stderr.log as it is written, so a long run's progress can be followed."""
    started = time.perf_counter()
    log_path = os.path.join(cwd, "stderr.log")
    with open(log_path, "w") as log:
        process = subprocess.Popen(["/usr/bin/time", "-f", "%M", *command], cwd=cwd, stdout=subprocess.PIPE,
                                   stderr=log, text=True, env={**os.environ, **(env or {})},
                                   start_new_session=True)
        try:
            stdout, _ = process.communicate(timeout=timeout)
            code = process.returncode
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            stdout, _ = process.communicate()
            code = None
    seconds = time.perf_counter() - started
    with open(log_path) as log:
        lines = log.read().rstrip().splitlines()
    peak_kib = int(lines[-1]) if code is not None and lines and lines[-1].isdigit() else 0
    return code, stdout, "\n".join(lines[:-1] if peak_kib else lines), seconds, peak_kib / 1024


def cold_caches(work, name):
    """The environment of a run that starts with empty Inductor caches of its own: its TMPDIR, which
    our workers inherit and under which Inductor keeps its on-disk caches (torchinductor_$USER)."""
    tmp = os.path.join(work, "tmp-" + name)
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    return {"TMPDIR": tmp}


def write_launcher(python, run_dir, model_path, option, bug, env=None):
    """The minifier_launcher.py PyTorch writes when model_path's make() runs under torch.compile with
    the injected bug (option = bug) and TORCHDYNAMO_REPRO_AFTER=aot, in a fresh run_dir; None if
    it wrote none."""
    shutil.rmtree(run_dir, ignore_errors=True)
    os.makedirs(run_dir)
    with open(os.path.join(run_dir, "user_run.py"), "w") as f:
        f.write(USER_RUN.format(bug_option=option, bug=bug, model=model_path, model_dir=os.path.dirname(model_path)))
    subprocess.run([python, "user_run.py"], cwd=run_dir, capture_output=True,
                   env={**os.environ, **(env or {}), "TORCHDYNAMO_REPRO_AFTER": "aot",
                        "TORCHDYNAMO_REPRO_LEVEL": REPRO_LEVEL[bug]})
    launchers = glob.glob(os.path.join(run_dir, "torch_compile_debug", "run_*", "minifier", "minifier_launcher.py"))
    return launchers[0] if launchers else None


def peer(python, work, model, bug, timeout, env=None):
    launcher = write_launcher(python, os.path.join(work, f"peer-{model}-{bug}"), MODELS[model], bug_option(model), bug,
                              {**model_env(model), **(env or {})})
    if launcher is None:
        return {"error": "the user's run wrote no minifier_launcher.py"}
    return run_peer_launcher(python, launcher, timeout, env)


def run_peer_launcher(python, launcher, timeout, env=None):
    """PyTorch's minifier as its users run it, `python minifier_launcher.py` (isolated, its default): its
    final nodes, queries, wall time and peak memory, from what it prints."""
    code, _, stderr, seconds, peak = timed([python, launcher], os.path.dirname(launcher), env=env, timeout=timeout)
    queries = re.findall(r"Made (\d+) queries", stderr)
    nodes = re.findall(r"Writing checkpoint with (\d+) nodes", stderr)
    row = {"exit": code, "queries": int(queries[-1]) if queries else None,
           "final_nodes": int(nodes[-1]) if nodes else None, "seconds": round(seconds, 1), "peak_mib": round(peak)}
    if code is None:
        # Stopped unfinished: its wall time is at least this, at the size its last step reached.
        row["stopped_unfinished"] = True
        row["nodes_so_far"] = ([int(n) for n in re.findall(r"Went from \d+ to (\d+) nodes", stderr)] or [None])[-1]
    return row


def minify_run_row(command, cwd, env=None):
    """`minify run ... --json` timed: its exit, queries, nodes at start and end, wall time, peak memory,
    timeouts and failure."""
    code, stdout, stderr, seconds, peak = timed(command, cwd, env=env)
    summary = json.loads(stdout) if stdout.strip() else {}
    return {"exit": code, "queries": summary.get("queries"), "start_nodes": summary.get("start_nodes"),
            "final_nodes": summary.get("nodes"), "seconds": round(seconds, 1), "peak_mib": round(peak),
            "timeouts": summary.get("timeouts"), "failure": summary.get("failure", stderr[-300:])}


def add_row(work, rows, row):
    """Keeps a case's row, prints it, and writes results.json anew: a sitting cut short keeps what it measured."""
    rows.append(row)
    print(json.dumps(row), flush=True)
    with open(os.path.join(work, "results.json"), "w") as f:
        json.dump(rows, f, indent=1)


def ours(minify, python, work, model, bug, gpu_workers, analyze_first=False, extra=(), env=None):
    graph = os.path.join(work, f"graph-{model}")
    if not os.path.isfile(os.path.join(graph, "graph.json")):
        subprocess.run([python, os.path.join(ROOT, "scripts", "export_fx.py"), MODELS[model], "--aot", "--out", graph],
                       check=True, capture_output=True, env={**os.environ, **model_env(model)})
    out = os.path.join(work, f"ours-{model}-{bug}{'-analyze-first' if analyze_first else ''}")
    shutil.rmtree(out, ignore_errors=True)
    timeline = out + ".timeline.jsonl"
    command = [minify, "run", graph, "--out", out, "--backend", "inductor", "--python", python,
               "--backend-opt", f"{bug_option(model)}={bug}", "--json", "--timeline", timeline]
    if model.endswith("_cuda"):
        command += ["--gpus", "0", "--workers-per-gpu", str(gpu_workers)]
    if bug == "accuracy":
        command.append("--accuracy")
    if analyze_first:
        command.append("--analyze-first")
    row = minify_run_row(command + list(extra), work, env)
    if os.path.isfile(timeline):
        row["breakdown"] = query_breakdown.breakdown(timeline)
        print(query_breakdown.render(row["breakdown"]), file=sys.stderr, flush=True)
    if analyze_first and os.path.isfile(os.path.join(out, "checkpoint.json")):
        with open(os.path.join(out, "checkpoint.json")) as f:
            checkpoint = json.load(f)
        analysis = checkpoint.get("analysis") or {}
        row.update({"first_divergence": analysis.get("first_divergence"),
                    "analysis_requests": analysis.get("requests"), "analysis_seconds": analysis.get("seconds"),
                    "first_step": checkpoint["steps"][0]["strategy"] if checkpoint["steps"] else None})
    return row


def main():
    parser = argparse.ArgumentParser(description="minify run --backend inductor against PyTorch's own minifier")
    parser.add_argument("--minify", help="our minify binary (needed for the side ours)")
    parser.add_argument("--python", required=True, help="the PyTorch 2.x python both sides use")
    parser.add_argument("--work", required=True)
    parser.add_argument("--cases", default=",".join(f"{m}:{b}" for m in ("chain", "resnet18") for b in BUGS))
    parser.add_argument("--peer-timeout", type=float, help="stop the peer's minifier after this many seconds")
    parser.add_argument("--gpu-workers", type=int, default=2, help="our workers on the GPU for *_cuda models")
    parser.add_argument("--ours-args", default="", help="more arguments for our minify run, space-separated")
    parser.add_argument("--cold-caches", action="store_true",
                        help="every run starts with empty Inductor caches of its own (else both sides share the "
                             "default ones, which earlier runs warmed)")
    parser.add_argument("--sides", default="ours,peer",
                        help="which sides to run, of ours, ours-analyze-first (minify run --analyze-first) and peer "
                             "(one, where a host's time limit per command cannot hold both)")
    args = parser.parse_args()
    if {"ours", "ours-analyze-first"} & set(args.sides.split(",")):
        if not args.minify:
            parser.error("--minify is needed to run the side ours")
        args.minify = os.path.abspath(args.minify)
    # Each side runs in a directory of its own under it, and names its files from there.
    args.work = os.path.abspath(args.work)
    os.makedirs(args.work, exist_ok=True)
    rows = []
    for case in args.cases.split(","):
        model, bug = case.split(":")
        sides = args.sides.split(",")
        row = {"case": case}
        if "ours" in sides:
            row["ours"] = ours(args.minify, args.python, args.work, model, bug, args.gpu_workers,
                               extra=args.ours_args.split(),
                               env=cold_caches(args.work, f"ours-{model}-{bug}") if args.cold_caches else None)
        if "ours-analyze-first" in sides:
            row["ours_analyze_first"] = ours(args.minify, args.python, args.work, model, bug, args.gpu_workers, True)
        if "peer" in sides:
            row["peer"] = peer(args.python, args.work, model, bug, args.peer_timeout,
                               cold_caches(args.work, f"peer-{model}-{bug}") if args.cold_caches else None)
        add_row(args.work, rows, row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
