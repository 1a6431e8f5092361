# End-to-end tests of the torch.compile backends (label inductor): real Inductor in a PyTorch 2.x
# (--python: scripts/torch2_env.sh's launcher on Debian 12, python3 on the GPU machine), its own
# injected bugs (cpp.inject_relu_bug_TESTING_ONLY, as PyTorch's test_minifier uses them), graphs
# exported as AOT autograd hands them to Inductor (scripts/export_fx.py --aot), real Python workers.
# This script runs in the host's python; torch 2.x only ever runs in --python.
import json
import os
import shutil
import subprocess
import sys
import time

from harness import (EXIT_DOES_NOT_FAIL, EXIT_FAILS, EXIT_OK, EXIT_USAGE, EXIT_WORKER, EXPECTED, HERE, ROOT,
                     bug_args, call_nodes, check_at_relu, check_generated_code, check_repro_reproduces, expect,
                     require_cuda, run_scenarios, write_file)


def minimize(env, model, bug):
    graph, out = env.export(model), os.path.join(env.work, f"{model}-{bug}")
    shutil.rmtree(out, ignore_errors=True)
    code, summary, stderr = env.minify_cmd("run", graph, "--out", out, *bug_args(bug))
    expect(code == EXIT_OK, f"minify run exits {code}: {summary}\n{stderr[-3000:]}")
    print(f"{model} {bug}: {summary['start_nodes']} -> {summary['nodes']} nodes, {summary['queries']} queries, "
          f"{summary['wall_seconds']:.1f} s")
    check_at_relu(env, out, summary, bug)
    check_generated_code(out, bug)
    check_repro_reproduces(env, out, bug)


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
    """A graph without the bug does not fail; the python started ahead to write repro.py
    (daemon/run/standby_python.h) is stopped unused, its private directory gone."""
    graph, out = env.export("chain_no_relu"), os.path.join(env.work, "control-out")
    temp = os.path.join(env.work, "control-tmp")
    for path in (out, temp):
        shutil.rmtree(path, ignore_errors=True)
    os.makedirs(temp)
    code, summary, stderr = env.minify_cmd("run", graph, "--out", out, *bug_args("compile_error"), env={"TMPDIR": temp})
    expect(code == EXIT_DOES_NOT_FAIL and summary["status"] == "does_not_fail",
           f"a relu-free graph: exit {code}, {summary}\n{stderr[-2000:]}")
    left = [name for name in os.listdir(temp) if name.startswith("minifyd-standby-")]
    expect(not left, f"the standby python's directory outlived the run: {left}")


def plain_export(env):
    """A graph exported without --aot, of a module whose torch.compile passes, does not fail: it is
    compiled whole, as torch.compile compiles it; Inductor's inner compiler alone, which after_aot's
    graphs get, refuses it, a failure of the calling convention and no bug of PyTorch's."""
    graph, out = env.export("mlp_bare_output", aot=False), os.path.join(env.work, "plain-export-out")
    with open(os.path.join(graph, "origin.json")) as f:
        origin = json.load(f)
    expect(origin["backend_options"] == {"minifyd.inductor_entry": "compile_fx"}, f"origin.json: {origin}")
    shutil.rmtree(out, ignore_errors=True)
    code, summary, stderr = env.minify_cmd("run", graph, "--out", out, "--backend", "inductor")
    expect(code == EXIT_DOES_NOT_FAIL and summary["status"] == "does_not_fail",
           f"minify run on a graph torch.compile compiles: exit {code}, {summary}\n{stderr[-2000:]}")
    code, result, _ = env.minify_cmd("query", graph, "--backend", "inductor",
                                     "--backend-opt", "minifyd.inductor_entry=compile_fx_inner")
    expect(code == EXIT_FAILS, f"Inductor's inner compiler took make_fx's trace: exit {code}, {result}")


# A repro that dies as a device-side assert does, without a GPU: the traceback, then 500 lines of CUDA's
# assert report as the process ends.
ASSERTING_REPRO = """import atexit, sys
line = "triton_helpers.py:248: unknown: block: [{},0,0], thread: [63,0,0] Assertion `injected assert fail` failed.\\n"
atexit.register(lambda: sys.stderr.write("".join(line.format(block) for block in range(500))))
raise RuntimeError("CUDA error: device-side assert triggered")
"""
# The plain check's main() as `minify run` calls it (run_python_main).
RUN_HELPER_MAIN = "import sys; sys.path.insert(0, sys.argv[1]); del sys.argv[1]; from minifyd.plain_check import main; sys.exit(main())"
RUN_PLAIN_REPRO = ("import json, subprocess, sys, time; sys.path.insert(0, sys.argv[1]); "
                   "from minifyd import plain_check; "
                   "repro = subprocess.Popen([sys.executable, sys.argv[2]], stdout=subprocess.DEVNULL, "
                   "stderr=subprocess.PIPE, start_new_session=True); "
                   "print(json.dumps(plain_check.run_repro(repro, time.monotonic(), 120)))")


def plain_check(env):
    """A failure plain PyTorch does not show stops the search, which went on beside the check, and nothing it
    accepted meanwhile is kept: with a --timeout shorter
    than Inductor's cold compile, the worker's verdict on the chain (which has no bug) is a timeout, while
    its repro.py, given that timeout plus a python's start (daemon/run/plain_check.h), compiles and passes."""
    graph, out = env.export("chain_no_relu"), os.path.join(env.work, "plain-check-out")
    shutil.rmtree(out, ignore_errors=True)
    code, summary, stderr = env.minify_cmd("run", graph, "--out", out, "--backend", "inductor", "--backend-opt",
                                           "force_disable_caches=true", "--timeout", "1")
    expect(code == EXIT_DOES_NOT_FAIL and summary["stop"] == "the original's failure is not confirmed",
           f"minify run of a graph whose repro passes: exit {code}, {summary}\n{stderr[-2000:]}")
    expect(summary["signature"]["kind"] == "timeout" and summary["plain_check"]["outcome"] == "passes",
           f"not the worker's timeout against plain PyTorch's pass: {summary}")
    with open(os.path.join(out, "checkpoint.json")) as f:
        steps = json.load(f)["steps"]
    expect(summary["nodes"] == summary["start_nodes"] and not steps and not os.path.exists(os.path.join(out, "graph.json")),
           f"a reduction accepted beside the plain check was kept: {summary}, steps {steps}")
    shutil.rmtree(out + "-text", ignore_errors=True)
    done = subprocess.run([env.minify, "run", graph, "--out", out + "-text", "--backend", "inductor", "--python",
                           env.python, "--backend-opt", "force_disable_caches=true", "--timeout", "1"],
                          capture_output=True, text=True, timeout=600)
    expect(done.returncode == EXIT_DOES_NOT_FAIL and "passes under plain PyTorch" in done.stderr,
           f"minify run does not say why it stopped: exit {done.returncode}\n{done.stderr[-2000:]}")
    # A search that ends long before the check (one query; resnet18's cold compile in the check): the
    # outputs are written while the check runs, and removed once it refutes the original. The check's
    # limit is the 1 s timeout and a minute's start: a loaded 2-core machine (CI's) may compile resnet18
    # cold in more, and then the check confirms the timeout, as the user's own run would, and the
    # outputs stay.
    early = out + "-early"
    shutil.rmtree(early, ignore_errors=True)
    code, summary, stderr = env.minify_cmd("run", env.export("resnet18"), "--out", early, "--backend", "inductor",
                                           "--backend-opt", "force_disable_caches=true", "--timeout", "1",
                                           "--max-queries", "1", "--timeline", early + ".timeline.jsonl")
    refuted = code == EXIT_DOES_NOT_FAIL and summary["stop"] == "the original's failure is not confirmed"
    confirmed = code == EXIT_OK and summary["plain_check"]["outcome"] == "fails" and \
        summary["plain_check"]["detail"].startswith("no end within 61 s")
    expect(refuted or confirmed, f"resnet18 under a 1 s limit: exit {code}, {summary}\n{stderr[-2000:]}")
    # Each phase's first edges: a confirmed run writes its report in a second "outputs" phase at the end.
    edges = {}
    with open(early + ".timeline.jsonl") as f:
        for e in map(json.loads, f):
            if e["event"] == "phase":
                edges.setdefault((e["phase"], e["edge"]), e["t"])
    expect(edges[("outputs", "begin")] < edges[("plain_check", "end")],
           f"the outputs were not written beside the plain check: {edges}")
    left = [name for name in ("graph.json", "graph.dot", "repro.py", "repro_inputs", "output_code", "report.md")
            if os.path.exists(os.path.join(early, name))]
    expect(not left if refuted else {"graph.json", "repro.py", "report.md"} <= set(left),
           f"outputs of a {'refuted' if refuted else 'confirmed'} run: {left} left")
    print(f"resnet18's plain check {'refuted' if refuted else 'confirmed (past its limit)'} the 1 s timeout; "
          f"the outputs were written beside it and {'removed' if refuted else 'kept'}")
    # A failed device-side assert prints a line per GPU thread as the process ends, after the traceback:
    # they come back counted, the traceback still in the tail the judgement reads.
    asserting = os.path.join(env.work, "asserting_repro.py")
    with open(asserting, "w") as f:
        f.write(ASSERTING_REPRO)
    done = subprocess.run([env.python, "-c", RUN_PLAIN_REPRO, os.path.join(ROOT, "worker", "python"), asserting],
                          capture_output=True, text=True, timeout=300)
    ran = json.loads(done.stdout)
    expect(ran["exit"] == 1 and "RuntimeError: CUDA error: device-side assert triggered" in ran["stderr_tail"]
           and "(and 499 more such lines" in ran["last_line"] and ran["stderr_tail"].count("Assertion") == 1,
           f"the device-side assert lines buried the traceback: {ran}\n{done.stderr[-2000:]}")
    # The repro's python writes it in a forked child of its own: a graph the writer cannot read, or an
    # option it cannot set, comes back as the writer's own words (and status 2), with no repro run.
    for graph_dir, option, words in ((os.path.join(env.work, "no-such-graph"), "force_disable_caches=true",
                                      "No such file or directory"),
                                     (graph, "no_such_option=1", "has no option 'no_such_option'")):
        done = subprocess.run([env.python, "-c", RUN_HELPER_MAIN, os.path.join(ROOT, "worker", "python"), graph_dir,
                               "--backend", "inductor", "--backend-opt", option, "--timeout", "120"],
                              capture_output=True, text=True, timeout=300)
        expect(done.returncode == 2 and not done.stdout and done.stderr.startswith(f"repro.py for {graph_dir}: ")
               and words in done.stderr and not os.path.exists(os.path.join(graph_dir, "repro.py")),
               f"the plain check of {graph_dir} with {option}: exit {done.returncode}, {done.stdout!r}, {done.stderr!r}")


def failing_kernel_first(env):
    """The search first tries each computation of the kernel the sanity check saw fail alone on loads of
    its inputs (the step failing-node), before the kernel's nodes together (failing-kernel): on
    linear_stages' compile error the relu's stage is that kernel, and the relu alone fails, where the
    search from the whole graph ends too, in fewer queries."""
    graph = env.export("linear_stages")
    runs = {}
    for mode, extra in (("first", []), ("whole", ["--no-failing-kernel-first"])):
        out = os.path.join(env.work, f"failing-kernel-{mode}")
        shutil.rmtree(out, ignore_errors=True)
        code, summary, stderr = env.minify_cmd("run", graph, "--out", out, *bug_args("compile_error"), *extra)
        expect(code == EXIT_OK, f"minify run {' '.join(extra)} exits {code}: {summary}\n{stderr[-3000:]}")
        check_at_relu(env, out, summary, "compile_error")
        with open(os.path.join(out, "checkpoint.json")) as f:
            steps = json.load(f)["steps"]
        runs[mode] = (summary, steps, call_nodes(out))
    (first, first_steps, first_nodes), (whole, whole_steps, whole_nodes) = runs["first"], runs["whole"]
    stage = first_steps[0]
    expect(stage["strategy"] == "failing-node" and stage["nodes"] == 3,
           f"the first step is not one of the failing kernel's computations alone: {first_steps[:2]}")
    expect(all(step["strategy"] != "failing-kernel" for step in whole_steps), f"{whole_steps}")
    expect(first_nodes == whole_nodes and first["queries"] < whole["queries"],
           f"{first['queries']} queries to {first_nodes} against {whole['queries']} to {whole_nodes}")
    print(f"linear_stages compile_error: {first['queries']} queries with the failing kernel first, "
          f"{whole['queries']} without, of {first['start_nodes']} nodes")


def precompiled_headers(env):
    """The worker's precompiled prefix headers (minifyd/precompiled_headers.py) change no diagnostic: the
    chain's injected C++ compile error reads the same, in fresh caches, with and without them, and the
    cache compiled with them holds one."""
    work = os.path.join(env.work, "precompiled-headers")
    shutil.rmtree(work, ignore_errors=True)
    results = {}
    for mode in ("parsed", "precompiled"):
        done = subprocess.run([env.python, os.path.join(HERE, "precompiled_headers_check.py"), work, mode],
                              capture_output=True, text=True, timeout=600)
        expect(done.returncode == 0, f"{mode}: exit {done.returncode}\n{done.stderr[-3000:]}")
        results[mode] = json.loads(done.stdout.strip().splitlines()[-1])
    parsed, precompiled = results["parsed"], results["precompiled"]
    expect(parsed["error"] and "CppCompileError" in parsed["error"], f"no compile error: {parsed}")
    expect(precompiled["error"] == parsed["error"],
           f"the diagnostics differ:\n{parsed['error'][-1500:]}\n----\n{precompiled['error'][-1500:]}")
    expect(precompiled["headers"] and not parsed["headers"], f"precompiled headers: {results}")


def slippage(env):
    graph, out = env.export("slippage"), os.path.join(env.work, "slippage-out")
    shutil.rmtree(out, ignore_errors=True)
    code, summary, stderr = env.minify_cmd("run", graph, "--out", out, *bug_args("compile_error"),
                                           "--backend-opt", "cpp.inject_log1p_bug_TESTING_ONLY=accuracy", "--accuracy")
    expect(code == EXIT_OK, f"minify run exits {code}: {summary}\n{stderr[-3000:]}")
    targets = [n["target"] for n in call_nodes(out)]
    expect(targets == ["aten::relu"] and summary["signature"]["kind"] == "exception",
           f"slipped off the compile error: {targets}, {summary['signature']}")


def bad_input(env):
    graph = env.export("chain")
    cases = [
        # Refused by the worker, and bad input all the same (cli.exit_code_of).
        (["--backend", "inductor", "--backend-opt", "cpp.inject_relu_bug=compile_error"], EXIT_USAGE,
         "has no option 'cpp.inject_relu_bug' (did you mean cpp.inject_relu_bug_TESTING_ONLY"),
        (["--backend", "inductor", "--backend-opt", "max_autotune=maybe"], EXIT_USAGE,
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
    """Two Inductor jobs in minifyd, SIGKILLed mid-run and restarted: both finish with minify run's graph.
    Both bugs minimize the chain to the same graph (the relu and its stored input), byte for byte, so
    one reference run, the cheaper bug's, stands for both."""
    sys.path.insert(0, os.path.join(HERE, "..", "minifyd"))
    from daemon_harness import Daemon, Tools, wait_all_final
    graph = env.export("chain")
    jobs = {"compile_error": bug_args("compile_error"), "runtime_error": bug_args("runtime_error")}
    out = os.path.join(env.work, "reference")
    shutil.rmtree(out, ignore_errors=True)
    code, summary, stderr = env.minify_cmd("run", graph, "--out", out, *jobs["runtime_error"], "--workers", "2")
    expect(code == EXIT_OK, f"minify run runtime_error: exit {code} {summary}\n{stderr[-2000:]}")
    with open(os.path.join(out, "graph.json"), "rb") as f:
        reference = f.read()
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
            expect(minifyd.result_graph(job_id, out) == reference,
                   f"job {job_id} ({bug}): its graph differs from minify run's")
            with open(os.path.join(out, "repro.py")) as f:
                expect("def load_args(reader)" in f.read(), f"job {job_id}: repro.py is not after_aot's shape")
    finally:
        minifyd.stop()


def gpu(env, bug):
    """Triton's injected relu bug on the GPU, two workers sharing it: minimized to the relu."""
    require_cuda(env)
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
    check_generated_code(out, bug)


def analyze_resnet18(env):
    """minify analyze of resnet18 (the graph Inductor compiles) with Inductor's injected accuracy bug:
    the first divergence is the first relu, in isolation; in place (Inductor's intermediate hooks)
    nothing before it diverges."""
    graph, out = env.export("resnet18"), os.path.join(env.work, "resnet18-analysis")
    shutil.rmtree(out, ignore_errors=True)
    code, summary, stderr = env.minify_cmd("analyze", graph, "--backend", "inductor", "--backend-opt",
                                           "cpp.inject_relu_bug_TESTING_ONLY=accuracy", "--out", out)
    expect(code == EXIT_OK, f"minify analyze exits {code}: {summary}\n{stderr[-3000:]}")
    relus = [node["name"] for node in call_nodes(graph) if node["target"] == "aten::relu"]
    expect(summary["first_divergence"] == relus[0], f"first divergence {summary}, the first relu is {relus[0]}")
    with open(os.path.join(out, "analysis.json")) as f:
        analysis = json.load(f)
    findings = analysis["findings"]
    expect(findings.get("isolated_divergence") == relus[0] and analysis["exposure"] == "hooks", f"{findings}")
    first = next(i for i, node in enumerate(analysis["nodes"]) if node["node"] == relus[0])
    for node in analysis["nodes"][:first]:
        for mode in ("isolated", "in_place"):
            measured = (node.get(mode) or {}).get("measurement") or {}
            expect(not measured.get("diverges"), f"{node['node']} diverges {mode}, before the first relu")
    expect(findings["in_place_measured"] > 0 and "fusion" not in findings, f"{findings}")
    print(f"resnet18 analysis: first divergence {relus[0]}, {findings['in_place_measured']} of "
          f"{len(analysis['nodes'])} nodes measured in place")


SCENARIOS = {"query_clean": query_clean, "control": control, "plain_export": plain_export, "plain_check": plain_check,
             "failing_kernel_first": failing_kernel_first, "precompiled_headers": precompiled_headers, "slippage": slippage,
             "bad_input": bad_input, "daemon": daemon, "analyze_resnet18": analyze_resnet18}
# resnet18's three bugs run from the minifier_launcher.py PyTorch writes for them (test_import.py):
# the same graph, the one Inductor compiles, exported by PyTorch itself.
for _bug in EXPECTED:
    SCENARIOS[f"chain_{_bug}"] = (lambda bug: lambda env: minimize(env, "chain", bug))(_bug)
for _bug in ("compile_error", "runtime_error"):
    SCENARIOS[f"gpu_{_bug}"] = (lambda bug: lambda env: gpu(env, bug))(_bug)


if __name__ == "__main__":
    run_scenarios(SCENARIOS)
