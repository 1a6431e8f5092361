# One graph that `minify capture` took from the user's program: a graph directory
# (graph.json + store/, as export.export writes it) named graph-PID-N in the capture directory, with
# origin.json saying where it came from and, once known, how it failed. It appears whole
# (atomic_directory.py) before the graph's compiled run, so a run that kills the process
# leaves it without a failure; a run that passes removes it (hidden again first, so a process killed
# while removing it leaves no half a graph behind).
import os
import shutil

from minifyd import export
from minifyd import origin as origin_file
from minifyd.atomic_directory import write_directory_atomically

FAILURE_KINDS = ("compile_error", "runtime_error", "accuracy")


class CapturedGraph:
    def __init__(self, capture_dir, name, origin):
        self.capture_dir, self.name, self.origin = capture_dir, name, origin

    @property
    def path(self):
        return os.path.join(self.capture_dir, self.name)

    def record_failure(self, kind, description):
        """origin.json gains "failure": {"kind": one of FAILURE_KINDS, "exception": "Type: message"}."""
        self.origin = _with_failure(self.origin, kind, description)
        origin_file.write(self.path, self.origin)

    def discard(self):
        hidden = os.path.join(self.capture_dir, f".passed-{self.name}")
        os.rename(self.path, hidden)
        shutil.rmtree(hidden)


def write(capture_dir, name, gm, inputs, origin, failure=None):
    """The CapturedGraph of gm on inputs (tensors, as the graph takes them), whole in capture_dir/name;
    failure: (kind, description) when it is known already (a compile error), so it is never seen without."""
    if failure is not None:
        origin = _with_failure(origin, *failure)
    with write_directory_atomically(os.path.join(capture_dir, name)) as staging:
        export.export(gm, inputs, staging)
        origin_file.write(staging, origin)
    return CapturedGraph(capture_dir, name, origin)


def _with_failure(origin, kind, description):
    assert kind in FAILURE_KINDS, kind
    return {**origin, "failure": {"kind": kind, "exception": description}}
