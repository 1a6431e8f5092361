# The arguments that say which repro.py to write for a graph directory: read by after_aot_repro's main()
# and by plain_check's, whose python supervises the repro's and imports no torch (it would pay a second
# `import torch` beside the repro's own).
import argparse

from minifyd.compile_backends import BACKENDS


def repro_parser(description):
    """The arguments of after_aot_repro.write_repro for a graph directory."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("graph_dir")
    parser.add_argument("--backend", required=True, choices=BACKENDS)
    parser.add_argument("--backend-opt", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--accuracy", action="store_true")
    # The job's operator libraries, as protocol/operator_libraries.h writes them: a JSON array.
    parser.add_argument("--op-libraries", default="[]", metavar="JSON")
    return parser
