# minifyd's Python worker (minifyd/worker_main.py), started by the coordinator as
# `PYTHON minify_worker.py` for the torch.compile backends (inductor, aot_eager, ...).
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from minifyd.worker_main import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
