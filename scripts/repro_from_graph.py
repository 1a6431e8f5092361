# Writes a standalone repro.py for a graph directory: minifyd.repro_writer.
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "worker", "python"))
from minifyd.repro_writer import main  # noqa: E402

if __name__ == "__main__":
    main()
