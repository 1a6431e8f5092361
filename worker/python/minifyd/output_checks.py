# The checks of a compiled run's outputs, one rule for every place that judges them: the Python
# worker's verdicts (minifyd/worker_requests.py), `minify capture --accuracy` (minifyd/capture_compiler.py)
# and every repro.py, which embeds this module (minifyd/repro_template.py says how). The nan check: an
# output holds NaN or Inf while no input does. The accuracy check: the seeds' same_two_models, against
# eager and an fp64 run of the same graph. Needs only torch, as repro.py does.
import math

import torch

# As `minify query --accuracy` (the seeds' same_two_models): a floating output passes when allclose
# to eager with this rtol and atol, or else when its RMSE against an fp64 run of the graph is at
# most 2x eager's RMSE against it (3x for float16 and bfloat16) plus ACCURACY_TOLERANCE / 10.
# `accuracy` ignores non-floating outputs; `strict-accuracy` requires them equal to eager's.
ACCURACY_TOLERANCE = 1e-3


def leaves(value, path):
    """(path, value) for every leaf of the nested tuples and lists a graph returns."""
    if isinstance(value, (tuple, list)):
        for i, item in enumerate(value):
            yield from leaves(item, f"{path}[{i}]")
    else:
        yield path, value


def is_floating(tensor):
    return tensor.is_floating_point() or tensor.is_complex()


def non_finite(tensor):
    """How many elements of a floating tensor are NaN or Inf (0 for other tensors)."""
    if not isinstance(tensor, torch.Tensor) or not is_floating(tensor):
        return 0
    return int((~torch.isfinite(tensor.detach())).sum().item())


def nan_failure(outputs):
    """The nan check's failure text, or None when every output is finite."""
    for path, value in leaves(outputs, "output"):
        count = non_finite(value)
        if count:
            nans = int(torch.isnan(value.detach()).sum().item())
            what = "Inf" if nans == 0 else "NaN" if nans == count else "NaN and Inf"
            return f"{path} holds {what} ({count} of {value.numel()} elements) while no input does"
    return None


def as_real_double(tensor):
    tensor = tensor.detach()
    return (torch.view_as_real(tensor.resolve_conj()) if tensor.is_complex() else tensor).to(torch.float64)


def rmse(reference, value):
    if reference.numel() == 0:
        return 0.0
    return (as_real_double(reference) - as_real_double(value)).pow(2).mean().sqrt().item()


def fp64_graph(load):
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


def run_in_fp64(load):
    """(outputs, inputs after the run) of the graph computed in float64, or None when the graph cannot
    run that way."""
    gm, inputs = fp64_graph(load)
    try:
        return gm(*inputs), inputs
    except Exception as error:  # noqa: BLE001  (as the worker: no fp64 reference, no verdict from it)
        print(f"fp64 reference failed: {type(error).__name__}: {error}")
        return None


def results_of(outputs, inputs):
    """[(path, value)] of what a run of the graph leaves behind: its outputs, and with `inputs` (the
    tensors it ran on) each of them after the run, since a graph may update an input in place (AOT
    autograd keeps an input's mutation in the graph as a copy_ into it) and a wrong update is a wrong
    result that no output shows."""
    found = list(leaves(outputs, "output"))
    if inputs is not None:
        found += [(f"input[{i}]", value) for i, value in enumerate(inputs)]
    return found


def compare_leaf(ref, res, reference, strict):
    """The seeds' same() on one leaf: (failure text or None, max abs error against eager, rmse of the
    compiled value against fp64, eager's). reference: the fp64 leaf, or None."""
    if not isinstance(ref, torch.Tensor) or not isinstance(res, torch.Tensor):
        if type(ref) is not type(res) or ref != res:
            return f"{res!r} differs from eager's {ref!r}", 0.0, None, None
        return None, 0.0, None, None
    if ref.shape != res.shape:
        return f"shape {list(res.shape)} differs from eager's {list(ref.shape)}", 0.0, None, None
    if not is_floating(ref):
        if strict and not torch.equal(ref, res.to(ref.dtype).to(ref.device)):
            return f"{str(ref.dtype).replace('torch.', '')} values differ from eager's", 0.0, None, None
        return None, 0.0, None, None
    ref64, res64 = as_real_double(ref), as_real_double(res.to(ref.device))
    max_abs = (res64 - ref64).abs().nan_to_num(0, 0, 0).max().item() if ref.numel() else 0.0
    rmse_compiled = rmse_eager = None
    if isinstance(reference, torch.Tensor):
        rmse_eager, rmse_compiled = rmse(reference, ref), rmse(reference, res.to(ref.device))
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


def accuracy_failure(load, compiled, strict, compiled_inputs=None):
    """The accuracy check's failure text, or None (the criterion is at ACCURACY_TOLERANCE). load()
    gives a fresh (GraphModule, inputs) for the eager and the fp64 run; compiled_inputs, when given,
    are the inputs the compiled run ran on, compared after it as outputs are (results_of)."""
    eager_gm, eager_inputs = load()
    eager_outputs = eager_gm(*eager_inputs)
    with_inputs = compiled_inputs is not None
    eager = results_of(eager_outputs, eager_inputs if with_inputs else None)
    results = results_of(compiled, compiled_inputs)
    if len(eager) != len(results):
        return f"the compiled graph returns {len(results)} values, eager {len(eager)}"
    fp64_run = run_in_fp64(load)
    if fp64_run is None and not strict:
        return None
    fp64 = ([value for _, value in results_of(fp64_run[0], fp64_run[1] if with_inputs else None)]
            if fp64_run is not None else None)
    for i, ((path, ref), (_, res)) in enumerate(zip(eager, results)):
        found = compare_leaf(ref, res, fp64[i] if fp64 is not None else None, strict)[0]
        if found:
            return f"{path}: {found}"
    return None
