# The code Inductor generates for a graph (its output code: the Python wrapper with every kernel's
# C++ or Triton source in it, as TORCH_COMPILE_DEBUG's output_code.py holds it), and which of its
# kernels fails. The code is taken where PyTorch's own tests take it (run_and_get_code patches
# GraphLowering.save_output_code, which Inductor calls with each module's code before it writes
# and loads it), so a module whose kernels fail to compile is still seen. A failing kernel is named
# from the generated module's line where the failure passed: the kernel's definition
# (`cpp_fused_relu_0 = async_compile.cpp_pybinding(...)`, a compile error) or its call in `call()`
# (a run error); a kernel that kills the process is named by the last KERNEL_MARK line the run
# wrote to stderr before each kernel call.
import contextlib
import os
import re
import sys

KERNEL_MARK = "minifyd-kernel: "
# A kernel's definition or its call in a generated module: its name.
DEFINITION = re.compile(r"^\s*(\w+)\s*=\s*async_compile\.\w+\(")
CALL = re.compile(r"^\s*(?:\w+\s*=\s*)?(\w+)(?:\.run)?\(")
# At most this much code is returned per module.
MAX_MODULE_CHARS = 4 << 20


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


class Capture:
    """Collects every module Inductor generates while installed; names the failing kernel."""

    def __init__(self):
        self.modules = []
        self._generated = None
        self._sources = {}  # by a frame's file: the captured module it holds, or None
        self.last_called = ""  # the kernel marking_kernels saw called last

    @contextlib.contextmanager
    def installed(self):
        from torch._inductor.graph import GraphLowering
        saved = GraphLowering.__dict__["save_output_code"]
        GraphLowering.save_output_code = staticmethod(lambda code: self.modules.append(code))
        try:
            yield
        finally:
            GraphLowering.save_output_code = saved

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
                sys.stderr.write(KERNEL_MARK + name + "\n")
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
        return observed
