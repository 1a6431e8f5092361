# PyTorch's CompilerBisector run as its users run it: `CompilerBisector.do_bisect(fn)` in one python
# on the failing program, fn compiling and running the user's model afresh each time and saying
# whether it passed. Prints one JSON line: the BisectionResult (backend, subsystem, bisect_number,
# debug_info), the probes (calls of fn) and the wall time. The peer of `minify bisect` in
# bench/bisect_comparison.py and of the bisect tests (tests/inductor/test_bisect.py).
#   PYTHON bench/compiler_bisector_run.py SCRIPT [--backend-opt KEY=VALUE ...]
# SCRIPT is a user's script: one that checks itself when run as __main__ (tests/real/models/*.py:
# check_compiled raises where compiled and eager differ) is run as __main__; one with make() returning
# (fn, inputs) (tests/inductor/models/*.py) is compiled and compared with eager here. KEY=VALUE set
# Inductor's config (an injected bug) for every probe, as a user's script would.
import argparse
import ast
import contextlib
import io
import json
import os
import runpy
import sys
import time


def config_value(text):
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def self_checking(script):
    with open(script) as f:
        return "check_compiled(" in f.read()


def probe_function(script):
    """fn for do_bisect: True when the compiled program runs and matches eager."""
    import torch
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    if self_checking(script):
        def run():
            runpy.run_path(script, run_name="__main__")
    else:
        module = runpy.run_path(script)

        def run():
            fn, inputs = module["make"]()
            expected = fn(*[x.clone() for x in inputs])
            actual = torch.compile(fn)(*[x.clone() for x in inputs])
            for a, e in zip(actual, expected):
                if not torch.allclose(a, e, atol=1e-4, rtol=1e-4):
                    raise AssertionError("compiled differs from eager")

    calls = []

    def fn():
        torch._dynamo.reset()
        calls.append(None)
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                run()
        except Exception:  # noqa: BLE001  (any failure is the bug's, as a user's fn says)
            return False
        return True
    return fn, calls


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("script")
    parser.add_argument("--backend-opt", action="append", default=[])
    args = parser.parse_args()
    # Everything but the result goes to stderr: do_bisect prints its progress, and the cleanup of its
    # state prints "Bisection status deleted." whenever it runs (at exit, in PyTorch 2.11).
    result_file = os.fdopen(os.dup(sys.stdout.fileno()), "w")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    import torch._inductor.config as inductor_config
    from torch._inductor.compiler_bisector import CompilerBisector
    for pair in args.backend_opt:
        key, _, value = pair.partition("=")
        inductor_config.patch({key: config_value(value)}).__enter__()
    fn, calls = probe_function(args.script)
    started = time.perf_counter()
    result = CompilerBisector.do_bisect(fn)
    wall = time.perf_counter() - started
    found = None if result is None else {"backend": result.backend, "subsystem": result.subsystem,
                                         "bisect_number": result.bisect_number, "debug_info": result.debug_info}
    print(json.dumps({"result": found, "probes": len(calls), "wall_seconds": wall}), file=result_file, flush=True)


if __name__ == "__main__":
    main()
