# The worker protocol, version 1 (docs/protocol.md), as the Python worker speaks it: requests decoded
# and replies encoded here and nowhere else, mirroring protocol/worker_messages.h and verdict.h.
import dataclasses
import json
import math

PROTOCOL = "minifyd.worker"
VERSION = 1
ACCURACY_MODES = ("off", "accuracy", "strict-accuracy")
OUTPUT_CODE_RUN, OUTPUT_CODE_COMPILE = "run", "compile"
REQUEST_TYPES = ("evaluate", "propagate", "analyze", "shutdown", "cancel")
# How an analyze read the values: added outputs of the compiled graph, or the compiler's hooks.
EXPOSURE_OUTPUTS, EXPOSURE_HOOKS = "outputs", "hooks"
# The deepest nesting of arrays and objects a request may have, as protocol/worker_messages.h's
# worker_max_nesting: a graph document nests about ten levels; what is deeper is hostile, and would
# exhaust the recursion of whatever walks it.
MAX_NESTING = 64


class RequestError(Exception):
    """A request that cannot be acted on: answered with an error reply for request_id (0: unknown)."""

    def __init__(self, request_id, message):
        super().__init__(message)
        self.request_id = request_id


@dataclasses.dataclass
class EvaluateRequest:
    id: int
    graph: dict
    store: str
    backend: str
    backend_options: dict
    accuracy: str = "off"
    nan_check: bool = False
    # A probe of `minify bisect` (bisect_probe.py): {} counts the subsystems' applications;
    # {"subsystem": S, "enabled": N} also switches S off from its N-th application on. None: no probe.
    bisect: dict = None
    # OUTPUT_CODE_RUN: the reply carries the code Inductor generated and names the failing kernel, and
    # the run marks each kernel call on stderr (output_code.py); OUTPUT_CODE_COMPILE: compiled only,
    # for the code (a passing verdict when it compiles). None: neither.
    output_code: str = None
    # More than 1: Inductor may compile a GPU graph's Triton kernels in a pool of this many processes (the
    # sanity check), the verdict still the serial compile's (worker_requests.py).
    compile_threads: int = 1
    # The job's operator libraries (operator_libraries.py): [{"namespace", "path", "sha256"}], loaded before
    # the graph is built, their namespaces allowed in it.
    op_libraries: list = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class PropagateRequest:
    id: int
    graph: dict
    store: str
    for_analysis: bool = False
    op_libraries: list = dataclasses.field(default_factory=list)  # as EvaluateRequest's


@dataclasses.dataclass
class AnalyzeRequest:
    id: int
    graph: dict
    store: str
    backend: str
    backend_options: dict
    nodes: list
    op_libraries: list = dataclasses.field(default_factory=list)  # as EvaluateRequest's


@dataclasses.dataclass
class ShutdownRequest:
    id: int


@dataclasses.dataclass
class CancelRequest:
    id: int


def _field(message, key, kinds, kind_name, request_id, default=dataclasses.MISSING):
    if key not in message:
        if default is dataclasses.MISSING:
            raise RequestError(request_id, f"missing field '{key}'")
        return default
    value = message[key]
    # bool is an int in Python; the protocol keeps them apart.
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        raise RequestError(request_id, f"{key}: expected {kind_name}, got {json.dumps(value)[:80]}")
    return value


def request_id_of(message):
    """The id of a (possibly malformed) request when it has a readable one, else 0."""
    value = message.get("id") if isinstance(message, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def nesting_depth(value):
    """How deeply arrays and objects nest in a parsed JSON value (0 for a scalar), without recursing."""
    deepest, pending = 0, [(value, 1)]
    while pending:
        item, depth = pending.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is not None:
            deepest = max(deepest, depth)
            pending.extend((child, depth + 1) for child in children)
    return deepest


def op_libraries_of(message, rid):
    """A message's op_libraries (protocol/operator_libraries.h), each an object of three strings; the
    namespace rule and the file's checks are the loader's (operator_libraries.py)."""
    libraries = _field(message, "op_libraries", (list,), "an array", rid, [])
    for i, library in enumerate(libraries):
        if not isinstance(library, dict) or sorted(library) != ["namespace", "path", "sha256"] or \
                not all(isinstance(value, str) for value in library.values()):
            raise RequestError(rid, f"op_libraries[{i}]: expected an object of strings namespace, path and sha256")
    return libraries


def decode_request(line):
    """One request line as its dataclass; RequestError names what is wrong."""
    too_deep = f"the line nests more than the {MAX_NESTING} levels allowed"
    try:
        message = json.loads(line)
    except (ValueError, UnicodeDecodeError) as error:
        raise RequestError(0, f"invalid JSON: {error}") from None
    except RecursionError:  # deeper than Python's recursion limit: json's parser gives up
        raise RequestError(0, too_deep) from None
    if nesting_depth(message) > MAX_NESTING:
        raise RequestError(request_id_of(message), too_deep)
    if not isinstance(message, dict):
        raise RequestError(0, "a request is a JSON object")
    request_id = request_id_of(message)
    kind = _field(message, "type", (str,), "a string", request_id)
    rid = _field(message, "id", (int,), "an integer", request_id)
    if kind == "shutdown":
        return ShutdownRequest(rid)
    if kind == "cancel":
        return CancelRequest(rid)
    if kind not in ("evaluate", "propagate", "analyze"):
        raise RequestError(request_id, f"type: unknown request type '{kind}' ({', '.join(REQUEST_TYPES)})")
    graph = _field(message, "graph", (dict,), "an object", rid)
    store = _field(message, "store", (str,), "a string", rid)
    libraries = op_libraries_of(message, rid)
    if kind == "propagate":
        return PropagateRequest(rid, graph, store, _field(message, "for_analysis", (bool,), "a boolean", rid, False),
                                libraries)
    backend = _field(message, "backend", (str,), "a string", rid)
    options = _field(message, "backend_options", (dict,), "an object", rid, {})
    for key, value in options.items():
        if not isinstance(value, str):
            raise RequestError(rid, f"backend_options.{key}: expected a string, got {json.dumps(value)[:80]}")
    if kind == "analyze":
        nodes = _field(message, "nodes", (list,), "an array", rid)
        if not all(isinstance(node, str) for node in nodes):
            raise RequestError(rid, "nodes: expected an array of strings")
        return AnalyzeRequest(rid, graph, store, backend, options, nodes, libraries)
    accuracy = _field(message, "accuracy", (str,), "a string", rid, "off")
    if accuracy not in ACCURACY_MODES:
        raise RequestError(rid, f"accuracy: unknown mode '{accuracy}' ({', '.join(ACCURACY_MODES)})")
    nan_check = _field(message, "nan_check", (bool,), "a boolean", rid, False)
    bisect = _field(message, "bisect", (dict,), "an object", rid, None)
    if bisect is not None:
        _field(bisect, "subsystem", (str,), "a string", rid, None)
        enabled = _field(bisect, "enabled", (int,), "an integer", rid, None)
        if enabled is not None and (enabled < 0 or "subsystem" not in bisect):
            raise RequestError(rid, "bisect.enabled: a count of applications (0 or more) of the subsystem named")
        unknown = sorted(set(bisect) - {"subsystem", "enabled"})
        if unknown:
            raise RequestError(rid, f"bisect: unknown field '{unknown[0]}'")
    code = _field(message, "output_code", (str,), "a string", rid, None)
    if code not in (None, OUTPUT_CODE_RUN, OUTPUT_CODE_COMPILE):
        raise RequestError(rid, f"output_code: unknown mode '{code}' ({OUTPUT_CODE_RUN}, {OUTPUT_CODE_COMPILE})")
    threads = _field(message, "compile_threads", (int,), "an integer", rid, 1)
    if threads < 1:
        raise RequestError(rid, "compile_threads: expected 1 or more processes")
    return EvaluateRequest(rid, graph, store, backend, options, accuracy, nan_check, bisect, code, threads, libraries)


def _float(value):
    if math.isnan(value):
        return {"float": "nan"}
    if math.isinf(value):
        return {"float": "inf" if value > 0 else "-inf"}
    return float(value)


def passed():
    return {"status": "pass"}


def failed(kind, message="", *, exception_type="", raised_at="", signal="", node="", op="", stderr_tail="",
           accuracy=None):
    """A failing verdict; accuracy is (max_abs_error, max_rel_error, rmse_compiled, rmse_eager)."""
    verdict = {"status": "fail", "kind": kind}
    for key, value in (("signal", signal), ("exception_type", exception_type), ("raised_at", raised_at),
                       ("message", message), ("node", node), ("op", op), ("stderr_tail", stderr_tail)):
        if value:
            verdict[key] = value
    if accuracy is not None:
        verdict["accuracy"] = dict(zip(("max_abs_error", "max_rel_error", "rmse_compiled", "rmse_eager"),
                                       (_float(x) for x in accuracy)))
    return verdict


def _line(message):
    return json.dumps(message, allow_nan=False, separators=(",", ":"))


def hello_line(pid, torch_version, devices, concurrency, backends, sandbox, serves_in_children=False):
    """serves_in_children: each request is served in a forked child whose end (a CUDA error, a crash,
    a cancel) never ends this worker (renewing_server.py): the coordinator keeps it, and cancels
    requests rather than killing it, at concurrency 1 too."""
    message = {"type": "hello", "protocol": PROTOCOL, "version": VERSION, "pid": pid,
               "torch_version": torch_version, "devices": devices, "concurrency": concurrency,
               "backends": backends, "sandbox": sandbox}
    if serves_in_children:
        message["serves_in_children"] = True
    return _line(message)


def readiness_line(ready):
    """A worker serving in children says, between replies, whether a request sent now would start at once
    (a child ready to serve it) or wait for a child to get ready: the coordinator sends none meanwhile."""
    return _line({"type": "readiness", "ready": ready})


def verdict_line(request_id, verdict, compile_ms=0.0, run_ms=0.0, retiring=False, bisect=None, output_code=None,
                 load_ms=0.0, check_ms=0.0, device_wait_ms=0.0):
    """retiring: the worker exits after this reply, and the coordinator sends it nothing more;
    bisect: what a bisect probe observed (bisect_probe.Probe.report); output_code: the generated code
    and the failing kernel (output_code.Capture.report); load_ms, check_ms, device_wait_ms: the time
    spent loading the graph and its tensors, checking the outputs, and waiting for the GPU before the
    run (device_lock.py) (the run's timeline)."""
    message = {"type": "verdict", "id": request_id, "verdict": verdict,
               "compile_ms": _float(compile_ms), "run_ms": _float(run_ms)}
    for name, value in (("load_ms", load_ms), ("check_ms", check_ms), ("device_wait_ms", device_wait_ms)):
        if value > 0:
            message[name] = _float(value)
    if retiring:
        message["retiring"] = True
    return _line(_with_given(message, bisect=bisect, output_code=output_code))


def propagated_line(request_id, root, values, eager_failure=None):
    """values: (node name, storage {hash, nbytes, device}, tensor metadata) for each stored value;
    eager_failure: for analysis, the failing verdict of the node where eager stopped."""
    message = {"type": "propagated", "id": request_id, "root": root,
               "values": [{"node": node, "storage": storage, "tensor": tensor} for node, storage, tensor in values]}
    if eager_failure is not None:
        message["eager_failure"] = eager_failure
    return _line(message)


def _with_given(message, **optional):
    """message with the optional members that are given (not None); absent ones stay absent."""
    message.update((key, value) for key, value in optional.items() if value is not None)
    return message


def figures(max_abs_error, rmse):
    """A value's distance from its fp64 reference."""
    return {"max_abs_error": _float(max_abs_error), "rmse": _float(rmse)}


def measurement(node, *, dtype="", shape=(), measured=False, diverges=False, max_abs_error=0.0, compiled=None,
                eager=None, compiled_deterministic=True, fp64_deterministic=True, note=""):
    """One node's measured value (protocol/value_measurement.h); compiled and eager from figures()."""
    return _with_given({"node": node, "dtype": dtype, "shape": list(shape), "measured": measured,
                        "diverges": diverges, "max_abs_error": _float(max_abs_error),
                        "compiled_deterministic": compiled_deterministic, "fp64_deterministic": fp64_deterministic},
                       compiled=compiled, eager=eager, note=note or None)


def analyzed_line(request_id, exposure, values=(), compiled_failure=None, eager_failure=None, compile_ms=0.0,
                  run_ms=0.0, retiring=False):
    return _line(_with_given({"type": "analyzed", "id": request_id, "exposure": exposure, "values": list(values),
                              "compile_ms": _float(compile_ms), "run_ms": _float(run_ms)},
                             compiled_failure=compiled_failure, eager_failure=eager_failure, retiring=retiring or None))


def error_line(request_id, message):
    return _line({"type": "error", "id": request_id, "message": message})


def oversized_request_line(dropped_bytes, max_line_bytes):
    return error_line(0, f"request of {dropped_bytes} bytes is over the limit of {max_line_bytes}")


def retiring_line(line):
    """A reply line announcing that the worker exits after it; an error line stays as it is, since it
    cannot say so (the worker then serves on)."""
    message = json.loads(line)
    if message.get("type") == "error":
        return line
    message["retiring"] = True
    return _line(message)


def is_retiring(line):
    """Whether a reply line announces that the worker that wrote it exits now."""
    try:
        message = json.loads(line)
    except ValueError:
        return False
    return message.get("retiring") is True
