# A hostile or unlucky user's input (label security), as docs/security.md promises to meet it:
#   graph_targets  a graph document that calls what no graph may (docs/security.md, "What a graph may
#                  call"): the two targets that reached torch.ops utilities by attribute traversal and
#                  ran code, and aten::from_file writing a file, refused by `minify validate`, `query`
#                  on both workers, `run` and a minifyd job, naming the node; every entry of the
#                  rule's refused list refused by the Python worker's own loader on its pipe.
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "inductor"))
sys.path.insert(0, os.path.join(HERE, "..", "minifyd"))
from harness import EXIT_USAGE, ROOT, expect, run_scenarios, write_file  # noqa: E402
from test_worker_pipe import Worker, exported_graph  # noqa: E402

RULE = os.path.join(ROOT, "worker", "python", "minifyd", "graph_targets.json")
# A shared library whose constructor leaves a file behind: loaded, it ran code.
CONSTRUCTOR_SOURCE = ('#include <stdio.h>\n__attribute__((constructor)) static void ran(void) {\n'
                      '  FILE* f = fopen("%s", "w");\n  if (f) { fputs("ran\\n", f); fclose(f); }\n}\n')


def with_node(graph, name, target, args):
    """The graph with one more call before its output: (name = target(*args))."""
    changed = json.loads(json.dumps(graph))
    changed["nodes"].insert(len(changed["nodes"]) - 1,
                            {"name": name, "op": "call_function", "target": target, "args": args, "kwargs": {}})
    return changed


def write_graph_dir(source_dir, out, graph):
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(source_dir, out)
    with open(os.path.join(out, "graph.json"), "w") as f:
        json.dump(graph, f)
    return out


def shared_library(env, marker):
    source = write_file(env.work, "constructor.c", CONSTRUCTOR_SOURCE % marker)
    library = os.path.join(env.work, "constructor.so")
    compiler = shutil.which("cc") or shutil.which("gcc") or shutil.which("c++")
    done = subprocess.run([compiler, "-shared", "-fPIC", "-o", library, source], capture_output=True, text=True)
    expect(done.returncode == 0, f"building the probe library failed: {done.stderr}")
    return library


def hostile_graphs(env, graph_dir, graph, marker, victim):
    """{what it tried: (graph directory, the node that must be named)}."""
    mapped = with_node(graph, "mapped", "aten::from_file", [victim, True, 16])
    mapped["nodes"].insert(len(mapped["nodes"]) - 1, {"name": "filled", "op": "call_function",
                                                      "target": "aten::fill_.Scalar",
                                                      "args": [{"node": "mapped"}, 7], "kwargs": {}})
    graphs = {"load_library": with_node(graph, "loaded", "load_library::__self__.load_library",
                                        [shared_library(env, marker)]),
              "import_module": with_node(graph, "imported", "import_module::__self__.import_module", ["this"]),
              "from_file": mapped}
    nodes = {"load_library": "loaded", "import_module": "imported", "from_file": "mapped"}
    return {what: (write_graph_dir(graph_dir, os.path.join(env.work, what), hostile), nodes[what])
            for what, hostile in graphs.items()}


def refused_everywhere(env, hostile_dir, node):
    """validate, query (C++ and Python worker), run and a minifyd job each refuse it, naming the node."""
    from daemon_harness import Daemon, Tools
    named = f"node '{node}'"
    done = subprocess.run([env.minify, "validate", hostile_dir], capture_output=True, text=True, timeout=60)
    expect(done.returncode == 1 and named in done.stderr and "is refused" in done.stderr,
           f"validate {hostile_dir}: exit {done.returncode}, {done.stdout}{done.stderr}")
    for backend in ("eager", "inductor"):
        code, result, stderr = env.minify_cmd("query", hostile_dir, "--backend", backend, timeout=300)
        expect(code == EXIT_USAGE and named in result.get("error", ""),
               f"query --backend {backend} {hostile_dir}: exit {code}, {result}")
    out = os.path.join(env.work, "run-out")
    code, result, stderr = env.minify_cmd("run", hostile_dir, "--out", out, "--backend", "inductor", timeout=300)
    expect(code == EXIT_USAGE and named in result.get("error", ""), f"run {hostile_dir}: exit {code}, {result}")
    expect(not os.path.exists(out), f"run {hostile_dir} left {out}")
    daemon = Daemon(Tools(env.minify, env.minifyd, None), os.path.join(env.work, "state")).start()
    try:
        code, reply, stderr = daemon.client("submit", hostile_dir, "--backend", "eager")
        expect(code == EXIT_USAGE and named in stderr + json.dumps(reply),
               f"submit {hostile_dir}: exit {code}, {reply}, {stderr}")
    finally:
        daemon.stop()


def python_worker_refuses(env, graph_dir, graph, targets):
    """The Python worker's loader, sent each target in an evaluate request, answers an error naming it."""
    worker = Worker(env.python, fork_server=False)
    try:
        for request_id, (target, args) in enumerate(targets.items(), start=1):
            request = {"type": "evaluate", "id": request_id, "store": os.path.join(graph_dir, "store"),
                       "graph": with_node(graph, "probe", target, args), "backend": "aot_eager",
                       "backend_options": {}}
            reply = worker.ask(json.dumps(request).encode())
            expect(reply["type"] == "error" and reply["id"] == request_id and "node 'probe'" in reply["message"]
                   and f"target {target!r} is refused" in reply["message"], f"{target}: {reply}")
        worker.shut_down()
    finally:
        if worker.process.poll() is None:
            worker.process.kill()


def graph_targets(env):
    graph_dir, graph = exported_graph(env)
    marker, victim = os.path.join(env.work, "library-ran"), os.path.join(env.work, "victim")
    for path in (marker, victim):
        if os.path.exists(path):
            os.remove(path)
    with open(victim, "wb") as f:
        f.write(b"A" * 64)
    for what, (hostile_dir, node) in hostile_graphs(env, graph_dir, graph, marker, victim).items():
        refused_everywhere(env, hostile_dir, node)
        print(f"{what}: refused by validate, query (eager, inductor), run and a minifyd job, naming {node}")
    with open(RULE) as f:
        rule = json.load(f)
    targets = {"load_library::__self__.load_library": [marker], "import_module::__self__.import_module": ["this"]}
    targets.update({name: [] for name in rule["refused"]})
    python_worker_refuses(env, graph_dir, graph, targets)
    print(f"the Python worker refuses all {len(targets)} targets on its pipe")
    expect(not os.path.exists(marker), "the probe library's constructor ran")
    with open(victim, "rb") as f:
        expect(f.read() == b"A" * 64, "the victim file was written")


SCENARIOS = {"graph_targets": graph_targets}

if __name__ == "__main__":
    run_scenarios(SCENARIOS, label="security")
