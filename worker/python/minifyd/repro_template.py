#!/usr/bin/env python3
# repro.py: a standalone reproduction of a failing graph, written by `minify run` or by
# scripts/repro_from_graph.py (minifyd/repro_writer.py). It rebuilds the graph in a graph directory (graph.json + store/) as a
# torch.fx GraphModule, needs only torch, and checks the failure with the backend and the check the
# graph was minimized for (SETTINGS below):
#   eager, torchscript  reproduced with plain PyTorch in this process (torchscript: torch.jit.script
#                       of the GraphModule, or torch.jit.trace when scripting fails, run until the
#                       profiling executor has optimised and fused it, then compared with eager);
#   plugin:PATH.so      plain PyTorch cannot load the plugin, so this runs `minify query` on the graph
#                       directory (the minify executable below, or $MINIFY).
# Exit status: 1 when the failure reproduces, 0 when it does not, 2 when the check could not run; a
# crash in this process kills it by its signal. With --eager-only: run the graph and print its outputs.
#
# Every repro.py comes from one template, worker/python/minifyd/repro_template.py: its generators
# (daemon/run/repro_script.cpp, minifyd/repro_writer.py) put the loader part of
# minifyd/graph_format.py in place of the template's `from minifyd.graph_format import` line,
# minifyd/output_checks.py (the nan and accuracy checks every verdict uses) in place of its
# `from minifyd.output_checks import` line, and the repro's settings in place of its SETTINGS_JSON line.
import argparse
import faulthandler
import json
import os
import re
import shlex
import subprocess
import sys
import traceback

import torch

from minifyd.graph_format import FormatError, load_graph  # noqa: E402
from minifyd.output_checks import accuracy_failure, leaves, nan_failure, non_finite  # noqa: E402

# graph_dir: the graph directory; backend: eager, torchscript or plugin:/abs/path.so;
# backend_options: {KEY: VALUE}; accuracy: off, accuracy or strict-accuracy; nan_check: fail on
# NaN/Inf outputs from finite inputs; check_str: regex a failure's text must match (null: any);
# timeout_seconds: how long the check may take; minify: the `minify` executable, for plugins.
SETTINGS_JSON = '{"graph_dir": null, "backend": "eager", "backend_options": {}, "accuracy": "off", "nan_check": false, "check_str": null, "timeout_seconds": 60, "minify": null}'
SETTINGS = json.loads(SETTINGS_JSON)

def _describe(value):
    if not isinstance(value, torch.Tensor):
        return repr(value)
    total = value.detach().to(torch.complex128 if value.is_complex() else torch.float64).sum().item()
    return f"{str(value.dtype).replace('torch.', '')}{list(value.shape)} sum {total}"


def _print_outputs(outputs):
    for path, value in leaves(outputs, "output"):
        print(f"{path}: {_describe(value)}")


def _enable_optimising_executor(options):
    # As the worker's torchscript backend: what a scripted function gets (the profiling executor, the
    # TensorExpr fuser, which fuses on a GPU), and CPU fusion only with its option cpu_fusion=1.
    torch._C._jit_set_profiling_executor(True)
    torch._C._set_graph_executor_optimize(True)
    torch._C._jit_set_texpr_fuser_enabled(True)
    if options.get("cpu_fusion") in ("1", "true"):
        torch._C._jit_override_can_fuse_on_cpu(True)
        # Without LLVM (Debian's build) NNC runs fused CPU kernels in its IR interpreter (slow)
        # instead of refusing them; builds with LLVM still use LLVM.
        torch._C._jit_set_te_must_use_llvm_cpu(False)


def _torchscript(graph_dir, gm, inputs, options):
    """The outputs of gm on inputs, compiled with TorchScript and run until optimised."""
    _enable_optimising_executor(options)
    try:
        module = torch.jit.script(gm)
        print("compiled with torch.jit.script")
    except Exception as error:  # noqa: BLE001  (FX code with operator overloads does not script on every PyTorch)
        print(f"torch.jit.script failed ({type(error).__name__}: {str(error).strip().splitlines()[0]}), "
              "compiling with torch.jit.trace")
        module = torch.jit.trace(gm, tuple(load_graph(graph_dir)[1]), check_trace=False, strict=False)
    # The profiled runs, then the one that builds the optimised plan; each on fresh inputs, since
    # a run may write to its inputs in place.
    warmup = int(options.get("warmup", torch._C._jit_get_num_profiled_runs() + 1))
    for _ in range(warmup):
        module(*load_graph(graph_dir)[1])
    return module(*inputs)


def _failure(graph_dir, gm, inputs, settings, save_outputs):
    """The failure of the backend on gm and inputs (loaded from graph_dir), as one line, or None."""
    # Judged on the inputs as loaded: the run may write to them in place.
    check_nan = settings["nan_check"] and not any(non_finite(tensor) for tensor in inputs)
    try:
        if settings["backend"] == "torchscript":
            outputs = _torchscript(graph_dir, gm, inputs, settings["backend_options"])
        else:
            outputs = gm(*inputs)
    except FormatError:
        raise
    except Exception as error:  # noqa: BLE001  (an exception from the backend is the failure under study)
        traceback.print_exc()
        return f"exception {type(error).__name__}: {error}"
    _print_outputs(outputs)
    if save_outputs:
        torch.save(outputs, save_outputs)
    if check_nan:
        found = nan_failure(outputs)
        if found:
            return f"nan: {found}"
    if settings["accuracy"] != "off":
        found = accuracy_failure(lambda: load_graph(graph_dir), outputs, settings["accuracy"] == "strict-accuracy")
        if found:
            return f"accuracy: {found}"
    return None


def _minify_query(graph_dir, settings):
    """`minify query` of the graph directory with the plugin and the check; returns its exit status."""
    minify = os.environ.get("MINIFY") or settings["minify"]
    if not minify:
        print("repro.py: no minify executable: set MINIFY to its path", file=sys.stderr)
        return 2
    command = [minify, "query", graph_dir, "--backend", settings["backend"]]
    for key, value in sorted(settings["backend_options"].items()):
        command += ["--backend-opt", f"{key}={value}"]
    if settings["accuracy"] != "off":
        command.append(f"--{settings['accuracy']}")
    if settings["nan_check"]:
        command.append("--nan")
    if settings["check_str"] is not None:
        command += ["--check-str", settings["check_str"]]
    command += ["--timeout", str(settings["timeout_seconds"])]
    print("running:", " ".join(shlex.quote(part) for part in command), flush=True)
    try:
        return subprocess.run(command).returncode
    except OSError as error:
        print(f"repro.py: cannot run minify ({error}); set MINIFY to its path", file=sys.stderr)
        return 2


def main():
    parser = argparse.ArgumentParser(
        description=f"Reproduce the failure of a graph under backend {SETTINGS['backend']}: "
                    "exit 1 when it reproduces, 0 when it does not.")
    parser.add_argument("--graph-dir", default=SETTINGS["graph_dir"], required=SETTINGS["graph_dir"] is None,
                        help="graph directory (default: %(default)s)")
    parser.add_argument("--print-graph", action="store_true", help="print the graph's Python code")
    parser.add_argument("--eager-only", action="store_true", help="only run the graph with eager and print its outputs")
    parser.add_argument("--save-outputs", metavar="FILE",
                        help="torch.save() the outputs of the run in this process, as the graph returns them")
    args = parser.parse_args()
    settings = SETTINGS
    plugin = settings["backend"].startswith("plugin:")
    if not plugin and settings["backend"] not in ("eager", "torchscript"):
        parser.error(f"unknown backend {settings['backend']!r} (eager, torchscript or plugin:PATH)")
    in_process = args.eager_only or not plugin
    if args.save_outputs and not in_process:
        parser.error("--save-outputs needs --eager-only with a plugin backend (the plugin runs in minify's worker)")
    if in_process or args.print_graph:
        try:
            gm, inputs = load_graph(args.graph_dir)
        except (FormatError, OSError, ValueError) as error:
            print(f"repro.py: cannot load the graph in {args.graph_dir}: {error}", file=sys.stderr)
            return 2
    if args.print_graph:
        print(gm.code)
    if args.eager_only:
        outputs = gm(*inputs)
        _print_outputs(outputs)
        if args.save_outputs:
            torch.save(outputs, args.save_outputs)
        return 0
    if plugin:
        return _minify_query(args.graph_dir, settings)

    # A hang ends the process after the time limit, with every thread's stack and exit status 1;
    # a crash prints the Python stack before the signal kills the process.
    faulthandler.enable()
    faulthandler.dump_traceback_later(settings["timeout_seconds"], exit=True)
    failure = _failure(args.graph_dir, gm, inputs, settings, args.save_outputs)
    # The check_str match runs under the time limit too: Python's re backtracks, and a pattern such as
    # (.*)*Q takes exponential time on a long failure.
    unmatched = failure is not None and settings["check_str"] is not None and not re.search(settings["check_str"], failure)
    faulthandler.cancel_dump_traceback_later()
    if failure is None:
        print("pass")
        return 0
    if unmatched:
        print(f"pass (a failure that check_str {settings['check_str']!r} does not match: {failure})")
        return 0
    print(f"fail: {failure}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
