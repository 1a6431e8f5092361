# The torch.compile backends the Python worker serves, compiled the way after_aot compiles the graph
# it dumped: the graph after AOT autograd, on real inputs. Inductor through compile_fx_inner (run
# with the boxed calling convention, a list of inputs), or, for a graph that has not been through AOT
# autograd (ENTRY_OPTION), through compile_fx as torch.compile compiles it; the AOT backends through
# Dynamo's registry. Other --backend-opt KEY=VALUE pairs become config patches.
import ast
import contextlib
import difflib
import importlib
import os

# What each backend is for: the list the worker's hello announces.
BACKENDS = ("inductor", "aot_eager", "aot_eager_decomp_partition")
# Config modules a key may name by prefix; a key without one is Inductor's (max_autotune, cpp.X).
CONFIG_MODULES = {"torch._inductor.config.": "torch._inductor.config",
                  "torch._dynamo.config.": "torch._dynamo.config",
                  "torch._functorch.config.": "torch._functorch.config"}


# The backend option that says which of Inductor's entry points compiles the graph: compile_fx_inner
# (the default) for a graph after AOT autograd (after_aot's dump, a capture, export_fx.py --aot), as
# after_aot's repro compiles it; compile_fx for an aten graph before it (export_fx.py without --aot,
# which records this option in the graph's origin.json), as torch.compile does: AOT autograd with
# Inductor's decompositions and its joint-graph passes first, so the inner compiler is never handed
# operators it expects decomposed.
ENTRY_OPTION = "minifyd.inductor_entry"
ENTRIES = ("compile_fx_inner", "compile_fx")


class OptionError(Exception):
    """A backend option that names no config key, that the rule refuses, or a value of the wrong type."""


# Which config a job may set (docs/security.md, "Config is data"): options come from a graph directory's
# origin.json and a repro file's config lines as well as from --backend-opt, and a config value may name a
# directory PyTorch then writes into (trace.debug_dir, debug_dir_root, cache directories), a compiler or a
# command it runs (cpp.cxx), or code (a pass, a callable). So an option may be set only to what names no
# file and runs nothing: a bool, an int or a float, when its default is one of those (or None); a string only
# for the options listed here, to one of their values. Options that make PyTorch write files wherever their
# directory points are refused whatever their value (the keys as --backend-opt spells them; a key ending in
# "." refuses every option under it).
STRING_OPTIONS = {
    "cpp.inject_relu_bug_TESTING_ONLY": ("compile_error", "runtime_error", "accuracy"),
    "cpp.inject_log1p_bug_TESTING_ONLY": ("compile_error", "runtime_error", "accuracy"),
    "triton.inject_relu_bug_TESTING_ONLY": ("compile_error", "runtime_error", "accuracy"),
    "max_autotune_gemm_backends": ("ATEN", "TRITON", "ATEN,TRITON", "ATEN,TRITON,CPP", "ATEN,TRITON,CUTLASS"),
    "max_autotune_conv_backends": ("ATEN", "TRITON", "ATEN,TRITON"),
}
REFUSED_OPTIONS = {
    "trace.": "it makes Inductor write its debug files (into trace.debug_dir)",
    "save_args": "it makes Inductor save a compiled graph's arguments to files",
    "cpp.enable_kernel_profile": "it makes Inductor's kernels write profiles to files",
    "torch._dynamo.config.replay_record_enabled": "it makes Dynamo write replay records (into debug_dir_root)",
}


def option_refusal(key, default, text):
    """Why the option `key` (whose default value is `default`) may not be set to `text`, or None (the rule above)."""
    for refused, why in REFUSED_OPTIONS.items():
        if key == refused or (refused.endswith(".") and key.startswith(refused)):
            return f"backend option {key} is refused: {why} (docs/security.md)"
    if key in STRING_OPTIONS:
        if text not in STRING_OPTIONS[key]:
            return f"backend option {key}={text!r} is refused: its values are {', '.join(STRING_OPTIONS[key])}"
        return None
    if default is None:
        try:
            value = ast.literal_eval(text.strip())
        except (ValueError, SyntaxError, RecursionError):
            value = text
        if value is None or isinstance(value, (bool, int, float)):
            return None
        return (f"backend option {key}={text!r} is refused: an option whose default is None is set only to a bool "
                "or a number, not to a string such as a path or a command (docs/security.md)")
    if not isinstance(default, (bool, int, float)):
        return (f"backend option {key} is refused: a job sets only options whose values are bools and numbers, "
                f"not a {type(default).__name__} such as a path or a command (docs/security.md)")
    return None


def _typed_value(key, text, default):
    """text as a value of the type of the key's default (bools as true/false, as in the seeds' configs)."""
    if isinstance(default, bool):
        lowered = text.strip().lower()
        if lowered in ("true", "1"):
            return True
        if lowered in ("false", "0"):
            return False
        raise OptionError(f"backend option {key}={text}: expected true or false")
    if isinstance(default, (int, float)):
        try:
            return type(default)(text)
        except ValueError:
            raise OptionError(f"backend option {key}={text}: expected {type(default).__name__}") from None
    if isinstance(default, str):
        return text
    # None (an Optional[str] such as cpp.inject_relu_bug_TESTING_ONLY), lists, dicts: a Python
    # literal when it reads as one, else the text itself.
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text
    if default is not None and not isinstance(value, type(default)):
        raise OptionError(f"backend option {key}={text}: expected a {type(default).__name__} literal")
    return value


def config_patches(options):
    """{config module: {key: typed value}} for the --backend-opt pairs; OptionError for an unknown key or one
    the rule refuses."""
    patches = {}
    for key, text in sorted(options.items()):
        if key == ENTRY_OPTION:
            continue
        module_name, name = "torch._inductor.config", key
        for prefix, module in CONFIG_MODULES.items():
            if key.startswith(prefix):
                module_name, name = module, key[len(prefix):]
        config = importlib.import_module(module_name)
        known = config.get_config_copy()
        if name not in known:
            close = difflib.get_close_matches(name, known, n=3)
            hint = f" (did you mean {', '.join(close)}?)" if close else ""
            raise OptionError(f"backend option {key!r}: {module_name} has no option {name!r}{hint}")
        refusal = option_refusal(key, known[name], text)
        if refusal:
            raise OptionError(refusal)
        patches.setdefault(module_name, {})[name] = _typed_value(key, text, known[name])
    return patches


@contextlib.contextmanager
def patched_config(patches):
    with contextlib.ExitStack() as stack:
        for module_name, values in patches.items():
            stack.enter_context(importlib.import_module(module_name).patch(values))
        yield


def _traced_for_inputs(gm, inputs):
    """(gm, example inputs) as the backend compiles them. With a SymInt input (an int among the inputs)
    gm is traced again with dynamic shapes, as after_aot's run_repro traces a repro of tracing_mode
    'symbolic' (make_fx(tracing_mode="symbolic")), and the example inputs are the trace's fake values
    (symbolic sizes, SymInts), as Dynamo hands them to the backend: on the real inputs Inductor would
    lay the tensors out with their concrete sizes while the shapes computed from the SymInts stay
    symbols, and fail lowering the view between them. The worker decides by the inputs, not by the
    repro's origin: a graph directory with SymInt inputs came from a dynamic-shape graph."""
    if not any(isinstance(value, int) for value in inputs):
        return gm, inputs
    from torch.fx.experimental.proxy_tensor import make_fx
    traced = make_fx(gm, tracing_mode="symbolic")(*inputs)
    return traced, [node.meta["val"] for node in traced.graph.nodes if node.op == "placeholder"]


def _returning_tuple(gm):
    """Whether gm returned a bare value that it now returns as a 1-tuple. Inductor's inner compiler and AOT
    autograd take only graphs that return a tuple or list, as every graph Dynamo hands a backend does;
    compile_fx wraps any other graph's output so (make_graph_return_tuple), and so does the worker, so
    that a graph exported without --aot fails only where torch.compile would."""
    from torch._inductor.compile_fx import graph_returns_tuple
    if graph_returns_tuple(gm):
        return False
    output = next(node for node in reversed(gm.graph.nodes) if node.op == "output")
    output.args = ((output.args[0],),)
    gm.recompile()
    return True


def inductor_entry(options):
    """The entry point the backend options name (ENTRY_OPTION); OptionError for another value."""
    entry = options.get(ENTRY_OPTION, ENTRIES[0])
    if entry not in ENTRIES:
        raise OptionError(f"backend option {ENTRY_OPTION}={entry}: expected one of {', '.join(ENTRIES)}")
    return entry


def compile_graph(backend, gm, inputs, entry=ENTRIES[0]):
    """The compiled graph as a function of a list of inputs (which it may consume); entry: Inductor's
    entry point (inductor_entry)."""
    gm, inputs = _traced_for_inputs(gm, inputs)
    if backend == "inductor" and entry == "compile_fx":
        from torch._inductor.compile_fx import compile_fx
        compiled = compile_fx(gm, inputs)
        return lambda args: compiled(*args)
    # Dynamo hands every backend a graph that returns a tuple, and AOT autograd (the aot_* backends)
    # and Inductor's inner compiler take no other: a bare output is wrapped, and unwrapped after.
    wrapped = _returning_tuple(gm)
    if backend == "inductor":
        from torch._inductor.compile_fx import compile_fx_inner
        compiled = compile_fx_inner(gm, inputs)  # boxed: takes the list and may clear it
        return (lambda args: compiled(args)[0]) if wrapped else compiled
    from torch._dynamo.backends.registry import lookup_backend
    compiled = lookup_backend(backend)(gm, inputs)
    return (lambda args: compiled(*args)[0]) if wrapped else (lambda args: compiled(*args))


@contextlib.contextmanager
def compile_pool(threads):
    """What compiles meanwhile compiles its Triton kernels `threads` at a time (Inductor's compile_threads,
    at most the machine's cores) in Inductor's pool of processes. The pool (a python that imports torch,
    then its workers) starts at once, so that its start overlaps the graph's lowering; Inductor compiles
    in this process whatever comes before the pool is ready. Later compiles, one at a time again, leave
    the pool idle: it ends with this process (its processes watch it), not here, where shutting it down
    took 0.8 to 1.1 s on an H200."""
    from torch._inductor import async_compile, config
    with config.patch(compile_threads=max(1, min(threads, os.cpu_count() or 1))):
        async_compile.AsyncCompile.warm_pool()
        # PyTorch 2.7 on starts the pool's workers once asked (its wakeup); 2.6 with the pool itself.
        getattr(async_compile.AsyncCompile, "wakeup", lambda: None)()
        yield


def warm_up(backend, device):
    """Compiles and runs a tiny graph once on device, so the lazy imports and one-time set-up of the
    backend (Inductor's codegen modules, its code cache, the C++ compiler's or Triton's first run,
    its compile workers) are paid by the worker at start, not by its first candidate."""
    import torch
    from torch.fx.experimental.proxy_tensor import make_fx

    def tiny(x):
        return (torch.add(x, 1),)

    x = torch.ones(4, device=device)
    with torch.no_grad():
        compile_graph(backend, make_fx(tiny)(x), [x])([x])


def forget_compiled():
    """Drops what Dynamo and Inductor keep in this process's memory of earlier compiles (compiled
    modules and kernels, loaded code, guards), so that the next candidate compiles as it would in a fresh
    process; Inductor's on-disk caches, which hold only what compiled, stay."""
    import torch._dynamo
    from torch._inductor.utils import clear_inductor_caches
    torch._dynamo.reset()
    clear_inductor_caches()
