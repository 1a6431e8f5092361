# End-to-end tests of the torch.compile backends (label inductor): real Inductor in a PyTorch 2.x
# (--python: scripts/torch2_env.sh's launcher on Debian 12, python3 on the GPU machine), its own
# injected bugs (cpp.inject_relu_bug_TESTING_ONLY, as PyTorch's test_minifier uses them), graphs
# exported as AOT autograd hands them to Inductor (scripts/export_fx.py --aot), real Python workers.
# This script runs in the host's python; torch 2.x only ever runs in --python.
import argparse
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
MODELS = {"chain": os.path.join(HERE, "models", "chain200.py"),
          "chain_no_relu": os.path.join(HERE, "models", "chain200_no_relu.py"),
          "slippage": os.path.join(HERE, "models", "slippage.py"),
          "chain_cuda": os.path.join(HERE, "models", "chain200_cuda.py"),
          "resnet18": os.path.join(ROOT, "scripts", "examples", "resnet18.py")}
BUG = "cpp.inject_relu_bug_TESTING_ONLY"
# What each injected bug looks like to the search: (verdict kind, what identifies it).
EXPECTED = {"compile_error": ("exception", "torch._inductor.exc.CppCompileError"),
            # `throw 1`: std::terminate in an OpenMP region, Inductor's catch (...) where the loop runs
            # serially; one signature either way (daemon/query/failure_signature.h)
            "runtime_error": ("crash", "SIGABRT"),
            "accuracy": ("accuracy", None)}
EXIT_OK, EXIT_FAILS, EXIT_USAGE, EXIT_WORKER, EXIT_DOES_NOT_FAIL = 0, 1, 2, 3, 4
SKIP = 77


def expect(condition, what):
    if not condition:
        raise AssertionError(what)


class Env:
    def __init__(self, args):
        self.minify, self.minifyd, self.python, self.work = args.minify, args.minifyd, args.python, args.work

    def export(self, model):
        out = os.path.join(self.work, model)
        if not os.path.isfile(os.path.join(out, "graph.json")):
            done = subprocess.run([self.python, os.path.join(ROOT, "scripts", "export_fx.py"), MODELS[model],
                                   "--aot", "--out", out], capture_output=True, text=True, timeout=600)
            expect(done.returncode == 0, f"export of {model} failed:\n{done.stdout}{done.stderr[-3000:]}")
        return out

    def minify_cmd(self, command, *args, timeout=1200, env=None):
        done = subprocess.run([self.minify, command, *args, "--python", self.python, "--json"], capture_output=True,
                              text=True, timeout=timeout, env={**os.environ, **(env or {})})
        try:
            result = json.loads(done.stdout)
        except json.JSONDecodeError:
            raise AssertionError(f"minify {command} exits {done.returncode}, stdout is not JSON: {done.stdout!r}\n"
                                 f"{done.stderr[-3000:]}")
        return done.returncode, result, done.stderr


def bug_args(bug):
    return ["--backend", "inductor", "--backend-opt", f"{BUG}={bug}"] + (["--accuracy"] if bug == "accuracy" else [])


def call_nodes(graph_dir):
    with open(os.path.join(graph_dir, "graph.json")) as f:
        return [n for n in json.load(f)["nodes"] if n["op"] == "call_function"]


def check_at_relu(env, out, summary, bug):
    """The run ended at the relu and its input, failing as the original did."""
    kind, identity = EXPECTED[bug]
    nodes = call_nodes(out)
    expect([n["target"] for n in nodes] == ["aten::relu"], f"minimized to {[n['target'] for n in nodes]}, not one relu")
    expect(summary["inputs"] == 1 and summary["nodes"] == 3, f"not the relu and its input: {summary}")
    signature = summary["signature"]
    expect(signature["kind"] == kind, f"signature {signature}, expected kind {kind}")
    expect(identity in (None, signature["exception_type"], signature["signal"]), f"signature {signature} is not {identity}")
    done = subprocess.run([env.minify, "validate", "--check-store", out], capture_output=True, text=True)
    expect(done.returncode == 0, f"minify validate --check-store {out}: {done.stdout}{done.stderr}")
    # repro.py, after_aot's shape: plain PyTorch with the config line reproduces the bug.
    with open(os.path.join(out, "repro.py")) as f:
        repro = f.read()
    expect(f"torch._inductor.config.{BUG} = '{bug}'" in repro and "class Repro(torch.nn.Module)" in repro
           and "def load_args(reader)" in repro, f"repro.py is not after_aot's shape with the config line:\n{repro[:2000]}")
    done = subprocess.run([env.python, os.path.join(out, "repro.py")], capture_output=True, text=True, timeout=600,
                          cwd=env.work)
    expect(done.returncode != 0, f"repro.py passes (exit 0) instead of reproducing {bug}:\n{done.stderr[-2000:]}")
    if bug == "compile_error":
        expect("CppCompileError" in done.stderr, f"repro.py fails otherwise:\n{done.stderr[-2000:]}")
    if bug == "runtime_error":
        aborted = done.returncode == -6 and "terminate called after throwing an instance of 'int'" in done.stderr
        caught = done.returncode == 1 and done.stderr.rstrip().endswith("RuntimeError: unhandled error")
        expect(aborted or caught, f"repro.py exits {done.returncode}, not by the thrown int:\n{done.stderr[-2000:]}")
    if bug == "accuracy":
        expect("AccuracyError" in done.stderr, f"repro.py fails otherwise:\n{done.stderr[-2000:]}")


def minimize(env, model, bug):
    graph, out = env.export(model), os.path.join(env.work, f"{model}-{bug}")
    shutil.rmtree(out, ignore_errors=True)
    code, summary, stderr = env.minify_cmd("run", graph, "--out", out, *bug_args(bug))
    expect(code == EXIT_OK, f"minify run exits {code}: {summary}\n{stderr[-3000:]}")
    print(f"{model} {bug}: {summary['start_nodes']} -> {summary['nodes']} nodes, {summary['queries']} queries, "
          f"{summary['wall_seconds']:.1f} s")
    check_at_relu(env, out, summary, bug)


def query_clean(env):
    graph = env.export("chain")
    for args in (["--backend", "inductor"], ["--backend", "inductor", "--strict-accuracy"],
                 ["--backend", "aot_eager", "--strict-accuracy"], ["--backend", "aot_eager_decomp_partition"]):
        code, result, stderr = env.minify_cmd("query", graph, *args)
        expect(code == EXIT_OK and result["verdict"]["status"] == "pass",
               f"minify query {' '.join(args)} on a clean graph: exit {code}, {result}\n{stderr[-2000:]}")
    code, result, _ = env.minify_cmd("query", graph, *bug_args("compile_error"))
    expect(code == EXIT_FAILS and result["verdict"]["exception_type"] == "torch._inductor.exc.CppCompileError",
           f"the injected compile error is not seen by minify query: exit {code}, {result}")


def control(env):
    graph, out = env.export("chain_no_relu"), os.path.join(env.work, "control-out")
    shutil.rmtree(out, ignore_errors=True)
    code, summary, stderr = env.minify_cmd("run", graph, "--out", out, *bug_args("compile_error"))
    expect(code == EXIT_DOES_NOT_FAIL and summary["status"] == "does_not_fail",
           f"a relu-free graph: exit {code}, {summary}\n{stderr[-2000:]}")


def slippage(env):
    graph, out = env.export("slippage"), os.path.join(env.work, "slippage-out")
    shutil.rmtree(out, ignore_errors=True)
    code, summary, stderr = env.minify_cmd("run", graph, "--out", out, *bug_args("compile_error"),
                                           "--backend-opt", "cpp.inject_log1p_bug_TESTING_ONLY=accuracy", "--accuracy")
    expect(code == EXIT_OK, f"minify run exits {code}: {summary}\n{stderr[-3000:]}")
    targets = [n["target"] for n in call_nodes(out)]
    expect(targets == ["aten::relu"] and summary["signature"]["kind"] == "exception",
           f"slipped off the compile error: {targets}, {summary['signature']}")


def import_launcher(env):
    """The minifier_launcher.py PyTorch writes for the chain's compile error imports as a graph whose
    config line is its backend option: with it the graph fails as the user's run did, without it
    the graph passes. A file that is no after_aot repro is refused, naming why."""
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    from inductor_minifier_comparison import write_launcher
    launcher = write_launcher(env.python, os.path.join(env.work, "user-run"), MODELS["chain"], BUG, "compile_error")
    expect(launcher is not None, "torch.compile under TORCHDYNAMO_REPRO_AFTER=aot wrote no minifier_launcher.py")
    graph = os.path.join(env.work, "imported")
    shutil.rmtree(graph, ignore_errors=True)
    done = subprocess.run([env.python, os.path.join(ROOT, "scripts", "import_repro.py"), launcher, "--out", graph],
                          capture_output=True, text=True, timeout=600)
    expect(done.returncode == 0, f"import of {launcher}: exit {done.returncode}\n{done.stderr[-3000:]}")
    summary = json.loads(done.stdout)
    # Beside the bug's line the file carries what Inductor had patched while compiling (e.g.
    # functorch's unlift_effect_tokens); a storage it saved without a hash is random, as PyTorch's
    # reader makes it.
    with open(launcher) as f:
        unsaved = f.read().count("reader.storage(None,")
    expect(summary["backend_options"].get(BUG) == "compile_error" and summary["random_storages"] == unsaved,
           f"import of {launcher}: {summary}, {unsaved} storages without a hash")
    options = [arg for key, value in summary["backend_options"].items() for arg in ("--backend-opt", f"{key}={value}")]
    code, result, _ = env.minify_cmd("query", graph, "--backend", "inductor", *options)
    expect(code == EXIT_FAILS and result["verdict"]["exception_type"] == "torch._inductor.exc.CppCompileError",
           f"the imported graph under its config line: exit {code}, {result}")
    code, result, _ = env.minify_cmd("query", graph, "--backend", "inductor")
    expect(code == EXIT_OK, f"the imported graph without its config line: exit {code}, {result}")
    not_a_repro = write_file(env.work, "not_a_repro.py", "import torch\nx = 1\nif __name__ == '__main__':\n    exit(9)\n")
    done = subprocess.run([env.python, os.path.join(ROOT, "scripts", "import_repro.py"), not_a_repro, "--out",
                           os.path.join(env.work, "not-imported")], capture_output=True, text=True, timeout=300)
    expect(done.returncode == 1 and "not an after_aot repro: it defines no class Repro" in done.stderr,
           f"a file that is no repro: exit {done.returncode}, {done.stderr[-2000:]}")


def write_file(directory, name, text):
    path = os.path.join(directory, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def bad_input(env):
    graph = env.export("chain")
    cases = [
        (["--backend", "inductor", "--backend-opt", "cpp.inject_relu_bug=compile_error"], EXIT_WORKER,
         "has no option 'cpp.inject_relu_bug' (did you mean cpp.inject_relu_bug_TESTING_ONLY"),
        (["--backend", "inductor", "--backend-opt", "max_autotune=maybe"], EXIT_WORKER,
         "max_autotune=maybe: expected true or false"),
        (["--backend", "tpu"], EXIT_USAGE, "unknown backend 'tpu'"),
    ]
    for args, code_wanted, text in cases:
        code, result, stderr = env.minify_cmd("query", graph, *args)
        expect(code == code_wanted and text in json.dumps(result), f"{args}: exit {code}, {result}")
    # Pythons that cannot serve: each a clear error naming what is missing, before any search.
    dies_at_import = write_file(env.work, "dies_at_import.py", "import os\nos.abort()\n")
    # Debian's python3 without its site packages: a python with no torch at all.
    no_torch = write_file(env.work, "python3-without-torch", '#!/bin/sh\nexec /usr/bin/python3 -S "$@"\n')
    os.chmod(no_torch, 0o755)
    broken = [(no_torch, {}, "cannot import torch"),
              (env.python, {"MINIFYD_PYTHON_WORKER": dies_at_import}, "killed by SIGABRT")]
    # Debian 12's torch 1.13 (elsewhere /usr/bin/python3 may have PyTorch 2.x, or no torch at all).
    torch_without_inductor = "import torch\ntry:\n    import torch._inductor\nexcept ImportError:\n    exit(7)"
    if subprocess.run(["/usr/bin/python3", "-c", torch_without_inductor], capture_output=True).returncode == 7:
        broken.append(("/usr/bin/python3", {}, "has no Inductor"))
    for python, extra_env, text in broken:
        done = subprocess.run([env.minify, "run", graph, "--out", os.path.join(env.work, "bad-out"), "--backend",
                               "inductor", "--python", python, "--json"], capture_output=True, text=True,
                              timeout=300, env={**os.environ, **extra_env})
        expect(done.returncode == EXIT_WORKER and text in done.stdout,
               f"--python {python} {extra_env}: exit {done.returncode}, {done.stdout}{done.stderr[-2000:]}")
        shutil.rmtree(os.path.join(env.work, "bad-out"), ignore_errors=True)


def daemon(env):
    """Two Inductor jobs in minifyd, SIGKILLed mid-run and restarted: both finish with minify run's graphs."""
    sys.path.insert(0, os.path.join(HERE, "..", "minifyd"))
    from daemon_harness import Daemon, Tools, wait_all_final
    graph = env.export("chain")
    jobs = {"compile_error": bug_args("compile_error"), "runtime_error": bug_args("runtime_error")}
    references = {}
    for bug, args in jobs.items():
        out = os.path.join(env.work, f"reference-{bug}")
        shutil.rmtree(out, ignore_errors=True)
        code, summary, stderr = env.minify_cmd("run", graph, "--out", out, *args, "--workers", "2")
        expect(code == EXIT_OK, f"minify run {bug}: exit {code} {summary}\n{stderr[-2000:]}")
        with open(os.path.join(out, "graph.json"), "rb") as f:
            references[bug] = f.read()
    state = os.path.join(env.work, "state")
    shutil.rmtree(state, ignore_errors=True)
    minifyd = Daemon(Tools(env.minify, env.minifyd, None), state, "--workers", "2", "--python", env.python).start()
    try:
        submitted = {minifyd.submit(graph, args): bug for bug, args in jobs.items()}
        # Killed once both searches are under way (a checkpoint or some queries behind them).
        started = lambda listed: all(listed.get(i, {}).get("progress", {}).get("queries", 0) >= 3 for i in submitted)
        deadline = time.monotonic() + 600
        while not started({job["id"]: job for job in minifyd.jobs()}):
            expect(time.monotonic() < deadline, f"the jobs did not get going: {minifyd.jobs()}\n{minifyd.log()}")
            time.sleep(0.5)
        minifyd.kill()
        minifyd.start()
        finished = wait_all_final(minifyd, list(submitted), 1200)
        for job_id, bug in submitted.items():
            expect(finished[job_id]["state"] == "done", f"job {job_id} ({bug}): {finished[job_id]}")
            out = os.path.join(env.work, f"result-{job_id}")
            expect(minifyd.result_graph(job_id, out) == references[bug],
                   f"job {job_id} ({bug}): its graph differs from minify run's")
            with open(os.path.join(out, "repro.py")) as f:
                expect("def load_args(reader)" in f.read(), f"job {job_id}: repro.py is not after_aot's shape")
    finally:
        minifyd.stop()


def gpu(env, bug):
    """Triton's injected relu bug on the GPU, two workers sharing it: minimized to the relu."""
    has_cuda = subprocess.run([env.python, "-c", "import torch; assert torch.cuda.is_available()"],
                              capture_output=True).returncode == 0
    if not has_cuda:
        print(f"SKIP: {env.python}'s torch sees no CUDA GPU")
        sys.exit(SKIP)
    graph, out = env.export("chain_cuda"), os.path.join(env.work, f"gpu-{bug}")
    shutil.rmtree(out, ignore_errors=True)
    code, summary, stderr = env.minify_cmd("run", graph, "--out", out, "--backend", "inductor", "--backend-opt",
                                           f"triton.inject_relu_bug_TESTING_ONLY={bug}", "--gpus", "0",
                                           "--workers-per-gpu", "2")
    expect(code == EXIT_OK, f"minify run exits {code}: {summary}\n{stderr[-3000:]}")
    print(f"chain on cuda, triton {bug}: {summary['start_nodes']} -> {summary['nodes']} nodes, "
          f"{summary['queries']} queries, {summary['wall_seconds']:.1f} s, {summary['failure']}")
    targets = [n["target"] for n in call_nodes(out)]
    expect(targets == ["aten::relu"], f"minimized to {targets}, not one relu")
    # A compile error in the Triton kernel; the injected device-side assert is a CUDA error that
    # retires the worker which ran it.
    kind = {"compile_error": "exception", "runtime_error": "cuda_error"}[bug]
    expect(summary["signature"]["kind"] == kind, f"signature {summary['signature']}, expected kind {kind}")


SCENARIOS = {"query_clean": query_clean, "control": control, "slippage": slippage, "bad_input": bad_input,
             "daemon": daemon, "import_launcher": import_launcher}
for _model in ("chain", "resnet18"):
    for _bug in EXPECTED:
        SCENARIOS[f"{_model}_{_bug}"] = (lambda model, bug: lambda env: minimize(env, model, bug))(_model, _bug)
for _bug in ("compile_error", "runtime_error"):
    SCENARIOS[f"gpu_{_bug}"] = (lambda bug: lambda env: gpu(env, bug))(_bug)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--scenario", choices=sorted(SCENARIOS), required=True)
    parser.add_argument("--minify", required=True)
    parser.add_argument("--minifyd", required=True)
    parser.add_argument("--python", required=True, help="the PyTorch 2.x python (--python of minify)")
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    if not os.access(args.python, os.X_OK) and not shutil.which(args.python):
        print(f"SKIP: no PyTorch 2.x python at {args.python}: run scripts/torch2_env.sh (README command B does)")
        return SKIP
    os.makedirs(args.work, exist_ok=True)
    SCENARIOS[args.scenario](Env(args))
    print(f"inductor.{args.scenario}: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
