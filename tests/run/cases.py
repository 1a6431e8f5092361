# The acceptance cases of `minify run` as data, shared by its end-to-end tests and by the comparison
# with PyTorch's minifier (bench/): each names a function and seeded CPU inputs, the `minify run`
# arguments, what the run must end with, and, through tests/run/fault_model.py, the same failure
# as a predicate for functorch's minifier. Node counts include placeholders and the output node,
# as PyTorch's minifier tests count len(graph.nodes).
#   python3 tests/run/cases.py --list | --export NAME --out DIR | --args NAME --faulty PLUGIN.so
import argparse
import dataclasses
import functools
import os
import sys
from typing import Callable, Optional

import torch
from torch.fx.experimental.proxy_tensor import make_fx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "worker", "python"))
from minifyd import export as export_fx  # noqa: E402
from fault_model import COMPILE_ERROR, Check, Failure  # noqa: E402

FAULTY = "{faulty}"  # stands for the faulty plugin's path in a case's arguments


def faulty(fault, op="aten::relu", *more_options):
    """`minify run` arguments for the faulty plugin injecting `fault` at `op`."""
    args = ("--backend", f"plugin:{FAULTY}", "--backend-opt", f"op={op}", "--backend-opt", f"fault={fault}")
    for option in more_options:
        args += ("--backend-opt", option)
    return args


# --- what the final graph.json must hold: each returns what is wrong with a document, or None ---

def _calls(doc):
    return [n for n in doc["nodes"] if n["op"] == "call_function"]


def holds(op, without=None):
    def check(doc):
        targets = {n["target"] for n in _calls(doc)}
        if op not in targets:
            return f"no {op} in {sorted(targets)}"
        if without in targets:
            return f"{without} is still there: {sorted(targets)}"
        return None
    return check


def only_op_of_an_input(op, input_name=None):
    """Exactly one call, op, whose argument is the graph's one input (named input_name when given)."""
    def check(doc):
        calls = _calls(doc)
        inputs = [n["name"] for n in doc["nodes"] if n["op"] == "placeholder"]
        if len(calls) != 1 or calls[0]["target"] != op or len(inputs) != 1:
            return f"expected {op} of one input, got calls {[c['target'] for c in calls]} of inputs {inputs}"
        if calls[0]["args"] != [{"node": inputs[0]}]:
            return f"{op}'s arguments are {calls[0]['args']}, not the input {inputs[0]!r}"
        if input_name is not None and inputs[0] != input_name:
            return f"the input is {inputs[0]!r}, not {input_name!r}"
        return None
    return check


@dataclasses.dataclass(frozen=True)
class Expectation:
    status: str                       # `minify run --json`'s status: "minimized" or "does_not_fail"
    failure: Optional[Failure]        # how the input graph fails, and so the final one; None: it passes
    nodes: Optional[int] = None       # of the final graph
    inputs: Optional[int] = None
    graph: Optional[Callable[[dict], Optional[str]]] = None

    def problems(self, doc):
        """What is wrong with a final graph.json document, as a list of sentences."""
        found = []
        nodes = len(doc["nodes"])
        inputs = sum(n["op"] == "placeholder" for n in doc["nodes"])
        if self.nodes is not None and nodes != self.nodes:
            found.append(f"{nodes} nodes, expected {self.nodes}")
        if self.inputs is not None and inputs != self.inputs:
            found.append(f"{inputs} inputs, expected {self.inputs}")
        wrong = self.graph(doc) if self.graph else None
        if wrong:
            found.append(wrong)
        return found


def minimized(failure, nodes=None, inputs=None, graph=None):
    return Expectation("minimized", failure, nodes, inputs, graph)


DOES_NOT_FAIL = Expectation("does_not_fail", None)


@dataclasses.dataclass(frozen=True)
class Case:
    name: str
    make: Callable  # () -> (function or nn.Module, example inputs), seeded
    args: tuple     # `minify run` arguments after GRAPH_DIR --out OUT_DIR; FAULTY for the plugin's path
    expect: Expectation

    def run_args(self, faulty_plugin):
        return [arg.replace(FAULTY, faulty_plugin) for arg in self.args]

    @functools.cached_property
    def check(self):
        return Check.from_args(list(self.args))

    def traced(self):
        """(aten-level GraphModule, inputs), as export_fx traces it."""
        fn, inputs = self.make()
        return (fn if export_fx.is_aten_graph(fn) else make_fx(fn)(*inputs)), inputs

    @functools.cached_property
    def original_failure(self):
        return self.check.evaluate(*self.traced())

    def fails(self, fx_g, inps):
        """The predicate for functorch's minifier: fails as the input graph does (`--match same`)."""
        failure = self.check.evaluate(fx_g, inps)
        return failure is not None and failure == self.original_failure


def export_case(case, out_dir):
    """Writes the case's input graph directory (graph.json + store/); returns the document."""
    fn, inputs = case.make()
    return export_fx.export(fn, inputs, out_dir)


# --- the functions ---

def seeded(*shapes):
    torch.manual_seed(0)
    return [torch.randn(*shape) for shape in shapes]


def has_mul():
    def failing_f(x, y):
        y = y / 3
        x = x + 3
        x = x * y
        return x + y
    return failing_f, seeded((3,), (3,))


def has_add_mul():
    def failing_f(x):
        x = x * 3
        x = x + 5
        x = x.cos()
        zero = x - x
        result = zero / zero
        result = result + 3
        return (result * 2,)
    return failing_f, seeded((3,))


def input_returned():
    def f(a, b, c):
        a = a.sin()
        c = c.cos()
        d = a * c
        return (a, b, c, d)
    return f, seeded((3,), (3,), (3,))


def tup_use():
    def f(a, b):
        tup = torch.std_mean(a)
        return (tup[0] + b * tup[1],)
    return f, seeded((3,), (3,))


class MockModule(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.relu = torch.nn.ReLU()

    def forward(self, x):
        y = self.relu(x)
        zero = y - y
        result = zero / zero
        result = result + 3
        return result


def module():
    return MockModule(), seeded((3,))


def sin_relu_cos():
    def inner(x):
        for _ in range(20):
            x = torch.sin(x)
        x = torch.relu(x)
        for _ in range(20):
            x = torch.cos(x)
        return x
    return inner, seeded((20, 20))


def log1p_relu():
    def inner(x):
        y = torch.log1p(x)
        b = y > 0
        # Two ops, so that suffix truncation meets a boolean output (as PyTorch's test says)
        b = torch.logical_not(b)
        b = torch.logical_not(b)
        x = torch.relu(x)
        return torch.where(b, x, x)
    # Kept above -1, where log1p is finite: an output that eager computes as NaN is not held against the
    # compiled graph (the worker's accuracy check, as dynamo's same() outside its relu-bug test mode),
    # so log1p alone would not count as failing on PyTorch's unclamped randn(20).
    return inner, [x.clamp(min=-0.9) for x in seeded((20,))]


def cancellation():
    # fp32 loses the +1 next to 1e8 (its spacing there is 8); fp64 keeps it, so a backend computing
    # in fp64 differs from eager by 1 where x > 0, yet is closer to the fp64 reference than eager.
    def f(x):
        y = torch.relu(x) * 1e8
        return ((y + 1) - y,)
    return f, seeded((64,))


def without_relu():
    def f(x, w):
        return (torch.sigmoid(x @ w) * 2.0 + 1.0,)
    return f, seeded((4, 8), (8, 3))


CHAIN_OPS = (torch.sin, torch.cos, lambda x: x + 0.5)
CHAIN_CALLS = 998  # + the placeholder and the output: 1000 nodes
CHAIN_RELU_AT = 600  # the relu's index among the graph's nodes


def chain1000():
    def f(x):
        for i in range(1, CHAIN_CALLS + 1):
            x = torch.relu(x) if i == CHAIN_RELU_AT else CHAIN_OPS[i % len(CHAIN_OPS)](x)
        return (x,)
    return f, seeded((16,))


def torchvision_model(name):
    """An untrained torchvision model (weights=None: built locally, nothing downloaded) on one 3x64x64
    image, in eval mode: the graphs of issue 30's start-up comparison beside the 1000-node chain."""
    def make():
        import torchvision
        torch.manual_seed(0)
        return getattr(torchvision.models, name)(weights=None).eval(), seeded((1, 3, 64, 64))
    return make


def relu_then_sigmoid():
    # The relu runs first and segfaults, so the input graph crashes. Removing the first two outputs
    # (PyTorch's "Remove outputs" at granularity 2) leaves the relu dead and still run; eliminating it
    # then leaves a graph that throws at the sigmoid instead: a different bug the search must not slip onto.
    def f(x):
        return (torch.relu(x), torch.cos(x), torch.sigmoid(x))
    return f, seeded((16,))


def _cases():
    segfault, abort = Failure("crash", "SIGSEGV"), Failure("crash", "SIGABRT")
    nan = Failure("nan")
    accuracy = Failure("accuracy")
    hang_timeout = ("--timeout", "2")
    cases = [
        Case("has_mul", has_mul, faulty("compile-error", "aten::mul.Tensor"),
             minimized(COMPILE_ERROR, 4, 2, holds("aten::mul.Tensor"))),
        Case("has_add_mul", has_add_mul, ("--backend", "eager", "--nan"), minimized(nan, 3, 1)),
        Case("input_returned", input_returned, faulty("output-is-input"), minimized(COMPILE_ERROR, 2, 1)),
        Case("tup_use", tup_use, faulty("compile-error", "aten::add.Tensor"),
             minimized(COMPILE_ERROR, 4, 2, holds("aten::add.Tensor"))),
        Case("module", module, ("--backend", "eager", "--nan"), minimized(nan, 3, 1)),
        Case("if_graph_minified", sin_relu_cos, faulty("compile-error"),
             minimized(COMPILE_ERROR, 3, 1, only_op_of_an_input("aten::relu", "sin_19"))),
        Case("strict_accuracy", log1p_relu, faulty("wrong", "aten::relu,aten::log1p") + ("--strict-accuracy",),
             minimized(accuracy, 3, 1, only_op_of_an_input("aten::log1p"))),
        Case("accuracy", log1p_relu, faulty("wrong", "aten::relu,aten::log1p") + ("--accuracy",),
             minimized(accuracy, 3, 1, only_op_of_an_input("aten::relu"))),
        Case("precise", cancellation, faulty("precise") + ("--accuracy",), DOES_NOT_FAIL),
    ]
    controls = {"segfault": (), "abort": (), "throw": (), "hang": hang_timeout, "wrong": ("--accuracy",),
                "compile-error": ()}
    for fault, extra in controls.items():
        cases.append(Case(f"control_{fault.replace('-', '_')}", without_relu, faulty(fault) + extra, DOES_NOT_FAIL))
    for fault, failure, extra in (("segfault", segfault, ()), ("abort", abort, ()),
                                  ("hang", Failure("timeout"), hang_timeout)):
        cases.append(Case(f"chain1000_{fault}", chain1000, faulty(fault) + extra,
                          minimized(failure, 3, 1, only_op_of_an_input("aten::relu"))))
    # Whole models with the faulty plugin's segfault at their first in-place activation (resnet18's
    # relu_, mobilenet_v2's ReLU6 as hardtanh_): the minimized graph is that call on one load.
    for model, op in (("resnet18", "aten::relu_"), ("mobilenet_v2", "aten::hardtanh_")):
        cases.append(Case(f"{model}_segfault", torchvision_model(model), faulty("segfault", op),
                          minimized(segfault, 3, 1, holds(op))))
    cases.append(Case("slippage", relu_then_sigmoid, faulty("segfault", "aten::relu", "fault.aten::sigmoid=throw"),
                      minimized(segfault, graph=holds("aten::relu", without="aten::sigmoid"))))
    # The original hangs, so its verdict comes last: the lineages that search on meanwhile see the
    # sigmoid's segfault first, and must hold it back until the original's signature is known.
    cases.append(Case("slippage_hang", relu_then_sigmoid,
                      faulty("hang", "aten::relu", "fault.aten::sigmoid=segfault") + hang_timeout,
                      minimized(Failure("timeout"), graph=holds("aten::relu", without="aten::sigmoid"))))
    return {case.name: case for case in cases}


CASES = _cases()


def main():
    parser = argparse.ArgumentParser(description="The acceptance cases of `minify run`.")
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--list", action="store_true", help="print the cases' names, one a line")
    action.add_argument("--export", metavar="NAME", help="write the case's input graph directory to --out")
    action.add_argument("--args", metavar="NAME", help="print the case's `minify run` arguments, one a line")
    parser.add_argument("--out", metavar="DIR")
    parser.add_argument("--faulty", metavar="PLUGIN.so", help="the faulty plugin, for --args")
    args = parser.parse_args()
    if args.list:
        print("\n".join(CASES))
        return
    name = args.export or args.args
    if name not in CASES:
        parser.error(f"no case {name!r} (see --list)")
    if args.export:
        if not args.out:
            parser.error("--export needs --out DIR")
        doc = export_case(CASES[name], args.out)
        print(f"{name}: {len(doc['nodes'])} nodes, {len(doc['inputs'])} inputs: wrote {args.out}")
    else:
        if not args.faulty:
            parser.error("--args needs --faulty PLUGIN.so")
        print("\n".join(CASES[name].run_args(os.path.abspath(args.faulty))))


if __name__ == "__main__":
    main()
