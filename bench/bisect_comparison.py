# `minify run --bisect` against PyTorch's CompilerBisector, side by side in one run (docs/bisect.md,
# docs/benchmarks.md "Bisect"). For each case both sides start from the user's script: the peer runs
# `CompilerBisector.do_bisect` on it as its users do (bench/compiler_bisector_run.py: one python, the
# program compiled and run afresh per probe); ours minimizes the graph the script's torch.compile
# fails on (`minify capture --run --bisect`) and bisects the minimized graph on the run's warm
# workers. Each side's answer (stage, subsystem, application's debug info), probes and wall time;
# ours also the whole minify command's (the search included).
#   /usr/bin/python3 bench/bisect_comparison.py --minify build/daemon/minify \
#       --python "$(scripts/torch2_env.sh)" --work /tmp/bisect-bench [--cases chain_compile_error,...]
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "real"))
from cases import CASES, minify_options, model_path  # noqa: E402

INJECTED_BUG = "cpp.inject_relu_bug_TESTING_ONLY"
# Inductor's injected bugs on the 200-operator chain (tests/inductor/models/chain200.py). The
# runtime_error aborts the process on the CPU (a throw in an OpenMP region), which takes
# CompilerBisector's in-process probes with it.
INJECTED = {f"chain_{bug}": bug for bug in ("compile_error", "runtime_error", "accuracy")}


def peer(python, script, options, timeout, cache_dir):
    """CompilerBisector on the script: its JSON line, or {"error": why}. Its Inductor cache directory is
    the bench's own, and its bisect/ state is removed after it: a run that dies (the crashing cases) leaves
    that state behind, and every later torch.compile in the same cache directory would follow it."""
    command = [python, os.path.join(HERE, "compiler_bisector_run.py"), script]
    for option in options:
        command += ["--backend-opt", option]
    started = time.perf_counter()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                              env={**os.environ, "TORCHINDUCTOR_CACHE_DIR": cache_dir})
    except subprocess.TimeoutExpired:
        return {"error": f"did not finish in {timeout} s", "wall_seconds": time.perf_counter() - started}
    finally:
        shutil.rmtree(os.path.join(cache_dir, "bisect"), ignore_errors=True)
    if done.returncode != 0:
        how = f"exit {done.returncode}" if done.returncode > 0 else f"killed by signal {-done.returncode}"
        return {"error": f"{how} (its probes run in its own process)", "wall_seconds": time.perf_counter() - started,
                "stderr": done.stderr[-500:]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def bisect_json(pattern, wall):
    found = glob.glob(pattern)
    if len(found) != 1:
        return {"error": f"{len(found)} bisect.json written", "run_seconds": wall}
    with open(found[0]) as f:
        return {**json.load(f), "run_seconds": wall}


def ours(minify, python, script, options, checks, work):
    """bisect.json of the minimized graph, and the wall time of the whole minify command: a user's script
    through `minify capture --run --bisect -- python SCRIPT`; the injected bugs' chain, a script that only
    defines the model, exported as AOT autograd hands it to Inductor and minimized with `minify run --bisect`."""
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    backend = ["--python", python, "--backend", "inductor", *checks]
    for option in options:
        backend += ["--backend-opt", option]
    if options:  # an injected bug
        graph = os.path.join(work, "graph")
        subprocess.run([python, os.path.join(ROOT, "scripts", "export_fx.py"), script, "--aot", "--out", graph],
                       check=True, capture_output=True, timeout=600)
        started = time.perf_counter()
        subprocess.run([minify, "run", graph, "--out", os.path.join(work, "minified"), "--bisect", *backend],
                       capture_output=True, text=True, timeout=3600)
        return bisect_json(os.path.join(work, "minified", "bisect.json"), time.perf_counter() - started)
    started = time.perf_counter()
    subprocess.run([minify, "capture", "--run", "--bisect", "--out", os.path.join(work, "captured"), *backend, "--",
                    python, script], capture_output=True, text=True, timeout=3600, cwd=work)
    return bisect_json(os.path.join(work, "captured", "*", "minified", "bisect.json"), time.perf_counter() - started)


def case_list(names):
    cases = {}
    for name in names:
        if name in INJECTED:
            script = os.path.join(ROOT, "tests", "inductor", "models", "chain200.py")
            options = [f"{INJECTED_BUG}={INJECTED[name]}"]
            cases[name] = (script, options, ["--accuracy"] if INJECTED[name] == "accuracy" else [])
        else:
            case = CASES[name]
            cases[name] = (model_path(case), [], minify_options(case))
    return cases


def answer_of_peer(row):
    result = row.get("result")
    if not result:
        return row.get("error", "no failure found")
    text = f"{result['backend']} / {result['subsystem']}" if result["subsystem"] else result["backend"]
    return text + (f" ({result['debug_info']})" if result.get("debug_info") else "")


def answer_of_ours(row):
    if "error" in row and "stage" not in row:
        return row["error"]
    text = f"{row['stage']} / {row['subsystem']}" if row.get("subsystem") else row["stage"]
    return text + (f" ({row['debug_info']})" if row.get("debug_info") else "")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--minify", required=True)
    parser.add_argument("--python", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--cases", default=",".join([*INJECTED, *(n for n, c in CASES.items() if c.device == "cpu")]))
    parser.add_argument("--peer-timeout", type=float, default=3600)
    args = parser.parse_args()
    rows = []
    for name, (script, options, checks) in case_list(args.cases.split(",")).items():
        theirs = peer(args.python, script, options, args.peer_timeout, os.path.join(args.work, "peer-inductor-cache"))
        mine = ours(args.minify, args.python, script, options, checks, os.path.join(args.work, name))
        row = {"case": name, "compiler_bisector": theirs, "minify": mine}
        rows.append(row)
        print(json.dumps(row), flush=True)
        print(f"| {name} | {answer_of_peer(theirs)} | {theirs.get('probes', '-')} | {theirs['wall_seconds']:.1f} s | "
              f"{answer_of_ours(mine)} | {len(mine.get('probes', []))} | {mine.get('wall_seconds', 0):.1f} s | "
              f"{mine.get('run_seconds', 0):.1f} s |", file=sys.stderr, flush=True)
    with open(os.path.join(args.work, "bisect_comparison.json"), "w") as f:
        json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
