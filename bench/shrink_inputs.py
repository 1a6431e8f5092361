# `minify run --shrink-inputs` on the real-bug corpus and on resnet18's injected bugs (docs/benchmarks.md
# "Smallest inputs"): what a repro carries before and after, and what the shrinking costs. Each real
# bug's user script is minified the way its user would (`minify capture --run --shrink-inputs -- python
# SCRIPT`); the figures come from the run's checkpoint: the stored bytes of the original graph (what
# PyTorch's minifier_launcher.py stores for it), of the minimized graph (what PyTorch's own minifier's
# repro would store for the same graph) and after the shrinking, the sizes it found, each tensor's fate,
# the shrinking's candidates and wall time against the whole command's.
#   /usr/bin/python3 bench/shrink_inputs.py --minify build/daemon/minify \
#       --python "$(scripts/torch2_env.sh)" --work /tmp/shrink-bench [--cases int64_shift,resnet18_runtime_error]
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
RESNET18 = os.path.join(ROOT, "scripts", "examples", "resnet18.py")
# resnet18 with Inductor's injected bugs, as backend options.
INJECTED = {f"resnet18_{bug}": bug for bug in ("compile_error", "runtime_error", "accuracy")}


def run_case(minify, python, name, work):
    """The case minified with --shrink-inputs: its checkpoint's figures and the minify command's wall time.
    A real bug's script goes through `minify capture --run`; resnet18, a script that only defines the
    model, is exported as AOT autograd hands it to Inductor and given to `minify run` with the bug."""
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    environment = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}
    if name in INJECTED:
        graph = os.path.join(work, "graph")
        subprocess.run([python, os.path.join(ROOT, "scripts", "export_fx.py"), RESNET18, "--aot", "--out", graph],
                       check=True, capture_output=True, timeout=600, env=environment)
        command = [minify, "run", graph, "--out", os.path.join(work, "minified"), "--backend", "inductor",
                   "--backend-opt", f"{INJECTED_BUG}={INJECTED[name]}",
                   *(["--accuracy"] if INJECTED[name] == "accuracy" else [])]
        pattern = os.path.join(work, "minified", "checkpoint.json")
    else:
        command = [minify, "capture", "--run", "--out", os.path.join(work, "captured"),
                   *minify_options(CASES[name]), "--", python, model_path(CASES[name])]
        pattern = os.path.join(work, "captured", "*", "minified", "checkpoint.json")
    started = time.perf_counter()
    subprocess.run([*command[:2], "--shrink-inputs", "--python", python, *command[2:]],
                   capture_output=True, text=True, timeout=3600, cwd=work, env=environment)
    wall = time.perf_counter() - started
    found = sorted(glob.glob(pattern))
    if not found:
        return {"case": name, "error": "no graph minified", "wall_seconds": wall}
    with open(found[0]) as f:
        checkpoint = json.load(f)
    shrink = checkpoint.get("input_shrink") or {"error": "no input_shrink in the checkpoint"}
    return {"case": name, "wall_seconds": wall, "original": checkpoint.get("original_data"), "shrink": shrink}


def row(result):
    if "error" in result or result["shrink"].get("error"):
        return f"| {result['case']} | {result.get('error') or result['shrink']['error']} | | | | | |"
    shrink = result["shrink"]
    fates = "; ".join(f"{s['tensor']}: {s.get('replaced_by') or 'stored'}" for s in shrink["storages"]) or "-"
    return (f"| {result['case']} | {result['original']['stored_bytes']} | {shrink['before']['stored_bytes']} | "
            f"{shrink['after']['stored_bytes']} | {shrink['shapes']} | {fates} | {shrink['queries']} in "
            f"{shrink['wall_seconds']:.1f} s of {result['wall_seconds']:.0f} s |")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--minify", required=True)
    parser.add_argument("--python", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--cases", help="comma-separated (default: the CPU cases and resnet18's bugs)")
    args = parser.parse_args()
    names = args.cases.split(",") if args.cases else \
        [name for name, case in CASES.items() if case.device == "cpu"] + list(INJECTED)
    print("| case | original (B) | minimized (B) | shrunk (B) | shapes | each stored tensor | shrinking |")
    print("|---|---|---|---|---|---|---|")
    for name in names:
        result = run_case(os.path.abspath(args.minify), args.python, name, os.path.join(args.work, name))
        print(row(result), flush=True)
        print(json.dumps(result), file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
