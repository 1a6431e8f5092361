# Exports a PyTorch function, module or aten-level GraphModule as a graph directory: minifyd.export.
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "worker", "python"))
from minifyd.export import main  # noqa: E402

if __name__ == "__main__":
    main()
