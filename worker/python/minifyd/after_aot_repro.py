# repro.py for a graph minimized under a torch.compile backend, in after_aot's own shape, written by
# PyTorch's own generator (torch._dynamo.repro.after_aot.save_graph_repro): the config lines of the
# run's backend options, a `Repro` module, `load_args(reader)` reading the exact input values from
# PyTorch's content store beside it, and `run_repro` in its __main__, so PyTorch engineers run it
# (and its minify/analyze commands) with the tools they know. `minify run` calls main() in the
# run's --python when its backend is one of the Python worker's.
import contextlib
import importlib
import inspect
import io
import json
import os
import re
import sys

import torch

from minifyd import compile_backends
from minifyd import graph_format as gf
from minifyd import graph_writer as gw
from minifyd import repro_arguments
from minifyd import worker_protocol as wp
from minifyd.operator_libraries import LibraryError, OperatorLibraries
from minifyd.worker_main import CRASH_SIGNALS

INPUTS_DIR = "repro_inputs"
# What repro.py does before PyTorch's own text. PyTorch 2.6's generator imports only `inf`, while a
# graph's code may use `nan` as FX's own globals provide it: without the import the repro would fail
# with a NameError, not the bug. And a library torch loads may handle crash signals (UCX's handler,
# in Debian's torch, prints a backtrace and deadlocks on a corrupted heap): as in the worker, the
# defaults are put back, so a kernel that corrupts memory ends the process instead of hanging it.
PRELUDE = f"""from math import inf, nan  # noqa: F401
import signal
import torch
for _crash_signal in ({", ".join(f"signal.{number.name}" for number in CRASH_SIGNALS)}):
    signal.signal(_crash_signal, signal.SIG_DFL)
"""
# An input whose storage the input shrinking filled (docs/graph-format.md "Filled storages") is made by
# the repro, not read: these functions of graph_format.py, written into it, make it.
FILL_FUNCTIONS = inspect.getsource(gf.untyped_storage) + "\n\n" + inspect.getsource(gf.fill_storage)
STORAGE_LINE = re.compile(r"^(    (buf[0-9]+) = )reader\.storage\(None, .*\)$", re.MULTILINE)


def _storage_key(storage):
    """(device, data_ptr) of a real storage; None for a fake one (PyTorch 2.11 hashes a CUDA storage with a
    compiled kernel, whose compilation writes a repro of fake tensors through the same writer)."""
    try:
        return str(storage.device), storage.data_ptr()
    except RuntimeError:
        return None


def _filled_inputs(doc, inputs):
    """(device, data_ptr) of each input storage the document fills -> (its fill, its nbytes)."""
    fills = {}
    for entry, value in zip(doc["inputs"], inputs):
        storage = doc["storages"][entry["storage"]] if isinstance(entry, dict) and "storage" in entry else {}
        if "fill" in storage and isinstance(value, torch.Tensor):
            fills[_storage_key(gf.untyped_storage(value))] = (storage["fill"], storage["nbytes"])
    return fills


@contextlib.contextmanager
def _filled_storages_unsaved(fills, written):
    """While PyTorch's generator writes load_args, it saves no blob of a filled storage: its line reads
    `bufN = reader.storage(None, ...)` (random data, in a file nobody rewrites), and written[bufN] is its
    fill, for write_repro to put the fill's making in that line's place."""
    from torch._dynamo.debug_utils import InputWriter
    original = InputWriter.storage

    def storage(self, untyped_storage, **hints):
        fill = fills.get(_storage_key(untyped_storage)) if fills else None
        if fill is None:
            return original(self, untyped_storage, **hints)
        store, self.store = self.store, None
        try:
            name = original(self, untyped_storage, **hints)
        finally:
            self.store = store
        written[name] = (*fill, str(untyped_storage.device))
        return name

    InputWriter.storage = storage
    try:
        yield
    finally:
        InputWriter.storage = original


def _make_filled(source, written):
    """source with each filled storage's line making the storage with fill_storage."""
    def made(match):
        if match.group(2) not in written:
            return match.group(0)
        fill, nbytes, device = written[match.group(2)]
        return f"{match.group(1)}fill_storage({fill!r}, {nbytes}).to({device!r}).untyped_storage()"
    return STORAGE_LINE.sub(made, source)


# The AOT backends have no after_aot command of their own, and Inductor's has none for a graph before
# AOT autograd (compile_backends.ENTRY_OPTION): their repro compiles with Dynamo's backend, which for
# inductor is compile_fx.
AOT_MAIN = """if __name__ == '__main__':
    from torch._dynamo.debug_utils import InputReader
    from torch._dynamo.backends.registry import lookup_backend
    from torch.fx.experimental.proxy_tensor import make_fx
    reader = InputReader(save_dir={save_dir!r})
    load_args(reader)
    args = reader.args
    with torch.no_grad():
        gm = make_fx(mod, tracing_mode='real')(*args)
        compiled = lookup_backend({backend!r})(gm, args)
        print(compiled(*args))
"""


def _sha1_named_blobs():
    """save_graph_repro's argument naming each stored blob by its bytes' SHA-1 where this PyTorch has it
    (2.1 and later): by default its writer names them by a hash it computes with a kernel it compiles
    with Inductor first, which costs the repro's writing seconds (and a Triton compile on a GPU)."""
    from torch._dynamo.repro.after_aot import save_graph_repro
    return {"stable_hash": True} if "stable_hash" in inspect.signature(save_graph_repro).parameters else {}


def library_loads(libraries):
    """repro.py's lines that load the job's operator libraries, which its graph calls: each path a
    repr(), a namespace an identifier (the library rule's)."""
    return "".join(f"torch.ops.load_library({library['path']!r})  # --op-library {library['namespace']}\n"
                   for library in libraries)


def write_repro(graph_dir, out_path, backend, options, accuracy, libraries=()):
    """Writes out_path for the graph in graph_dir; the inputs go to INPUTS_DIR beside it. libraries: the
    job's operator libraries (checked and loaded here, as a worker loads them), which repro.py loads too."""
    from torch._dynamo.repro.after_aot import save_graph_repro
    OperatorLibraries().require(list(libraries))
    gm, inputs, doc = gf.load_graph_and_document(graph_dir, OperatorLibraries.namespaces(libraries))
    # Set, not patched: the generator writes the config values that differ from the defaults.
    for module_name, values in compile_backends.config_patches(options).items():
        module = importlib.import_module(module_name)
        for key, value in values.items():
            setattr(module, key, value)
    save_dir = os.path.join(os.path.dirname(os.path.abspath(out_path)), INPUTS_DIR)
    text = io.StringIO()
    # SymInt inputs are plain ints here: the generator writes reader.symint(N) for them and run_repro's
    # tracing_mode 'real', which specialises the graph to the stored sizes. That is deliberate: its
    # 'symbolic' compiles the symbolic trace on the real inputs, which Inductor fails to lower (a
    # failure of the repro, not the graph's).
    written = {}
    with _filled_storages_unsaved(_filled_inputs(doc, inputs), written):
        save_graph_repro(text, gm, inputs, backend, save_dir=save_dir, accuracy=accuracy, **_sha1_named_blobs())
    prelude = PRELUDE + library_loads(libraries) + (FILL_FUNCTIONS + "\n\n" if written else "")
    # PyTorch's generator leaves load_args without a body for a graph of no inputs (a minimized graph
    # that builds its tensors itself, as a full() of a NaN constant does): a SyntaxError, not the bug.
    source = prelude + re.sub(r"^def load_args\(reader\):\n(?=\S)", "def load_args(reader):\n    pass\n",
                              _make_filled(text.getvalue(), written), flags=re.MULTILINE)
    if backend != "inductor" or compile_backends.inductor_entry(options) == "compile_fx":
        source = source[:source.index("if __name__ == '__main__':")] + AOT_MAIN.format(save_dir=save_dir,
                                                                                        backend=backend)
    gw.write_file_atomic(out_path, source.encode(), os.path.dirname(os.path.abspath(out_path)))


def write_repro_of(args, out_path):
    """write_repro for repro_arguments.repro_parser's args: 0, or 2 with the error on stderr."""
    options = dict(pair.split("=", 1) for pair in args.backend_opt)
    try:
        libraries = wp.op_libraries_of({"op_libraries": json.loads(args.op_libraries)}, 0)
        write_repro(args.graph_dir, out_path, args.backend, options, args.accuracy, libraries)
    except json.JSONDecodeError as error:
        print(f"repro.py for {args.graph_dir}: --op-libraries is not JSON: {error}", file=sys.stderr)
        return 2
    except (gf.FormatError, compile_backends.OptionError, OSError, LibraryError, wp.RequestError) as error:
        print(f"repro.py for {args.graph_dir}: {error}", file=sys.stderr)
        return 2
    return 0


def main():
    parser = repro_arguments.repro_parser("Write an after_aot-shaped repro.py for a graph directory.")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    return write_repro_of(args, args.out)
