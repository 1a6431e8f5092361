# `minify capture` end to end (label inductor): models/two_graphs.py, a program whose second compiled
# graph holds a relu that Inductor's injected bug breaks, run in the PyTorch 2.x python
#   capture_hook    under the hook alone, in the environment `minify capture` gives the program
#                   (worker/python/capture_site first on PYTHONPATH, MINIFYD_CAPTURE_DIR, ...);
#   capture_run     through `minify capture --run`, each captured graph minimized after the program;
#   capture_submit  through `minify capture --submit`, each captured graph a job of a running minifyd;
#   capture_made_up_inputs  the inputs capture makes for a graph whose inputs are no tensor of the program's
#                   (a backward graph's): each the fake's shape, strides, offset and dtype, its storage
#                   as large as they reach (a 2-D [96, 32] reaches 3072 elements, not 95 * 32 + 1).
# The program's stdout and exit status must be what they are without the capture.
import json
import os
import re
import shutil
import subprocess
import sys

from harness import (BUG, EXIT_FAILS, HERE, ROOT, call_nodes, expect, run_scenarios, write_file)

# Inductor's C++ code runs a loop in an OpenMP parallel region only where torch sees more than one thread,
# and torch's default is the physical cores as cpuinfo counts them: 1 on some 2-core machines (CI's
# included). The program, minify and minifyd's workers all inherit this, so each compiles the same code,
# and the one FX graph cache they share (its key holds no thread count) never serves one's code to another.
os.environ["OMP_NUM_THREADS"] = "2"
PROGRAM = os.path.join(HERE, "models", "two_graphs.py")
CAPTURE_SITE = os.path.join(ROOT, "worker", "python", "capture_site")
# How each injected bug ends two_graphs.py (bug, rows) without the capture, and what the captured graph's
# origin.json says of it: a failure's kind and exception type, or None where the process died in the run.
PROGRAM_ENDS = {("runtime_error", "256"): (-6, None),  # `throw 1` in an OpenMP region: std::terminate
                ("runtime_error", "8"): (1, ("runtime_error", "RuntimeError")),  # serial: Inductor's catch (...)
                ("compile_error", "8"): (1, ("compile_error", "torch._inductor.exc.CppCompileError")),
                ("accuracy", "8"): (0, ("accuracy", "AccuracyError"))}


def run_program(env, args, capture_dir=None, accuracy=False, extra=None):
    """two_graphs.py ARGS in the PyTorch 2.x python, with extra in its environment; with capture_dir, in
    the hook's environment."""
    extra = dict(extra or {})
    if capture_dir is not None:
        extra.update({"PYTHONPATH": os.pathsep.join(filter(None, [CAPTURE_SITE, os.environ.get("PYTHONPATH")])),
                      "MINIFYD_CAPTURE_DIR": capture_dir})
        if accuracy:
            extra["MINIFYD_CAPTURE_ACCURACY"] = "accuracy"
    return subprocess.run([env.python, PROGRAM, *args], capture_output=True, text=True, timeout=600,
                          env={**os.environ, **extra})


def fresh_dir(env, name):
    path = os.path.join(env.work, name)
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def captured_graphs(capture_dir):
    return sorted(os.path.join(capture_dir, name) for name in os.listdir(capture_dir) if name.startswith("graph-"))


def read_origin(graph_dir):
    with open(os.path.join(graph_dir, "origin.json")) as f:
        return json.load(f)


def check_unchanged(plain, captured, what):
    expect(captured.returncode == plain.returncode and captured.stdout == plain.stdout,
           f"{what}: exit {captured.returncode} and stdout {captured.stdout!r} under the capture, exit "
           f"{plain.returncode} and stdout {plain.stdout!r} without\n{captured.stderr[-3000:]}")


def check_second_graph(graph_dir, bug):
    """The graph is two_graphs.py's second, with the relu, from the program run with bug."""
    targets = [node["target"] for node in call_nodes(graph_dir)]
    expect("aten::relu" in targets and "aten::sin" not in targets, f"{graph_dir}: not the second graph: {targets}")
    origin = read_origin(graph_dir)
    expect(origin["source"] == "capture" and origin["argv"][0] == PROGRAM and origin["argv"][1] == bug
           and origin["graph"] == 2 and isinstance(origin["pid"], int)
           and origin["backend_options"].get(BUG) == bug, f"{graph_dir}/origin.json: {origin}")
    return origin


def query_args(origin, bug):
    options = [arg for key, value in origin["backend_options"].items() for arg in ("--backend-opt", f"{key}={value}")]
    return ["--backend", "inductor", *options] + (["--accuracy"] if bug == "accuracy" else [])


def capture_hook(env):
    """Each way the second graph fails is captured once, as the program met it, and fails the same way
    in `minify query` under the options origin.json gives; a graph that passed leaves nothing."""
    for (bug, rows), (status, failure) in PROGRAM_ENDS.items():
        args = [bug, rows]
        plain = run_program(env, args)
        expect(plain.returncode == status, f"two_graphs.py {bug} {rows} exits {plain.returncode}, not {status}:\n"
                                           f"{plain.stderr[-3000:]}")
        capture_dir = fresh_dir(env, f"hook-{bug}-{rows}")
        captured = run_program(env, args, capture_dir, accuracy=True)
        check_unchanged(plain, captured, f"two_graphs.py {bug} {rows}")
        expect("minify capture" not in captured.stderr, f"the hook complains:\n{captured.stderr[-3000:]}")
        graphs = captured_graphs(capture_dir)
        expect(len(graphs) == 1, f"{bug} {rows}: {len(graphs)} graphs captured, not one: {os.listdir(capture_dir)}")
        origin = check_second_graph(graphs[0], bug)
        found = origin.get("failure")
        expect((found["kind"], found["exception"].split(":")[0]) == failure if found else failure is None,
               f"{graphs[0]}: failure {found}, expected {failure}")
        code, result, stderr = env.minify_cmd("query", graphs[0], *query_args(origin, bug))
        expect(code == EXIT_FAILS, f"minify query {graphs[0]}: exit {code}, {result}\n{stderr[-2000:]}")
        print(f"{bug} {rows}: exit {captured.returncode}, captured {os.path.basename(graphs[0])}: {found}; "
              f"minify query: {result['summary'].splitlines()[0]}")
    # Without accuracy asked for, wrong numbers are no failure; and a program without the bug leaves nothing.
    for args, accuracy in ((["accuracy", "8"], False), (["none", "256"], True)):
        capture_dir = fresh_dir(env, f"hook-{args[0]}-{accuracy}")
        check_unchanged(run_program(env, args), run_program(env, args, capture_dir, accuracy), f"two_graphs.py {args}")
        expect(os.listdir(capture_dir) == [], f"{args}, accuracy {accuracy}: left {os.listdir(capture_dir)}")
    check_cached_graph(env)
    check_hook_site(env)


def check_cached_graph(env):
    """A graph AOT autograd's cache holds from an earlier run (on by default in PyTorch 2.11; asked for here)
    is compiled again under the hook, so it is captured, and the hook's own setting is not in its origin."""
    cache = {"TORCHINDUCTOR_AUTOGRAD_CACHE": "1", "TORCHINDUCTOR_CACHE_DIR": fresh_dir(env, "inductor-cache")}
    args = ["runtime_error", "8"]
    plain = run_program(env, args, extra=cache)
    capture_dir = fresh_dir(env, "hook-cached")
    check_unchanged(plain, run_program(env, args, capture_dir, extra=cache), "two_graphs.py from the cache")
    graphs = captured_graphs(capture_dir)
    expect(len(graphs) == 1, f"from the cache: {len(graphs)} graphs captured, not one: {os.listdir(capture_dir)}")
    options = check_second_graph(graphs[0], "runtime_error")["backend_options"]
    expect(not any("autograd_cache" in key for key in options), f"{graphs[0]}: the hook's setting in {options}")


def check_hook_site(env):
    """The hook imports no torch into a program that does not, and runs the sitecustomize it stands in front of."""
    user_site = fresh_dir(env, "user-site")
    write_file(user_site, "sitecustomize.py", "import builtins\nbuiltins.USER_SITE_RAN = True\n")
    program = write_file(env.work, "no_torch.py", "import sys\nprint(USER_SITE_RAN, 'torch' in sys.modules)\n")
    done = subprocess.run([env.python, program], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join([CAPTURE_SITE, user_site]),
                               "MINIFYD_CAPTURE_DIR": fresh_dir(env, "hook-no-torch")})
    expect(done.returncode == 0 and done.stdout == "True False\n",
           f"a program without torch under the hook: exit {done.returncode}, {done.stdout!r}\n{done.stderr[-2000:]}")


def run_capture(env, mode, capture_dir, *options):
    """`minify capture MODE --out DIR --python PY OPTIONS -- PY two_graphs.py runtime_error 256` (aborting):
    the program's stdout and exit status as without the capture (128 + signal for a signal); returns
    the one captured graph and the capture's stderr."""
    args = ["runtime_error", "256"]
    plain = run_program(env, args)
    expect(plain.returncode == -6, f"two_graphs.py exits {plain.returncode}, not by SIGABRT:\n{plain.stderr[-3000:]}")
    shutil.rmtree(capture_dir, ignore_errors=True)
    done = subprocess.run([env.minify, "capture", mode, "--out", capture_dir, "--python", env.python, *options, "--",
                           env.python, PROGRAM, *args], capture_output=True, text=True, timeout=1500)
    expect(done.returncode == 128 + 6 and done.stdout == plain.stdout,
           f"minify capture {mode}: exit {done.returncode}, stdout {done.stdout!r}; the program alone: stdout "
           f"{plain.stdout!r}\n{done.stderr[-3000:]}")
    graphs = captured_graphs(capture_dir)
    expect(len(graphs) == 1, f"minify capture {mode}: {len(graphs)} graphs, not one:\n{done.stderr[-3000:]}")
    check_second_graph(graphs[0], "runtime_error")
    expect(f"minify capture: {graphs[0]}: " in done.stderr, f"no line for {graphs[0]}:\n{done.stderr[-3000:]}")
    return graphs[0], done.stderr


def capture_run(env):
    """--run: the captured graph minimized to the relu, its after_aot repro.py written beside it."""
    graph, stderr = run_capture(env, "--run", os.path.join(env.work, "captured"))
    out = os.path.join(graph, "minified")
    found = re.search(rf"minify capture: {re.escape(graph)}: minimized to (\d+) nodes.*, repro (\S+)", stderr)
    expect(found and found.group(2) == os.path.join(out, "repro.py"), f"no minimized line for {graph}:\n{stderr[-3000:]}")
    targets = [node["target"] for node in call_nodes(out)]
    expect(targets == ["aten::relu"], f"{out}: minimized to {targets}, not the relu")
    with open(os.path.join(out, "repro.py")) as f:
        repro = f.read()
    expect(f"torch._inductor.config.{BUG} = 'runtime_error'" in repro and "def load_args(reader)" in repro,
           f"{out}/repro.py is not after_aot's shape with the bug's config line:\n{repro[:2000]}")
    print(f"captured and minimized: {found.group(0)}")


def capture_submit(env):
    """--submit: the captured graph a job of minifyd, listed, and done at the relu."""
    sys.path.insert(0, os.path.join(HERE, "..", "minifyd"))
    from daemon_harness import Daemon, Tools, wait_all_final
    state = os.path.join(env.work, "state")
    shutil.rmtree(state, ignore_errors=True)
    minifyd = Daemon(Tools(env.minify, env.minifyd, None), state, "--workers", "2", "--python", env.python).start()
    try:
        graph, stderr = run_capture(env, "--submit", os.path.join(env.work, "submitted"), "--socket", minifyd.socket)
        found = re.search(rf"minify capture: {re.escape(graph)}: submitted job (\d+)", stderr)
        expect(found, f"no submitted line for {graph}:\n{stderr[-3000:]}")
        job_id = int(found.group(1))
        expect(job_id in [job["id"] for job in minifyd.jobs()], f"job {job_id} is not listed: {minifyd.jobs()}")
        job = wait_all_final(minifyd, [job_id], 1200)[job_id]
        expect(job["state"] == "done", f"job {job_id}: {job}\n{minifyd.log()}")
        out = os.path.join(env.work, "result")
        shutil.rmtree(out, ignore_errors=True)
        minifyd.result_graph(job_id, out)
        targets = [node["target"] for node in call_nodes(out)]
        expect(targets == ["aten::relu"], f"job {job_id}: minimized to {targets}, not the relu")
        print(f"captured and submitted: job {job_id} done at the relu")
    finally:
        minifyd.stop()


# Run in the PyTorch 2.x python, with the minifyd package's directory as argv[1].
MADE_UP_INPUTS = """
import sys
import torch
from torch._subclasses.fake_tensor import FakeTensorMode
sys.path.insert(0, sys.argv[1])
from minifyd import capture_compiler
with FakeTensorMode():
    base = torch.empty(96, 32)
    fakes = [base, base.t(), torch.empty(()), base[1:, 2:], base[5:5], torch.empty(4, 3, dtype=torch.int64).t(),
             torch.empty(2, 3, 4).permute(2, 0, 1), torch.empty(8, dtype=torch.bool)]
made = capture_compiler._made_up_inputs(fakes)
for fake, real in zip(fakes, made):
    wanted = (tuple(fake.shape), fake.stride(), fake.storage_offset(), fake.dtype)
    got = (tuple(real.shape), real.stride(), real.storage_offset(), real.dtype)
    assert got == wanted and not isinstance(real, type(fake)), f"made {got} for the fake {wanted}"
print(made[0].untyped_storage().nbytes() // 4, made[2].item() == made[2].item())
"""


def capture_made_up_inputs(env):
    done = subprocess.run([env.python, "-c", MADE_UP_INPUTS, os.path.join(ROOT, "worker", "python")],
                          capture_output=True, text=True, timeout=300)
    expect(done.returncode == 0 and done.stdout.split() == ["3072", "True"],
           f"the inputs made for fakes: exit {done.returncode}, {done.stdout!r}\n{done.stderr[-3000:]}")


SCENARIOS = {"capture_hook": capture_hook, "capture_run": capture_run, "capture_submit": capture_submit,
             "capture_made_up_inputs": capture_made_up_inputs}

if __name__ == "__main__":
    run_scenarios(SCENARIOS)
