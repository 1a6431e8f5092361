# Smaller shapes for a minimized graph (`minify run --shrink-inputs`, daemon/shrink/input_shrink.h): the
# graph traced again with make_fx(tracing_mode="symbolic"), each input size a symbol (equal sizes one
# symbol, as Dynamo's duck sizing makes them), and the guards the trace records say which sizes the graph
# fixes (a view to a literal [64, 512] fixes the product of its input's sizes) and which it leaves free.
# The free ones are proposed smaller, every guard holding: all at once as small as the guards let them, a
# quarter and a half of their size, then each alone at its smallest. For each proposal this prints the document's storages and inputs at the new
# sizes; an input's stored values become the leading slice of the old ones, written to the run's store
# (under ROOT, which the coordinator drops with the run's other roots), a filled storage keeps its fill.
# The coordinator evaluates the proposals like any candidate and keeps the first, in that order, that
# still fails the same way. Prints one JSON object: {"symbols": {"s0": 512, ...}, "proposals": [...],
# "note": why no size can shrink, or ""}.
import argparse
import json
import os
import sys

import torch

from minifyd import graph_format as gf
from minifyd import graph_writer as gw

# Where each proposal puts a free size: its smallest value the guards allow, then these fractions of it.
FRACTIONS = (None, 4, 2)
# How many values above a symbol's lower bound are tried when looking for its smallest one.
LOW_VALUES_TRIED = 64


def _expr(value):
    """The sympy expression of an int or SymInt."""
    return value.node.expr if isinstance(value, torch.SymInt) else value


def _holds(guards, assignment):
    """Whether every guard holds with the symbols of assignment replaced by their values."""
    import sympy
    values = {symbol: sympy.Integer(value) for symbol, value in assignment.items()}
    for guard in guards:
        settled = guard.xreplace(values)
        if settled.free_symbols:
            continue  # a guard on sizes no proposal changes
        if not bool(settled):
            return False
    return True


def _traced(gm, inputs):
    """The placeholders' fake values and the shape environment of gm traced symbolically."""
    from torch.fx.experimental.proxy_tensor import make_fx
    traced = make_fx(gm, tracing_mode="symbolic")(*inputs)
    values = [node.meta["val"] for node in traced.graph.nodes if node.op == "placeholder"]
    env = next((v.fake_mode.shape_env for v in values if isinstance(v, torch.Tensor)), None)
    return values, env


def _symbols_of(values):
    symbols = set()
    for value in values:
        sizes = list(value.shape) + list(value.stride()) if isinstance(value, torch.Tensor) else [value]
        for size in sizes:
            expr = _expr(size)
            if hasattr(expr, "free_symbols"):
                symbols |= expr.free_symbols
    return sorted(symbols, key=str)


def _smallest(symbol, floor, assignment, env, guards):
    """The smallest value of symbol, at least floor and at most its own, under which every guard holds
    with the others as assignment has them."""
    current = int(env.var_to_val[symbol])
    lower = max(int(env.var_to_range[symbol].lower), floor, 0)
    tried = list(range(lower, min(current, lower + LOW_VALUES_TRIED)))
    tried += sorted({current // k for k in range(2, 65) if lower <= current // k < current})
    for value in tried:
        if _holds(guards, {**assignment, symbol: value}):
            return value
    return current


def _evaluated(value, assignment):
    import sympy
    expr = _expr(value)
    if not hasattr(expr, "xreplace"):
        return int(expr)
    return int(expr.xreplace({symbol: sympy.Integer(v) for symbol, v in assignment.items()}))


def _proposal(doc, inputs, values, assignment, store, name):
    """The document's storages and inputs at the sizes of assignment (symbol -> value), or a reason."""
    storages, entries = [dict(s) for s in doc["storages"]], [dict(e) for e in doc["inputs"]]
    viewers = {}
    for entry in list(doc["inputs"]) + list(doc.get("constants", {}).values()):
        if isinstance(entry, dict) and "storage" in entry:
            viewers[entry["storage"]] = viewers.get(entry["storage"], 0) + 1
    reach = {}
    for i, (entry, tensor, value) in enumerate(zip(doc["inputs"], inputs, values)):
        if not isinstance(value, torch.Tensor):
            entries[i] = {"symint": _evaluated(value, assignment)} if isinstance(entry, dict) and "symint" in entry \
                else entry
            continue
        shape = [_evaluated(size, assignment) for size in value.shape]
        stride = [_evaluated(size, assignment) for size in value.stride()]
        if shape == list(entry["shape"]):
            continue
        index = entry["storage"]
        storage = storages[index]
        if viewers[index] > 1:
            return f"{name}: input {i} shares its storage with another tensor, which a smaller copy would part"
        itemsize = tensor.element_size()
        needed = gf.strided_reach(shape, stride) * itemsize
        if "fill" in storage:
            reach[index] = needed
        else:
            smaller = torch.empty_strided(shape, stride, dtype=tensor.dtype)
            smaller.copy_(tensor[tuple(slice(0, n) for n in shape)].detach().cpu())
            data = gw.storage_bytes(smaller)
            storage.update({"hash": store.put(data), "nbytes": len(data)})
        # The smaller tensor starts its storage: a new blob, or the fill's first elements.
        entries[i] = {**entry, "shape": shape, "stride": stride, "storage_offset": 0}
    for index, needed in reach.items():
        storages[index]["nbytes"] = needed
    return {"name": name, "sizes": {str(symbol): value for symbol, value in assignment.items()},
            "storages": storages, "inputs": entries}


def propose(graph_dir, store_dir, root):
    """{"symbols", "proposals", "note"} for the graph in graph_dir (its blobs in store_dir)."""
    gm, inputs, doc = gf.load_graph_and_document(graph_dir)
    if not any(isinstance(value, torch.Tensor) for value in inputs):
        return {"symbols": {}, "proposals": [], "note": "the graph has no tensor input"}
    values, env = _traced(gm, inputs)
    guards = [guard.expr for guard in env.guards]
    symbols = _symbols_of(values)
    current = {symbol: int(env.var_to_val[symbol]) for symbol in symbols}
    described = {str(s): v for s, v in current.items()}
    if not symbols:
        pinned = [f"{symbol}={value}" for symbol, value in env.replacements.items() if not value.free_symbols]
        note = ("the graph's own arguments fix every size (the trace specialised " + ", ".join(pinned[:6]) + ")"
                if pinned else "no input has a size above 1")
        return {"symbols": {}, "proposals": [], "note": note}
    proposals, seen = [], set()
    with gw.StoreWriter(store_dir) as store:
        digests = []
        # Every free size at once, as small as the guards let it, then at a quarter and a half; then each
        # size alone at its smallest, for a failure that needs the others as they are.
        assignments = []
        for fraction in FRACTIONS:
            assignment = dict(current)
            for symbol in symbols:
                floor = 0 if fraction is None else -(-current[symbol] // fraction)
                assignment[symbol] = _smallest(symbol, floor, assignment, env, guards)
            assignments.append(("smallest" if fraction is None else f"1/{fraction}", assignment))
        if len(symbols) > 1:
            assignments += [(f"{symbol} alone", {**current, symbol: _smallest(symbol, 0, current, env, guards)})
                            for symbol in symbols]
        for name, assignment in assignments:
            key = tuple(sorted((str(s), v) for s, v in assignment.items()))
            if assignment == current or key in seen:
                continue
            seen.add(key)
            made = _proposal(doc, inputs, values, assignment, store, name)
            if isinstance(made, str):
                return {"symbols": described, "proposals": [], "note": made}
            digests += [s["hash"] for s in made["storages"] if "hash" in s]
            proposals.append(made)
        store.write_root(root, sorted(set(digests)))
    fixed = [str(guard) for guard in guards if guard.free_symbols]
    note = "" if proposals else ("every size is fixed by the graph's own arguments (the trace's guards: "
                                 + "; ".join(fixed[:4]) + ")" if fixed else "no size can be smaller than it is")
    return {"symbols": described, "proposals": proposals, "note": note}


def main():
    parser = argparse.ArgumentParser(description="Propose smaller input sizes for a graph directory.")
    parser.add_argument("graph_dir")
    parser.add_argument("--store", required=True, help="the content store the proposals' blobs go to")
    parser.add_argument("--root", required=True, help="the store root naming them")
    args = parser.parse_args()
    try:
        result = propose(args.graph_dir, args.store, args.root)
    except gf.FormatError as error:
        print(f"shape_shrink: {error}", file=sys.stderr)
        return 2
    except Exception as error:  # the trace of a graph the symbolic tracer cannot follow
        result = {"symbols": {}, "proposals": [],
                  "note": f"the graph cannot be traced with symbolic sizes: {type(error).__name__}: {error}"[:400]}
    print(json.dumps(result))
    return 0
