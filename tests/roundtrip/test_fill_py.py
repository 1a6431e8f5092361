# Filled storages (docs/graph-format.md "Filled storages"): graph_format.py draws the values the C++
# worker draws (tests/worker/tensor_loader_test.cpp checks the same numbers there), a document of
# filled storages validates and loads with views kept, and `minify validate` refuses bad fills, naming
# the storage and what is wrong. The storages of the docs' example load as the docs say.
import argparse
import json
import os
import shutil
import subprocess
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "worker", "python"))
from minifyd import graph_format  # noqa: E402
from minifyd import graph_writer as gw  # noqa: E402

DOCS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "graph-format.md")
RANDOM_FLOATS = {"kind": "random", "dtype": "float32", "seed": 0, "low": -1.0, "high": 2.0}
FLOATS_DRAWN = [1.9101589918136597, 1.1234595775604248, 0.3781488239765167, 1.7622430324554443]
RANDOM_LONGS = {"kind": "random", "dtype": "int64", "seed": 3, "low": -2.0, "high": 5.0}
LONGS_DRAWN = [0, -2, -1, 1]


def document(storages):
    """A graph adding its two inputs, which view storages[0] (4 floats, and transposed as 2x2)."""
    return {"format": "minifyd.graph", "version": 1, "storages": storages,
            "inputs": [{"storage": 0, "dtype": "float32", "shape": [4], "stride": [1], "storage_offset": 0},
                       {"storage": 0, "dtype": "float32", "shape": [2, 2], "stride": [1, 2], "storage_offset": 0}],
            "constants": {},
            "nodes": [{"name": "x", "op": "placeholder"}, {"name": "y", "op": "placeholder"},
                      {"name": "view", "op": "call_function", "target": "aten::view", "args": [{"node": "x"}, [2, 2]]},
                      {"name": "add", "op": "call_function", "target": "aten::add.Tensor",
                       "args": [{"node": "view"}, {"node": "y"}]},
                      {"name": "output", "op": "output", "args": [{"tuple": [{"node": "add"}]}]}]}


def write_graph(graph_dir, doc):
    shutil.rmtree(graph_dir, ignore_errors=True)
    with gw.StoreWriter(os.path.join(graph_dir, "store")) as store:
        store.write_root("graph", [])
    with open(os.path.join(graph_dir, "graph.json"), "w") as f:
        json.dump(doc, f)


def docs_example_storages():
    """The storages of the json block in graph-format.md's "Filled storages" section, one per line."""
    with open(DOCS) as f:
        section = f.read().split("### Filled storages", 1)[1]
    block = section.split("```json\n", 1)[1].split("```", 1)[0]
    return [json.loads(line) for line in block.splitlines() if line.strip()]


def check_docs_example(minify, graph_dir):
    """Each example storage viewed whole by one input of a graph returning them: it validates, and loads
    as its fill says."""
    storages = docs_example_storages()
    inputs, nodes = [], []
    for i, storage in enumerate(storages):
        dtype = getattr(torch, storage["fill"]["dtype"])
        count = storage["nbytes"] // torch.empty((), dtype=dtype).element_size()
        inputs.append({"storage": i, "dtype": storage["fill"]["dtype"], "shape": [count], "stride": [1],
                       "storage_offset": 0})
        nodes.append({"name": f"x{i}", "op": "placeholder"})
    nodes.append({"name": "output", "op": "output", "args": [{"tuple": [{"node": n["name"]} for n in nodes]}]})
    write_graph(graph_dir, {"format": "minifyd.graph", "version": 1, "storages": storages, "inputs": inputs,
                            "constants": {}, "nodes": nodes})
    done = subprocess.run([minify, "validate", graph_dir], capture_output=True, text=True)
    if done.returncode != 0:
        return [f"the docs' example storages: minify validate exits {done.returncode}: {done.stderr}"]
    problems = []
    for storage, value in zip(storages, graph_format.load_graph(graph_dir)[1]):
        fill = storage["fill"]
        low, high = (0, 0) if fill["kind"] == "zeros" else (1, 1) if fill["kind"] == "ones" else (fill["low"], fill["high"])
        if value.numel() == 0 or value.min().item() < low or value.max().item() > high:
            problems.append(f"the docs' example {storage} loads as {value}")
    return problems


def as_values(flat, dtype):
    return torch.empty(0, dtype=dtype).set_(graph_format.untyped_storage(flat), 0,
                                            (flat.numel() // torch.empty((), dtype=dtype).element_size(),), (1,))


def main():
    parser = argparse.ArgumentParser(description="Check filled storages in graph_format.py and minify validate.")
    parser.add_argument("--minify", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    problems = []
    floats = as_values(graph_format.fill_storage(RANDOM_FLOATS, 16), torch.float32)
    longs = as_values(graph_format.fill_storage(RANDOM_LONGS, 32), torch.int64)
    if floats.tolist() != FLOATS_DRAWN or longs.tolist() != LONGS_DRAWN:
        problems.append(f"fill_storage drew {floats.tolist()} and {longs.tolist()}, not {FLOATS_DRAWN} and {LONGS_DRAWN}")

    graph_dir = os.path.join(args.work, "filled")
    write_graph(graph_dir, document([{"fill": RANDOM_FLOATS, "nbytes": 16, "device": "cpu"}]))
    done = subprocess.run([args.minify, "validate", graph_dir], capture_output=True, text=True)
    if done.returncode != 0:
        problems.append(f"minify validate {graph_dir}: exit {done.returncode}: {done.stdout}{done.stderr}")
    gm, inputs = graph_format.load_graph(graph_dir)
    if inputs[0].tolist() != FLOATS_DRAWN or inputs[1].data_ptr() != inputs[0].data_ptr():
        problems.append(f"loaded {inputs}: not the fill's values, or the transposed input is no view of the first")
    if not torch.equal(gm(*inputs)[0], inputs[0].view(2, 2) + inputs[1]):
        problems.append("the graph of filled inputs computes something else")

    problems += check_docs_example(args.minify, graph_dir)
    bad = {"hash and fill": ({"fill": RANDOM_FLOATS, "hash": "0" * 64, "nbytes": 16},
                             "storages[0].hash: a filled storage has no hash (its bytes are made, not stored)"),
           "ragged": ({"fill": {"kind": "ones", "dtype": "float32"}, "nbytes": 18},
                      "storages[0].fill: 18 bytes are not a whole number of float32 elements"),
           "complex random": ({"fill": {**RANDOM_FLOATS, "dtype": "complex64"}, "nbytes": 16},
                              "storages[0].fill: a random fill of a complex dtype is not defined (zeros or ones only)"),
           "unknown kind": ({"fill": {"kind": "arange", "dtype": "float32"}, "nbytes": 16},
                            "storages[0].fill: kind: unknown fill 'arange' (expected zeros, ones or random)"),
           "inverted range": ({"fill": {**RANDOM_FLOATS, "low": 3.0}, "nbytes": 16},
                              "storages[0].fill: random range [low, high] must be finite with low <= high")}
    for what, (storage, message) in bad.items():
        write_graph(graph_dir, document([storage]))
        done = subprocess.run([args.minify, "validate", graph_dir], capture_output=True, text=True)
        if done.returncode == 0 or message not in done.stderr:
            problems.append(f"{what}: minify validate exits {done.returncode}, wanted {message!r}: {done.stderr}")
    for problem in problems:
        print(f"  {problem}")
    print(f"{'FAIL' if problems else 'PASS'} roundtrip.filled_storages")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
