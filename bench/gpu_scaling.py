# Wall time of GPU-bound queries through minifyd with one GPU and with two (issue 6's target: two
# GPUs take at most 0.6x the time of one). The graph is a chain of fp32 matmuls (8192 x 8192) with
# tanh, about 200 ms of GPU work per run on an H100/H200; N queries go to the daemon at once
# (`minify query --daemon`, one process each), after one warm-up query per worker.
#   python3 bench/gpu_scaling.py --build build-gpu [-n 16] [--matmuls 12]
import argparse
import concurrent.futures
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "minifyd"))
sys.path.insert(0, os.path.join(HERE, "..", "worker", "python"))
import torch  # noqa: E402

from minifyd import export as export_fx  # noqa: E402
from daemon_harness import Daemon, Tools  # noqa: E402


def matmul_chain(matmuls):
    def f(x, w):
        for _ in range(matmuls):
            x = torch.tanh(x @ w)
        return (x,)
    torch.manual_seed(0)
    return f, [torch.randn(8192, 8192, device="cuda") / 90, torch.randn(8192, 8192, device="cuda") / 90]


def query(tools, daemon, graph):
    done = subprocess.run([tools.minify, "query", "--daemon", graph, "--backend", "eager", "--json",
                           "--state-dir", daemon.state_dir], capture_output=True, text=True, timeout=600)
    result = json.loads(done.stdout)
    if done.returncode != 0:
        raise RuntimeError(f"query: exit {done.returncode}: {done.stdout} {done.stderr}")
    return result["run_ms"]


def measure(tools, graph, gpus, n, work):
    daemon = Daemon(tools, os.path.join(work, f"state-{gpus.replace(',', '')}"), "--gpus", gpus).start()
    try:
        workers = len(gpus.split(","))
        with concurrent.futures.ThreadPoolExecutor(max_workers=n) as pool:
            list(pool.map(lambda _: query(tools, daemon, graph), range(2 * workers)))  # warm every worker
            started = time.monotonic()
            run_ms = list(pool.map(lambda _: query(tools, daemon, graph), range(n)))
            wall = time.monotonic() - started
        code, stats, _ = daemon.client("stats")
        uuids = sorted(device["uuid"] for hello in stats["pool"]["workers"] for device in hello["devices"])
    finally:
        daemon.stop()
    return {"gpus": gpus, "queries": n, "wall_seconds": round(wall, 3),
            "worker_run_ms_median": round(statistics.median(run_ms), 1), "worker_gpus": uuids}


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--build", default="build-gpu")
    parser.add_argument("-n", type=int, default=16)
    parser.add_argument("--matmuls", type=int, default=12)
    args = parser.parse_args()
    if torch.cuda.device_count() < 2:
        raise SystemExit(f"needs two GPUs, {torch.cuda.device_count()} visible")
    build = os.path.abspath(args.build)
    tools = Tools(f"{build}/daemon/minify", f"{build}/daemon/minifyd", f"{build}/tests/plugins/libminifyd_faulty_backend.so")
    with tempfile.TemporaryDirectory(prefix="minifyd-gpu-bench-") as work:
        graph = os.path.join(work, "matmuls")
        fn, inputs = matmul_chain(args.matmuls)
        export_fx.export(fn, inputs, graph)
        one = measure(tools, graph, "0", args.n, work)
        two = measure(tools, graph, "0,1", args.n, work)
    print(json.dumps({"one_gpu": one, "two_gpus": two, "ratio": round(two["wall_seconds"] / one["wall_seconds"], 3)},
                     indent=2))


if __name__ == "__main__":
    main()
