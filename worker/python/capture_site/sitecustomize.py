# `minify capture` puts this directory first on the user's PYTHONPATH, so Python's site module imports
# this file at the start of the user's program. With MINIFYD_CAPTURE_DIR set it installs the capture
# hook (minifyd/capture.py). Either way it then runs the sitecustomize it stands in front of, the next
# one on sys.path (the user's, or the distribution's: Debian's python has one), so none is shadowed.
import importlib.machinery
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
WORKER_PYTHON = os.path.dirname(HERE)


def _install_capture(directory):
    # minifyd is imported from beside this directory, which then leaves sys.path again: the program
    # finds its modules where it would without the hook.
    sys.path.insert(0, WORKER_PYTHON)
    try:
        from minifyd import capture
    finally:
        sys.path.remove(WORKER_PYTHON)
    capture.install(directory, os.environ.get("MINIFYD_CAPTURE_ACCURACY"))


def _run_next_sitecustomize():
    where = [os.path.abspath(entry or os.curdir) for entry in sys.path]
    start = max((i + 1 for i, found in enumerate(where) if found == HERE), default=0)
    later = [entry for entry, found in zip(sys.path[start:], where[start:]) if found != HERE]
    spec = importlib.machinery.PathFinder.find_spec(__name__, later)
    if spec is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules[__name__] = module  # `import sitecustomize` now finds the one this file stood in for
    spec.loader.exec_module(module)


if os.environ.get("MINIFYD_CAPTURE_DIR"):
    try:
        _install_capture(os.environ["MINIFYD_CAPTURE_DIR"])
    except Exception as error:  # noqa: BLE001  (the program runs on, uncaptured)
        print(f"minify capture: the capture hook is not installed: {type(error).__name__}: {error}",
              file=sys.stderr, flush=True)
_run_next_sitecustomize()
