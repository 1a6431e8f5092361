# DIR/origin.json: where a graph directory came from (an after_aot repro file, a capture) and the
# configuration of the user's run as backend options, which `minify run`, `query` and `submit` apply
# to its candidates under the user's --backend-opt (docs/cli.md). Written here only.
import json
import os

from minifyd import graph_writer as gw

ORIGIN_FILE = "origin.json"


def write(graph_dir, document):
    """Replaces graph_dir/origin.json with document, whole (a reader sees the old one or the new)."""
    text = json.dumps(document, indent=2, sort_keys=True) + "\n"
    gw.write_file_atomic(os.path.join(graph_dir, ORIGIN_FILE), text.encode(), os.path.join(graph_dir, "store", "tmp"))
