# End-to-end tests of `minify query`: real worker processes running real exported graphs under the
# eager and torchscript backends and under the faulty plugin, one fault per case (and two at once);
# every failure gets the right verdict kind and exit code, a relu-free graph passes under every
# fault; --nan fails a graph that makes NaN from finite inputs; a CPU graph's worker sees no GPU.
import argparse
import json
import os
import re
import shutil
import subprocess
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "worker", "python"))
from minifyd import export as export_fx  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "run"))
from cases import CASES, export_case  # noqa: E402


def with_relu(x, w):
    return (torch.relu(x @ w) * 2.0 + 1.0,)


def without_relu(x, w):
    return (torch.sigmoid(x @ w) * 2.0 + 1.0,)


def export(fn, out_dir):
    shutil.rmtree(out_dir, ignore_errors=True)
    torch.manual_seed(0)
    export_fx.export(fn, [torch.randn(4, 8), torch.randn(8, 3)], out_dir)
    return out_dir


def query(minify, graph, *args):
    done = subprocess.run([minify, "query", graph, "--json", *args], capture_output=True, text=True, timeout=120)
    try:
        result = json.loads(done.stdout)
    except json.JSONDecodeError:
        raise AssertionError(f"exit {done.returncode}, not JSON: {done.stdout!r} {done.stderr}")
    return done.returncode, result


def expect(condition, what):
    if not condition:
        raise AssertionError(what)


# fault -> (extra query options, verdict kind, what the verdict must say)
FAULTS = {
    "segfault": ([], "crash", {"signal": "SIGSEGV"}),
    "abort": ([], "crash", {"signal": "SIGABRT"}),
    "throw": ([], "exception", {"exception_type": "std::runtime_error", "node": "relu"}),
    "hang": (["--timeout", "2"], "timeout", {}),
    "oom": (["--memory-limit", "16384"], None, {}),  # kind checked below: exception or crash
    "wrong": (["--accuracy"], "accuracy", {}),
    "compile-error": ([], "exception", {}),
    "cuda-error": ([], "cuda_error", {"node": "relu"}),
}


def run_fault(minify, faulty, work, fault):
    options, kind, fields = FAULTS[fault]
    backend = ["--backend", f"plugin:{faulty}", "--backend-opt", "op=aten::relu", "--backend-opt", f"fault={fault}"]
    code, result = query(minify, export(with_relu, os.path.join(work, "relu")), *backend, *options)
    expect(code == 1 and result["fails"], f"{fault}: expected a failure, got exit {code}: {result}")
    verdict = result["verdict"]
    if kind:
        expect(verdict["kind"] == kind, f"{fault}: kind {verdict['kind']}, expected {kind}: {verdict}")
    else:
        expect(verdict["kind"] in ("exception", "crash"), f"{fault}: {verdict}")
    for key, value in fields.items():
        expect(verdict.get(key) == value, f"{fault}: {key} is {verdict.get(key)!r}, expected {value!r}: {verdict}")
    # The negative control: without relu the faulty backend computes correctly.
    code, result = query(minify, export(without_relu, os.path.join(work, "no_relu")), *backend, *options)
    expect(code == 0 and not result["fails"], f"{fault} on a relu-free graph: exit {code}: {result}")


def test_backends_pass(minify, faulty, work):
    graph = export(with_relu, os.path.join(work, "relu"))
    for backend in ("eager", "torchscript"):
        for mode in ([], ["--accuracy"], ["--strict-accuracy"]):
            code, result = query(minify, graph, "--backend", backend, *mode)
            expect(code == 0 and result["verdict"] == {"status": "pass"}, f"{backend} {mode}: {result}")


# An elementwise chain as a new user's model has them: torchscript runs it as a scripted function
# runs in PyTorch (no CPU fusion unless asked), so it passes as eager does, not as a hang.
CHAIN_OPS = (torch.sin, torch.tanh, torch.sigmoid, lambda x: torch.clamp(x, -1, 1), torch.exp, lambda x: x * 1.01,
             lambda x: x + 0.1, lambda x: x - 0.05)


def elementwise_chain(x):
    for i in range(200):
        x = torch.relu(x) if i == 100 else CHAIN_OPS[i % len(CHAIN_OPS)](x)
    return (x,)


def test_torchscript_chain(minify, faulty, work):
    graph = os.path.join(work, "chain")
    shutil.rmtree(graph, ignore_errors=True)
    export_fx.export(elementwise_chain, [torch.randn(64, 64)], graph)
    for backend in ("eager", "torchscript"):
        code, result = query(minify, graph, "--backend", backend, "--timeout", "20")
        expect(code == 0 and result["verdict"] == {"status": "pass"}, f"{backend}: exit {code}: {result}")


def test_check_str(minify, faulty, work):
    graph = export(with_relu, os.path.join(work, "relu"))
    backend = ["--backend", f"plugin:{faulty}", "--backend-opt", "fault=throw"]
    code, result = query(minify, graph, *backend, "--check-str", "runtime_error")
    expect(code == 1 and result["fails"], f"matching --check-str: {result}")
    code, result = query(minify, graph, *backend, "--check-str", "CUDA error")
    expect(code == 0 and not result["fails"] and result["verdict"]["status"] == "fail",
           f"a failure that does not match --check-str does not count: {result}")


def test_several_faults(minify, faulty, work):
    # One backend, two faults: a segfault at relu and an exception at sigmoid.
    backend = ["--backend", f"plugin:{faulty}", "--backend-opt", "fault=segfault",
               "--backend-opt", "fault.aten::sigmoid=throw"]
    code, result = query(minify, export(with_relu, os.path.join(work, "relu")), *backend)
    expect(code == 1 and result["verdict"].get("signal") == "SIGSEGV", f"relu: exit {code}: {result}")
    code, result = query(minify, export(without_relu, os.path.join(work, "sigmoid")), *backend)
    verdict = result["verdict"]
    expect(code == 1 and verdict["kind"] == "exception" and verdict.get("node") == "sigmoid",
           f"sigmoid: exit {code}: {result}")


def test_nan(minify, faulty, work):
    # PyTorch's test_has_add_mul graph: NaN from finite inputs (zero / zero).
    graph = os.path.join(work, "nan")
    shutil.rmtree(graph, ignore_errors=True)
    export_case(CASES["has_add_mul"], graph)
    code, result = query(minify, graph, "--backend", "eager", "--nan")
    verdict = result["verdict"]
    expect(code == 1 and result["fails"] and verdict["kind"] == "nan", f"--nan: exit {code}: {result}")
    expect(verdict["message"] == "output[0] holds NaN (3 of 3 elements) while no input does", f"--nan: {verdict}")
    code, result = query(minify, graph, "--backend", "eager")
    expect(code == 0 and result["verdict"] == {"status": "pass"}, f"without --nan: exit {code}: {result}")


def test_bad_input(minify, faulty, work):
    graph = export(with_relu, os.path.join(work, "relu"))
    code, result = query(minify, graph, "--backend", "tpu")
    # Refused by the coordinator before any worker starts: bad input, exit 2.
    expect(code == 2 and "unknown backend 'tpu' (eager, torchscript, plugin:PATH.so, inductor" in result["error"],
           f"{code} {result}")
    # Refused by the worker, which cannot load the plugin the user named: bad input all the same, exit 2.
    code, result = query(minify, graph, "--backend", "plugin:/nonexistent/libx.so")
    expect(code == 2 and "/nonexistent/libx.so" in result["error"], f"{code} {result}")
    # A relative plugin path is the user's, not the worker's scratch directory's.
    relative = os.path.relpath(faulty)
    code, result = query(minify, graph, "--backend", f"plugin:{relative}", "--backend-opt", "fault=throw")
    expect(code == 1 and result["verdict"]["kind"] == "exception", f"plugin:{relative}: {code} {result}")
    code, result = query(minify, graph, "--backend", "eager", "--backend-opt", "novalue")
    expect(code == 2 and "--backend-opt 'novalue' is not KEY=VALUE" in result["error"], f"{code} {result}")
    code, result = query(minify, graph, "--backend", "eager", "--check-str", "([")
    expect(code == 2 and "is not a valid regular expression" in result["error"], f"{code} {result}")
    with open(os.path.join(graph, "graph.json"), "w") as f:
        f.write("{}")
    code, result = query(minify, graph, "--backend", "eager")
    expect(code == 2 and "missing field 'format'" in result["error"], f"{code} {result}")


def worker_hello(minify, graph, environment):
    """The hello of the worker `minify query` started for graph, from its debug log."""
    done = subprocess.run([minify, "--log-level", "debug", "query", graph, "--backend", "eager", "--json"],
                          capture_output=True, text=True, timeout=120, env=dict(os.environ, **environment))
    for line in done.stderr.splitlines():
        found = re.search(r"<<< worker \d+ (\{.*\"type\":\"hello\".*)$", line)
        if found:
            return json.loads(found.group(1))
    raise AssertionError(f"no hello in the log of minify query {graph}: {done.stderr[-2000:]}")


def test_gpu_visibility(minify, faulty, work):
    # A graph that touches no CUDA device runs with every GPU hidden from its worker, whatever the
    # coordinator sees; one with a CUDA storage keeps the coordinator's CUDA_VISIBLE_DEVICES.
    graph = export(with_relu, os.path.join(work, "relu"))
    sandbox = worker_hello(minify, graph, {"CUDA_VISIBLE_DEVICES": "0"})["sandbox"]
    expect(sandbox["cuda_visible_devices"] == "", f"a CPU graph's worker: {sandbox}")
    with open(os.path.join(graph, "graph.json")) as f:
        document = json.load(f)
    document["storages"][0]["device"] = "cuda:0"
    with open(os.path.join(graph, "graph.json"), "w") as f:
        json.dump(document, f)
    sandbox = worker_hello(minify, graph, {"CUDA_VISIBLE_DEVICES": "0"})["sandbox"]
    expect(sandbox["cuda_visible_devices"] == "0", f"a CUDA graph's worker: {sandbox}")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--case", required=True, help="a fault name, or backends_pass, torchscript_chain, check_str, several_faults, nan, bad_input, gpu_visibility")
    parser.add_argument("--minify", required=True)
    parser.add_argument("--faulty", required=True, help="the faulty plugin")
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    minify, faulty = os.path.abspath(args.minify), os.path.abspath(args.faulty)
    if args.case in FAULTS:
        run_fault(minify, faulty, args.work, args.case)
    else:
        globals()[f"test_{args.case}"](minify, faulty, args.work)
    print(f"PASS query.{args.case}")


if __name__ == "__main__":
    main()
