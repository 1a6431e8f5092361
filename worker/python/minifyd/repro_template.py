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
# minifyd/graph_format.py in place of the template's `from minifyd.graph_format import` line and the
# repro's settings in place of its SETTINGS_JSON line.
import argparse
import faulthandler
import json
import math
import os
import re
import shlex
import subprocess
import sys
import traceback

import torch

from minifyd.graph_format import FormatError, load_graph  # noqa: E402

# graph_dir: the graph directory; backend: eager, torchscript or plugin:/abs/path.so;
# backend_options: {KEY: VALUE}; accuracy: off, accuracy or strict-accuracy; nan_check: fail on
# NaN/Inf outputs from finite inputs; check_str: regex a failure's text must match (null: any);
# timeout_seconds: how long the check may take; minify: the `minify` executable, for plugins.
SETTINGS_JSON = '{"graph_dir": null, "backend": "eager", "backend_options": {}, "accuracy": "off", "nan_check": false, "check_str": null, "timeout_seconds": 60, "minify": null}'
SETTINGS = json.loads(SETTINGS_JSON)

# As `minify query --accuracy` (the seeds' same_two_models): a floating output passes when allclose
# to eager with this rtol and atol, or else when its RMSE against an fp64 run of the graph is at
# most 2x eager's RMSE against it (3x for float16 and bfloat16) plus ACCURACY_TOLERANCE / 10.
# `accuracy` ignores non-floating outputs; `strict-accuracy` requires them equal to eager's.
ACCURACY_TOLERANCE = 1e-3


def _leaves(value, path):
    """(path, value) for every leaf of the nested tuples and lists a graph returns."""
    if isinstance(value, (tuple, list)):
        for i, item in enumerate(value):
            yield from _leaves(item, f"{path}[{i}]")
    else:
        yield path, value


def _describe(value):
    if not isinstance(value, torch.Tensor):
        return repr(value)
    total = value.detach().to(torch.complex128 if value.is_complex() else torch.float64).sum().item()
    return f"{str(value.dtype).replace('torch.', '')}{list(value.shape)} sum {total}"


def _print_outputs(outputs):
    for path, value in _leaves(outputs, "output"):
        print(f"{path}: {_describe(value)}")


def _is_floating(tensor):
    return tensor.is_floating_point() or tensor.is_complex()


def _non_finite(tensor):
    """How many elements of a floating tensor are NaN or Inf (0 for other tensors)."""
    if not isinstance(tensor, torch.Tensor) or not _is_floating(tensor):
        return 0
    return int((~torch.isfinite(tensor.detach())).sum().item())


def _nan_failure(outputs):
    """The nan check's failure text, or None when every output is finite."""
    for path, value in _leaves(outputs, "output"):
        count = _non_finite(value)
        if count:
            nans = int(torch.isnan(value.detach()).sum().item())
            what = "Inf" if nans == 0 else "NaN" if nans == count else "NaN and Inf"
            return f"{path} holds {what} ({count} of {value.numel()} elements) while no input does"
    return None


def _as_real_double(tensor):
    tensor = tensor.detach()
    return (torch.view_as_real(tensor.resolve_conj()) if tensor.is_complex() else tensor).to(torch.float64)


def _rmse(reference, value):
    if reference.numel() == 0:
        return 0.0
    return (_as_real_double(reference) - _as_real_double(value)).pow(2).mean().sqrt().item()


def _fp64_graph(load):
    """A fresh (GraphModule, inputs) computing in float64: floating inputs, constants and dtype
    arguments become float64 (the seeds' cast_to_fp64). load() gives a fresh (GraphModule, inputs)."""
    gm, inputs = load()

    def upcast(value):
        if isinstance(value, torch.dtype) and value.is_floating_point:
            return torch.float64
        if isinstance(value, torch.Tensor) and value.is_floating_point():
            return value.detach().to(torch.float64)
        if isinstance(value, (list, tuple)):
            return type(value)(upcast(item) for item in value)
        return value

    for node in gm.graph.nodes:
        node.args = upcast(node.args)
        node.kwargs = {key: upcast(value) for key, value in node.kwargs.items()}
        if node.op == "get_attr":
            owner, _, attr = node.target.rpartition(".")
            module = gm.get_submodule(owner) if owner else gm
            setattr(module, attr, upcast(getattr(module, attr)))
    gm.recompile()
    return gm, [upcast(tensor) for tensor in inputs]


def _fp64_run(load):
    """(outputs, inputs after the run) of the graph computed in float64, or None when the graph cannot
    run that way."""
    gm, inputs = _fp64_graph(load)
    try:
        return gm(*inputs), inputs
    except Exception as error:  # noqa: BLE001  (as the worker: no fp64 reference, no verdict from it)
        print(f"fp64 reference failed: {type(error).__name__}: {error}")
        return None


def _results(outputs, inputs):
    """[(path, value)] of what a run of the graph leaves behind: its outputs, and with `inputs` (the
    tensors it ran on) each of them after the run, since a graph may update an input in place (AOT
    autograd keeps an input's mutation in the graph as a copy_ into it) and a wrong update is a wrong
    result that no output shows."""
    found = list(_leaves(outputs, "output"))
    if inputs is not None:
        found += [(f"input[{i}]", value) for i, value in enumerate(inputs)]
    return found


def _compare_leaf(ref, res, reference, strict):
    """The seeds' same() on one leaf: (failure text or None, max abs error against eager, rmse of the
    compiled value against fp64, eager's). reference: the fp64 leaf, or None."""
    if not isinstance(ref, torch.Tensor) or not isinstance(res, torch.Tensor):
        if type(ref) is not type(res) or ref != res:
            return f"{res!r} differs from eager's {ref!r}", 0.0, None, None
        return None, 0.0, None, None
    if ref.shape != res.shape:
        return f"shape {list(res.shape)} differs from eager's {list(ref.shape)}", 0.0, None, None
    if not _is_floating(ref):
        if strict and not torch.equal(ref, res.to(ref.dtype).to(ref.device)):
            return f"{str(ref.dtype).replace('torch.', '')} values differ from eager's", 0.0, None, None
        return None, 0.0, None, None
    ref64, res64 = _as_real_double(ref), _as_real_double(res.to(ref.device))
    max_abs = (res64 - ref64).abs().nan_to_num(0, 0, 0).max().item() if ref.numel() else 0.0
    rmse_compiled = rmse_eager = None
    if isinstance(reference, torch.Tensor):
        rmse_eager, rmse_compiled = _rmse(reference, ref), _rmse(reference, res.to(ref.device))
    if torch.allclose(ref64, res64, ACCURACY_TOLERANCE, ACCURACY_TOLERANCE, equal_nan=True):
        return None, max_abs, rmse_compiled, rmse_eager
    if rmse_eager is None:
        return f"compiled differs from eager (max abs error {max_abs})", max_abs, None, None
    multiplier = 3.0 if res.dtype in (torch.float16, torch.bfloat16) else 2.0
    # Eager itself cannot compute this stably in its precision: nothing to hold the compiled graph to.
    if math.isnan(rmse_eager) or rmse_compiled <= multiplier * rmse_eager + ACCURACY_TOLERANCE / 10:
        return None, max_abs, rmse_compiled, rmse_eager
    return (f"compiled differs from eager (max abs error {max_abs}, rmse vs fp64 {rmse_compiled} compiled, "
            f"{rmse_eager} eager)"), max_abs, rmse_compiled, rmse_eager


def _accuracy_failure(load, compiled, strict, compiled_inputs=None):
    """The accuracy check's failure text, or None (the criterion is at ACCURACY_TOLERANCE). load()
    gives a fresh (GraphModule, inputs) for the eager and the fp64 run; compiled_inputs, when given,
    are the inputs the compiled run ran on, compared after it as outputs are (_results)."""
    eager_gm, eager_inputs = load()
    eager_outputs = eager_gm(*eager_inputs)
    with_inputs = compiled_inputs is not None
    eager = _results(eager_outputs, eager_inputs if with_inputs else None)
    results = _results(compiled, compiled_inputs)
    if len(eager) != len(results):
        return f"the compiled graph returns {len(results)} values, eager {len(eager)}"
    fp64_run = _fp64_run(load)
    if fp64_run is None and not strict:
        return None
    fp64 = ([value for _, value in _results(fp64_run[0], fp64_run[1] if with_inputs else None)]
            if fp64_run is not None else None)
    for i, ((path, ref), (_, res)) in enumerate(zip(eager, results)):
        found = _compare_leaf(ref, res, fp64[i] if fp64 is not None else None, strict)[0]
        if found:
            return f"{path}: {found}"
    return None


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
    check_nan = settings["nan_check"] and not any(_non_finite(tensor) for tensor in inputs)
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
        found = _nan_failure(outputs)
        if found:
            return f"nan: {found}"
    if settings["accuracy"] != "off":
        found = _accuracy_failure(lambda: load_graph(graph_dir), outputs, settings["accuracy"] == "strict-accuracy")
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
