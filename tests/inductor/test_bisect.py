# `minify bisect` and `minify run --bisect` (label inductor, docs/bisect.md) with real Inductor: the
# injected relu bugs on the 200-operator chain named where PyTorch's own CompilerBisector names them
# (bench/compiler_bisector_run.py, run beside us on the same model), the finding kept with a run's
# outputs, bad requests refused, and a CompilerBisector state left behind (a user's bisect killed
# midway) not changing a worker's verdicts.
import json
import os
import shutil
import subprocess
import tempfile

from harness import (BUG, EXIT_DOES_NOT_FAIL, EXIT_FAILS, EXIT_OK, EXIT_USAGE, MODELS, ROOT, bug_args, expect,
                     run_scenarios)

RELU_AT = 120  # tests/inductor/models/chain200.py: the relu is the chain's 121st operator


def compiler_bisector(env, bug):
    """CompilerBisector.do_bisect on chain200.py with the bug, in its own Inductor cache directory."""
    with tempfile.TemporaryDirectory() as cache:
        done = subprocess.run([env.python, os.path.join(ROOT, "bench", "compiler_bisector_run.py"), MODELS["chain"],
                               "--backend-opt", f"{BUG}={bug}"], capture_output=True, text=True, timeout=1200,
                              env={**os.environ, "TORCHINDUCTOR_CACHE_DIR": cache})
    expect(done.returncode == 0, f"CompilerBisector exits {done.returncode}:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def expect_relu_lowering(found, application, what):
    expect(found["stage"] == "inductor" and found["subsystem"] == "lowerings", f"{what}: {found}")
    expect(found["application"] == application and found["debug_info"] == "relu" and found["target"] == "aten::relu",
           f"{what}: not the relu's lowering, application {application}: {found}")
    outcomes = {(p["stage"], p.get("subsystem", "")): p["outcome"] for p in found["probes"] if "enabled" not in p
                or p["enabled"] == 0}
    expect(outcomes[("aot_eager", "")] == "passes" and outcomes[("inductor", "lowerings")] == "passes",
           f"{what}: the stage and subsystem probes say otherwise: {outcomes}")


def like_compiler_bisector(env, bug):
    """The bug on the whole chain: our stage, subsystem, application and debug info are CompilerBisector's."""
    graph = env.export("chain")
    theirs = compiler_bisector(env, bug)
    code, ours, stderr = env.minify_cmd("bisect", graph, *bug_args(bug), "--workers", "2")
    expect(code == EXIT_OK, f"minify bisect ({bug}) exits {code}: {ours}\n{stderr[-3000:]}")
    print(f"{bug}: ours {len(ours['probes'])} probes in {ours['wall_seconds']:.1f} s; CompilerBisector "
          f"{theirs['probes']} probes in {theirs['wall_seconds']:.1f} s: {theirs['result']}")
    expect(theirs["result"] == {"backend": "inductor", "subsystem": "lowerings", "bisect_number": RELU_AT,
                                "debug_info": "relu"}, f"{bug}: CompilerBisector found {theirs}")
    expect_relu_lowering(ours, RELU_AT, f"minify bisect ({bug})")


def after_run(env):
    """`minify run --bisect` on the runtime error (an abort, which CompilerBisector's in-process probes
    would die of): bisect.json and report.md's section in OUT, and the checkpoint holding the finding,
    the relu's lowering at application 0 of the minimized graph."""
    graph, out = env.export("chain"), os.path.join(env.work, "run-bisect")
    shutil.rmtree(out, ignore_errors=True)
    code, summary, stderr = env.minify_cmd("run", graph, "--out", out, *bug_args("runtime_error"), "--bisect")
    expect(code == EXIT_OK and summary["nodes"] == 3, f"minify run --bisect exits {code}: {summary}\n{stderr[-3000:]}")
    with open(os.path.join(out, "bisect.json")) as f:
        found = json.load(f)
    expect_relu_lowering(found, 0, "run --bisect")
    with open(os.path.join(out, "checkpoint.json")) as f:
        expect(json.load(f)["bisect"] == found,
               "the checkpoint does not hold the bisect that bisect.json shows")
    with open(os.path.join(out, "report.md")) as f:
        report = f.read()
    expect("## Bisect" in report and "inductor / lowerings, application 0 (relu: aten::relu)" in report,
           f"report.md has no bisect section naming the relu's lowering:\n{report}")


def bad_requests(env):
    """A backend without stages, and a graph that does not fail, are refused naming what is wrong."""
    graph = env.export("chain")
    code, result, _ = env.minify_cmd("run", graph, "--out", os.path.join(env.work, "eager-out"), "--backend", "eager",
                                     "--bisect")
    expect(code == EXIT_USAGE and "--bisect: a bisect probes a torch.compile backend's compiler" in result["error"],
           f"--bisect with eager: exit {code}, {result}")
    expect(not os.path.exists(os.path.join(env.work, "eager-out")), "a refused run left its --out behind")
    clean = env.export("chain_no_relu")
    code, result, _ = env.minify_cmd("bisect", clean, *bug_args("compile_error"))
    expect(code == EXIT_DOES_NOT_FAIL and "does not fail under inductor: nothing to bisect" in result["error"],
           f"minify bisect of a graph that passes: exit {code}, {result}")


def stale_bisector_state(env):
    """The state a CompilerBisector run leaves in Inductor's cache directory when it is killed (lowerings
    switched off for every compile that reads it) does not reach a worker's verdict: the compile error
    is still seen, and a bisect still finds the relu."""
    graph = env.export("chain")
    cache = os.path.join(env.work, "inductor-cache")
    shutil.rmtree(cache, ignore_errors=True)
    os.makedirs(os.path.join(cache, "bisect", "inductor"))
    with open(os.path.join(cache, "bisect", "bisect_status.txt"), "w") as f:
        f.write("backend=inductor\nsubsystem=lowerings\n")
    with open(os.path.join(cache, "bisect", "inductor", "lowerings_run_state.txt"), "w") as f:
        f.write("test_disable")
    stale = {"TORCHINDUCTOR_CACHE_DIR": cache}
    code, result, stderr = env.minify_cmd("query", graph, *bug_args("compile_error"), env=stale)
    expect(code == EXIT_FAILS, f"under a stale bisect state the compile error is not seen: exit {code}, {result}\n"
                               f"{stderr[-2000:]}")
    code, found, stderr = env.minify_cmd("bisect", graph, *bug_args("compile_error"), env=stale)
    expect(code == EXIT_OK, f"minify bisect under a stale state exits {code}: {found}\n{stderr[-2000:]}")
    expect_relu_lowering(found, RELU_AT, "bisect under a stale state")


run_scenarios({"bisect_like_compiler_bisector": lambda env: like_compiler_bisector(env, "compile_error"),
               "bisect_like_compiler_bisector_accuracy": lambda env: like_compiler_bisector(env, "accuracy"),
               "bisect_after_run": after_run,
               "bisect_bad_requests": bad_requests, "bisect_stale_state": stale_bisector_state})
