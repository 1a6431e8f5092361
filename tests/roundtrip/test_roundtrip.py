# One round trip: export a case, `minify validate` it, regenerate repro.py, run it in a fresh Python, torch.equal.
# With --backend, the case is instead run by that minifyd backend (minifyd_run_backend) and its outputs compared
# with PyTorch's: exactly for eager, with allclose for compiling backends.
import argparse
import os
import shutil
import subprocess
import sys
import time
import traceback

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "worker", "python"))
sys.path.insert(0, HERE)
import cases  # noqa: E402
from minifyd import export as export_fx  # noqa: E402
from minifyd import graph_format  # noqa: E402
from minifyd import repro_writer  # noqa: E402


def compare(expected, actual, path="output", exact=True):
    """Problems between two nested output structures: structure, dtype, shape and, per tensor, torch.equal
    (exact) or torch.allclose."""
    if isinstance(expected, (tuple, list)):
        if type(actual) not in (tuple, list) or len(actual) != len(expected):
            return [f"{path}: expected a {type(expected).__name__} of {len(expected)}, got {actual!r:.80}"]
        return [p for i, (e, a) in enumerate(zip(expected, actual)) for p in compare(e, a, f"{path}[{i}]", exact)]
    if not isinstance(expected, torch.Tensor):
        return [] if expected == actual else [f"{path}: expected {expected!r}, got {actual!r}"]
    if not isinstance(actual, torch.Tensor):
        return [f"{path}: expected a tensor, got {type(actual).__name__}"]
    if (expected.dtype, expected.shape) != (actual.dtype, actual.shape):
        return [f"{path}: expected {expected.dtype}{list(expected.shape)}, got {actual.dtype}{list(actual.shape)}"]
    if exact and not torch.equal(expected, actual):
        return [f"{path}: {int((expected != actual).sum())} of {expected.numel()} elements differ"]
    if not exact and not torch.allclose(expected, actual, rtol=1e-4, atol=1e-5, equal_nan=True):
        return [f"{path}: not allclose (max abs difference {float((expected - actual).abs().max()):.3g})"]
    return []


def flat_tensors(value):
    if isinstance(value, (tuple, list)):
        return [t for item in value for t in flat_tensors(item)]
    return [value] if isinstance(value, torch.Tensor) else []


def run_backend_case(name, run_backend, backend, work):
    """Export the case, run it with a minifyd backend in C++, compare its outputs with the module's."""
    graph_dir, out_dir = os.path.join(work, "graph"), os.path.join(work, "outputs")
    for d in (graph_dir, out_dir):
        shutil.rmtree(d, ignore_errors=True)
    os.makedirs(work, exist_ok=True)
    fn, inputs = cases.CASES[name]()
    export_fx.export(fn, inputs, graph_dir)
    fn, inputs = cases.CASES[name]()
    expected = flat_tensors(fn(*inputs))
    run = subprocess.run([run_backend, graph_dir, out_dir, "--backend", backend], capture_output=True, text=True)
    print(run.stdout + run.stderr, end="")
    if run.returncode != 0:
        return [f"{run_backend} exited {run.returncode}"]
    actual = graph_format.load_graph(out_dir)[1]
    return compare(expected, actual, exact=backend == "eager")


def aliasing_problems(originals, loaded):
    """Loaded inputs must have the originals' metadata, and share a storage exactly where the originals did."""
    def layout(t):
        return t.dtype, t.shape, t.stride(), t.storage_offset(), t.requires_grad, t.device

    problems = [f"inputs[{i}]: {layout(o)} became {layout(l)}"
                for i, (o, l) in enumerate(zip(originals, loaded)) if layout(o) != layout(l)]
    ptrs = [[graph_format.untyped_storage(t).data_ptr() for t in ts] for ts in (originals, loaded)]
    for i in range(len(originals)):
        for j in range(i + 1, len(originals)):
            if (ptrs[0][i] == ptrs[0][j]) != (ptrs[1][i] == ptrs[1][j]):
                problems.append(f"inputs[{i}] and inputs[{j}]: sharing a storage was "
                                f"{ptrs[0][i] == ptrs[0][j]}, is {ptrs[1][i] == ptrs[1][j]} after loading")
    return problems


def run_case(name, minify, work):
    graph_dir = os.path.join(work, "graph")
    shutil.rmtree(graph_dir, ignore_errors=True)
    os.makedirs(work, exist_ok=True)
    fn, inputs = cases.CASES[name]()
    doc = export_fx.export(fn, inputs, graph_dir)
    print(f"exported {len(doc['nodes'])} nodes to {graph_dir}")
    with open(os.path.join(graph_dir, "graph.json")) as f:
        text = f.read()
    problems = [f"graph.json lacks {s}" for s in cases.EXPECTED_IN_GRAPH.get(name, []) if s not in text]

    validate = subprocess.run([minify, "validate", graph_dir], capture_output=True, text=True)
    print(validate.stdout + validate.stderr, end="")
    if validate.returncode != 0:
        problems.append(f"{minify} validate exited {validate.returncode}")

    # Fresh inputs: tracing ran the function, which may have mutated the ones exported above.
    fn, inputs = cases.CASES[name]()
    problems += aliasing_problems(inputs, graph_format.load_graph(graph_dir)[1])
    expected = fn(*inputs)

    repro = os.path.join(work, "repro.py")
    with open(repro, "w") as f:
        f.write(repro_writer.repro_source(graph_dir))
    outputs_file = os.path.join(work, "outputs.pt")
    # Outside the source tree and without PYTHONPATH, so repro.py proves it needs nothing from scripts/.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    run = subprocess.run([sys.executable, repro, "--save-outputs", outputs_file], cwd=work, env=env,
                         capture_output=True, text=True)
    print(run.stdout + run.stderr, end="")
    if run.returncode != 0:
        problems.append(f"repro.py exited {run.returncode}")
    else:
        problems += compare(expected, torch.load(outputs_file))
    return problems


def main():
    parser = argparse.ArgumentParser(description="Round-trip one case through export, minify validate and repro.py.")
    parser.add_argument("--list", action="store_true", help="print the case names and exit")
    parser.add_argument("--case", choices=sorted(cases.CASES))
    parser.add_argument("--minify", help="the minify binary")
    parser.add_argument("--work", help="scratch directory for this case")
    parser.add_argument("--backend", help="run the case with this minifyd backend instead (needs --run-backend)")
    parser.add_argument("--run-backend", help="the minifyd_run_backend tool")
    args = parser.parse_args()
    if args.list:
        print("\n".join(cases.CASES))
        return 0
    if not (args.case and args.work and (args.minify or (args.backend and args.run_backend))):
        parser.error("--case, --work and either --minify or --backend with --run-backend are required")
    start = time.monotonic()
    label = f"{args.case}.{args.backend}" if args.backend else args.case
    try:
        problems = (run_backend_case(args.case, args.run_backend, args.backend, args.work) if args.backend
                    else run_case(args.case, args.minify, args.work))
    except Exception:  # a failing export or load is this case's FAIL, reported with its traceback
        traceback.print_exc()
        problems = ["raised (traceback above)"]
    for problem in problems:
        print(f"  {problem}")
    print(f"{'FAIL' if problems else 'PASS'} roundtrip.{label} ({time.monotonic() - start:.1f} s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
