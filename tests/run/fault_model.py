# A Python model of what `minify run` counts as a failure, so that PyTorch's minifier can be given
# the same bug to chase: the eager backend, the faulty plugin's faults (tests/plugins/faulty_backend.cpp)
# and the --nan, --accuracy and --strict-accuracy checks (worker/request_handler.cpp). A failure is
# modelled down to what `--match same` compares: kind, signal or exception type, and for the
# plugin's own exceptions their message, which names a node (a template in the tables below).
import argparse
import dataclasses
import os
import sys

import torch
from torch.utils._pytree import tree_flatten

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "worker", "python"))
from minifyd import graph_writer as gw  # noqa: E402
from output_comparison import outputs_agree  # noqa: E402


@dataclasses.dataclass(frozen=True)
class Failure:
    kind: str          # as minify's verdicts: crash, exception, timeout, accuracy, nan
    detail: str = ""   # crash: the signal; exception: the exception type
    message: str = ""  # the plugin's exceptions: their message ({op}, {node} in the tables); otherwise empty

    def to_json(self):
        return dataclasses.asdict(self)


# The faults the plugin injects while a node of a chosen operator runs, and the failure each becomes.
RUNTIME_FAULTS = {
    "segfault": Failure("crash", "SIGSEGV"),
    "abort": Failure("crash", "SIGABRT"),
    "throw": Failure("exception", "std::runtime_error", "injected exception in {op} at node '{node}'"),
    "hang": Failure("timeout"),
}
COMPILE_ERROR = Failure("exception", "faulty::CompileError")
REFUSED_OP = dataclasses.replace(COMPILE_ERROR, message="cannot compile {op} (node '{node}')")
RETURNED_INPUT = dataclasses.replace(COMPILE_ERROR, message="an output of the graph is its input '{node}'")
# Faults of the whole graph rather than of an operator: the plugin ignores `op` for them.
GRAPH_FAULTS = ("output-is-input", "precise")
OP_FAULTS = (*RUNTIME_FAULTS, "compile-error", "wrong")


def kind_and_detail(failure):
    """What a case's expected failure, which names no node, says of a failure (None: it passes)."""
    return None if failure is None else (failure.kind, failure.detail)


def _at_node(failure, node):
    """failure as it happens at node: its message, a template, names the node as the plugin's does."""
    return dataclasses.replace(failure, message=failure.message.format(op=op_name(node), node=node.name))


class InjectedFailure(Exception):
    def __init__(self, failure):
        super().__init__(failure)
        self.failure = failure


def op_name(node):
    """The operator name the plugin matches `op` against ("aten::mul.Tensor"), or None."""
    if node.op != "call_function":
        return None
    return gw.target_name(node.target, node.name)


def _flat(outputs):
    return tree_flatten(outputs)[0]


def _to_fp64(value):
    return value.to(torch.float64) if isinstance(value, torch.Tensor) and value.is_floating_point() else value


def _perturbed(value):
    """Clearly wrong numbers, as the plugin's perturb: +1, or negation for bools."""
    if isinstance(value, torch.Tensor):
        return value.logical_not() if value.dtype == torch.bool else value + 1
    if isinstance(value, (tuple, list)):
        return type(value)(_perturbed(item) for item in value)
    return value


def _non_finite(values):
    return any(isinstance(v, torch.Tensor) and (v.is_floating_point() or v.is_complex()) and
               not torch.isfinite(v).all() for v in values)


class _FaultyInterpreter(torch.fx.Interpreter):
    """Runs a graph as the plugin does: like eager, with the chosen operators' faults injected.
    on_fault(fault) is called before a runtime fault is reported: it may act the fault out."""

    def __init__(self, gm, op_faults, on_fault):
        super().__init__(gm)
        self.op_faults, self.on_fault = op_faults, on_fault

    def run_node(self, node):
        value = super().run_node(node)
        fault = self.op_faults.get(op_name(node))
        if fault == "wrong":
            return _perturbed(value)
        if fault in RUNTIME_FAULTS:
            if self.on_fault:
                self.on_fault(fault)
            raise InjectedFailure(_at_node(RUNTIME_FAULTS[fault], node))
        return value


@dataclasses.dataclass(frozen=True)
class Check:
    """What one `minify run` command line counts as failing."""
    op_faults: dict       # operator name -> fault, from the faulty plugin's options; empty for eager
    graph_fault: str      # one of GRAPH_FAULTS, or None
    accuracy: str         # "accuracy", "strict-accuracy" or None
    nan: bool
    timeout: float        # seconds before a query counts as hung

    @staticmethod
    def from_args(args):
        """From `minify run` arguments (those after GRAPH_DIR, less --out and the search limits)."""
        parser = argparse.ArgumentParser(prog="minify run", add_help=False)
        parser.add_argument("--backend", required=True)
        parser.add_argument("--backend-opt", action="append", default=[])
        parser.add_argument("--accuracy", dest="accuracy", action="store_const", const="accuracy")
        parser.add_argument("--strict-accuracy", dest="accuracy", action="store_const", const="strict-accuracy")
        parser.add_argument("--nan", action="store_true")
        parser.add_argument("--timeout", type=float, default=60.0)
        parsed = parser.parse_args(args)
        options = dict(opt.split("=", 1) for opt in parsed.backend_opt)
        op_faults, graph_fault = {}, None
        if parsed.backend.startswith("plugin:"):
            op_faults, graph_fault = _faulty_plugin_faults(options)
        elif parsed.backend != "eager" or options:
            raise ValueError(f"the fault model knows the eager backend and the faulty plugin, not {args}")
        return Check(op_faults, graph_fault, parsed.accuracy, parsed.nan, parsed.timeout)

    def evaluate(self, gm, inputs, on_fault=None):
        """The Failure of one query of gm on inputs, or None when it passes."""
        compile_failure = self._compile_failure(gm)
        if compile_failure:
            return compile_failure
        try:
            compiled = self._compiled_outputs(gm, inputs, on_fault)
        except InjectedFailure as injected:
            return injected.failure
        except Exception as error:  # an operator that throws in the compiled graph
            return Failure("exception", type(error).__name__)
        if self.nan and not _non_finite(inputs) and _non_finite(compiled):
            return Failure("nan")
        if self.accuracy and not self._accurate(gm, inputs, compiled):
            return Failure("accuracy")
        return None

    def _compile_failure(self, gm):
        # As the plugin's compile: outputs that are inputs, then the first node of a refused operator.
        if self.graph_fault == "output-is-input":
            output = next(n for n in gm.graph.nodes if n.op == "output")
            returned = next((arg for arg in _flat(output.args[0])
                             if isinstance(arg, torch.fx.Node) and arg.op == "placeholder"), None)
            if returned is not None:
                return _at_node(RETURNED_INPUT, returned)
        refused = next((n for n in gm.graph.nodes if self.op_faults.get(op_name(n)) == "compile-error"), None)
        return None if refused is None else _at_node(REFUSED_OP, refused)

    def _compiled_outputs(self, gm, inputs, on_fault):
        if self.graph_fault == "precise":
            # The whole graph in float64, returned in eager's dtypes: more accurate than eager.
            eager = _flat(gm(*inputs))
            precise = _flat(gm(*map(_to_fp64, inputs)))
            return [p.to(e.dtype) if isinstance(p, torch.Tensor) else p for p, e in zip(precise, eager)]
        return _flat(_FaultyInterpreter(gm, self.op_faults, on_fault).run(*inputs))

    def _accurate(self, gm, inputs, compiled):
        # As the worker: `accuracy` needs the fp64 reference, `strict-accuracy` does without it.
        eager = _flat(gm(*inputs))
        try:
            fp64 = _flat(gm(*map(_to_fp64, inputs)))
        except Exception:
            if self.accuracy == "accuracy":
                return True
            fp64 = None
        return outputs_agree(eager, compiled, fp64, strict=self.accuracy == "strict-accuracy")


def _faulty_plugin_faults(options):
    """(op_faults, graph_fault) from the plugin's options: op (default aten::relu) and fault, plus
    fault.OP=F for one operator's own fault."""
    op_faults, graph_fault = {}, None
    fault = options.get("fault")
    if fault in GRAPH_FAULTS:
        graph_fault = fault
    elif fault in OP_FAULTS:
        for op in options.get("op", "aten::relu").split(","):
            op_faults[op.strip()] = fault
    else:
        raise ValueError(f"fault {fault!r} is not modelled (known: {', '.join(OP_FAULTS + GRAPH_FAULTS)})")
    for key, value in options.items():
        if key.startswith("fault."):
            if value not in OP_FAULTS:
                raise ValueError(f"{key}={value}: not an operator fault ({', '.join(OP_FAULTS)})")
            op_faults[key[len("fault."):]] = value
        elif key not in ("op", "fault"):
            raise ValueError(f"faulty plugin option {key!r} is not modelled")
    return op_faults, graph_fault
