# The default memory bound (label security; docs/security.md, "Memory"): a graph that allocates three
# quarters of this machine's memory (aten::empty, so that nothing is touched even where it is let through)
# fails its allocation under the default bound, half the memory, as an exception verdict, in the C++
# worker, the Python worker and a minifyd query, and runs with `--memory-limit 0`; minifyd answers `list`
# within a second after it and ends at `shutdown`. A repro file whose import allocates 8 GiB under
# `--memory-limit 4096` (room for torch's own import, OpenBLAS's buffers on 16 cores included) is a clear
# error naming MemoryError, with nothing left at --out.
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "inductor"))
sys.path.insert(0, os.path.join(HERE, "..", "minifyd"))
from harness import EXIT_USAGE, expect, run_scenarios, write_file  # noqa: E402

WRITERS = os.path.join(HERE, "python_writers.py")
EXIT_FAIL = 1


def physical_bytes():
    return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def allocating_graph(env):
    """A graph directory: empty(3/4 of the machine's memory, uint8), its first byte returned."""
    out = os.path.join(env.work, "allocates")
    shutil.rmtree(out, ignore_errors=True)
    done = subprocess.run([env.python, WRITERS, "base", out], capture_output=True, text=True, timeout=600)
    expect(done.returncode == 0, f"the base graph: {done.stderr[-2000:]}")
    with open(os.path.join(out, "graph.json")) as f:
        doc = json.load(f)
    size = physical_bytes() * 3 // 4
    doc["nodes"] = [doc["nodes"][0],
                    {"name": "big", "op": "call_function", "target": "aten::empty.memory_format",
                     "args": [[size]], "kwargs": {"dtype": {"dtype": "uint8"}}},
                    {"name": "first", "op": "call_function", "target": "aten::slice.Tensor",
                     "args": [{"node": "big"}, 0, 0, 1]},
                    {"name": "output", "op": "output", "args": [{"tuple": [{"node": "first"}]}]}]
    doc["constants"] = {}
    with open(os.path.join(out, "graph.json"), "w") as f:
        json.dump(doc, f)
    return out, size


def refused_allocation(what, code, result, size):
    verdict = result.get("verdict", result)
    expect(code == EXIT_FAIL and verdict.get("kind") == "exception" and "alloc" in json.dumps(verdict).lower(),
           f"{what}: {size} bytes under the default bound: exit {code}, {result}")


def memory_bound(env):
    from daemon_harness import Daemon, Tools
    graph_dir, size = allocating_graph(env)
    for backend in ("eager", "aot_eager"):
        code, result, stderr = env.minify_cmd("query", graph_dir, "--backend", backend, timeout=600)
        refused_allocation(f"query --backend {backend}", code, result, size)
        print(f"query --backend {backend}: {size >> 20} MiB refused by the default bound: "
              f"{json.dumps(result.get('verdict', result))[:200]}")
    code, result, stderr = env.minify_cmd("query", graph_dir, "--backend", "eager", "--memory-limit", "0", timeout=600)
    expect(code == 0, f"query --memory-limit 0: {size} bytes not allocated: exit {code}, {result}, {stderr[-2000:]}")
    print(f"query --memory-limit 0: the {size >> 20} MiB allocated (nothing touched), pass")
    daemon = Daemon(Tools(env.minify, env.minifyd, None), os.path.join(env.work, "state")).start()
    try:
        code, reply, stderr = daemon.client("query", "--daemon", graph_dir, "--backend", "eager", timeout=600)
        refused_allocation("minifyd's query", code, reply or {}, size)
        started = time.monotonic()
        code, reply, stderr = daemon.client("list")
        took = time.monotonic() - started
        expect(code == 0 and took < 1.0, f"minifyd after the query: list exit {code} in {took:.2f} s: {stderr}")
        print(f"minifyd: the query refused by the bound, list answered in {took:.2f} s")
    finally:
        daemon.stop()
    import_bound(env)


def import_bound(env):
    repro = write_file(env.work, "allocating_repro.py",
                       "import torch\nheld = bytearray(8 << 30)\n\n"
                       "class Repro(torch.nn.Module):\n    def forward(self, x):\n"
                       "        return (torch.ops.aten.relu.default(x),)\n\n\n"
                       "def load_args(reader):\n    buf0 = reader.storage(None, 64)\n"
                       "    reader.tensor(buf0, (4, 4), is_leaf=True)\nload_args._version = 0\nmod = Repro()\n")
    out = os.path.join(env.work, "imported")
    shutil.rmtree(out, ignore_errors=True)
    done = subprocess.run([env.minify, "import", repro, "--out", out, "--python", env.python, "--memory-limit", "4096",
                           "--json"], capture_output=True, text=True, timeout=600)
    expect(done.returncode == EXIT_USAGE and "MemoryError" in done.stdout + done.stderr and not os.path.exists(out),
           f"import under --memory-limit 4096: exit {done.returncode}: {done.stdout}{done.stderr[-2000:]}")
    print("an import allocating 8 GiB under --memory-limit 4096: exit 2 naming MemoryError, nothing left")


SCENARIOS = {"memory_bound": memory_bound}

if __name__ == "__main__":
    run_scenarios(SCENARIOS, label="security")
