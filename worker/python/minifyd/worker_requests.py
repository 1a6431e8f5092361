# What the Python worker does with one request, as the C++ worker's request_handler does: evaluate
# (load the candidate from the store, compile it with a torch.compile backend, run it, judge it
# against eager and fp64), propagate (eager intermediates into the store, ConcreteProp's rule) and
# analyze (chosen nodes' values measured, value_analysis.py).
import collections
import contextlib
import hashlib
import json
import time

import torch

from minifyd import bisect_probe, compile_backends, exception_verdict, output_checks, output_code, value_analysis
from minifyd.operator_libraries import LibraryError, OperatorLibraries
from minifyd import graph_format as gf
from minifyd import graph_writer as gw
from minifyd import worker_protocol as wp


class BlobCache:
    """Verified blobs kept across requests (least recently used first out, a byte budget); each load
    copies them into fresh tensors, since a graph may write to its inputs in place."""

    def __init__(self, budget_bytes=1 << 30):
        self.budget, self.used, self.blobs = budget_bytes, 0, collections.OrderedDict()

    def read(self, store_dir, digest, nbytes):
        key = (store_dir, digest)
        if key in self.blobs:
            self.blobs.move_to_end(key)
            return self.blobs[key]
        data = gf.read_blob(store_dir, digest, nbytes)
        self.blobs[key] = data
        self.used += len(data)
        while self.used > self.budget and len(self.blobs) > 1:
            self.used -= len(self.blobs.popitem(last=False)[1])
        return data


class RequestHandler:
    def __init__(self, synchronize, in_process, device_lock=None):
        # synchronize(): waits for the device's queued work, so an asynchronous kernel error is the
        # failure of the run that launched it (a no-op without a GPU).
        self.synchronize = synchronize
        # Serving every request in this process (a GPU's worker, which cannot fork once CUDA is up),
        # rather than each in a fresh child of a fork server (worker_main.py).
        self.in_process = in_process
        # With GPUs: the lock a compiled graph's run holds (device_lock.py says why); None without.
        self.device_lock = device_lock
        self.cache = BlobCache()
        self.libraries = OperatorLibraries()

    @contextlib.contextmanager
    def _device_to_itself(self, timings=None):
        """Around a compiled graph's run: the GPUs to this run; timings["device_wait_ms"], where given,
        the wait."""
        if self.device_lock is None:
            yield
            return
        with self.device_lock.held() as lock:
            if timings is not None:
                timings["device_wait_ms"] = lock.waited * 1e3
            if not lock.alone:
                print(f"minify-worker.py: the run goes on beside another on the GPU after waiting "
                      f"{lock.waited:.1f} s for it", flush=True)
            yield

    def _loader(self, request):
        namespaces = OperatorLibraries.namespaces(request.op_libraries)

        def load():
            return gf.build_graph(request.graph, request.store, "graph", self.cache.read, namespaces)
        return load

    def handle(self, request):
        """The reply line for an evaluate, propagate or analyze request. Serving in its own process, whose next
        request may be another job's, the worker retires after one naming operator libraries."""
        reply = self._handle(request)
        return wp.retiring_line(reply) if self.in_process and request.op_libraries else reply

    def _handle(self, request):
        try:
            self.libraries.require(request.op_libraries)
        except LibraryError as error:
            return wp.error_line(request.id, str(error))
        try:
            if isinstance(request, wp.EvaluateRequest):
                return self.evaluate(request)
            if isinstance(request, wp.AnalyzeRequest):
                return self.analyze(request)
            return self.propagate(request)
        except (gf.FormatError, compile_backends.OptionError) as error:
            return wp.error_line(request.id, str(error))
        except OSError as error:
            return wp.error_line(request.id, f"{request.store}: {error}")
        except (KeyError, TypeError, ValueError) as error:
            return wp.error_line(request.id, f"graph: malformed document ({type(error).__name__}: {error})")
        except Exception as error:  # noqa: BLE001  (propagate's eager run: the graph cannot be minimized)
            return wp.error_line(request.id, f"eager run failed: {type(error).__name__}: {error}")

    def _compiling(self, request):
        """What a request that compiles needs: (refusal, (config patches, Inductor's entry, the graph's loader)),
        the refusal an error line for a backend this worker does not serve, else None."""
        if request.backend not in compile_backends.BACKENDS:
            known = ", ".join(compile_backends.BACKENDS)
            return wp.error_line(request.id, f"unknown backend '{request.backend}' ({known})"), None
        return None, (compile_backends.config_patches(request.backend_options),
                      compile_backends.inductor_entry(request.backend_options), self._loader(request))

    def evaluate(self, request):
        refused, compiling = self._compiling(request)
        if refused:
            return refused
        patches, entry, load = compiling
        started = time.perf_counter()
        gm, inputs = load()
        timings = {"load_ms": (time.perf_counter() - started) * 1e3}
        check_nan = request.nan_check and not any(output_checks.non_finite(t) for t in inputs)
        probe = None if request.bisect is None else bisect_probe.Probe(request.backend, bisect_probe.graph_facts(gm, inputs),
                                                                          **request.bisect)
        capture = None if request.output_code is None else output_code.Capture()

        def observed(error=None, verdict=None):
            """The reply's additions: what a bisect probe saw, the output code and the kernel that failed."""
            return {"bisect": probe.report(compile_backends.BACKENDS) if probe else None,
                    "output_code": capture.report(capture.failing_kernel(error, verdict) if error else "")
                    if capture else None}

        compile_ms = run_ms = 0.0
        with torch.no_grad(), compile_backends.patched_config(patches), \
                probe.installed() if probe else contextlib.nullcontext(), \
                capture.installed() if capture else contextlib.nullcontext():
            started = time.perf_counter()
            try:
                compiled = self._compile(request, gm, inputs, entry, load)
            except Exception as error:  # noqa: BLE001  (a compile error is the candidate's verdict)
                verdict = self._failure_of(error)
                return self._reply(request.id, verdict, (time.perf_counter() - started) * 1e3, 0.0,
                                   **timings, **observed(error, verdict))
            compile_ms = (time.perf_counter() - started) * 1e3
            if request.output_code == wp.OUTPUT_CODE_COMPILE:
                return self._reply(request.id, wp.passed(), compile_ms, 0.0, **timings, **observed())
            try:
                with self._device_to_itself(timings), \
                        capture.marking_kernels() if capture else contextlib.nullcontext():
                    started = time.perf_counter()
                    outputs = compiled(list(inputs))
                    self.synchronize()
            except Exception as error:  # noqa: BLE001  (so is a run error)
                verdict = self._failure_of(error)
                return self._reply(request.id, verdict, compile_ms, (time.perf_counter() - started) * 1e3,
                                   **timings, **observed(error, verdict))
            run_ms = (time.perf_counter() - started) * 1e3
            started = time.perf_counter()
            verdict = self._judge(request, load, outputs, inputs, check_nan)
            timings["check_ms"] = (time.perf_counter() - started) * 1e3
            return self._reply(request.id, verdict, compile_ms, run_ms, **timings, **observed())

    def _compile(self, request, gm, inputs, entry, load):
        """The graph compiled. With request.compile_threads (the sanity check, other workers idle) and a graph
        on the GPU, Inductor compiles its Triton kernels in a pool first; when that raises, the graph is
        compiled again in this process, as every candidate is, from a fresh load and with Inductor's in-memory
        caches dropped (the kernels the pool finished come from its on-disk caches): the pool's words for a
        failure differ from the serial compile's, and depend on how far the pool had started, and the search
        compares the candidates' failures with this one. A CUDA error is the process's, not the compile's: it
        is not tried again. C++ kernels compile one at a time: on a 2-core machine, where the plain check
        compiles the same kernels beside it, compiling two at a time saved nothing on a runtime error and cost
        a compile error its second compile (2 to 4 s of the conv net's search)."""
        pooled = (request.compile_threads > 1 and request.backend == "inductor" and request.bisect is None and
                  any(isinstance(value, torch.Tensor) and value.is_cuda for value in inputs))
        if not pooled:
            return compile_backends.compile_graph(request.backend, gm, inputs, entry)
        try:
            with compile_backends.compile_pool(request.compile_threads):
                return compile_backends.compile_graph(request.backend, gm, inputs, entry)
        except Exception as error:  # noqa: BLE001  (the serial compile decides)
            if self._failure_of(error)["kind"] == "cuda_error":
                raise
        compile_backends.forget_compiled()
        gm, inputs = load()
        return compile_backends.compile_graph(request.backend, gm, inputs, entry)

    def _failure_of(self, error):
        """The verdict of an exception that a compile or a run raised. On a GPU a kernel's fault is
        asynchronous: it surfaces in whatever CUDA call comes next (an autotuning benchmark, cuBLAS creating
        its handle: `CUBLAS_STATUS_INTERNAL_ERROR`) with that call's words. The device's sticky error, which
        a synchronisation raises, names the fault itself, the same wherever it surfaced: it is the verdict
        when there is one."""
        try:
            self.synchronize()
        except Exception as sticky:  # noqa: BLE001  (the device's own error, asked for)
            verdict = _exception_verdict(sticky)
            if verdict["kind"] == "cuda_error":
                return verdict
        return _exception_verdict(error)

    def _reply(self, request_id, verdict, compile_ms, run_ms, **additions):
        return wp.verdict_line(request_id, verdict, compile_ms, run_ms, self._retires_after(verdict), **additions)

    def _retires_after(self, failure):
        """Whether a worker serving in its own process exits after this verdict (and says so in it): after a
        CUDA error, which leaves the process's CUDA context unusable. After another failure it drops what
        Inductor keeps in memory of the compiles so far instead: a candidate compiled where another had
        failed could pass where it fails alone (Triton's injected compile error on the H100, docs/gpu.md),
        so the next one compiles as in a fresh process, from the warmed-up state and the on-disk caches."""
        if not self.in_process or failure["status"] != "fail":
            return False
        if failure["kind"] == "cuda_error":
            return True
        compile_backends.forget_compiled()
        return False

    def _judge(self, request, load, outputs, inputs, check_nan):
        if check_nan:
            found = output_checks.nan_failure(outputs)
            if found:
                return wp.failed("nan", found)
        if request.accuracy == "off":
            return wp.passed()
        # A candidate whose eager reference itself fails is not the accuracy bug being minimised.
        try:
            found = output_checks.accuracy_failure(load, outputs, request.accuracy == "strict-accuracy", inputs)
            self.synchronize()
        except Exception as error:  # noqa: BLE001
            verdict = self._failure_of(error)
            return verdict if verdict["kind"] == "cuda_error" else wp.passed()
        return wp.failed("accuracy", found) if found else wp.passed()

    def propagate(self, request):
        gm, inputs = self._loader(request)()
        # Every tensor value is stored, as PyTorch's minifier keeps them by default (its ConcreteProp
        # without offloading to disk), so the search can cut a graph below a view of an input. A value
        # whose storage aliases one seen before (an input, a constant, an earlier value) is stored as
        # it was when its node ran, an independent tensor: a later in-place update of that storage
        # (an input's copy_) must not change it. An analysis, which feeds each node alone, stores the
        # values themselves, and goes on with the values before a node that fails.
        values = []
        found, eager_failure = [], None
        try:
            _eager_values(gm, inputs, found, detach_aliases=not request.for_analysis)
        except Exception as error:  # noqa: BLE001
            if not request.for_analysis:
                raise
            ran = {node for node, _ in found}
            failing = next((n for n in gm.graph.nodes if n not in ran), None)
            eager_failure = _exception_verdict(error)
            if failing is not None:
                eager_failure.update(node=failing.name, op=str(failing.target))
        with gw.StoreWriter(request.store) as store:
            for node, value in found:
                if not isinstance(value, torch.Tensor) or value.layout != torch.strided:
                    continue
                if node.op != "call_function":
                    continue
                try:
                    meta = gw.tensor_entry(value, 0, f"node {node.name!r}")
                except gf.FormatError:
                    continue  # a dtype the format cannot name stays a computation
                digest = store.put(gw.storage_bytes(value))
                device = "cuda" if value.is_cuda else "cpu"
                values.append((node.name, {"hash": digest, "nbytes": gf.untyped_storage(value).nbytes(),
                                           "device": device}, meta))
            self.synchronize()
            document_hash = hashlib.sha256(json.dumps(request.graph, sort_keys=True).encode()).hexdigest()
            root = "intermediates-" + document_hash[:16]
            store.write_root(root, sorted({storage["hash"] for _, storage, _ in values}))
        return wp.propagated_line(request.id, root, values, eager_failure)

    def analyze(self, request):
        refused, compiling = self._compiling(request)
        if refused:
            return refused
        patches, entry, load = compiling
        names = list(request.nodes)
        gm, _ = load()
        known = {node.name for node in gm.graph.nodes if node.op == "call_function"}
        missing = [name for name in names if name not in known]
        if missing:
            return wp.error_line(request.id, f"analyze: the graph has no call_function node '{missing[0]}'")
        exposure = wp.EXPOSURE_HOOKS if request.backend == "inductor" else wp.EXPOSURE_OUTPUTS

        def failed(verdict, compile_ms=0.0, run_ms=0.0):
            return wp.analyzed_line(request.id, exposure, compiled_failure=verdict, compile_ms=compile_ms,
                                    run_ms=run_ms, retiring=self._retires_after(verdict))

        try:
            eager = value_analysis.node_values(*load(), set(names))
        except Exception as error:  # noqa: BLE001  (nothing to compare with)
            return wp.analyzed_line(request.id, exposure, eager_failure=_exception_verdict(error))
        tensor_valued = {name for name, value in eager.items() if isinstance(value, torch.Tensor)}
        with torch.no_grad(), compile_backends.patched_config(patches):
            started = time.perf_counter()
            try:
                run, exposure = value_analysis.compiled_values(request.backend, entry, gm, load()[1], set(names),
                                                               tensor_valued, self.synchronize)
            except Exception as error:  # noqa: BLE001  (a compile error is the graph's verdict)
                return failed(self._failure_of(error), (time.perf_counter() - started) * 1e3)
            compile_ms = (time.perf_counter() - started) * 1e3
            try:
                with self._device_to_itself():
                    started = time.perf_counter()
                    first = run(load()[1])
                    run_ms = (time.perf_counter() - started) * 1e3
                with self._device_to_itself():
                    second = run(load()[1])
            except Exception as error:  # noqa: BLE001
                return failed(self._failure_of(error), compile_ms, (time.perf_counter() - started) * 1e3)
        fp64 = fp64_again = None
        try:
            fp64 = value_analysis.node_values(*output_checks.fp64_graph(load), set(names))
            fp64_again = value_analysis.node_values(*output_checks.fp64_graph(load), set(names))
        except Exception as error:  # noqa: BLE001  (as evaluate: no fp64 reference, no figures from it)
            print(f"fp64 reference failed: {type(error).__name__}: {error}")
        values = []
        for name in names:
            if name not in first:
                values.append(wp.measurement(name, note="the compiled graph exposed no value for it "
                                                        "(its buffer was fused into another kernel)"))
                continue
            value = value_analysis.measure(name, eager[name], first[name], fp64.get(name) if fp64 else None)
            value["compiled_deterministic"] = value_analysis.bitwise_equal(first[name], second.get(name))
            if fp64 and fp64_again:
                value["fp64_deterministic"] = value_analysis.bitwise_equal(fp64.get(name), fp64_again.get(name))
            values.append(value)
        return wp.analyzed_line(request.id, exposure, values, compile_ms=compile_ms, run_ms=run_ms)


def _exception_verdict(error):
    exception_type, message, raised_at, is_cuda = exception_verdict.describe_exception(error)
    if is_cuda:
        return wp.failed("cuda_error", message)
    return wp.failed("exception", message, exception_type=exception_type, raised_at=raised_at)


def _eager_values(gm, inputs, found, detach_aliases):
    """Appends (node, value) for every node of an eager run, in order, to `found`, which keeps the
    values alive, so no storage address is reused while the caller compares them (and holds those
    before a node that raised). With detach_aliases, a tensor whose storage an earlier node's value
    (an input, a constant) holds is appended as a copy taken when its node ran."""
    seen = set()

    class Recorder(torch.fx.Interpreter):
        def run_node(self, node):
            value = super().run_node(node)
            recorded = value
            if detach_aliases and isinstance(value, torch.Tensor) and value.layout == torch.strided:
                key = gw.storage_key(value)
                recorded = value.clone() if key in seen else value
                seen.add(key)
            found.append((node, recorded))
            return value

    with torch.no_grad():
        Recorder(gm).run(*inputs)
