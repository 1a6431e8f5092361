# What the end-to-end tests of the torch.compile backends share (test_inductor.py, test_import.py):
# the models, Inductor's injected relu bugs and what each looks like to the search, running `minify`
# with the PyTorch 2.x python, checking a run that ended at the relu, and the scenario entry point.
# This runs in the host's python; torch 2.x only ever runs in --python.
import argparse
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
MODELS = {"chain": os.path.join(HERE, "models", "chain200.py"),
          "chain_no_relu": os.path.join(HERE, "models", "chain200_no_relu.py"),
          "slippage": os.path.join(HERE, "models", "slippage.py"),
          "chain_cuda": os.path.join(HERE, "models", "chain200_cuda.py"),
          "mlp_bare_output": os.path.join(HERE, "models", "mlp_bare_output.py"),
          "linear_stages": os.path.join(HERE, "models", "linear_stages.py"),
          "resnet18": os.path.join(ROOT, "scripts", "examples", "resnet18.py")}
BUG = "cpp.inject_relu_bug_TESTING_ONLY"
# What each injected bug looks like to the search: (verdict kind, what identifies it).
EXPECTED = {"compile_error": ("exception", "torch._inductor.exc.CppCompileError"),
            # `throw 1`: std::terminate in an OpenMP region, Inductor's catch (...) where the loop runs
            # serially; one signature either way (daemon/verdict/failure_signature.h)
            "runtime_error": ("crash", "SIGABRT"),
            "accuracy": ("accuracy", None)}
EXIT_OK, EXIT_FAILS, EXIT_USAGE, EXIT_WORKER, EXIT_DOES_NOT_FAIL = 0, 1, 2, 3, 4
SKIP = 77


def expect(condition, what):
    if not condition:
        raise AssertionError(what)


class Env:
    """A scenario's command line: minify, minifyd, python, work and the file's own options (as attributes,
    argparse's names: --python-1-13 is python_1_13)."""
    def __init__(self, args):
        vars(self).update({name: value for name, value in vars(args).items() if name != "scenario"})

    def export(self, model, aot=True):
        """The model's graph directory: the graph AOT autograd hands Inductor, or make_fx's trace."""
        out = os.path.join(self.work, model if aot else f"{model}-make_fx")
        if not os.path.isfile(os.path.join(out, "graph.json")):
            done = subprocess.run([self.python, os.path.join(ROOT, "scripts", "export_fx.py"), MODELS[model],
                                   *(["--aot"] if aot else []), "--out", out], capture_output=True, text=True,
                                  timeout=600)
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


def require_cuda(env):
    """Exits 77 (skip), saying why, unless env.python's torch sees a CUDA GPU."""
    has_cuda = subprocess.run([env.python, "-c", "import torch; assert torch.cuda.is_available()"],
                              capture_output=True).returncode == 0
    if not has_cuda:
        print(f"SKIP: {env.python}'s torch sees no CUDA GPU")
        sys.exit(SKIP)


def bug_args(bug):
    return ["--backend", "inductor", "--backend-opt", f"{BUG}={bug}"] + (["--accuracy"] if bug == "accuracy" else [])


def call_nodes(graph_dir):
    with open(os.path.join(graph_dir, "graph.json")) as f:
        return [n for n in json.load(f)["nodes"] if n["op"] == "call_function"]


def write_file(directory, name, text):
    path = os.path.join(directory, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def check_at_relu(env, out, summary, bug):
    """The run ended at the relu and its input, failing as the original did, and its repro.py is in
    after_aot's shape with the bug's config line."""
    kind, identity = EXPECTED[bug]
    nodes = call_nodes(out)
    expect([n["target"] for n in nodes] == ["aten::relu"], f"minimized to {[n['target'] for n in nodes]}, not one relu")
    expect(summary["inputs"] == 1 and summary["nodes"] == 3, f"not the relu and its input: {summary}")
    signature = summary["signature"]
    expect(signature["kind"] == kind, f"signature {signature}, expected kind {kind}")
    expect(identity in (None, signature["exception_type"], signature["signal"]), f"signature {signature} is not {identity}")
    done = subprocess.run([env.minify, "validate", "--check-store", out], capture_output=True, text=True)
    expect(done.returncode == 0, f"minify validate --check-store {out}: {done.stdout}{done.stderr}")
    with open(os.path.join(out, "repro.py")) as f:
        repro = f.read()
    expect(f"torch._inductor.config.{BUG} = '{bug}'" in repro and "class Repro(torch.nn.Module)" in repro
           and "def load_args(reader)" in repro, f"repro.py is not after_aot's shape with the config line:\n{repro[:2000]}")


def check_generated_code(out, bug):
    """OUT holds Inductor's output code for the minimized relu (one C++ or Triton kernel), and report.md
    names the kernel that fails for a compile error (its definition raised) and a runtime error (the kernel
    last called when the process died or the device faulted, or whose call raised); an accuracy bug's
    kernel is not named."""
    module = os.path.join(out, "output_code", "module_0.py")
    expect(os.path.isfile(module), f"{out}: no output_code/module_0.py")
    with open(module) as f:
        code = f.read()
    kernels = [line.split("=")[0].strip() for line in code.splitlines()
               if "= async_compile.cpp_pybinding(" in line or "= async_compile.triton(" in line]
    expect(len(kernels) == 1 and "def call(" in code, f"{module}: not the one relu kernel's module: {kernels}")
    with open(os.path.join(out, "report.md")) as f:
        report = f.read()
    named = f"The failing kernel: **`{kernels[0]}`**"
    if bug == "accuracy":
        expect(named not in report and "No kernel is named as failing" in report, f"{out}: report.md names a kernel")
    else:
        expect(named in report, f"{out}: report.md does not name {kernels[0]} as the failing kernel:\n{report}")


def check_repro_reproduces(env, out, bug):
    """repro.py, after_aot's shape: plain PyTorch with the config line reproduces the bug."""
    done = subprocess.run([env.python, os.path.join(out, "repro.py")], capture_output=True, text=True, timeout=600,
                          cwd=env.work)
    expect(done.returncode != 0, f"repro.py passes (exit 0) instead of reproducing {bug}:\n{done.stderr[-2000:]}")
    if bug == "compile_error":
        expect("CppCompileError" in done.stderr, f"repro.py fails otherwise:\n{done.stderr[-2000:]}")
    if bug == "runtime_error":
        # Thrown in an OpenMP region, the int terminates the process; thrown by two threads at once, the
        # second's terminate may print only "terminate called recursively" before the first's message.
        aborted = done.returncode == -6 and ("terminate called after throwing an instance of 'int'" in done.stderr
                                             or "terminate called recursively" in done.stderr)
        caught = done.returncode == 1 and done.stderr.rstrip().endswith("RuntimeError: unhandled error")
        expect(aborted or caught, f"repro.py exits {done.returncode}, not by the thrown int:\n{done.stderr[-2000:]}")
    if bug == "accuracy":
        expect("AccuracyError" in done.stderr, f"repro.py fails otherwise:\n{done.stderr[-2000:]}")


def run_scenarios(scenarios, label="inductor", options=(), fresh_work=False):
    """The entry point of a test file: --scenario NAME runs scenarios[NAME](Env); exit 77 (skip) where
    the PyTorch 2.x python is missing. options: the file's own required options (paths, given as
    absolute ones); fresh_work: the work directory emptied first."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--scenario", choices=sorted(scenarios), required=True)
    parser.add_argument("--minify", required=True)
    parser.add_argument("--minifyd", required=True)
    parser.add_argument("--python", required=True, help="the PyTorch 2.x python (--python of minify)")
    parser.add_argument("--work", required=True)
    for name in options:
        parser.add_argument(name, required=True)
    args = parser.parse_args()
    if not os.access(args.python, os.X_OK) and not shutil.which(args.python):
        print(f"SKIP: no PyTorch 2.x python at {args.python}: run scripts/torch2_env.sh (README command B does)")
        sys.exit(SKIP)
    if fresh_work:
        shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work, exist_ok=True)
    scenarios[args.scenario](Env(args))
    print(f"{label}.{args.scenario}: ok")
    sys.exit(0)
