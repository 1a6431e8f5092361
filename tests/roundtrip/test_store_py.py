# The Python store reader refuses corrupted, truncated and missing blobs with an error naming the hash.
import argparse
import os
import shutil
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "worker", "python"))
from minifyd import export as export_fx  # noqa: E402
from minifyd import graph_format  # noqa: E402


def refusal(graph_dir, digest, damage):
    """damage(path) to blob digest, then the error load_graph raises (or None), and the blob restored."""
    path = os.path.join(graph_dir, "store", "blobs", digest[:2], digest)
    shutil.copy(path, path + ".good")
    damage(path)
    try:
        graph_format.load_graph(graph_dir)
        return None
    except graph_format.FormatError as error:
        return str(error)
    finally:
        os.replace(path + ".good", path)


def flip_first_byte(path):
    with open(path, "r+b") as f:
        first = f.read(1)
        f.seek(0)
        f.write(bytes([first[0] ^ 0xFF]))


def truncate(path):
    os.truncate(path, os.path.getsize(path) - 1)


def main():
    parser = argparse.ArgumentParser(description="Check that graph_format.py refuses damaged blobs.")
    parser.add_argument("--work", required=True, help="scratch directory")
    graph_dir = os.path.join(parser.parse_args().work, "graph")
    shutil.rmtree(graph_dir, ignore_errors=True)
    doc = export_fx.export(lambda x: x * 2, [torch.arange(8, dtype=torch.float32)], graph_dir)
    digest = doc["storages"][0]["hash"]
    graph_format.load_graph(graph_dir)  # intact, it loads
    problems = []
    for what, damage in (("corrupted", flip_first_byte), ("truncated", truncate), ("missing", os.remove)):
        error = refusal(graph_dir, digest, damage)
        print(f"{what}: {error}")
        if error is None or digest not in error:
            problems.append(f"a {what} blob was not refused with an error naming {digest}")
    for problem in problems:
        print(f"  {problem}")
    print(f"{'FAIL' if problems else 'PASS'} roundtrip.store_corruption")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
