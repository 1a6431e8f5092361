# Exports a PyTorch function, module or aten-level GraphModule as a graph directory (graph.json + store/).
import argparse
import functools
import importlib.util
import operator
import os
import sys

import torch
from torch.fx.experimental.proxy_tensor import make_fx

from minifyd import compile_backends, config_options
from minifyd import graph_format as gf
from minifyd import graph_writer as gw
from minifyd import origin as origin_file


def is_aten_graph(obj):
    """True for a GraphModule whose calls are all operator overloads, getitem or SymInt arithmetic: it is
    exported as it is."""
    if not isinstance(obj, torch.fx.GraphModule):
        return False
    return all(n.op in ("placeholder", "get_attr", "output") or
               (n.op == "call_function" and (n.target is operator.getitem or
                                             n.target in gf.SYMINT_ARITHMETIC.values() or
                                             isinstance(n.target, torch._ops.OpOverload)))
               for n in obj.graph.nodes)


class _Storages:
    """Writes each storage once, keyed by identity, so tensors viewing one storage name one storage index."""

    def __init__(self, store):
        self.store, self.entries, self.index = store, [], {}

    def tensor(self, tensor, where):
        if not isinstance(tensor, torch.Tensor):
            raise gf.FormatError(f"{where}: a {type(tensor).__name__} is not a tensor; graph inputs and constants "
                                 "must be tensors")
        if tensor.device.type == "meta":
            raise gf.FormatError(f"{where}: a meta tensor has no bytes to store")
        key = gw.storage_key(tensor)
        if key not in self.index:
            self.index[key] = len(self.entries)
            self.entries.append({"hash": self.store.put(gw.storage_bytes(tensor)),
                                 "nbytes": gf.untyped_storage(tensor).nbytes(), "device": str(tensor.device)})
        return gw.tensor_entry(tensor, self.index[key], where)

    def input(self, value, where):
        """A graph input's entry: an int is a SymInt input, written with its value ({"symint": 8})."""
        if isinstance(value, int) and not isinstance(value, bool):
            return {"symint": gw.encode_value(value, _node_name, where)}
        return self.tensor(value, where)


def _encode_node(node, where, storages, constants, gm):
    entry = {"name": node.name, "op": node.op}
    if node.op == "get_attr":
        refused = gf.attribute_path_refusal(node.target)
        if refused:
            raise gf.FormatError(f"{where}: target: {refused}")
        entry["target"] = node.target
        if node.target not in constants:
            value = functools.reduce(getattr, node.target.split("."), gm)
            constants[node.target] = storages.tensor(value, f"{where}: get_attr {node.target!r}")
    elif node.op == "call_function":
        entry["target"] = gw.target_name(node.target, f"{where}: target")
        entry["args"] = [gw.encode_value(a, _node_name, f"{where}: args[{i}]") for i, a in enumerate(node.args)]
        entry["kwargs"] = {k: gw.encode_value(v, _node_name, f"{where}: kwargs.{k}") for k, v in node.kwargs.items()}
    elif node.op == "output":
        entry["args"] = [gw.encode_value(node.args[0], _node_name, f"{where}: args[0]")]
    elif node.op != "placeholder":
        raise gf.FormatError(f"{where}: {node.op} cannot be exported; trace to an aten-level graph (make_fx) first")
    return entry


def _node_name(node):
    return node.name


def export(target, example_inputs, out_dir):
    """Writes out_dir/graph.json and out_dir/store; returns the document. Anything but an aten-level GraphModule
    is traced with make_fx on example_inputs (a flat sequence of tensors and ints, an int being a SymInt
    input)."""
    inputs = list(example_inputs)
    graph_path = os.path.join(out_dir, "graph.json")
    with gw.StoreWriter(os.path.join(out_dir, "store")) as store:
        storages = _Storages(store)
        # Inputs are stored before tracing, which runs the function and may mutate them in place.
        input_entries = [storages.input(value, f"{graph_path}: inputs[{i}]") for i, value in enumerate(inputs)]
        gm = target if is_aten_graph(target) else make_fx(target)(*inputs)
        # Constants are read after tracing: a buffer the function updates in place (BatchNorm's running stats
        # in training mode) is written with its updated value.
        constants, nodes = {}, []
        for i, node in enumerate(gm.graph.nodes):
            where = f"{graph_path}: node {node.name!r} (nodes[{i}])"
            refused = gf.name_refusal(node.name)
            if refused:
                raise gf.FormatError(f"{where}: name: {refused}")
            nodes.append(_encode_node(node, where, storages, constants, gm))
        placeholders = sum(n["op"] == "placeholder" for n in nodes)
        if placeholders != len(inputs):
            raise gf.FormatError(f"{graph_path}: the graph has {placeholders} placeholders but {len(inputs)} "
                                 "example inputs were given")
        store.write_root("graph", sorted({s["hash"] for s in storages.entries}))
    doc = {"format": gf.GRAPH_FORMAT, "version": gf.GRAPH_VERSION, "storages": storages.entries,
           "inputs": input_entries, "constants": constants, "nodes": nodes}
    gw.write_file_atomic(graph_path, gw.format_document(doc).encode(), os.path.join(out_dir, "store", "tmp"))
    return doc


def export_aot(fn, example_inputs, out_dir):
    """Exports the first forward graph that torch.compile's Inductor hands its inner compiler when fn runs
    compiled on example_inputs (PyTorch 2.x), as export() does, with origin.json holding the configuration
    it was compiled under (config_options.compile_options: the module's settings, as fallback_random, and
    Inductor's own patches), and returns its document, or None when nothing was compiled. It is the graph after_aot dumps and `minify capture` captures: AOT autograd as
    compile_fx configures it (Inductor's decompositions, input mutations kept in the graph as copy_
    into the input, aliasing of outputs handled, its joint-graph passes applied), parameters lifted
    among its inputs, the inputs as they arrive at run time, written before the graph runs and may
    update them. The graph is not compiled: each runs as the GraphModule it is, so a bug of Inductor's
    cannot stop the export."""
    import torch._dynamo
    from torch._inductor.compile_fx import compile_fx

    exported = []

    def inner_compile(gm, _fake_inputs, **_options):
        notes = []
        options = config_options.compile_options(notes)

        def run(args):
            if not exported:
                exported.append(export(gm, list(args), out_dir))
                origin_file.write(out_dir, {"source": "export_fx", "argv": list(sys.argv),
                                            "backend_options": options, "notes": notes})
            return gm(*args)
        run._boxed_call = True
        return run

    torch._dynamo.reset()
    # A graph AOT autograd's cache holds (on by default in PyTorch 2.11, warm from the user's own runs)
    # comes back compiled without the inner compiler being called: it would not be seen.
    import torch._functorch.config as functorch_config
    no_cache = {"enable_autograd_cache": False} if hasattr(functorch_config, "enable_autograd_cache") else {}
    try:
        with torch.no_grad(), functorch_config.patch(**no_cache):
            torch.compile(fn, backend=functools.partial(compile_fx, inner_compile=inner_compile))(*example_inputs)
    finally:
        torch._dynamo.reset()
    return exported[0] if exported else None


def load_module_file(path):
    """Imports MODULE.py from a path and returns its make(); its directory is on sys.path, as when
    python runs it, so it may import its neighbours."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    spec = importlib.util.spec_from_file_location(os.path.splitext(os.path.basename(path))[0], path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if not callable(getattr(module, "make", None)):
        raise SystemExit(f"{path}: defines no make() returning (fn_or_module_or_graphmodule, example_inputs)")
    return module.make


def main():
    parser = argparse.ArgumentParser(description="Export MODULE.py's make() as a minifyd graph directory.")
    parser.add_argument("module", metavar="MODULE.py",
                        help="defines make() returning (fn_or_module_or_graphmodule, example_inputs)")
    parser.add_argument("--out", required=True, metavar="DIR", help="graph directory to write")
    parser.add_argument("--aot", action="store_true",
                        help="export the forward graph AOT autograd hands torch.compile's backend, as Inductor "
                             "sees it (PyTorch 2.x; under torch.no_grad; one graph, or the first of several)")
    args = parser.parse_args()
    fn, example_inputs = load_module_file(args.module)()
    try:
        doc = export_aot(fn, example_inputs, args.out) if args.aot else export(fn, example_inputs, args.out)
        if doc is None:
            raise SystemExit(f"export_fx: torch.compile compiled no graph of {args.module}")
        if not args.aot and not is_aten_graph(fn):
            # make_fx's trace has not been through AOT autograd: torch.compile's Inductor compiles it whole.
            origin_file.write(args.out, {"source": "export_fx", "argv": list(sys.argv),
                                         "backend_options": {compile_backends.ENTRY_OPTION: "compile_fx"},
                                         "notes": []})
    except gf.FormatError as error:
        raise SystemExit(f"export_fx: {error}")
    nbytes = sum(s["nbytes"] for s in doc["storages"])
    print(f"{len(doc['nodes'])} nodes, {len(doc['inputs'])} inputs, {len(doc['constants'])} constants, "
          f"{len(doc['storages'])} storages ({nbytes} bytes): wrote {os.path.join(args.out, 'graph.json')} "
          f"and {os.path.join(args.out, 'store')}")
