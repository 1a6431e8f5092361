# Every writer of Python that a graph directory reaches, run on graph directories in one PyTorch 2.x
# process for test_generated_python.py: what the loader says of each (refused, naming what), and the text
# each writer makes of an accepted one, compiled (never run here: the test runs the files that can run).
#   python_writers.py base OUT                      a small graph directory whose every field a name reaches
#   python_writers.py check REPORT DIR [DIR ...]    REPORT: {DIR: {"refused": message} | {"written": {...}}}
#   python_writers.py options REPORT JSON           JSON: [[key, text], ...]; REPORT: one verdict each
import contextlib
import io
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "worker", "python"))

import torch  # noqa: E402

from minifyd import after_aot_repro, compile_backends, repro_writer, shape_shrink  # noqa: E402
from minifyd import graph_format as gf  # noqa: E402
from minifyd import graph_writer as gw  # noqa: E402


def base(out):
    """x: input, c: constant; add(x, c, alpha=2); div(add, x, rounding_mode='floor'); both returned."""
    os.makedirs(out, exist_ok=True)
    with gw.StoreWriter(os.path.join(out, "store")) as store:
        x, c = torch.arange(1.0, 5.0), torch.full((4,), 3.0)
        storages = [{"hash": store.put(gw.storage_bytes(t)), "nbytes": 16, "device": "cpu"} for t in (x, c)]
        store.write_root("graph", sorted({s["hash"] for s in storages}))
    meta = {"dtype": "float32", "shape": [4], "stride": [1], "storage_offset": 0, "requires_grad": False}
    doc = {"format": gf.GRAPH_FORMAT, "version": gf.GRAPH_VERSION, "storages": storages,
           "inputs": [{"storage": 0, **meta}], "constants": {"c": {"storage": 1, **meta}},
           "nodes": [{"name": "x", "op": "placeholder"},
                     {"name": "c", "op": "get_attr", "target": "c"},
                     {"name": "add", "op": "call_function", "target": "aten::add.Tensor",
                      "args": [{"node": "x"}, {"node": "c"}], "kwargs": {"alpha": 2}},
                     {"name": "div", "op": "call_function", "target": "aten::div.Tensor_mode",
                      "args": [{"node": "add"}, {"node": "x"}], "kwargs": {"rounding_mode": "floor"}},
                     {"name": "output", "op": "output", "args": [{"tuple": [{"node": "add"}, {"node": "div"}]}]}]}
    with open(os.path.join(out, "graph.json"), "w") as f:
        json.dump(doc, f)


def compiled(text, where):
    """'compiled', or why Python cannot compile text."""
    try:
        compile(text, where, "exec")
    except (SyntaxError, ValueError) as error:
        return f"does not compile: {type(error).__name__}: {error}"
    return "compiled"


def written(graph_dir):
    """{writer: 'compiled' or why not} for a graph directory the loader accepts."""
    gm, _ = gf.load_graph(graph_dir)
    found = {"graph module": compiled(gm.code, "gm.code")}
    found["repro_from_graph"] = compiled(repro_writer.repro_source(graph_dir), "repro.py")
    for backend in ("inductor", "aot_eager"):
        out = os.path.join(graph_dir, f"after_aot_{backend}.py")
        with contextlib.redirect_stdout(io.StringIO()):
            after_aot_repro.write_repro(graph_dir, out, backend, {}, accuracy=False)
        with open(out) as f:
            found[f"after_aot {backend}"] = compiled(f.read(), out)
    # The shape helper writes no Python: it builds the graph through the loader and traces it, answering a
    # graph it cannot trace with a note (its main()'s way), never by running the document's text.
    try:
        shape_shrink.propose(graph_dir, os.path.join(graph_dir, "store"), "shapes")
    except gf.FormatError:
        raise
    except Exception:  # noqa: BLE001  (its main() answers these as a note)
        pass
    found["shape helper"] = "compiled"
    return found


def check(report, graph_dirs):
    results = {}
    for graph_dir in graph_dirs:
        try:
            results[graph_dir] = {"written": written(graph_dir)}
        except gf.FormatError as error:
            results[graph_dir] = {"refused": str(error)}
    with open(report, "w") as f:
        json.dump(results, f)


def options(report, pairs_file):
    """Each [key, text] as backend options: refused (the message), or set and written into after_aot's
    repro of the base graph (the repro's text, compiled)."""
    with open(pairs_file) as f:
        pairs = json.load(f)
    graph_dir = os.path.join(os.path.dirname(pairs_file), "options-base")
    base(graph_dir)
    results = []
    for i, (key, text) in enumerate(pairs):
        try:
            compile_backends.config_patches({key: text})
        except compile_backends.OptionError as error:
            results.append({"refused": str(error)})
            continue
        out = os.path.join(graph_dir, f"options-{i}.py")
        with contextlib.redirect_stdout(io.StringIO()):
            after_aot_repro.write_repro(graph_dir, out, "inductor", {key: text}, accuracy=False)
        with open(out) as f:
            results.append({"written": compiled(f.read(), out), "path": out})
    with open(report, "w") as f:
        json.dump(results, f)


if __name__ == "__main__":
    command, *arguments = sys.argv[1:]
    {"base": lambda: base(*arguments), "check": lambda: check(arguments[0], arguments[1:]),
     "options": lambda: options(*arguments)}[command]()
