# The code Inductor generates for a graph (its output code: the Python wrapper with every kernel's
# C++ or Triton source in it, as TORCH_COMPILE_DEBUG's output_code.py holds it), and which of its
# kernels fails. The code is taken where PyTorch's own tests take it (run_and_get_code patches
# GraphLowering.save_output_code, which Inductor calls with each module's code before it writes
# and loads it), so a module whose kernels fail to compile is still seen. A failing kernel is named
# from the generated module's line where the failure passed: the kernel's definition
# (`cpp_fused_relu_0 = async_compile.cpp_pybinding(...)`, a compile error) or its call in `call()`
# (a run error); a kernel that kills the process is named by the last KERNEL_MARK line the run
# wrote to stderr before each kernel call. Each kernel's origins, the nodes of the lowered graph
# fused into it, are recorded where Inductor's schedulings name a kernel for its nodes
# (define_kernel), so that the failing kernel's nodes can be reported too: the search tries them
# alone first (docs/architecture.md, "the failing kernel first").
import contextlib
import importlib
import os
import re
import sys

KERNEL_MARK = "minifyd-kernel: "
# A kernel's definition or its call in a generated module: its name.
DEFINITION = re.compile(r"^\s*(\w+)\s*=\s*async_compile\.\w+\(")
CALL = re.compile(r"^\s*(?:\w+\s*=\s*)?(\w+)(?:\.run)?\(")
# At most this much code is returned per module.
MAX_MODULE_CHARS = 4 << 20
# The schedulings whose define_kernel(src_code, nodes, ...) returns the name of the kernel it defines
# for the scheduler nodes `nodes` (a C++ kernel's, a Triton kernel's node schedule).
SCHEDULINGS = (("torch._inductor.codegen.cpp", "CppScheduling"), ("torch._inductor.codegen.triton", "TritonScheduling"))


def _generated_dir():
    from torch._inductor.runtime.cache_dir_utils import cache_dir
    return os.path.realpath(cache_dir()) + os.sep


def kernel_at(source, line_number, names):
    """The kernel whose definition or call is line `line_number` (from 1) of a module's source, if any."""
    lines = source.splitlines()
    if not 0 < line_number <= len(lines):
        return ""
    line = lines[line_number - 1]
    for pattern in (DEFINITION, CALL):
        found = pattern.match(line)
        if found and found.group(1) in names:
            return found.group(1)
    return ""


def kernel_names(source):
    return {found.group(1) for found in map(DEFINITION.match, source.splitlines()) if found}


def origin_names(nodes):
    """The names of the FX nodes Inductor lowered into scheduler nodes `nodes` (its `origins`); markers
    of a node schedule (no `node`) and extern kernels' nodes without origins add none."""
    names = set()
    for node in nodes if isinstance(nodes, (list, tuple)) else ():
        for origin in getattr(getattr(node, "node", None), "origins", None) or ():
            if getattr(origin, "op", None) == "call_function":
                names.add(origin.name)
    return names


def mark_line(kernel, origins):
    """The KERNEL_MARK line before a call of `kernel`: its name, then its origins, space-separated."""
    return KERNEL_MARK + " ".join([kernel, *sorted(origins)]) + "\n"


class Capture:
    """Collects every module Inductor generates while installed; names the failing kernel."""

    def __init__(self):
        self.modules = []
        self._generated = None
        self._sources = {}  # by a frame's file: the captured module it holds, or None
        self.last_called = ""  # the kernel marking_kernels saw called last
        self.origins = {}  # by kernel name: the names of the nodes fused into it (one source may serve several)

    @contextlib.contextmanager
    def installed(self):
        from torch._inductor.graph import GraphLowering
        saved = GraphLowering.__dict__["save_output_code"]
        GraphLowering.save_output_code = staticmethod(self._save)
        try:
            with self._recording_origins():
                yield
        finally:
            GraphLowering.save_output_code = saved

    def _save(self, code):
        # A module compiled again (the sanity check's serial compile after its pool's failed) is one module.
        if code not in self.modules:
            self.modules.append(code)

    @contextlib.contextmanager
    def _recording_origins(self):
        """Each scheduling's define_kernel wrapped to record the kernel it names against its nodes' origins.
        A PyTorch without one of the schedulings records none for it."""
        wrapped = []
        for module_name, class_name in SCHEDULINGS:
            try:
                scheduling = getattr(importlib.import_module(module_name), class_name)
            except (ImportError, AttributeError):
                continue
            define_kernel = scheduling.__dict__.get("define_kernel")
            if define_kernel is None:
                continue

            def recording(scheduling_self, src_code, nodes, *args, _define_kernel=define_kernel, **kwargs):
                name = _define_kernel(scheduling_self, src_code, nodes, *args, **kwargs)
                if isinstance(name, str):
                    self.origins.setdefault(name, set()).update(origin_names(nodes))
                return name

            scheduling.define_kernel = recording
            wrapped.append((scheduling, define_kernel))
        try:
            yield
        finally:
            for scheduling, define_kernel in wrapped:
                scheduling.define_kernel = define_kernel

    def _source_of(self, path):
        """The captured module whose source the generated file at `path` holds; None for any other file."""
        if path not in self._sources:
            if self._generated is None:
                self._generated = _generated_dir()
            source = None
            if os.path.realpath(path).startswith(self._generated):
                try:
                    with open(path) as f:
                        text = f.read()
                except OSError:
                    text = None
                source = next((module for module in self.modules if module == text), None)
            self._sources[path] = source
        return self._sources[path]

    def kernel_of(self, path, line_number):
        """The kernel defined or called at a line of a generated module's file; "" elsewhere."""
        source = self._source_of(path)
        return kernel_at(source, line_number, kernel_names(source)) if source else ""

    def failing_kernel(self, error, verdict):
        """The kernel whose definition or call the exception passed through, innermost first; for a CUDA
        error, which surfaces in whatever call comes after the kernel (a synchronisation), the kernel launched
        last; "" if none."""
        frames = []
        traceback = error.__traceback__
        while traceback is not None:
            frames.append((traceback.tb_frame.f_code.co_filename, traceback.tb_lineno))
            traceback = traceback.tb_next
        found = next(filter(None, (self.kernel_of(path, line) for path, line in reversed(frames))), "")
        return found or (self.last_called if verdict.get("kind") == "cuda_error" else "")

    @contextlib.contextmanager
    def marking_kernels(self):
        """While the compiled graph runs: a KERNEL_MARK line on stderr before each kernel call, so that a
        kernel that kills the process is named by the last line it left."""
        def profile(frame, event, _arg):
            if event not in ("call", "c_call"):
                return
            caller = frame if event == "c_call" else frame.f_back
            name = self.kernel_of(caller.f_code.co_filename, caller.f_lineno) if caller is not None else ""
            if name:
                self.last_called = name
                sys.stderr.write(mark_line(name, self.origins.get(name, ())))
                sys.stderr.flush()

        sys.setprofile(profile)
        try:
            yield
        finally:
            sys.setprofile(None)

    def report(self, failing_kernel=""):
        observed = {"modules": [source[:MAX_MODULE_CHARS] for source in self.modules]}
        if failing_kernel:
            observed["failing_kernel"] = failing_kernel
            observed["failing_nodes"] = sorted(self.origins.get(failing_kernel, ()))
        return observed
