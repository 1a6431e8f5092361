# GPU tests (label gpu), on a machine with a CUDA GPU and a CUDA build of torch; elsewhere each
# prints why it skips and exits 77 (ctest's SKIP_RETURN_CODE), so the CPU suite stays green.
#   query      resnet18 and the 1000-node chain, exported on cuda, pass `minify query` under eager
#              and torchscript
#   cuda_crash `minify run` on resnet18 on cuda with the faulty plugin writing out of bounds in a
#              kernel at relu_: ends at the relu_ (no more nodes than on the CPU), the report counts
#              the CUDA errors, and every worker that reported one was retired, never reused
import argparse
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "run"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
import torch  # noqa: E402

import export_fx  # noqa: E402
from cases import chain1000  # noqa: E402

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
            done = subprocess.run([minify, "query", graph, "--backend", backend, "--json"], capture_output=True,
                                  text=True, timeout=600)
            print(f"{name} on cuda, {backend}: exit {done.returncode} {done.stdout.strip()}")
            expect(done.returncode == 0, f"{name} under {backend}: {done.stdout} {done.stderr[-2000:]}")


def scenario_cuda_crash(minify, faulty, work):
    graph = export(resnet18_cuda, os.path.join(work, "resnet18"))
    out = os.path.join(work, "out")
    done = subprocess.run([minify, "run", graph, "--out", out, "--backend", f"plugin:{faulty}",
                           "--backend-opt", "op=aten::relu_", "--backend-opt", "fault=cuda-illegal-address",
                           "--gpus", "0", "--timeout", "60", "--json"], capture_output=True, text=True, timeout=1500)
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


SCENARIOS = {"query": scenario_query, "cuda_crash": scenario_cuda_crash}


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
    SCENARIOS[args.scenario](os.path.abspath(args.minify), os.path.abspath(args.faulty), os.path.abspath(args.work))


if __name__ == "__main__":
    main()
