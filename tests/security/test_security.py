# A hostile or unlucky user's input (label security), as docs/security.md promises to meet it:
#   graph_targets  a graph document that calls what no graph may (docs/security.md, "What a graph may
#                  call"): the two targets that reached torch.ops utilities by attribute traversal and
#                  ran code, and aten::from_file writing a file, refused by `minify validate`, `query`
#                  on both workers, `run` and a minifyd job, naming the node; every entry of the
#                  rule's refused list refused by the Python worker's own loader on its pipe.
#   repro_files    repro files whose module-level code loops forever, forks a child that keeps
#                  stdout open, starts one in a session of its own, prints thousands of lines, or
#                  ends the process: each import ends within its --import-timeout, with a clear
#                  error or the directory written, no process of the file's left and nothing half
#                  written; a SIGTERM to `minify` mid-import takes the file's processes with it;
#                  an import onto a full disk (a small tmpfs, as root) exits 5 saying so.
import json
import os
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "inductor"))
sys.path.insert(0, os.path.join(HERE, "..", "minifyd"))
from harness import EXIT_USAGE, ROOT, expect, run_scenarios, write_file  # noqa: E402
from test_worker_pipe import MODES, Worker, exported_graph  # noqa: E402

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
    """The Python worker's loader, sent each target in an evaluate request, answers an error naming it,
    in each way the worker serves (in its own process, as a fork server, in children as with a GPU)."""
    for mode in MODES:
        worker = Worker(env.python, mode)
        try:
            for request_id, (target, args) in enumerate(targets.items(), start=1):
                request = {"type": "evaluate", "id": request_id, "store": os.path.join(graph_dir, "store"),
                           "graph": with_node(graph, "probe", target, args), "backend": "aot_eager",
                           "backend_options": {}}
                reply = worker.ask(json.dumps(request).encode())
                expect(reply["type"] == "error" and reply["id"] == request_id and "node 'probe'" in reply["message"]
                       and f"target {target!r} is refused" in reply["message"], f"{mode}, {target}: {reply}")
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


# A repro file in after_aot's shape (2.x) around one relu, its module-level code led by `prelude`.
REPRO_TEMPLATE = """import os, sys, time
import torch
PIDS = {pids!r}
def record(pid):
    with open(PIDS, "a") as f:
        f.write(f"{{pid}}\\n")
record(os.getpid())
{prelude}

class Repro(torch.nn.Module):
    def forward(self, arg0_1):
        relu = torch.ops.aten.relu.default(arg0_1)
        return (relu,)


def load_args(reader):
    buf0 = reader.storage(None, 64)
    reader.tensor(buf0, (4, 4), is_leaf=True)  # arg0_1
load_args._version = 0
mod = Repro()
if __name__ == '__main__':
    from torch._dynamo.repro.after_aot import run_repro
    with torch.no_grad():
        run_repro(mod, load_args, accuracy=False, command='run', save_dir=None, tracing_mode='real', check_str=None)
"""
SLEEPING_CHILD = "if os.fork() == 0:\n    {setsid}record(os.getpid())\n    time.sleep(3600)\n    os._exit(0)\n"
HOSTILE_PRELUDES = {
    "loops_forever": "while True:\n    pass\n",
    "child_keeps_stdout": SLEEPING_CHILD.format(setsid=""),
    "child_in_own_session": SLEEPING_CHILD.format(setsid="os.setsid()\n    "),
    "prints_thousands": "for line in range(20000):\n    print('chatty line', line)\n",
    "exits_itself": "os._exit(0)\n",
}
# What `minify import` must end with: (exit status, words its output holds).
IMPORT_ENDS = {"loops_forever": (EXIT_USAGE, "did not end within 15 s: killed, with every process it started"),
               "child_keeps_stdout": (0, '"nodes":3'), "child_in_own_session": (0, '"nodes":3'),
               "prints_thousands": (0, '"nodes":3'), "exits_itself": (EXIT_USAGE, "os._exit")}
IMPORT_TIMEOUT = 15


def hostile_repro(env, name, prelude):
    pids = os.path.join(env.work, f"{name}.pids")
    if os.path.exists(pids):
        os.remove(pids)
    return write_file(env.work, f"{name}.py", REPRO_TEMPLATE.format(pids=pids, prelude=prelude)), pids


def left_running(pids_file):
    """The recorded processes still alive (zombies count as gone)."""
    alive = []
    with open(pids_file) as f:
        for pid in map(int, f.read().split()):
            try:
                with open(f"/proc/{pid}/stat") as stat:
                    if stat.read().rsplit(")", 1)[1].split()[0] != "Z":
                        alive.append(pid)
            except FileNotFoundError:
                pass
    return alive


def leftovers(parent, name):
    return [entry for entry in os.listdir(parent) if entry == name or entry.startswith(f".{name}.")]


def repro_files(env):
    for name, prelude in HOSTILE_PRELUDES.items():
        repro, pids = hostile_repro(env, name, prelude)
        out = os.path.join(env.work, f"{name}-out")
        shutil.rmtree(out, ignore_errors=True)
        started = time.monotonic()
        done = subprocess.run([env.minify, "import", repro, "--out", out, "--python", env.python, "--json",
                               "--import-timeout", str(IMPORT_TIMEOUT)], capture_output=True, text=True, timeout=300)
        took = time.monotonic() - started
        code, words = IMPORT_ENDS[name]
        expect(done.returncode == code and words in done.stdout,
               f"{name}: exit {done.returncode}, wanted {code} and {words!r}: {done.stdout}{done.stderr[-2000:]}")
        expect(took < IMPORT_TIMEOUT + 60, f"{name}: the import took {took:.0f} s")
        time.sleep(0.5)
        expect(not left_running(pids), f"{name}: processes {left_running(pids)} outlived the import")
        left = leftovers(env.work, f"{name}-out")
        expect(left == ([f"{name}-out"] if code == 0 else []), f"{name}: left {left}")
        if code == 0:
            validated = subprocess.run([env.minify, "validate", "--check-store", out], capture_output=True, text=True)
            expect(validated.returncode == 0, f"{name}: the directory written is not valid: {validated.stderr}")
        print(f"{name}: exit {done.returncode} in {took:.1f} s, nothing left running")
    # SIGTERM to minify while the file loops, its child in a session of its own: both go with minify.
    prelude = SLEEPING_CHILD.format(setsid="os.setsid()\n    ") + HOSTILE_PRELUDES["loops_forever"]
    repro, pids = hostile_repro(env, "terminated", prelude)
    out = os.path.join(env.work, "terminated-out")
    shutil.rmtree(out, ignore_errors=True)
    minify = subprocess.Popen([env.minify, "run", repro, "--out", out, "--backend", "inductor", "--python", env.python],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 120
    while not (os.path.exists(pids) and len(open(pids).read().split()) >= 2):
        expect(time.monotonic() < deadline and minify.poll() is None, "the file's code did not start")
        time.sleep(0.1)
    minify.send_signal(signal.SIGTERM)
    code = minify.wait(timeout=30)
    time.sleep(0.5)
    expect(code == -signal.SIGTERM, f"minify ended with {code}, not by its SIGTERM")
    expect(not left_running(pids), f"processes {left_running(pids)} outlived minify's SIGTERM")
    left = [entry for entry in os.listdir(out) if entry.endswith('.partial')] if os.path.isdir(out) else []
    expect(not left, f"minify's SIGTERM left {left} in {out}")
    print("SIGTERM to minify mid-import: ended by it, nothing left running or half written")
    import_onto_full_disk(env)


def import_onto_full_disk(env):
    """`minify import` of a good file into a full file system: exit 5, saying so, nothing left there."""
    from daemon_harness import fill
    if os.geteuid() != 0:
        print("import onto a full disk: skipped (mounting a tmpfs needs root)")
        return
    disk = os.path.join(env.work, "full-disk")
    os.makedirs(disk, exist_ok=True)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", disk], capture_output=True, text=True)
    if mounted.returncode != 0:
        print(f"import onto a full disk: skipped (cannot mount a tmpfs: {mounted.stderr.strip()})")
        return
    try:
        fill(disk)
        repro, _ = hostile_repro(env, "quiet", "")
        out = os.path.join(disk, "imported")
        done = subprocess.run([env.minify, "import", repro, "--out", out, "--python", env.python],
                              capture_output=True, text=True, timeout=300)
        expect(done.returncode == 5 and "the disk is full" in done.stderr,
               f"import onto a full disk: exit {done.returncode}: {done.stdout}{done.stderr[-2000:]}")
        expect(leftovers(disk, "imported") == [], f"import onto a full disk left {leftovers(disk, 'imported')}")
        print(f"import onto a full disk: exit 5, {done.stderr.strip().splitlines()[-1][:200]}")
    finally:
        subprocess.run(["umount", "-l", disk])


SCENARIOS = {"graph_targets": graph_targets, "repro_files": repro_files}

if __name__ == "__main__":
    run_scenarios(SCENARIOS, label="security")
