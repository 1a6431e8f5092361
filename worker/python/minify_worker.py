# minifyd's Python worker (minifyd/worker_main.py), started by the coordinator as
# `PYTHON minify_worker.py` for the torch.compile backends (inductor, aot_eager, ...).
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from minifyd.worker_main import main  # noqa: E402

if __name__ == "__main__":
    # Once it has served, the worker ends without the interpreter's teardown of torch's modules (0.7 s on
    # a 2-core machine, past the coordinator's grace before SIGKILL, which the end of every run waited
    # for), as every Python helper does (run_python_main); nothing of it is left to flush but its output.
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
