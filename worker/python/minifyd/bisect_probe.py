# One probe of `minify bisect` (docs/bisect.md): the candidate compiled with one of the compiler's
# subsystems switched off from its N-th application on, through the hooks PyTorch's own
# CompilerBisector (torch._inductor.compiler_bisector, PyTorch 2.6 and later) put into the compiler:
# the lowering of each node, each joint-graph and post-grad pass, each decomposition. The worker
# answers for one probe at a time and the coordinator runs the search (bisect/bisector.h), so a
# probe that crashes takes only its worker with it; CompilerBisector keeps its state in files under
# Inductor's cache directory instead, for one process probing after another.
import contextlib

# Config toggles CompilerBisector does not try, tried after its own: a layout or padding choice of
# Inductor's that can be the bug. Each is Inductor's option set to the value that switches the
# feature off, with when the feature can change the graph's code at all (graph facts, Probe): layout
# optimization only for a graph with convolutions (GraphLowering.decide_layout_opt), padding on the
# CPU only where Inductor's disable_padding_cpu is off (compile_fx drops it there otherwise).
EXTRA_TOGGLES = (("layout_optimization", False, lambda facts, config: facts["convolution"]),
                 ("comprehensive_padding", False,
                  lambda facts, config: facts["gpu"] or not config.get("disable_padding_cpu", False)))
# The config module each of CompilerBisector's config names patches, as the option prefix
# compile_backends.config_patches reads ("" is Inductor's own).
CONFIG_PREFIXES = {"inductor": "", "aot_eager_decomp_partition": "torch._functorch.config."}
# CompilerBisector's stages that this worker serves, in its order, for a torch without it.
KNOWN_STAGES = ("aot_eager", "aot_eager_decomp_partition", "inductor")
# At most this many debug strings are kept for the probed subsystem, each cut to DEBUG_INFO_CHARS.
MAX_DEBUG_INFO, DEBUG_INFO_CHARS = 4096, 400


def graph_facts(gm, inputs):
    """What decides whether a toggle can matter for the graph (EXTRA_TOGGLES), read before it compiles."""
    import torch
    values = [*inputs, *gm.state_dict().values()]
    return {"convolution": any(node.op == "call_function" and node.target is torch.ops.aten.convolution.default
                               for node in gm.graph.nodes),
            "gpu": any(isinstance(value, torch.Tensor) and value.is_cuda for value in values)}


def _bisector():
    """CompilerBisector's module, or None where this torch has none."""
    try:
        from torch._inductor import compiler_bisector
    except ImportError:
        return None
    return compiler_bisector if hasattr(compiler_bisector.CompilerBisector, "disable_subsystem") else None


def _option_text(value):
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def _subsystem(stage, entry):
    """One of CompilerBisector's subsystems as the plan names it: a subsystem applied many times
    (bisected to the application), or a config change (tried once)."""
    if isinstance(entry, str):  # the first releases listed names only, every one applied many times
        return {"name": entry, "kind": "applications"}
    field = getattr(entry, "config_field", None)
    if field is None:
        return {"name": entry.name, "kind": "applications"}
    prefix = CONFIG_PREFIXES.get(entry.config_name)
    if prefix is None:
        return None  # a config module this worker cannot patch: left out, and the plan says nothing of it
    return {"name": entry.name, "kind": "config", "options": {prefix + field: _option_text(entry.config_value)}}


def _current_value(option):
    """An option's value under the config now in force (the request's backend options applied)."""
    import importlib
    module, _, field = option.rpartition(".")
    config = importlib.import_module(module or "torch._inductor.config").get_config_copy()
    return _option_text(config[field]) if field in config else None


def plan(served_backends, facts):
    """What a bisect can probe in this torch: the stages (torch.compile backends, CompilerBisector's
    order, those this worker serves), each stage's subsystems in CompilerBisector's order, then our
    extra toggles for Inductor where they apply (facts: graph_facts()); or {"unsupported": why} for a
    torch without CompilerBisector. A config toggle whose value is in force already (a backend option
    set it) is left out: probing it would compile the graph as it failed."""
    import torch
    module = _bisector()
    if module is None:
        return {"stages": [stage for stage in KNOWN_STAGES if stage in served_backends],
                "unsupported": f"torch {torch.__version__} has no CompilerBisector (torch._inductor.compiler_bisector, "
                               "PyTorch 2.6 and later): only the stage is bisected"}
    stages = [stage for stage in module.BACKENDS if stage in served_backends]
    # "eager" is the reference every verdict is judged against; a stage this worker does not serve
    # (aot_eager_decomp_partition_crossref) is named, not probed.
    skipped = [stage for stage in module.BACKENDS if stage not in served_backends]
    subsystems = {}
    for stage in stages:
        listed = [s for s in (_subsystem(stage, entry) for entry in module.BACKENDS[stage]) if s]
        for entry in listed:
            entry["source"] = "CompilerBisector"
        subsystems[stage] = listed
    if "inductor" in subsystems:
        from torch._inductor import config
        known = config.get_config_copy()
        for field, value, applies in EXTRA_TOGGLES:
            name = f"inductor_{field}"
            if field in known and applies(facts, known) and all(s["name"] != name for s in subsystems["inductor"]):
                subsystems["inductor"].append({"name": name, "kind": "config", "source": "minifyd",
                                               "options": {field: _option_text(value)}})
    for stage, listed in subsystems.items():
        subsystems[stage] = [s for s in listed if s["kind"] != "config" or
                             any(_current_value(key) != value for key, value in s["options"].items())]
    return {"stages": stages, "skipped": skipped, "subsystems": subsystems}


def isolate():
    """Makes this process deaf to CompilerBisector's state outside its own probes. CompilerBisector
    keeps its state in files under Inductor's cache directory (bisect/), which every process reads:
    at import (bisection on or off), in torch.compile (the stage) and in the aot_eager_decomp_partition
    backend (a config change). A user's bisect running beside the worker, or one killed midway (it
    leaves the files behind), would switch lowerings off in every candidate's compile and change its
    verdict. The worker answers only its own probes (Probe.installed)."""
    module = _bisector()
    if module is None:
        return
    cls = module.CompilerBisector
    cls.bisection_enabled = False
    cls.get_backend = classmethod(lambda _cls: None)
    cls.get_subsystem = classmethod(lambda _cls: None)
    cls.get_config_change = classmethod(lambda _cls, _config_name: None)


class Probe:
    """Counts every application of the stage's subsystems while the candidate compiles; with a
    subsystem named, switches its applications from `enabled` on off (all of them for 0), as
    CompilerBisector's disable_subsystem does for the midpoint of its range, and keeps each
    application's debug info (the lowered node, the pass)."""

    def __init__(self, stage, facts, subsystem=None, enabled=None):
        self.stage, self.subsystem, self.enabled = stage, subsystem, enabled
        self.facts = facts
        self.applications, self.debug_info = {}, []

    def disable_subsystem(self, backend, subsystem, debug_info=None):
        if backend != self.stage:
            return False
        index = self.applications.get(subsystem, 0)
        self.applications[subsystem] = index + 1
        if subsystem != self.subsystem:
            return False
        if len(self.debug_info) < MAX_DEBUG_INFO:
            self.debug_info.append(str(debug_info())[:DEBUG_INFO_CHARS] if debug_info is not None else "")
        return self.enabled is not None and index >= self.enabled

    @contextlib.contextmanager
    def installed(self):
        """CompilerBisector's hook answered by this probe, and bisection on (so Inductor's FX graph
        cache, which CompilerBisector bypasses while bisecting, does not hand back a graph compiled
        under another probe)."""
        module = _bisector()
        if module is None:
            yield
            return
        cls = module.CompilerBisector
        saved_enabled, saved_hook = cls.bisection_enabled, cls.__dict__["disable_subsystem"]
        cls.bisection_enabled = True
        cls.disable_subsystem = classmethod(lambda _cls, backend, subsystem, debug_info=None:
                                            self.disable_subsystem(backend, subsystem, debug_info))
        try:
            yield
        finally:
            cls.disable_subsystem = saved_hook
            cls.bisection_enabled = saved_enabled

    def report(self, served_backends):
        """What the probe saw; the plan only from a probe of a stage alone, the one the coordinator reads it from."""
        observed = {"applications": dict(sorted(self.applications.items()))}
        if self.subsystem is None:
            observed["plan"] = plan(served_backends, self.facts)
        else:
            observed["debug_info"] = list(self.debug_info)
        return observed
