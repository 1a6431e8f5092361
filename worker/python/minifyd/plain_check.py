# The original graph run the way its user meets the failure: after_aot's repro.py of the graph
# (after_aot_repro.write_repro, the file `minify run` leaves for the result) run by plain PyTorch in a
# fresh python, without the worker's sandbox, heap checks or calling convention. `minify run` calls
# main() in the run's --python once the sanity check found the original failing (docs/cli.md, "the plain
# check"); it prints how the repro ended as one JSON object, and the coordinator judges it against the
# worker's verdict (daemon/run/plain_check.h).
import json
import os
import signal
import subprocess
import sys
import time

from minifyd import after_aot_repro

# What of the repro's stderr comes back: its end, where Python prints the exception (a chained one's
# causes above it) and glibc its heap-check message.
STDERR_TAIL_BYTES = 8192


def run_repro(path, timeout):
    """Runs python path in its own session (so a timeout kills what it started too): how it ended."""
    started = time.monotonic()
    process = subprocess.Popen([sys.executable, path], cwd=os.path.dirname(path), stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        _, stderr = process.communicate(timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        _, stderr = process.communicate()
        timed_out = True
    code = process.returncode
    text = stderr[-STDERR_TAIL_BYTES:].decode(errors="replace")
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return {"exit": code if code >= 0 and not timed_out else None,
            "signal": signal.Signals(-code).name if code < 0 and not timed_out else None,
            "timed_out": timed_out, "seconds": time.monotonic() - started,
            "stderr_tail": text, "last_line": lines[-1] if lines else ""}


def main():
    parser = after_aot_repro.repro_parser("Run a graph directory's after_aot repro.py in plain PyTorch; repro.py "
                                          "and repro_inputs/ are written into the graph directory.")
    parser.add_argument("--timeout", type=float, required=True, help="seconds before the repro counts as hung")
    args = parser.parse_args()
    path = os.path.join(os.path.abspath(args.graph_dir), "repro.py")
    written = after_aot_repro.write_repro_of(args, path)
    if written:
        return written
    print(json.dumps(run_repro(path, args.timeout)))
    return 0
