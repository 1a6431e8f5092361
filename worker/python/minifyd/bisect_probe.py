# One probe of `minify bisect` (docs/bisect.md): the candidate compiled with one of the compiler's
# subsystems switched off from its N-th application on, through the hooks PyTorch's own
# CompilerBisector (torch._inductor.compiler_bisector, PyTorch 2.6 and later) put into the compiler:
# the lowering of each node, each joint-graph and post-grad pass, each decomposition. The worker
# answers for one probe at a time and the coordinator runs the search (bisect/bisector.h), so a
# probe that crashes takes only its worker with it; CompilerBisector keeps its state in files under
# Inductor's cache directory instead, for one process probing after another.
import contextlib

# Config toggles CompilerBisector does not try, tried after its own: a layout or padding choice of
# Inductor's that can be the bug (issue 29 names them). Each is Inductor's option set to the value
# that switches the feature off.
EXTRA_TOGGLES = (("layout_optimization", False), ("comprehensive_padding", False))
# The config module each of CompilerBisector's config names patches, as the option prefix
# compile_backends.config_patches reads ("" is Inductor's own).
CONFIG_PREFIXES = {"inductor": "", "aot_eager_decomp_partition": "torch._functorch.config."}
# At most this many debug strings are kept for the probed subsystem, each cut to DEBUG_INFO_CHARS.
MAX_DEBUG_INFO, DEBUG_INFO_CHARS = 4096, 400


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


def plan(served_backends):
    """What a bisect can probe in this torch: the stages (torch.compile backends, CompilerBisector's
    order, those this worker serves), each stage's subsystems in CompilerBisector's order, then our
    extra toggles for Inductor; or {"unsupported": why} for a torch without CompilerBisector."""
    import torch
    module = _bisector()
    if module is None:
        return {"unsupported": f"torch {torch.__version__} has no CompilerBisector (torch._inductor.compiler_bisector, "
                               "PyTorch 2.6 and later): only the stage can be bisected"}
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
        for field, value in EXTRA_TOGGLES:
            name = f"inductor_{field}"
            if field in known and all(s["name"] != name for s in subsystems["inductor"]):
                subsystems["inductor"].append({"name": name, "kind": "config", "source": "minifyd",
                                               "options": {field: _option_text(value)}})
    return {"stages": stages, "skipped": skipped, "subsystems": subsystems}


class Probe:
    """Counts every application of the stage's subsystems while the candidate compiles; with a
    subsystem named, switches its applications from `enabled` on off (all of them for 0), as
    CompilerBisector's disable_subsystem does for the midpoint of its range, and keeps each
    application's debug info (the lowered node, the pass)."""

    def __init__(self, stage, subsystem=None, enabled=None):
        self.stage, self.subsystem, self.enabled = stage, subsystem, enabled
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
        observed = {"plan": plan(served_backends), "applications": dict(sorted(self.applications.items()))}
        if self.subsystem is not None:
            observed["debug_info"] = list(self.debug_info)
        return observed
