# What the Python worker does with one request, as the C++ worker's request_handler does: evaluate
# (load the candidate from the store, compile it with a torch.compile backend, run it, judge it
# against eager and fp64) and propagate (eager intermediates into the store, ConcreteProp's rule).
import collections
import hashlib
import json
import time

import torch

from minifyd import compile_backends, exception_verdict, repro_template
from minifyd import graph_format as gf
from minifyd import worker_protocol as wp


class BlobCache:
    """Verified blobs kept across requests (least recently used first out, a byte budget); each load
    copies them into fresh tensors, since a graph may write to its inputs in place."""

    def __init__(self, budget_bytes=1 << 30):
        self.budget, self.used, self.blobs = budget_bytes, 0, collections.OrderedDict()

    def read(self, store_dir, digest):
        key = (store_dir, digest)
        if key in self.blobs:
            self.blobs.move_to_end(key)
            return self.blobs[key]
        data = gf.read_blob(store_dir, digest)
        self.blobs[key] = data
        self.used += len(data)
        while self.used > self.budget and len(self.blobs) > 1:
            self.used -= len(self.blobs.popitem(last=False)[1])
        return data


class RequestHandler:
    def __init__(self, synchronize, retire_after_failure):
        # synchronize(): waits for the device's queued work, so an asynchronous kernel error is the
        # failure of the run that launched it (a no-op without a GPU).
        self.synchronize = synchronize
        # Serving in its own process, the worker exits after a failing verdict (and says so in it):
        # Inductor keeps state in its process, and a candidate compiled where another failed can
        # pass where it fails alone (seen with Triton's injected compile error on the H100). A CUDA
        # error leaves the process's CUDA context unusable besides.
        self.retire_after_failure = retire_after_failure
        self.cache = BlobCache()

    def _loader(self, request):
        def load():
            return gf.build_graph(request.graph, request.store, "graph", self.cache.read)
        return load

    def handle(self, request):
        """The reply line for an evaluate or propagate request."""
        try:
            if isinstance(request, wp.EvaluateRequest):
                return self.evaluate(request)
            return self.propagate(request)
        except (gf.FormatError, compile_backends.OptionError) as error:
            return wp.error_line(request.id, str(error))
        except OSError as error:
            return wp.error_line(request.id, f"{request.store}: {error}")
        except (KeyError, TypeError, ValueError) as error:
            return wp.error_line(request.id, f"graph: malformed document ({type(error).__name__}: {error})")
        except Exception as error:  # noqa: BLE001  (propagate's eager run: the graph cannot be minimized)
            return wp.error_line(request.id, f"eager run failed: {type(error).__name__}: {error}")

    def evaluate(self, request):
        if request.backend not in compile_backends.BACKENDS:
            return wp.error_line(request.id, f"unknown backend '{request.backend}' "
                                             f"({', '.join(compile_backends.BACKENDS)})")
        patches = compile_backends.config_patches(request.backend_options)
        load = self._loader(request)
        gm, inputs = load()
        check_nan = request.nan_check and not any(repro_template._non_finite(t) for t in inputs)
        compile_ms = run_ms = 0.0
        with torch.no_grad(), compile_backends.patched_config(patches):
            started = time.perf_counter()
            try:
                compiled = compile_backends.compile_graph(request.backend, gm, inputs)
            except Exception as error:  # noqa: BLE001  (a compile error is the candidate's verdict)
                return self._reply(request.id, _exception_verdict(error), (time.perf_counter() - started) * 1e3, 0.0)
            compile_ms = (time.perf_counter() - started) * 1e3
            started = time.perf_counter()
            try:
                outputs = compiled(list(inputs))
                self.synchronize()
            except Exception as error:  # noqa: BLE001  (so is a run error)
                return self._reply(request.id, _exception_verdict(error), compile_ms,
                                   (time.perf_counter() - started) * 1e3)
            run_ms = (time.perf_counter() - started) * 1e3
            verdict = self._judge(request, load, outputs, check_nan)
        return self._reply(request.id, verdict, compile_ms, run_ms)

    def _reply(self, request_id, verdict, compile_ms, run_ms):
        retiring = self.retire_after_failure and verdict["status"] == "fail"
        return wp.verdict_line(request_id, verdict, compile_ms, run_ms, retiring)

    def _judge(self, request, load, outputs, check_nan):
        if check_nan:
            found = repro_template._nan_failure(outputs)
            if found:
                return wp.failed("nan", found)
        if request.accuracy == "off":
            return wp.passed()
        # A candidate whose eager reference itself fails is not the accuracy bug being minimised.
        try:
            found = repro_template._accuracy_failure(load, outputs, request.accuracy == "strict-accuracy")
            self.synchronize()
        except Exception as error:  # noqa: BLE001
            verdict = _exception_verdict(error)
            return verdict if verdict["kind"] == "cuda_error" else wp.passed()
        return wp.failed("accuracy", found) if found else wp.passed()

    def propagate(self, request):
        gm, inputs = self._loader(request)()
        # As the seeds' ConcreteProp: a value whose storage aliases one seen before (an input, a
        # constant or an earlier value) is not stored, since feeding it as an independent input would
        # break the aliasing the operators rely on.
        seen, values = set(), []
        with gf.StoreWriter(request.store) as store:
            for node, value in _eager_values(gm, inputs):
                if not isinstance(value, torch.Tensor) or value.layout != torch.strided:
                    continue
                key = gf.storage_key(value)
                if key in seen:
                    continue
                seen.add(key)
                if node.op != "call_function":
                    continue
                try:
                    meta = gf.tensor_entry(value, 0, f"node {node.name!r}")
                except gf.FormatError:
                    continue  # a dtype the format cannot name stays a computation
                digest = store.put(gf.storage_bytes(value))
                device = "cuda" if value.is_cuda else "cpu"
                values.append((node.name, {"hash": digest, "nbytes": gf.untyped_storage(value).nbytes(),
                                           "device": device}, meta))
            self.synchronize()
            document_hash = hashlib.sha256(json.dumps(request.graph, sort_keys=True).encode()).hexdigest()
            root = "intermediates-" + document_hash[:16]
            store.write_root(root, sorted({storage["hash"] for _, storage, _ in values}))
        return wp.propagated_line(request.id, root, values)


def _exception_verdict(error):
    exception_type, message, is_cuda = exception_verdict.describe_exception(error)
    if is_cuda:
        return wp.failed("cuda_error", message)
    return wp.failed("exception", message, exception_type=exception_type)


def _eager_values(gm, inputs):
    """(node, value) of every node of an eager run, in order; the values stay alive with the list,
    so no storage address is reused while the caller compares them."""
    found = []

    class Recorder(torch.fx.Interpreter):
        def run_node(self, node):
            value = super().run_node(node)
            found.append((node, value))
            return value

    with torch.no_grad():
        Recorder(gm).run(*inputs)
    return found
