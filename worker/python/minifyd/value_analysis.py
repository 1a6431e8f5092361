# `analyze` in the Python worker (docs/protocol.md#analyze), as minify-worker's value_analysis.h
# does it: the values of chosen nodes, compiled and eager and in float64, each compared by the seeds'
# same() and checked for determinism over two runs. Inductor exposes the compiled values through its
# intermediate hooks (as after_aot's repro_analyze reads them); the other backends as added outputs.
import operator

import torch

from minifyd import compile_backends
from minifyd import output_checks as checks
from minifyd import worker_protocol as wp


def _cloned(value):
    """value with its tensors copied, so that a later in-place operator leaves the copy be."""
    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if isinstance(value, (tuple, list)):
        return type(value)(_cloned(item) for item in value)
    return value


def node_values(gm, inputs, names):
    """{name: value} of the named nodes of an interpreted run, each copied as it is computed."""
    found = {}

    class Recorder(torch.fx.Interpreter):
        def run_node(self, node):
            value = super().run_node(node)
            if node.name in names:
                found[node.name] = _cloned(value)
            return value

    with torch.no_grad():
        Recorder(gm).run(*inputs)
    return found


def exposed_by_outputs(gm, names, tensor_valued):
    """A copy of gm returning the named nodes' values (each tensor copied with aten.clone where it
    is made, so later in-place operators leave it be), in the order of `names`."""
    graph = torch.fx.Graph()
    env = {}
    for node in gm.graph.nodes:
        if node.op == "output":
            break
        env[node] = graph.node_copy(node, lambda n: env[n])
    returned = []
    for name in names:
        node = next(n for n in gm.graph.nodes if n.name == name)
        value = env[node]
        if name in tensor_valued:
            with graph.inserting_after(value):
                value = graph.call_function(torch.ops.aten.clone.default, (value,))
        returned.append(value)
    graph.output(tuple(returned))
    return torch.fx.GraphModule(gm, graph)


def compiled_values(backend, entry, gm, inputs, names, tensor_valued, synchronize):
    """A function running the compiled graph once and returning {name: value}, and the exposure; entry:
    Inductor's entry point (compile_backends.inductor_entry)."""
    if backend == "inductor":
        from torch._inductor.hooks import intermediate_hook
        # Read before compiling: Inductor rewrites the graph it compiles in place.
        output_names = [arg.name if isinstance(arg, torch.fx.Node) else None
                        for arg in gm.graph.output_node().args[0]]
        # A tuple-valued node's parts, as its getitems (in order) read them.
        parts = {node.name: [user.name for user in sorted(node.users, key=lambda u: u.args[1])]
                 for node in gm.graph.nodes if node.name in names and node.users
                 and all(user.target is operator.getitem for user in node.users)}
        with torch._inductor.config.patch(generate_intermediate_hooks=True):
            compiled = compile_backends.compile_graph(backend, gm, list(inputs), entry)

        def run(fresh):
            found = {}

            def save(name, value):
                if name in names:
                    found[name] = _cloned(value)

            with intermediate_hook(save):
                outputs = compiled(list(fresh))
            synchronize()
            # A graph output may have no hook of its own; a tuple-valued node none at all.
            returned = dict(zip(output_names, _cloned(list(outputs))))
            for name in names:
                if name not in found and name in returned:
                    found[name] = returned[name]
                elif name not in found and name in parts and all(part in returned for part in parts[name]):
                    found[name] = tuple(returned[part] for part in parts[name])
            return found
        return run, wp.EXPOSURE_HOOKS
    exposed = exposed_by_outputs(gm, names, tensor_valued)
    compiled = compile_backends.compile_graph(backend, exposed, list(inputs), entry)

    def run(fresh):
        outputs = compiled(list(fresh))
        synchronize()
        return dict(zip(names, _cloned(list(outputs))))
    return run, wp.EXPOSURE_OUTPUTS


def _leaves(value):
    return [leaf for _, leaf in checks.leaves(value, "")]


def _bits(tensor):
    return tensor.detach().cpu().contiguous().flatten().view(torch.uint8)


def bitwise_equal(a, b):
    left, right = _leaves(a), _leaves(b)
    if len(left) != len(right):
        return False
    for x, y in zip(left, right):
        if isinstance(x, torch.Tensor) != isinstance(y, torch.Tensor):
            return False
        if not isinstance(x, torch.Tensor):
            if x != y:
                return False
        elif x.dtype != y.dtype or x.shape != y.shape or not torch.equal(_bits(x), _bits(y)):
            return False
    return True


def _against(reference, value):
    """A floating value's distance from its fp64 reference, as wp.figures."""
    value64, reference64 = checks.as_real_double(value.to(reference.device)), checks.as_real_double(reference)
    max_abs = (value64 - reference64).abs().nan_to_num(0, 0, 0).max().item() if reference.numel() else 0.0
    return wp.figures(max_abs, checks.rmse(reference, value.to(reference.device)))


def measure(name, eager, compiled, fp64):
    """One node's measurement: the worst of its leaves (a divergence first, then the larger error)."""
    refs, results = _leaves(eager), _leaves(compiled)
    references = _leaves(fp64) if fp64 is not None else []
    if len(refs) != len(results):
        return wp.measurement(name, diverges=True,
                              note=f"the compiled value has {len(results)} parts, eager's {len(refs)}")
    worst = None
    for i, (ref, res) in enumerate(zip(refs, results)):
        if not isinstance(ref, torch.Tensor):
            continue
        reference = references[i] if i < len(references) and isinstance(references[i], torch.Tensor) else None
        failure, max_abs, _, _ = checks.compare_leaf(ref, res, reference, strict=True)
        key = (failure is not None, max_abs)
        if worst is not None and key <= worst[0]:
            continue
        floating = (checks.is_floating(ref) and isinstance(res, torch.Tensor) and res.shape == ref.shape
                    and reference is not None)
        worst = (key, wp.measurement(
            name, dtype=str(ref.dtype).replace("torch.", ""), shape=ref.shape, measured=True,
            diverges=failure is not None, max_abs_error=max_abs,
            compiled=_against(reference, res) if floating else None,
            eager=_against(reference, ref) if floating else None, note=failure or ""))
    return worst[1] if worst else wp.measurement(name, note="not a tensor")
