# A vendor's operators, named by the user (label security; docs/security.md "A vendor's operators"):
# --op-library NS=PATH.so against the real binaries, workers and a real TORCH_LIBRARY operator library
# (tests/plugins/test_operators.cpp: minifyd_test::crash_on_shape, whose CPU kernel segfaults when its
# input's first size is 7), embedded in a model of 44 aten operators around one call of it, traced by
# make_fx at 3 rows after torch.ops.load_library and exported with scripts/export_fx.py with inputs of 3
# rows (the plain graph) or 7 (the crash graph):
#   cpp     the C++ worker, with the library CMake built against this build's LibTorch: without
#           --op-library the graph is refused naming the namespace (validate, query, run); with it,
#           `query --backend eager` of the size-7 graph is the kernel's crash, `run` of it under eager
#           (whose propagation stops at the crashing kernel) and `run` under the faulty plugin crashing
#           at the custom operator each end at it and its input; a symbolic link, a
#           group-writable file, another user's file (as root), a namespace of PyTorch's own and a
#           changed file (the worker's own check of the recorded SHA-256) are refused; minify-worker
#           serving in its own process retires after the request; on one minifyd, a job with the
#           library, then queries without it: the graph is refused, an aten graph answered.
#   python  the Python worker, with the library built at test time against its PyTorch 2.x: without
#           --op-library the graph is refused naming the namespace; with it, `query` under aot_eager and
#           inductor is the kernel's crash, and `run` under aot_eager ends at it and its input, its
#           repro.py loading the library and crashing under plain PyTorch.
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, "..", "minifyd"))
sys.path.insert(0, os.path.join(HERE, "..", "inductor"))
from daemon_harness import Daemon, Tools, expect  # noqa: E402
from harness import run_scenarios  # noqa: E402

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
NAMESPACE = "minifyd_test"
COMMAND_TIMEOUT = 600
MODEL = '''
import os
import torch
from torch.fx.experimental.proxy_tensor import make_fx

torch.ops.load_library(os.environ["MINIFYD_TEST_OPERATORS"])


def f(x, w):
    h = x
    for _ in range(7):
        h = torch.relu(h @ w) + h * 0.5
        h = torch.sigmoid(h) - 0.25
    c = torch.ops.minifyd_test.crash_on_shape(h)
    return (c.sum(dim=1) + h.mean(dim=1)).tanh()


def make():
    torch.manual_seed(0)
    rows = int(os.environ["MINIFYD_TEST_ROWS"])
    w = torch.randn(16, 16) * 0.1
    # Traced where the kernel does not crash; exported as that aten graph, with the inputs asked for.
    return make_fx(f)(torch.randn(3, 16), w), (torch.randn(rows, 16), w)
'''


def run(command, env=None, timeout=COMMAND_TIMEOUT):
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                          env=dict(os.environ, **(env or {})))
    return done.returncode, done.stdout, done.stderr


def export(python, library, rows, out, work):
    model = os.path.join(work, "model.py")
    with open(model, "w") as f:
        f.write(MODEL)
    shutil.rmtree(out, ignore_errors=True)
    code, stdout, stderr = run([python, os.path.join(ROOT, "scripts", "export_fx.py"), model, "--out", out],
                               env={"MINIFYD_TEST_OPERATORS": library, "MINIFYD_TEST_ROWS": str(rows)})
    expect(code == 0, f"export_fx of the model ({rows} rows): exit {code}\n{stdout}{stderr}")
    with open(os.path.join(out, "graph.json")) as f:
        targets = [node.get("target") for node in json.load(f)["nodes"] if node["op"] == "call_function"]
    expect(f"{NAMESPACE}::crash_on_shape" in targets and len(targets) > 40,
           f"the exported graph has {len(targets)} calls, the custom operator among them: {targets}")
    return out


def minify(args, *command):
    code, stdout, stderr = run([args.minify, *command])
    return code, stdout + stderr


def expect_exit(args, what, wanted, words, *command):
    code, output = minify(args, *command)
    expect(code == wanted and all(word in output for word in words),
           f"{what}: `minify {' '.join(command)}` exits {code}, wanted {wanted} naming {words}:\n{output[-3000:]}")
    print(f"{what}: {command[0]} exits {code}")
    return output


def own_copy(library, path, mode=0o755):
    shutil.copyfile(library, path)
    os.chmod(path, mode)
    return path


def ends_at_custom_operator(out, what):
    with open(os.path.join(out, "graph.json")) as f:
        nodes = json.load(f)["nodes"]
    ops = [(node["op"], node.get("target")) for node in nodes]
    expect(ops == [("placeholder", None), ("call_function", f"{NAMESPACE}::crash_on_shape"), ("output", None)],
           f"{what}: the minimized graph is not the custom operator and its input: {ops}")
    print(f"{what}: minimized to {ops}")


def minified_in_eager(args, graph, out, backend, with_library):
    """The size-7 graph, whose custom kernel crashes in eager too, minified like any other: its values
    are propagated up to the crashing node, which ends alone on a load of its input."""
    output = expect_exit(args, f"run of the size-7 graph under {backend[1]} with --op-library", EXIT_OK,
                         ['"minimized"', "does not run eagerly at node"], "run", graph, "--out", out, *backend,
                         "--json", *with_library)
    ends_at_custom_operator(out, f"run of the crashing kernel under {backend[1]}")
    return output


def refusals(args, graph, library, work):
    """--op-library naming what may not be loaded: each refused before any worker sees it."""
    link = os.path.join(work, "link.so")
    os.symlink(library, link)
    refused = {"a symbolic link": (link, "symbolic link"),
               "a group-writable file": (own_copy(library, os.path.join(work, "group-writable.so"), 0o775),
                                         "written by its group or by others"),
               "a FIFO": (os.path.join(work, "fifo.so"), "not a regular file")}
    os.mkfifo(refused["a FIFO"][0])
    if os.getuid() == 0:
        others = own_copy(library, os.path.join(work, "others.so"))
        os.chown(others, 65534, 65534)
        refused["another user's file"] = (others, "belongs to uid 65534")
    for what, (path, words) in refused.items():
        for command in (["query", graph, "--backend", "eager"], ["validate", graph]):
            expect_exit(args, f"--op-library naming {what}", EXIT_USAGE if command[0] == "query" else EXIT_FAILED,
                        [path, words], *command, "--op-library", f"{NAMESPACE}={path}")
    for name_space, words in (("aten", "PyTorch's own"), ("x-y", "not an identifier")):
        expect_exit(args, f"--op-library for namespace {name_space}", EXIT_USAGE, [words],
                    "query", graph, "--backend", "eager", "--op-library", f"{name_space}={library}")


def worker_requests(args, graph, library):
    """minify-worker itself: a request whose recorded SHA-256 the file no longer has is refused naming
    it; serving in its own process, the worker retires after a request naming a library."""
    with open(os.path.join(graph, "graph.json")) as f:
        document = json.load(f)
    with open(library, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()

    def request(sha256, request_id):
        return json.dumps({"type": "propagate", "id": request_id, "graph": document,
                           "store": os.path.join(graph, "store"),
                           "op_libraries": [{"namespace": NAMESPACE, "path": library, "sha256": sha256}]})

    lines = "\n".join([request("0" * 64, 1), request(digest, 2), request(digest, 3)]) + "\n"
    done = subprocess.run([args.worker, "--no-fork-server"], input=lines, capture_output=True, text=True,
                          timeout=COMMAND_TIMEOUT)
    replies = [json.loads(line) for line in done.stdout.splitlines()][1:]
    expect(len(replies) == 2 and replies[0]["type"] == "error" and "SHA-256" in replies[0]["message"]
           and library in replies[0]["message"],
           f"the worker's hash check: {replies[:1]}\n{done.stderr[-2000:]}")
    print("minify-worker refuses a library whose SHA-256 is not the job's, naming it")
    expect(replies[1]["type"] == "propagated" and replies[1].get("retiring") is True and done.returncode == 3,
           f"the worker serving in its own process: exit {done.returncode}, replies {replies[1:]}")
    print("minify-worker serving in its own process retires after the request naming a library (exit 3), "
          "unanswered the next")


def daemon_jobs(args, crash_graph, plain_graph, library, faulty_args, work):
    daemon = Daemon(Tools(args.minify, args.minifyd, args.faulty), os.path.join(work, "state")).start()
    try:
        job = daemon.submit(plain_graph, faulty_args, "--op-library", f"{NAMESPACE}={library}")
        deadline = time.monotonic() + COMMAND_TIMEOUT
        while time.monotonic() < deadline:
            state = {entry["id"]: entry for entry in daemon.jobs()}[job]["state"]
            if state in ("done", "failed", "cancelled"):
                break
            time.sleep(0.2)
        expect(state == "done", f"the job with the library ends {state}:\n{daemon.log()}")
        code, reply, stderr = daemon.client("result", str(job), "--out", os.path.join(work, "job-out"))
        expect(code == 0, f"result: {code} {reply} {stderr}")
        ends_at_custom_operator(os.path.join(work, "job-out"), "minifyd's job with the library")
        code, reply, stderr = daemon.client("query", "--daemon", crash_graph, "--backend", "eager")
        expect(code == EXIT_USAGE and NAMESPACE in stderr + json.dumps(reply),
               f"a query without the library after the job: exit {code} {reply} {stderr}")
        print("after the job, a query of the graph without --op-library is refused naming the namespace")
        aten = os.path.join(work, "aten-graph")
        code, _, stderr = run([args.python_1_13, os.path.join(ROOT, "scripts", "export_fx.py"),
                               os.path.join(work, "aten_model.py"), "--out", aten])
        expect(code == 0, f"export of the aten model: {stderr}")
        code, reply, stderr = daemon.client("query", "--daemon", aten, "--backend", "eager")
        expect(code == EXIT_OK and reply and reply.get("verdict", {}).get("status") == "pass",
               f"an aten graph after the job: exit {code} {reply} {stderr}")
        print("an aten graph after the job is answered as before")
        code, _, stderr = daemon.client("shutdown")
        expect(code == 0, f"shutdown: {stderr}")
        daemon.process.wait(60)
    finally:
        daemon.stop()


def cpp(args):
    work, library = args.work, args.library
    with open(os.path.join(work, "aten_model.py"), "w") as f:
        f.write("import torch\n\ndef make():\n    return (lambda x: torch.relu(x) + 1), (torch.randn(4, 3),)\n")
    crash_graph = export(args.python_1_13, library, 7, os.path.join(work, "crash-graph"), work)
    plain_graph = export(args.python_1_13, library, 3, os.path.join(work, "plain-graph"), work)
    with_library = ["--op-library", f"{NAMESPACE}={library}"]

    expect_exit(args, "validate without --op-library", EXIT_FAILED, [f"'{NAMESPACE}'", "--op-library"],
                "validate", crash_graph)
    expect_exit(args, "validate with --op-library", EXIT_OK, ["valid"], "validate", crash_graph, *with_library)
    expect_exit(args, "query without --op-library", EXIT_USAGE, [f"'{NAMESPACE}'"],
                "query", crash_graph, "--backend", "eager", "--json")
    output = expect_exit(args, "query --backend eager with --op-library", EXIT_FAILED, ["crash"],
                         "query", crash_graph, "--backend", "eager", "--json", *with_library)
    verdict = json.loads(output.splitlines()[0])["verdict"]
    expect(verdict.get("kind") == "crash" and verdict.get("signal") == "SIGSEGV",
           f"the custom operator's crash in the C++ worker: {verdict}")
    print(f"the C++ worker ran the custom operator: {verdict['kind']} {verdict['signal']}")

    faulty = ["--backend", f"plugin:{args.faulty}", "--backend-opt", f"op={NAMESPACE}::crash_on_shape",
              "--backend-opt", "fault=segfault"]
    expect_exit(args, "run without --op-library", EXIT_USAGE, [f"'{NAMESPACE}'"],
                "run", plain_graph, "--out", os.path.join(work, "refused-out"), *faulty, "--json")
    expect_exit(args, "run with --op-library (C++ worker)", EXIT_OK, ['"minimized"'],
                "run", plain_graph, "--out", os.path.join(work, "run-out"), *faulty, "--json", *with_library)
    ends_at_custom_operator(os.path.join(work, "run-out"), "run under the faulty plugin")
    minified_in_eager(args, crash_graph, os.path.join(work, "eager-out"), ["--backend", "eager"], with_library)

    refusals(args, crash_graph, library, work)
    worker_requests(args, plain_graph, own_copy(library, os.path.join(work, "changing.so")))
    daemon_jobs(args, crash_graph, plain_graph, library, faulty, work)


# The library built against the PyTorch 2.x of the Python worker, as a user builds theirs for their own.
BUILD_FOR_PYTHON = """
import subprocess, sys, torch
from torch.utils import cpp_extension
source, library = sys.argv[1:]
command = ["g++", "-shared", "-fPIC", "-O2", "-std=c++17",
           f"-D_GLIBCXX_USE_CXX11_ABI={int(torch._C._GLIBCXX_USE_CXX11_ABI)}", source, "-o", library]
command += [f"-I{path}" for path in cpp_extension.include_paths()]
command += [f"-L{path}" for path in cpp_extension.library_paths()] + ["-lc10", "-ltorch", "-ltorch_cpu"]
sys.exit(subprocess.run(command).returncode)
"""


def python(args):
    """The Python worker: without --op-library the graph is refused naming the namespace; with it,
    `query` under aot_eager and inductor is the custom kernel's crash, in the worker's forked child, and
    `run` under aot_eager minimizes to it."""
    work = args.work
    library = os.path.join(work, "minifyd_test_operators.so")
    code, stdout, stderr = run([args.python, "-c", BUILD_FOR_PYTHON,
                                os.path.join(ROOT, "tests", "plugins", "test_operators.cpp"), library])
    expect(code == 0, f"building the operator library for {args.python}: exit {code}\n{stdout}{stderr[-3000:]}")
    crash_graph = export(args.python, library, 7, os.path.join(work, "crash-graph"), work)
    with_library = ["--op-library", f"{NAMESPACE}={library}"]
    expect_exit(args, "query --backend aot_eager without --op-library", EXIT_USAGE, [f"'{NAMESPACE}'"],
                "query", crash_graph, "--backend", "aot_eager", "--python", args.python, "--json")
    for backend in ("aot_eager", "inductor"):
        output = expect_exit(args, f"query --backend {backend} with --op-library", EXIT_FAILED, ["crash"],
                             "query", crash_graph, "--backend", backend, "--python", args.python, "--json",
                             *with_library)
        verdict = json.loads(output.splitlines()[0])["verdict"]
        expect(verdict.get("kind") == "crash" and verdict.get("signal") == "SIGSEGV",
               f"the custom operator's crash in the Python worker under {backend}: {verdict}")
        print(f"the Python worker ran the custom operator under {backend}: {verdict['kind']} {verdict['signal']}")
    out = os.path.join(work, "aot-eager-out")
    minified_in_eager(args, crash_graph, out, ["--backend", "aot_eager", "--python", args.python], with_library)
    # after_aot's repro.py loads the library itself, and crashes under plain PyTorch as the worker did.
    code, _, stderr = run([args.python, os.path.join(out, "repro.py")])
    expect(code == -11, f"{out}/repro.py under plain PyTorch: exit {code}, not SIGSEGV\n{stderr[-2000:]}")
    print("its repro.py loads the library and crashes under plain PyTorch (SIGSEGV)")


SCENARIOS = {"op_library_cpp": cpp, "op_library_python": python}

if __name__ == "__main__":
    run_scenarios(SCENARIOS, label="security", options=("--worker", "--faulty", "--library", "--python-1-13"),
                  fresh_work=True)
