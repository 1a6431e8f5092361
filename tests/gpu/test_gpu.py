# GPU tests (label gpu), on a machine with a CUDA GPU and a CUDA build of torch; elsewhere each
# prints why it skips and exits 77 (ctest's SKIP_RETURN_CODE), so the CPU suite stays green.
#   query      resnet18 and the 1000-node chain, exported on cuda, pass `minify query` under eager
#              and torchscript
#   cuda_crash a device-side assert is a cuda_error verdict; and
#              `minify run` on resnet18 on cuda with the faulty plugin writing out of bounds in a
#              kernel at relu_: ends at the relu_ (no more nodes than on the CPU), the report counts
#              the CUDA errors, and every worker that reported one was retired, never reused
#   two_gpus   minifyd --gpus 0,1: the workers' hellos name both GPUs by UUID (needs two GPUs)
#   daemon     minifyd on every GPU runs 4 CUDA-crashing jobs, is SIGKILLed mid-run and restarted;
#              all 4 finish with the graphs `minify run` gives them alone
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "run"))
sys.path.insert(0, os.path.join(HERE, "..", "minifyd"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "worker", "python"))
import torch  # noqa: E402

from minifyd import export as export_fx  # noqa: E402
from cases import chain1000  # noqa: E402
from daemon_harness import Daemon, Tools, wait_all_final  # noqa: E402

SKIP = 77
# `minify run` on the CPU ends resnet18 with a relu_ fault at 3 nodes (README command (A)).
CPU_RESNET18_NODES = 3


def expect(condition, what):
    if not condition:
        raise AssertionError(what)


def resnet18_cuda():
    import torchvision
    torch.manual_seed(0)
    model = torchvision.models.resnet18(weights=None).eval().cuda()
    return model, [torch.randn(1, 3, 64, 64, device="cuda")]


def chain_cuda():
    fn, inputs = chain1000()
    return fn, [x.cuda() for x in inputs]


def export(make, out):
    fn, inputs = make()
    export_fx.export(fn, inputs, out)
    with open(os.path.join(out, "graph.json")) as f:
        devices = {storage["device"] for storage in json.load(f)["storages"]}
    expect(devices == {"cuda:0"}, f"{out}: storages on {devices}, expected cuda:0 only")
    return out


def scenario_query(minify, faulty, work):
    for name, make in (("resnet18", resnet18_cuda), ("chain1000", chain_cuda)):
        graph = export(make, os.path.join(work, name))
        for backend in ("eager", "torchscript"):
            # torchscript's default timeout (600 s) holds its fuser's compile of the chain in the warm-up
            # runs: 56 s on an H100 with PyTorch 2.11, in plain PyTorch too.
            done = subprocess.run([minify, "query", graph, "--backend", backend, "--json"], capture_output=True,
                                  text=True, timeout=900)
            print(f"{name} on cuda, {backend}: exit {done.returncode} {done.stdout.strip()}")
            expect(done.returncode == 0, f"{name} under {backend}: {done.stdout} {done.stderr[-2000:]}")


def crash_args(faulty, op):
    return ["--backend", f"plugin:{faulty}", "--backend-opt", f"op={op}", "--backend-opt",
            "fault=cuda-illegal-address", "--timeout", "60"]


def gpu_list():
    return ",".join(str(i) for i in range(torch.cuda.device_count()))


def scenario_cuda_crash(minify, faulty, work):
    graph = export(resnet18_cuda, os.path.join(work, "resnet18"))
    # A device-side assert is a CUDA error too, and another bug than an illegal address.
    done = subprocess.run([minify, "query", graph, "--backend", f"plugin:{faulty}", "--backend-opt", "op=aten::relu_",
                           "--backend-opt", "fault=cuda-assert", "--json"], capture_output=True, text=True, timeout=600)
    verdict = json.loads(done.stdout)["verdict"]
    print(f"cuda-assert: {verdict}")
    expect(done.returncode == 1 and verdict["kind"] == "cuda_error" and "device-side assert" in verdict["message"],
           f"cuda-assert: exit {done.returncode}: {verdict}")
    out = os.path.join(work, "out")
    done = subprocess.run([minify, "run", graph, "--out", out, *crash_args(faulty, "aten::relu_"), "--gpus", "0",
                           "--json"], capture_output=True, text=True, timeout=1500)
    summary = json.loads(done.stdout)
    print(json.dumps(summary))
    expect(done.returncode == 0, f"minify run: exit {done.returncode}: {summary} {done.stderr[-3000:]}")
    expect(summary["failure"].startswith("cuda_error"), f"the failure is {summary['failure']}")
    expect(summary["nodes"] <= CPU_RESNET18_NODES, f"{summary['nodes']} nodes, the CPU case ends at {CPU_RESNET18_NODES}")
    with open(os.path.join(out, "graph.json")) as f:
        targets = [n["target"] for n in json.load(f)["nodes"] if n["op"] == "call_function"]
    expect(targets == ["aten::relu_"], f"the result calls {targets}")
    with open(os.path.join(out, "report.md")) as f:
        report = f.read()
    cuda_errors = re.search(r"cuda_error: (\d+)", report)
    expect(cuda_errors and int(cuda_errors.group(1)) > 0, f"the report counts no CUDA error:\n{report}")
    expect(summary["crashes_contained"] >= int(cuda_errors.group(1)), f"crashes contained: {summary}")
    retired = done.stderr.count("retired after a CUDA error")
    print(f"{cuda_errors.group(1)} CUDA errors in this session, {retired} workers retired")
    expect(retired == int(cuda_errors.group(1)), "a worker that reported a CUDA error was not retired")


def scenario_two_gpus(minify, faulty, work):
    if torch.cuda.device_count() < 2:
        print(f"skipped: {torch.cuda.device_count()} GPU visible, this needs two")
        return SKIP
    listed = subprocess.run(["nvidia-smi", "--query-gpu=uuid", "--format=csv,noheader"], capture_output=True,
                            text=True, check=True).stdout.split()
    tools = Tools(minify, os.path.join(os.path.dirname(minify), "minifyd"), faulty)
    daemon = Daemon(tools, os.path.join(work, "state"), "--gpus", "0,1").start()
    try:
        seen = []
        for _ in range(600):
            code, stats, _ = daemon.client("stats")
            seen = [device["uuid"] for hello in stats["pool"]["workers"] for device in hello["devices"]]
            if len(seen) == 2:
                break
            time.sleep(0.1)
        print(f"workers see {seen}; nvidia-smi lists {listed}")
        expect(sorted(seen) == sorted(listed[:2]), f"the workers' GPUs {seen} are not GPUs 0 and 1 {listed}")
    finally:
        daemon.stop()


def scenario_daemon(minify, faulty, work):
    graphs = {"resnet18": (export(resnet18_cuda, os.path.join(work, "resnet18")), "aten::relu_"),
              "chain1000": (export(chain_cuda, os.path.join(work, "chain1000")), "aten::relu")}
    references = {}
    for name, (graph, op) in graphs.items():
        out = os.path.join(work, "alone", name)
        done = subprocess.run([minify, "run", graph, "--out", out, *crash_args(faulty, op), "--gpus", "0"],
                              capture_output=True, text=True, timeout=1500)
        expect(done.returncode == 0, f"minify run {name}: {done.returncode} {done.stderr[-2000:]}")
        with open(os.path.join(out, "graph.json"), "rb") as f:
            references[name] = f.read()
    tools = Tools(minify, os.path.join(os.path.dirname(minify), "minifyd"), faulty)
    daemon = Daemon(tools, os.path.join(work, "state"), "--gpus", gpu_list(), "--max-running-jobs", "4").start()
    try:
        jobs = {}
        for name in ("resnet18", "chain1000", "resnet18", "chain1000"):
            graph, op = graphs[name]
            jobs[daemon.submit(graph, crash_args(faulty, op))] = name
        time.sleep(8)
        print(f"SIGKILL with {[job['state'] for job in daemon.jobs()]}")
        daemon.kill()
        daemon.start()
        finished = wait_all_final(daemon, jobs, 1500)
        for job_id, name in jobs.items():
            expect(finished[job_id]["state"] == "done", f"job {job_id} ({name}): {finished[job_id]}")
            out = os.path.join(work, "results", str(job_id))
            expect(daemon.result_graph(job_id, out) == references[name],
                   f"job {job_id} ({name}) differs from `minify run` alone")
        print(f"4 jobs on GPUs {gpu_list()}: sessions {[finished[i]['sessions'] for i in jobs]}, all equal to minify run's")
    finally:
        daemon.stop()


SCENARIOS = {"query": scenario_query, "cuda_crash": scenario_cuda_crash, "two_gpus": scenario_two_gpus,
             "daemon": scenario_daemon}


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scenario", required=True, choices=sorted(SCENARIOS))
    parser.add_argument("--minify", required=True)
    parser.add_argument("--faulty", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print(f"skipped: no CUDA GPU visible to torch {torch.__version__} (CUDA build: {torch.version.cuda})")
        sys.exit(SKIP)
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    code = SCENARIOS[args.scenario](os.path.abspath(args.minify), os.path.abspath(args.faulty), os.path.abspath(args.work))
    sys.exit(code or 0)


if __name__ == "__main__":
    main()
