# The Python worker: the worker protocol (docs/protocol.md) in the user's own PyTorch 2.x, serving
# the torch.compile backends. torch and the backend are imported and warmed up once; then, without a
# GPU, requests are served by forked children (fork_server.py), one each, several at once, so a
# segfault or an abort in generated code is one request's verdict and no candidate sees another's
# process state; with a GPU, by one forked child after another (renewing_server.py): each serves in
# its own CUDA context until a CUDA error, which ends it, and after another failure drops Inductor's
# in-memory caches (worker_requests.py says why). With --no-fork-server, in this process, which exits
# after a CUDA error, saying so in its verdict.
import argparse
import ctypes.util
import faulthandler
import json
import os
import signal
import sys
import time

from minifyd.line_reader import read_lines, write_line

MIN_TORCH = (2, 0)
# glibc's own heap checks: its debugging malloc preloaded, checking every free(). A kernel that writes
# past the end of a buffer it allocated (Inductor's outer-loop-fusion local buffers, pytorch/pytorch
# #159154) corrupts the heap; what follows then depends on the heap's state: a segfault somewhere
# later, an abort at exit, a deadlock in a crash handler that allocates, or nothing at all. With the
# checks, the buffer's own free() finds the byte past its end overwritten and aborts ("free():
# invalid pointer", SIGABRT) in the kernel's run, every time.
HEAP_CHECK_LIBRARY = "c_malloc_debug"
HEAP_CHECK_TUNABLE = "glibc.malloc.check=3"
HEAP_CHECKED_VARIABLE = "MINIFYD_HEAP_CHECKED"
# Signals whose handlers, where a library installed one, are put back to the default: UCX's (which
# Debian's torch loads) prints a backtrace from its SIGSEGV handler, allocating on a heap that may be
# the corrupted one, and deadlocks there; the default kills the process, which is the verdict.
CRASH_SIGNALS = (signal.SIGSEGV, signal.SIGBUS, signal.SIGILL, signal.SIGFPE, signal.SIGABRT)


def _torch_or_exit(python):
    """torch with Inductor, or exit 2 with a line saying what is missing (before any hello)."""
    try:
        import torch
    except ImportError as error:
        sys.exit(f"minify-worker.py: {python} cannot import torch ({error}); pass --python with a "
                 "python3 whose torch is PyTorch 2.x (scripts/torch2_env.sh builds one on Debian 12)")
    version = tuple(int(part) for part in torch.__version__.split("+")[0].split(".")[:2] if part.isdigit())
    try:
        import torch._inductor.compile_fx  # noqa: F401
        import torch._dynamo.backends.registry  # noqa: F401
    except ImportError as error:
        sys.exit(f"minify-worker.py: torch {torch.__version__} at {os.path.dirname(torch.__file__)} has no "
                 f"Inductor ({error}); the torch.compile backends need PyTorch "
                 f"{MIN_TORCH[0]}.{MIN_TORCH[1]} or later")
    if version < MIN_TORCH:
        sys.exit(f"minify-worker.py: torch {torch.__version__} is too old; the torch.compile backends "
                 f"need PyTorch {MIN_TORCH[0]}.{MIN_TORCH[1]} or later")
    return torch


def _with_heap_checks():
    """Runs this python again with glibc's heap checks (HEAP_CHECK_LIBRARY preloaded, HEAP_CHECK_TUNABLE)
    where the C library has them and they are not on yet; once they are, takes them out of the
    environment, so the compilers and other programs it starts run without."""
    if os.environ.pop(HEAP_CHECKED_VARIABLE, None) == "1":
        os.environ.pop("LD_PRELOAD", None)
        os.environ.pop("GLIBC_TUNABLES", None)
        return
    library = ctypes.util.find_library(HEAP_CHECK_LIBRARY)  # glibc 2.34 and later
    if library is None or "LD_PRELOAD" in os.environ or "GLIBC_TUNABLES" in os.environ:
        return
    environment = dict(os.environ, LD_PRELOAD=library, GLIBC_TUNABLES=HEAP_CHECK_TUNABLE,
                       **{HEAP_CHECKED_VARIABLE: "1"})
    os.execve(sys.executable, sys.orig_argv, environment)


def _sees_a_gpu(torch):
    """Whether this process sees a GPU (CUDA_VISIBLE_DEVICES applied), asked of NVML
    (PYTORCH_NVML_BASED_CUDA_CHECK, main()): CUDA stays uninitialised."""
    return os.environ.get("CUDA_VISIBLE_DEVICES") != "" and torch.cuda.is_available()


def _devices(torch):
    """The GPUs this process sees, as the hello lists them; their properties initialise CUDA."""
    if not _sees_a_gpu(torch):
        return []
    found = []
    for index in range(torch.cuda.device_count()):
        properties = torch.cuda.get_device_properties(index)
        uuid = getattr(properties, "uuid", None)
        found.append({"index": index, "name": properties.name, **({"uuid": f"GPU-{uuid}"} if uuid else {})})
    return found


def _device_lock(devices):
    """The lock a run holds on the GPUs this process sees (device_lock.py), None without GPUs or where
    its directory cannot be trusted (said on stderr: the runs then go on unlocked, as before it)."""
    if not devices:
        return None
    from minifyd.device_lock import DeviceLockError, DeviceRunLock
    try:
        return DeviceRunLock([device.get("uuid") or f"cuda-{device['index']}" for device in devices])
    except DeviceLockError as error:
        print(f"minify-worker.py: runs are not kept from each other on the GPU: {error}", file=sys.stderr, flush=True)
        return None


def _sandbox_report(protocol_fd):
    fds = sorted(int(name) for name in os.listdir("/proc/self/fd") if int(name) != protocol_fd)
    report = {"environment": sorted(os.environ), "open_fds": [fd for fd in fds if os.path.exists(f"/proc/self/fd/{fd}")],
              "pgid": os.getpgid(0), "cwd": os.getcwd()}
    if "CUDA_VISIBLE_DEVICES" in os.environ:
        report["cuda_visible_devices"] = os.environ["CUDA_VISIBLE_DEVICES"]
    return report


def _serve_in_process(handler, request_fd, reply_fd, max_line_bytes):
    """The requests on request_fd one at a time, in this process, their replies on reply_fd; 3 after a
    reply that says it is retiring, else 0 at a shutdown or the requests' end."""
    from minifyd import worker_protocol as wp
    for line, dropped in read_lines(request_fd, max_line_bytes):
        if dropped:
            write_line(reply_fd, wp.oversized_request_line(dropped, max_line_bytes))
            continue
        try:
            request = wp.decode_request(line)
        except wp.RequestError as error:
            write_line(reply_fd, wp.error_line(error.request_id, str(error)))
            continue
        if isinstance(request, wp.ShutdownRequest):
            return 0
        if isinstance(request, wp.CancelRequest):
            continue
        reply = handler.handle(request)
        write_line(reply_fd, reply)
        if wp.is_retiring(reply):
            return 3
    return 0


def main():
    parser = argparse.ArgumentParser(description="minifyd's Python worker: serves the torch.compile backends.")
    parser.add_argument("--check", action="store_true",
                        help="only check this python's torch: print its version as JSON, exit 2 if unusable")
    parser.add_argument("--no-fork-server", action="store_true", help="serve every request in this process")
    parser.add_argument("--renewing-children", action="store_true",
                        help="serve as with a GPU, also without one: in one forked child after another (renewing_server.py)")
    parser.add_argument("--max-concurrent", type=int, default=32, help="requests served at once (fork server)")
    parser.add_argument("--max-line-bytes", type=int, default=16 << 20, help="longest request line accepted")
    parser.add_argument("--no-warm-up", action="store_true", help="skip compiling a tiny graph at start")
    parser.add_argument("--no-precompiled-headers", action="store_true",
                        help="let g++ parse the prefix header of every C++ kernel (precompiled_headers.py)")
    args = parser.parse_args()

    if not args.check:
        _with_heap_checks()
    # The protocol gets a private descriptor; fd 1 becomes stderr, so nothing that generated code,
    # a compiler or PyTorch prints can corrupt it.
    protocol_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr

    # Whether CUDA is available is asked while Inductor is imported (its benchmarker's module asks): the
    # CUDA runtime's answer initialises CUDA in this process, after which no forked child can use it
    # ("Cannot re-initialize CUDA in forked subprocess"); NVML's, which PyTorch gives with this, does not.
    os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")
    torch = _torch_or_exit(sys.executable)
    from minifyd import bisect_probe, compile_backends
    if args.check:
        write_line(protocol_fd, json.dumps({"torch_version": torch.__version__, "backends": list(compile_backends.BACKENDS)}))
        return 0

    # Every candidate compiles in the process that judges it: children forked from a fork server would
    # share the pipes of a pool of compile workers; and Inductor uses its pool only once the pool is
    # ready, so a compile error's text would depend on how far the pool had started.
    torch._inductor.config.compile_threads = 1
    bisect_probe.isolate()
    if not args.no_precompiled_headers:
        from minifyd import precompiled_headers
        precompiled_headers.install()
    for number in CRASH_SIGNALS:
        signal.signal(number, signal.SIG_DFL)
    if args.no_fork_server:
        handler, devices = _ready_to_serve(torch, args, in_process=True)
        write_line(protocol_fd, _hello(torch, devices, protocol_fd))
        return _serve_in_process(handler, 0, protocol_fd, args.max_line_bytes)
    if _sees_a_gpu(torch) or args.renewing_children:
        # CUDA cannot be used in a child forked after it was initialised: forked children initialise it,
        # each its own (renewing_server.py), and the first says which GPUs it sees, for the hello.
        from minifyd.renewing_server import RenewingServer

        def start_child():
            handler, devices = _ready_to_serve(torch, args, in_process=True)
            return handler, {"devices": devices}

        def serve_child(handler, request_fd, reply_fd):
            return _serve_in_process(handler, request_fd, reply_fd, args.max_line_bytes)

        server = RenewingServer(start_child, serve_child, protocol_fd, args.max_line_bytes)
        devices = server.start()["devices"]
        write_line(protocol_fd, _hello(torch, devices, protocol_fd, serves_in_children=True))
        return server.serve()
    handler, _ = _ready_to_serve(torch, args, in_process=False)
    from minifyd.fork_server import ForkServer
    concurrency = max(1, args.max_concurrent)
    write_line(protocol_fd, _hello(torch, [], protocol_fd, concurrency=concurrency))
    return ForkServer(handler, protocol_fd, concurrency, args.max_line_bytes).serve()


def _ready_to_serve(torch, args, in_process):
    """(the request handler, the GPUs seen) of a process about to serve: its CUDA context up where it
    sees a GPU (before the hello: no query's time limit pays for it), the backend warmed up."""
    from minifyd import compile_backends
    from minifyd.worker_requests import RequestHandler
    devices = _devices(torch)
    if devices:
        torch.zeros(1, device="cuda")
    started = time.perf_counter()
    if not args.no_warm_up:
        compile_backends.warm_up("inductor", "cuda" if devices else "cpu")
    print(f"minify-worker.py: torch {torch.__version__}, warmed up in {time.perf_counter() - started:.2f} s",
          file=sys.stderr, flush=True)
    if in_process:
        # Killed at a request's time limit (SIGTERM, serving in its own process), the worker first writes
        # every thread's Python stack to stderr, which the timeout's fault carries: where the request hung
        # (a compile, a kernel's run, a wait on the device). Then it dies by the signal as before.
        faulthandler.register(signal.SIGTERM, all_threads=True, chain=True)
    synchronize = torch.cuda.synchronize if devices else (lambda: None)
    return RequestHandler(synchronize, in_process=in_process, device_lock=_device_lock(devices)), devices


def _hello(torch, devices, protocol_fd, concurrency=1, serves_in_children=False):
    from minifyd import compile_backends
    from minifyd import worker_protocol as wp
    return wp.hello_line(os.getpid(), torch.__version__, devices, concurrency, list(compile_backends.BACKENDS),
                         _sandbox_report(protocol_fd), serves_in_children)
