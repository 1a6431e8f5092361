# The original graph run the way its user meets the failure: after_aot's repro.py of the graph
# (after_aot_repro.write_repro, the file `minify run` leaves for the result) run by plain PyTorch in a
# fresh python, without the worker's sandbox, heap checks or calling convention. `minify run` calls
# main() in the run's --python once the sanity check found the original failing (docs/cli.md, "the plain
# check"); it prints how the repro ended as one JSON object, and the coordinator judges it against the
# worker's verdict (daemon/run/plain_check.h).
import json
import os
import re
import signal
import subprocess
import sys
import time

# What of the repro's stderr comes back: its end, where Python prints the exception (a chained one's
# causes above it) and glibc its heap-check message.
STDERR_TAIL_BYTES = 8192
# A failed device-side assert prints a line per GPU thread that hit it (CUDA's "block: [3,0,0], thread:
# [63,0,0] Assertion `...` failed."), flushed as the process ends, after Python's traceback: a few hundred
# of them pushed the traceback out of the tail (blocks_cuda's plain check on an H200 then "differed" from
# the worker's cuda_error). They come back as the first of them and a count.
DEVICE_ASSERT_LINE = re.compile(rb"block: \[\d+,\d+,\d+\], thread: \[\d+,\d+,\d+\] Assertion .* failed\.")

# The repro's python, started before the repro is written so that its imports (seconds: 2 on a 2-core
# machine for torch, 4 on the GPU machine, and 0.7 more for after_aot's) run beside the writer's instead
# of after it. It imports only modules that repro.py imports before it compiles anything: torch (its
# prelude's, after_aot_repro.PRELUDE: math's inf and nan, signal, then torch), the modules PyTorch's
# generator imports at its top, and run_repro's after_aot, which its __main__ block imports after setting
# the config values it records (none of them read at import). It then reads the repro's path from stdin
# and runs it as `python repro.py` does: as __main__ in its directory, that directory first on sys.path,
# its path as argv[0]; an exception it raises ends this python with its traceback and status 1, a
# signal by that signal. An empty line runs nothing.
PRIMED_REPRO_PYTHON = """
import os, runpy, sys
import torch
import torch.fx
import torch._dynamo.testing
import torch._inductor.inductor_prims
import torch._dynamo.repro.after_aot
path = sys.stdin.readline().strip()
if path:
    os.chdir(os.path.dirname(path))
    sys.argv = [path]
    sys.path[0] = os.path.dirname(path)
    runpy.run_path(path, run_name="__main__")
"""


def start_primed_python():
    """The repro's python, in its own session (so a timeout kills what it starts too), importing torch."""
    return subprocess.Popen([sys.executable, "-c", PRIMED_REPRO_PYTHON], stdin=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)


def run_repro(process, path, started, timeout):
    """Has the primed python run path: how it ended, timeout seconds after started (its start included)."""
    try:
        _, stderr = process.communicate((path + "\n").encode(), timeout=max(0.0, timeout - (time.monotonic() - started)))
        timed_out = False
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        _, stderr = process.communicate()
        timed_out = True
    code = process.returncode
    text = _device_asserts_counted(stderr)[-STDERR_TAIL_BYTES:].decode(errors="replace")
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return {"exit": code if code >= 0 and not timed_out else None,
            "signal": signal.Signals(-code).name if code < 0 and not timed_out else None,
            "timed_out": timed_out, "seconds": time.monotonic() - started,
            "stderr_tail": text, "last_line": lines[-1] if lines else ""}


def _device_asserts_counted(stderr):
    """stderr with its device-side assert lines (DEVICE_ASSERT_LINE) after the first dropped, that first
    one saying how many more there were."""
    lines = stderr.split(b"\n")
    asserts = [index for index, line in enumerate(lines) if DEVICE_ASSERT_LINE.search(line)]
    if len(asserts) < 2:
        return stderr
    dropped = set(asserts[1:])
    lines[asserts[0]] += f" (and {len(dropped)} more such lines, one per GPU thread)".encode()
    return b"\n".join(line for index, line in enumerate(lines) if index not in dropped)


def check(process, started):
    """Writes the repro of the graph directory the arguments name and has process run it: 0, or the
    writer's status."""
    from minifyd import after_aot_repro  # imported beside the primed python's torch
    parser = after_aot_repro.repro_parser("Run a graph directory's after_aot repro.py in plain PyTorch; repro.py "
                                          "and repro_inputs/ are written into the graph directory.")
    parser.add_argument("--timeout", type=float, required=True, help="seconds before the repro counts as hung")
    args = parser.parse_args()
    path = os.path.join(os.path.abspath(args.graph_dir), "repro.py")
    written = after_aot_repro.write_repro_of(args, path)
    if written:
        return written
    print(json.dumps(run_repro(process, path, started, args.timeout)))
    return 0


def main():
    started = time.monotonic()
    process = start_primed_python()
    try:
        return check(process, started)
    finally:
        if process.poll() is None:  # the repro was not run (no repro written, bad arguments)
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
