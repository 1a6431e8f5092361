# Shared harness of the GPU repro scripts in this folder: CUDA check and set-up, compiled calls, RESULT lines.
"""Each script runs as `python3 SCRIPT`, so this folder is sys.path[0] and `import probe` finds this
file. A script calls setup(NAME) first and ends by printing exactly one line
    RESULT NAME: REPRODUCED <what>    or    RESULT NAME: NOT REPRODUCED <what>
and exiting 0 (run_all.sh collects those lines)."""
import os
import subprocess
import sys

import torch

NAME = None
CHILD_FLAG = "--child"


def result(ok, msg):
    """Prints the script's RESULT line and exits 0."""
    print(f"RESULT {NAME}: {'REPRODUCED' if ok else 'NOT REPRODUCED'} {msg}")
    sys.exit(0)


def report(wrong, what, diff=0, clean=None):
    """Ends the script: REPRODUCED `what` when `wrong`, else NOT REPRODUCED `clean`
    (default: compiled matches eager, with the max abs diff `diff`)."""
    if wrong:
        result(True, what)
    result(False, clean if clean is not None else f"compiled matches eager (max abs diff {diff:.4g})")


def setup(name):
    """Names the RESULT line; without a CUDA device ends with NOT REPRODUCED (no CUDA device). Else
    seeds torch with 0, disables inductor's caches (a warm cache could hide the bug) and prints the
    torch version and device."""
    global NAME
    NAME = name
    if not torch.cuda.is_available():
        result(False, "(no CUDA device)")
    torch.manual_seed(0)
    torch._inductor.config.force_disable_caches = True
    print("torch", torch.__version__, "device", torch.cuda.get_device_name(), flush=True)


def first_line(e):
    return str(e).splitlines()[0] if str(e) else ""


def key_line(e, needle=""):
    """The first non-blank line of the exception's message holding `needle`, else its first non-blank
    line (stripped)."""
    lines = [l for l in str(e).splitlines() if l.strip()]
    return next((l for l in lines if needle in l), lines[0] if lines else "").strip()


def call(f, *args):
    """f(*args), then a CUDA synchronize; an exception ends with NOT REPRODUCED (unexpected exception)."""
    try:
        out = f(*args)
        torch.cuda.synchronize()
    except Exception as e:
        result(False, f"(unexpected exception {type(e).__name__}: {first_line(e)})")
    return out


def compiled(fn, *args, **options):
    """torch.compile(fn, backend="inductor", **options)(*args) through call()."""
    return call(lambda: torch.compile(fn, backend="inductor", **options)(*args))


def eager_vs_compiled(fn, *args):
    """fn(*args) in eager, then through compiled(); prints both as lists and returns
    (eager, compiled, max abs diff)."""
    eager = fn(*args)
    comp = compiled(fn, *args)
    print("eager   :", eager.tolist())
    print("compiled:", comp.tolist())
    return eager, comp, (eager - comp).abs().max().item()


def is_child():
    return CHILD_FLAG in sys.argv[1:]


def run_child(timeout):
    """Runs this script again as `python3 SCRIPT --child` (for a compile that may hang or kill the
    process) and prints the last 15 lines of its output. A timeout ends with
    NOT REPRODUCED (child timed out). Returns (exit status, stdout + stderr)."""
    try:
        p = subprocess.run([sys.executable, os.path.abspath(sys.argv[0]), CHILD_FLAG], capture_output=True,
                           text=True, timeout=timeout, env=dict(os.environ))
    except subprocess.TimeoutExpired:
        result(False, f"(child timed out after {timeout} s)")
    out = (p.stdout or "") + (p.stderr or "")
    print("\n".join(out.strip().splitlines()[-15:]))
    return p.returncode, out
