# The comparator for per-query latency: PyTorch's isolated minifier (after_aot's isolate_fails)
# runs every query as a fresh `python repro.py` subprocess. This times that on a graph directory:
# generate repro.py once, then run it N times in fresh interpreters and report the median wall time.
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "worker", "python"))
from minifyd import repro_writer  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("graph_dir")
    parser.add_argument("-n", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        repro = os.path.join(work, "repro.py")
        with open(repro, "w") as f:
            f.write(repro_writer.repro_source(args.graph_dir))
        times = []
        for _ in range(args.n):
            start = time.monotonic()
            subprocess.run([sys.executable, repro], check=True, capture_output=True)
            times.append((time.monotonic() - start) * 1000)
    print(f"fresh python per query ({args.graph_dir}): median {statistics.median(times):.1f} ms over {args.n} runs")


if __name__ == "__main__":
    main()
