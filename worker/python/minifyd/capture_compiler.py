# `minify capture`'s wrapper of Inductor's compiler, put where after_aot's wrap_compiler_debug wraps
# it (compile_fx_inner in torch/_inductor/compile_fx.py): each forward and backward graph after AOT
# autograd, parameters lifted among a forward graph's inputs. Each graph still compiles as it would without the capture, on fake inputs
# inside Dynamo's compile, and runs as it would, so the program gets the same results and the same
# exceptions, passed on unchanged. Each forward graph is numbered in its process, and
#   - when it fails to compile, it is written with the real inputs behind its fake ones (a backward
#     graph's, which are no tensors of the program's, made up from the fakes' metadata) and the
#     failure, before the error goes on to the program;
#   - else at its first call (which after_aot waits for, for the real inputs) it is written with
#     those inputs before it runs; the failure is added when the run raises or, with accuracy, its
#     outputs diverge from eager's; a run that kills the process leaves it without one; a run that
#     passed removes it. Later calls run unwatched.
# Whatever fails in the capture itself is reported on stderr and leaves the graph uncaptured.
import contextlib
import copy
import functools
import itertools
import os
import sys
import threading

import torch
from torch.multiprocessing.reductions import StorageWeakRef

from minifyd import captured_graph, config_options, exception_verdict, output_checks
from minifyd import graph_format as gf


class CaptureError(Exception):
    """Why a graph cannot be captured."""


class Capture:
    """Where this process's graphs go, and whether their outputs are checked against eager."""

    def __init__(self, directory, accuracy):
        # accuracy: "accuracy" or "strict-accuracy" (`minify query`'s checks), or None for no check.
        self.directory, self.accuracy = directory, accuracy
        self._numbers = itertools.count(1)

    def wrapping(self, wrap_compiler_debug):
        """compile_fx's wrap_compiler_debug, the compiler it returns capturing the graphs it compiles."""
        @functools.wraps(wrap_compiler_debug)
        def capturing_wrap_compiler_debug(compiler_fn, compiler_name):
            debug_compiler = wrap_compiler_debug(compiler_fn, compiler_name)  # after_aot's own dumps still work

            @functools.wraps(debug_compiler)
            def compile_capturing(gm, example_inputs, **kwargs):
                number = next(self._numbers)
                name = f"graph-{os.getpid()}-{number}"
                backward = bool(kwargs.get("is_backward"))
                graph = _reported(name, lambda: _Graph(self, name, number, gm, backward))
                if graph is None:
                    return debug_compiler(gm, example_inputs, **kwargs)
                try:
                    compiled = debug_compiler(gm, example_inputs, **kwargs)
                except Exception as error:
                    graph.compile_failed(example_inputs, error)
                    raise
                return graph.watching(compiled)
            return compile_capturing
        return capturing_wrap_compiler_debug


class _Graph:
    """One graph, forward or backward, on its way through Inductor."""

    def __init__(self, capture, name, number, gm, backward):
        self.capture, self.name, self.backward = capture, name, backward
        # Inductor rewrites the graph it compiles in place: this is the graph it was given, as after_aot keeps it.
        self.gm = torch.fx.GraphModule(gm, copy.deepcopy(gm.graph))
        # The configuration it is compiled under, Inductor's own patches for the compile among it.
        notes = []
        options = config_options.compile_options(notes)
        self.origin = {"source": "capture", "argv": list(sys.argv), "graph": number, "pid": os.getpid(),
                       "backward": backward, "backend_options": options, "notes": notes}
        self._first_call = threading.Lock()  # taken by the first call, never released

    def compile_failed(self, fake_inputs, error):
        def write():
            if self.backward:
                # A backward graph's inputs (saved activations, gradients) are no tensors of the program's;
                # a compile error depends on their metadata, not their values.
                self.origin["notes"].append("inputs: made up from the fake inputs' shapes, strides and dtypes "
                                            "(a backward graph's inputs are no tensors of the program's)")
                return self._write(_made_up_inputs(fake_inputs), ("compile_error", _description(error)))
            return self._write(_real_inputs(fake_inputs), ("compile_error", _description(error)))
        _reported(self.name, write)

    def watching(self, compiled):
        """compiled, its first run watched; boxed, as compile_fx_inner's result: a list of inputs that it may clear."""
        def run(args):
            if not self._first_call.acquire(blocking=False):
                return compiled(args)
            return self._first_run(compiled, args)
        run._boxed_call = True
        return run

    def _first_run(self, compiled, args):
        graph = _reported(self.name, lambda: self._write(list(args)))
        if graph is None:
            return compiled(args)
        on_cuda = any(isinstance(arg, torch.Tensor) and arg.is_cuda for arg in args)
        inputs = list(args)  # the compiled function clears the list it is given
        try:
            outputs = compiled(args)
            if on_cuda:
                # A kernel's error shows at a synchronisation: make it this run's, as after_aot does.
                torch.cuda.synchronize()
        except Exception as error:
            _reported(self.name, _record_failure, graph, "runtime_error", error)
            raise
        except BaseException:
            _reported(self.name, graph.discard)  # interrupted (KeyboardInterrupt, SystemExit): no failure of the graph
            raise
        _reported(self.name, lambda: self._settle(graph, outputs, inputs))
        return outputs

    def _write(self, inputs, failure=None):
        graph = captured_graph.write(self.capture.directory, self.name, self.gm, inputs, self.origin, failure)
        self.gm = None  # written once: the graph's copy is not kept alive with the compiled function
        return graph

    def _settle(self, graph, outputs, inputs):
        """Records the accuracy failure (of the outputs, or of the inputs the run updated in place), or removes
        a graph that ran well; also one the check could not judge, so that no directory stands for a failure
        that did not happen."""
        found = None
        try:
            found = self.capture.accuracy and _accuracy_failure(graph.path, outputs, inputs,
                                                                self.capture.accuracy == "strict-accuracy")
        finally:
            if found:
                graph.record_failure("accuracy", f"AccuracyError: {found}")
            else:
                graph.discard()


def _reported(name, step, *args):
    """step(*args)'s value, or None when the capture itself failed: that is said on stderr, and the program
    runs on with the graph uncaptured."""
    try:
        return step(*args)
    except Exception as error:  # noqa: BLE001  (no failure of the capture may become the program's)
        print(f"minify capture: {name}: not captured: {type(error).__name__}: {error}", file=sys.stderr, flush=True)
        return None


def _real_inputs(fake_inputs):
    """The real tensors behind the fake inputs a graph was compiled with. The fake inputs AOT autograd
    passes view the storages of the fakes Dynamo made of the program's tensors, which its fake mode
    remembers; each real input views the program's tensor's storage as the fake one views the fake's."""
    fake_mode = torch._guards.detect_fake_mode(fake_inputs)
    if fake_mode is None:
        raise CaptureError("the graph's inputs are not fake tensors, so their real values are unknown")
    converter = fake_mode.fake_tensor_converter
    real_of_storage = {}
    for real, tensor_id in list(converter.meta_converter.describer.lookup_tensor.items()):
        fake = converter.tensor_memo.get(tensor_id)
        if fake is not None:
            real_of_storage[StorageWeakRef(fake.untyped_storage())] = real
    inputs = []
    for i, fake in enumerate(fake_inputs):
        if not isinstance(fake, torch.Tensor):
            raise CaptureError(f"input {i} is a {type(fake).__name__}, not a tensor (graph inputs must be tensors)")
        real = real_of_storage.get(StorageWeakRef(fake.untyped_storage()))
        if real is None or real.dtype != fake.dtype:
            raise CaptureError(f"input {i} views no tensor of the program's")
        with torch.no_grad():
            inputs.append(real.as_strided(fake.shape, fake.stride(), fake.storage_offset()))
    return inputs


def _made_up_inputs(fake_inputs):
    """Seeded tensors with the fake inputs' shapes, strides, dtypes and devices."""
    generator = torch.Generator().manual_seed(0)
    inputs = []
    for i, fake in enumerate(fake_inputs):
        if not isinstance(fake, torch.Tensor):
            raise CaptureError(f"input {i} is a {type(fake).__name__}, not a tensor (graph inputs must be tensors)")
        # An empty view may still start past its storage's start: the storage holds its offset.
        size = max(gf.strided_reach(fake.shape, fake.stride(), fake.storage_offset()), fake.storage_offset())
        if fake.dtype.is_floating_point or fake.dtype.is_complex:
            flat = torch.randn(size, generator=generator).to(fake.dtype)
        elif fake.dtype == torch.bool:
            flat = torch.randint(0, 2, (size,), generator=generator).bool()
        else:
            flat = torch.randint(0, 8, (size,), generator=generator).to(fake.dtype)
        inputs.append(flat.to(fake.device).as_strided(fake.shape, fake.stride(), fake.storage_offset()))
    return inputs


def _record_failure(graph, kind, error):
    graph.record_failure(kind, _description(error))


def _description(error):
    """"Type: message", the message's first line as the worker's verdict has it."""
    exception_type, message, _, _ = exception_verdict.describe_exception(error)
    return f"{exception_type}: {message.splitlines()[0]}"


def _accuracy_failure(graph_dir, outputs, inputs, strict):
    """The worker's accuracy check (`minify query --accuracy`, or `--strict-accuracy` where strict) of the
    compiled outputs, and of the inputs the run updated, against eager and fp64 runs of the graph as it
    was written, its inputs read back from the store."""
    # Its notes go to stderr: the program's stdout is the program's.
    with torch.no_grad(), contextlib.redirect_stdout(sys.stderr):
        return output_checks.accuracy_failure(lambda: gf.load_graph(graph_dir), outputs, strict, inputs)
