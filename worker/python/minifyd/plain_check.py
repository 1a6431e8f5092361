# The original graph run the way its user meets the failure: after_aot's repro.py of the graph
# (after_aot_repro.write_repro, the file `minify run` leaves for the result) run by plain PyTorch in a
# fresh python, without the worker's sandbox, heap checks or calling convention. `minify run` calls
# main() in the run's --python beside the sanity check (docs/cli.md, "the plain check"); it prints how the repro ended as one JSON object, and the coordinator judges it against the
# worker's verdict (daemon/run/plain_check.h).
import contextlib
import io
import json
import os
import re
import signal
import subprocess
import sys
import time
import traceback

from minifyd import repro_arguments

# What of the repro's stderr comes back: its end, where Python prints the exception (a chained one's
# causes above it) and glibc its heap-check message.
STDERR_TAIL_BYTES = 8192
# A failed device-side assert prints a line per GPU thread that hit it (CUDA's "block: [3,0,0], thread:
# [63,0,0] Assertion `...` failed."), flushed as the process ends, after Python's traceback: a few hundred
# of them pushed the traceback out of the tail (blocks_cuda's plain check on an H200 then "differed" from
# the worker's cuda_error). They come back as the first of them and a count.
DEVICE_ASSERT_LINE = re.compile(rb"block: \[\d+,\d+,\d+\], thread: \[\d+,\d+,\d+\] Assertion .* failed\.")

# The repro's python, started first so that its imports (seconds: 2 on a 2-core machine for torch, 4 on the
# GPU machine, and 0.7 more for after_aot's) run while nothing else of the check can. It imports only
# modules that repro.py imports before it compiles anything: torch (its prelude's, after_aot_repro.PRELUDE:
# math's inf and nan, signal, then torch), the modules PyTorch's generator imports at its top, and
# run_repro's after_aot, which its __main__ block imports after setting the config values it records
# (none of them read at import). A forked child of it then writes the repro (write_in_child), on its copy
# of those imports: the writer's own python, which imported torch beside this one, took a core's 1.7 s
# from the workers' start and the sanity check on a 2-core machine. The fork leaves this python's state
# as it was; once the child has written the repro, it runs it as `python repro.py` does: as __main__ in
# its directory, that directory first on sys.path, its path as argv[0]; an exception it raises ends this
# python with its traceback and status 1, a signal by that signal. Its arguments: minifyd's package
# directory, the status pipe's write end, the repro's path and the plain check's own arguments.
PRIMED_REPRO_PYTHON = """
import os, runpy, sys
import torch
import torch.fx
import torch._dynamo.testing
import torch._inductor.inductor_prims
import torch._dynamo.repro.after_aot
package_dir, status_fd, path, check_argv = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
writer = os.fork()
if writer == 0:
    sys.path.insert(0, package_dir)
    from minifyd.plain_check import write_in_child
    write_in_child(status_fd, path, check_argv)
os.close(status_fd)
if os.waitpid(writer, 0)[1] != 0:
    sys.exit(2)
os.chdir(os.path.dirname(path))
sys.argv = [path]
sys.path[0] = os.path.dirname(path)
runpy.run_path(path, run_name="__main__")
"""
# What the writer says on the status pipe when the repro is written; else why not (its end, at most
# STATUS_BYTES: a pipe's buffer holds it while nobody reads).
WRITTEN = "written"
STATUS_BYTES = 4096


def check_parser():
    parser = repro_arguments.repro_parser("Run a graph directory's after_aot repro.py in plain PyTorch; repro.py "
                                          "and repro_inputs/ are written into the graph directory.")
    parser.add_argument("--timeout", type=float, required=True, help="seconds before the repro counts as hung")
    return parser


def start_primed_python(status_fd, path, check_argv):
    """The repro's python (PRIMED_REPRO_PYTHON), in its own session (so a timeout kills what it starts too)."""
    package_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return subprocess.Popen([sys.executable, "-c", PRIMED_REPRO_PYTHON, package_dir, str(status_fd), path, *check_argv],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            pass_fds=(status_fd,), start_new_session=True)


def write_in_child(status_fd, path, check_argv):
    """In the primed python's forked child: writes the repro at path for the graph directory check_argv
    names, says WRITTEN or why not on status_fd, and ends the child. Its output goes nowhere: the
    primed python's stderr is the repro's."""
    code, status = 1, ""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        from minifyd import after_aot_repro
        said = io.StringIO()
        with contextlib.redirect_stderr(said):
            code = after_aot_repro.write_repro_of(check_parser().parse_args(check_argv), path)
        status = WRITTEN if code == 0 else said.getvalue().strip()
    except BaseException:  # the child must end here whatever happened, never run on as the repro's python
        status = traceback.format_exc()
    finally:
        try:
            os.write(status_fd, status.encode()[-STATUS_BYTES:])
        finally:
            os._exit(code)


def run_repro(process, started, timeout):
    """How the repro the started process runs ended, timeout seconds after started (its start included)."""
    try:
        _, stderr = process.communicate(timeout=max(0.0, timeout - (time.monotonic() - started)))
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


def _read_all(fd):
    with os.fdopen(fd, "rb") as f:
        return f.read().decode(errors="replace")


def main():
    """Writes the repro of the graph directory the arguments name and runs it: prints how it ended, 0; or
    2 with why it could not be written on stderr."""
    started = time.monotonic()
    args = check_parser().parse_args()
    path = os.path.join(os.path.abspath(args.graph_dir), "repro.py")
    status_read, status_write = os.pipe()
    try:
        process = start_primed_python(status_write, path, sys.argv[1:])
    finally:
        os.close(status_write)
    ran = run_repro(process, started, args.timeout)
    status = _read_all(status_read)
    if status != WRITTEN:
        ended = f"not written within {args.timeout:g} s" if ran["timed_out"] else "its writer ended without a word"
        print(status or f"repro.py for {args.graph_dir}: {ended}", file=sys.stderr)
        return 2
    print(json.dumps(ran))
    return 0
