# minify run against PyTorch's own minifier on the real Inductor bugs of tests/real/cases.py, side by
# side in one run (docs/benchmarks.md, "Real bugs"). For each case, both sides start from the same
# file: the minifier_launcher.py PyTorch writes when the case's user script runs under
# TORCHDYNAMO_REPRO_AFTER=aot (at the case's repro level). The peer runs it as its users do,
# `python minifier_launcher.py` (isolated, one fresh python per query); ours is
# `minify run minifier_launcher.py --backend inductor` (with --accuracy for an accuracy bug). Each
# side's final nodes (placeholders and output included, as PyTorch counts them), queries, wall time
# and peak memory (the largest process of its tree).
#   /usr/bin/python3 bench/real_bugs_comparison.py --minify build/daemon/minify \
#       --python "$(scripts/torch2_env.sh)" --work /tmp/real-bench [--cases outer_loop_keyerror,...]
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "real"))
from cases import CASES, launcher_env, minify_options, model_path  # noqa: E402
from inductor_minifier_comparison import add_row, minify_run_row, run_peer_launcher  # noqa: E402


def write_launcher(python, run_dir, case):
    """The minifier_launcher.py PyTorch writes for the case's script, in a fresh run_dir; None if none."""
    shutil.rmtree(run_dir, ignore_errors=True)
    os.makedirs(run_dir)
    subprocess.run([python, model_path(case)], cwd=run_dir, capture_output=True, env=launcher_env(case))
    launchers = glob.glob(os.path.join(run_dir, "torch_compile_debug", "run_*", "minifier", "minifier_launcher.py"))
    return launchers[0] if len(launchers) == 1 else None


def with_nan_imported(launcher):
    """PyTorch 2.6's generator imports `inf` but not `nan`, which a graph's code may use (FX's globals
    provide both): such a launcher stops at once with `NameError: name 'nan' is not defined`. The user's
    fix, the import, is prepended to the peer's copy, so that the peer is measured on the minimization."""
    with open(launcher) as f:
        source = f.read()
    if "nan" in source and "import nan" not in source:
        with open(launcher, "w") as f:
            f.write("from math import nan  # noqa: F401  (added by bench/real_bugs_comparison.py)\n" + source)
    return launcher


def ours(minify, python, work, name, case, launcher):
    out = os.path.join(work, f"ours-{name}")
    shutil.rmtree(out, ignore_errors=True)
    command = [minify, "run", launcher, "--out", out, "--backend", "inductor", "--python", python, "--json",
               *minify_options(case)]
    return minify_run_row(command, work)


def main():
    parser = argparse.ArgumentParser(description="minify run against PyTorch's own minifier on real Inductor bugs")
    parser.add_argument("--minify", required=True, help="our minify binary")
    parser.add_argument("--python", required=True, help="the PyTorch 2.x python both sides use")
    parser.add_argument("--work", required=True)
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--peer-timeout", type=float, default=1800, help="stop the peer's minifier after this many seconds")
    parser.add_argument("--sides", default="ours,peer", help="which sides to run, of ours and peer")
    args = parser.parse_args()
    minify = os.path.abspath(args.minify)
    os.makedirs(args.work, exist_ok=True)
    rows = []
    for name in args.cases.split(","):
        case = CASES[name]
        row = {"case": name, "kind": case.kind, "graph": case.graph}
        for side in args.sides.split(","):
            # Each side gets a launcher of its own: the peer writes its checkpoints beside it.
            launcher = write_launcher(args.python, os.path.join(args.work, f"{side}-{name}-run"), case)
            if launcher is None:
                row[side] = {"error": "the script's run wrote no single minifier_launcher.py"}
            elif side == "ours":
                row[side] = ours(minify, args.python, args.work, name, case, launcher)
            else:
                row[side] = run_peer_launcher(args.python, with_nan_imported(launcher), args.peer_timeout)
        add_row(args.work, rows, row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
