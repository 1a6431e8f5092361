# Writes an after_aot repro file as a graph directory: minifyd.repro_file.
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "worker", "python"))
from minifyd.repro_file import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
