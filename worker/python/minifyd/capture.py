# `minify capture`'s hook in the user's program, installed at its start by
# capture_site/sitecustomize.py. It waits for torch._inductor.compile_fx to be imported and then
# wraps Inductor's compiler there (capture_compiler.py), so that a program which never compiles, or
# never imports torch, runs as it would without the hook: this module imports nothing of torch's.
import importlib.abc
import importlib.machinery
import os
import sys

COMPILE_FX = "torch._inductor.compile_fx"
# AOT autograd's cache (on by default in PyTorch 2.11, not in 2.6) hands a graph it has seen, in this
# process or an earlier run, back compiled without calling Inductor's compiler, where the capture
# waits. It is turned off by the variable that config reads at torch's import, which 2.11 lets
# override even a program's own setting; compiling again costs time, never a different result.
AUTOGRAD_CACHE_VARIABLE = "TORCHINDUCTOR_AUTOGRAD_CACHE"


def install(directory, accuracy):
    """Captures the graphs Inductor compiles in this process into directory (an existing directory);
    accuracy ("accuracy" or "strict-accuracy", as `minify query` takes them; None: no check): also those
    whose outputs diverge from eager's. Called before torch._inductor.compile_fx is imported (at the
    program's start)."""
    os.environ[AUTOGRAD_CACHE_VARIABLE] = "0"

    def wrap_compiler(compile_fx):
        try:
            from minifyd.capture_compiler import Capture
            compile_fx.wrap_compiler_debug = Capture(directory, accuracy).wrapping(compile_fx.wrap_compiler_debug)
        except Exception as error:  # noqa: BLE001  (the program runs on, uncaptured)
            print(f"minify capture: cannot wrap Inductor's compiler: {type(error).__name__}: {error}",
                  file=sys.stderr, flush=True)

    sys.meta_path.insert(0, _AfterImport(COMPILE_FX, wrap_compiler))


class _AfterImport(importlib.abc.MetaPathFinder):
    """Finds one module as Python would, and has then() called on it once it has run; then leaves sys.meta_path."""

    def __init__(self, name, then):
        self.name, self.then = name, then

    def find_spec(self, fullname, path, target=None):
        if fullname != self.name:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is not None and spec.loader is not None:
            sys.meta_path.remove(self)
            spec.loader = _ThenLoader(spec.loader, self.then)
        return spec


class _ThenLoader(importlib.abc.Loader):
    """A module's own loader, then() called after the module ran; anything else asked (get_source, for
    tracebacks) answered by the module's own loader."""

    def __init__(self, loader, then):
        self.loader, self.then = loader, then

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        self.loader.exec_module(module)
        self.then(module)

    def __getattr__(self, name):
        return getattr(self.loader, name)
